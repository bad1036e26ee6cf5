//go:build !(js || wasip1)

package devtools

import "testing"

// The events through which chromedp mirrors a page are dropped: every DOM
// and CSS event, and the Page events of frames other than a session's main
// frame. What pling-mcp follows (the main frame's navigations and loading,
// Runtime, replies) passes.
func TestMirrorDrops(t *testing.T) {
	var m mirror
	for _, tc := range []struct {
		msg  string
		drop bool
	}{
		{`{"method":"Page.frameStartedLoading","params":{"frameId":"F0"},"sessionId":"S"}`, false}, // before the main frame is known
		{`{"method":"Page.frameNavigated","params":{"frame":{"id":"M","loaderId":"L","url":"http://a/"},"type":"Navigation"},"sessionId":"S"}`, false},
		{`{"method":"DOM.attributeModified","params":{"nodeId":1,"name":"a","value":"yyyy"},"sessionId":"S"}`, true},
		{`{"method":"DOM.documentUpdated","params":{},"sessionId":"S"}`, true},
		{`{"method":"CSS.styleSheetAdded","params":{},"sessionId":"S"}`, true},
		{`{"method":"Page.frameAttached","params":{"frameId":"C","parentFrameId":"M"},"sessionId":"S"}`, true},
		{`{"method":"Page.frameNavigated","params":{"frame":{"id":"C","parentId":"M","name":"yyyy","url":"about:srcdoc"}},"sessionId":"S"}`, true},
		{`{"method":"Page.frameStoppedLoading","params":{"frameId":"C"},"sessionId":"S"}`, true},
		{`{"method":"Page.frameDetached","params":{"frameId":"C","reason":"remove"},"sessionId":"S"}`, true},
		{`{"method":"Page.frameStoppedLoading","params":{"frameId":"M"},"sessionId":"S"}`, false},
		{`{"method":"Page.frameStoppedLoading","params":{"frameId":"X"},"sessionId":"T"}`, false}, // another session, main not known
		{`{"method":"Runtime.executionContextCreated","params":{"context":{"id":1}},"sessionId":"S"}`, false},
		{`{"id":7,"result":{"method":"DOM.x"},"sessionId":"S"}`, false},
		{`{"method":"Page.frameNavigated","params":`, false}, // unreadable: passed on, chromedp decides
	} {
		if got := m.drop([]byte(tc.msg)); got != tc.drop {
			t.Errorf("drop(%s) = %v, want %v", tc.msg, got, tc.drop)
		}
	}
}
