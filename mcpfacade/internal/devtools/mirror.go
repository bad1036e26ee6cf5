//go:build !(js || wasip1)

package devtools

import (
	"encoding/json"
	"strings"
)

// mirror drops the events through which chromedp would keep a copy of what
// a page makes and pling-mcp never uses. chromedp mirrors every frame a
// tab's Page events name (with the frame's name, which the page chooses,
// and it never forgets one) and the DOM its DOM events describe (every
// attribute value and every text). A page can grow both without bound:
// 100 attributes of 4 MB on <html> took pling-mcp to 648 MB, 400
// short-lived iframes with 1 MB names to 653 MB. pling-mcp follows only a
// tab's main frame (its navigations and its execution contexts), so it
// passes on the Page events of each session's main frame alone, and no DOM
// or CSS event at all.
type mirror struct {
	// mains is the main frame of each session ("" is the browser's own
	// connection), from its frameNavigated events without a parent. A
	// session's main frame never changes; a few sessions are open at once.
	mains map[string]string
}

// maxMains bounds mirror.mains: a page can open targets (windows,
// workers) that become sessions.
const maxMains = 256

// drop reports whether the event in msg is one the mirror drops. It reads
// the method from the message's start, where Chromium writes it, and
// decodes only the Page frame events it must judge; anything it cannot
// read is passed on.
func (m *mirror) drop(msg []byte) bool {
	method, ok := eventMethod(msg[:min(len(msg), headKeep)])
	switch {
	case !ok:
		return false
	case strings.HasPrefix(method, "DOM.") || strings.HasPrefix(method, "CSS."):
		return true
	case !strings.HasPrefix(method, "Page.frame"):
		return false
	}
	var ev struct {
		SessionID string `json:"sessionId"`
		Params    struct {
			FrameID string `json:"frameId"`
			Frame   struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
			} `json:"frame"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &ev) != nil {
		return false
	}
	if method == "Page.frameNavigated" {
		if ev.Params.Frame.ParentID != "" {
			return true // a child frame's: chromedp would keep it for ever
		}
		if m.mains == nil {
			m.mains = map[string]string{}
		}
		if _, known := m.mains[ev.SessionID]; !known && len(m.mains) >= maxMains {
			clear(m.mains)
		}
		m.mains[ev.SessionID] = ev.Params.Frame.ID
		return false
	}
	id := ev.Params.FrameID
	if id == "" {
		id = ev.Params.Frame.ID
	}
	main, known := m.mains[ev.SessionID]
	// Before the first navigation of a session is seen, its frame events
	// pass: chromedp waits on the main frame's loading while it opens the
	// page.
	return known && id != "" && id != main
}
