//go:build !(js || wasip1)

package mcpfacade_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/mcpfacade/nativehost"
	"pling.dev/agent/surface"
)

// fakeExtension is the native host, in process, with the extension's side
// played by the test: it answers each request through the real kernel, or
// with the code the test set.
type fakeExtension struct {
	toHost *io.PipeWriter
	done   chan struct{}
	wmu    sync.Mutex

	mu   sync.Mutex
	code string // "" answers through the kernel
	hold bool   // receive requests, never answer
}

func startFakeExtension(t *testing.T, dir string, s *surface.Surface) *fakeExtension {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	x := &fakeExtension{toHost: inW, done: make(chan struct{})}
	go func() {
		nativehost.RunHost(nativehost.ExtensionOrigin, inR, outW, nativehost.HostOptions{Dir: dir})
		outW.Close()
		close(x.done)
	}()
	go func() {
		for {
			raw, err := nativehost.ReadMessage(outR, nativehost.MaxToBrowser)
			if err != nil {
				return
			}
			var m struct {
				Agent int `json:"agent"`
				Msg   struct {
					Type    string `json:"type"`
					ID      int    `json:"id"`
					Request string `json:"request"`
				} `json:"msg"`
			}
			if json.Unmarshal(raw, &m) != nil || m.Msg.Type != "request" {
				continue
			}
			x.mu.Lock()
			code, hold := x.code, x.hold
			x.mu.Unlock()
			if hold {
				continue
			}
			reply := map[string]any{"type": "reply", "id": m.Msg.ID}
			if code == "" {
				reply["reply"] = string(s.HandleJSON(context.Background(), []byte(m.Msg.Request)))
			} else {
				reply["error"] = map[string]any{"code": code, "message": "the extension says " + code, "found": "https://elsewhere.test"}
			}
			x.send(t, map[string]any{"agent": m.Agent, "msg": reply})
		}
	}()
	t.Cleanup(func() { x.stop(t) })
	return x
}

func (x *fakeExtension) send(t *testing.T, v any) {
	raw, _ := json.Marshal(v)
	x.wmu.Lock()
	defer x.wmu.Unlock()
	nativehost.WriteMessage(x.toHost, raw, nativehost.MaxFromBrowser)
}

func (x *fakeExtension) answer(code string, hold bool) {
	x.mu.Lock()
	x.code, x.hold = code, hold
	x.mu.Unlock()
}

// stop is the browser closing the host's stdin.
func (x *fakeExtension) stop(t *testing.T) {
	x.toHost.Close()
	select {
	case <-x.done:
	case <-time.After(wait):
		t.Fatal("the host did not stop")
	}
}

// browserFixture is the fixture with the facade over a BrowserPage.
func browserFixture(t *testing.T) (*fixture, *fakeExtension) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rt")
	var x *fakeExtension
	f := newFixture(t, fixtureOptions{transport: func(s *surface.Surface) client.Transport {
		x = startFakeExtension(t, dir, s)
		var p *mcpfacade.BrowserPage
		deadline := time.Now().Add(wait)
		for {
			var err error
			p, err = mcpfacade.OpenBrowserPage(mcpfacade.BrowserOptions{URL: "http://orders.test/", App: "orders", Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := p.Connected(); ok {
				break
			}
			p.Close()
			if time.Now().After(deadline) {
				t.Fatal("the page never connected to the host")
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}})
	if err := f.fac.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, x
}

// Browser mode lists exactly what DevTools mode lists for the same page:
// the tools come from the same code, whatever carried the describe.
func TestBrowserModeSameTools(t *testing.T) {
	direct := newFixture(t, fixtureOptions{})
	f, _ := browserFixture(t)
	a, b := direct.tools(t), f.tools(t)
	if !reflect.DeepEqual(names(a), names(b)) {
		t.Fatalf("tools over the kernel %v, through the extension %v", names(a), names(b))
	}
	for n := range a {
		ja, _ := json.Marshal(a[n])
		jb, _ := json.Marshal(b[n])
		if string(ja) != string(jb) {
			t.Errorf("%s differs:\n%s\n%s", n, ja, jb)
		}
	}
	r, err := f.call(t, "update_note--order", map[string]any{"record": "SO-1001", "note": "through the extension"})
	if err != nil || r.IsError {
		t.Fatalf("a call: %v %v", err, r)
	}
}

// What the extension answers becomes what DevTools mode gives for the same
// situation; a request that never reached the page is PAGE_UNREACHABLE,
// never an unknown outcome, since nothing can have run.
func TestBrowserModeRefusals(t *testing.T) {
	f, x := browserFixture(t)
	for _, tc := range []struct {
		code     string
		wireCode int64  // 0: a tool result with isError
		dataCode string // the code in the error data or structured content
	}{
		{"NOT_OPTED_IN", mcpfacade.CodePageUnreachable, mcpfacade.PageUnreachable},
		{"NO_TAB", mcpfacade.CodePageUnreachable, mcpfacade.PageUnreachable},
		{"CUT_OFF", mcpfacade.CodePageUnreachable, mcpfacade.PageUnreachable},
		{"REPLY_TOO_LARGE", 0, mcpfacade.OutcomeUnknown},
		{"NAVIGATED", 0, mcpfacade.OutcomeUnknown},
		{"NO_ANSWER", 0, mcpfacade.OutcomeUnknown},
	} {
		t.Run(tc.code, func(t *testing.T) {
			x.answer(tc.code, false)
			r, err := f.call(t, "update_note--order", map[string]any{"record": "SO-1001", "note": "x"})
			if tc.wireCode != 0 {
				we, data := wireError(t, err)
				if we.Code != tc.wireCode || data["code"] != tc.dataCode {
					t.Errorf("%d %q %v, want %d %s", we.Code, we.Message, data, tc.wireCode, tc.dataCode)
				}
				return
			}
			if err != nil || !r.IsError || structured(t, r)["code"] != tc.dataCode {
				t.Errorf("%v %+v, want an isError result with %s", err, r, tc.dataCode)
			}
		})
	}
	// Another origin in the tab: refused, naming it. (The Go SDK's client
	// reads the code, -32003, as its own "client is closing" and reports
	// the error as ErrConnectionClosed, so only the message is checked.)
	x.answer("OTHER_ORIGIN", false)
	if _, err := f.call(t, "update_note--order", map[string]any{"record": "SO-1001", "note": "x"}); err == nil || !strings.Contains(err.Error(), "the tab shows https://elsewhere.test, not http://orders.test") {
		t.Errorf("a call with the tab on another origin: %v", err)
	}
	// A sync now lists nothing of the page: the facade's own tool stays.
	x.answer("NOT_OPTED_IN", false)
	f.fac.Sync(context.Background())
	if got := names(f.tools(t)); len(got) != 1 || got[0] != mcpfacade.ContextToolName {
		t.Errorf("tools while not opted in: %v", got)
	}
	// A page reply over the bound is the page's answer refused, as in
	// DevTools mode.
	x.answer("REPLY_TOO_LARGE", false)
	_, err := f.call(t, mcpfacade.ContextToolName, map[string]any{})
	if we, data := wireError(t, err); we.Code != mcpfacade.CodeUnreadableReply || data["code"] != mcpfacade.UnreadableReply || !strings.Contains(we.Message, "2097152") {
		t.Errorf("page_context over the bound: %d %q %v", we.Code, we.Message, data)
	}
}

// The host goes (the browser quit, the extension reloaded or its worker
// stopped) while a call waits: the call ends at once, its outcome unknown;
// the next one is refused as not sent.
func TestBrowserModeHostGoneUnderACall(t *testing.T) {
	f, x := browserFixture(t)
	x.answer("", true)
	type out struct {
		r   *mcp.CallToolResult
		err error
	}
	got := make(chan out, 1)
	go func() {
		r, err := f.call(t, "update_note--order", map[string]any{"record": "SO-1001", "note": "x"})
		got <- out{r, err}
	}()
	time.Sleep(200 * time.Millisecond) // the request reaches the extension
	start := time.Now()
	x.stop(t)
	select {
	case o := <-got:
		if o.err != nil || !o.r.IsError || structured(t, o.r)["code"] != mcpfacade.OutcomeUnknown {
			t.Errorf("the waiting call: %v %+v", o.err, o.r)
		}
		t.Logf("the waiting call ended %v after the host stopped", time.Since(start))
	case <-time.After(wait):
		t.Fatal("the call waited on")
	}
	_, err := f.call(t, "update_note--order", map[string]any{"record": "SO-1001", "note": "x"})
	if we, data := wireError(t, err); we.Code != mcpfacade.CodePageUnreachable || !strings.Contains(we.Message, "NOT_CONNECTED") {
		t.Errorf("a call with no host: %d %q %v", we.Code, we.Message, data)
	}
}
