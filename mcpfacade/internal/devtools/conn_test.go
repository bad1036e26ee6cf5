package devtools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// logLines collects log lines from any goroutine.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// fakeBrowser serves a DevTools websocket at /devtools/browser/fake, and
// /json/version naming it, that runs script on each connection. Its
// writes are split into frames of at most 256 bytes, so that every large
// message arrives in continuation frames.
func fakeBrowser(t *testing.T, script func(ws *websocket.Conn)) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{WriteBufferSize: 256}
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/json/version", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"Browser":"Fake/1","webSocketDebuggerUrl":"ws://%s/devtools/browser/fake"}`, r.Host)
	})
	mux.HandleFunc("/devtools/browser/fake", func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer ws.Close()
		script(ws)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func wsAddr(srv *httptest.Server) string {
	return "ws://" + srv.Listener.Addr().String() + "/devtools/browser/fake"
}

// Over a websocket: an oversized event in continuation frames, a ping, a
// binary message and garbage are skipped without ending the connection; a
// message exactly at the bound is delivered; an oversized reply becomes an
// error for its id in its session; the close ends Read.
func TestConnBounds(t *testing.T) {
	const session = "8A1B2C3D4E5F60718293A4B5C6D7E8F9"
	ponged := make(chan struct{})
	srv := fakeBrowser(t, func(ws *websocket.Conn) {
		ws.SetPongHandler(func(string) error { close(ponged); return nil })
		go func() {
			for {
				if _, _, err := ws.NextReader(); err != nil {
					return
				}
			}
		}()
		send := func(typ int, s string) {
			if err := ws.WriteMessage(typ, []byte(s)); err != nil {
				t.Errorf("write: %v", err)
			}
		}
		send(websocket.TextMessage, bigEvent(3*testMax, session))
		if err := ws.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(time.Second)); err != nil {
			t.Errorf("ping: %v", err)
		}
		send(websocket.BinaryMessage, `{"id":5,"result":{}}`)
		send(websocket.TextMessage, `{"id":6,"result":`)
		send(websocket.TextMessage, bigEvent(testMax, session))
		send(websocket.TextMessage, bigReply(2*testMax+1, 42, session))
		send(websocket.TextMessage, `{"id":7,"result":{}}`)
		select {
		case <-ponged:
		case <-time.After(5 * time.Second):
			t.Error("no pong")
		}
		ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		time.Sleep(100 * time.Millisecond)
	})
	var log logLines
	c, err := Dial(context.Background(), wsAddr(srv), Options{Bounds: testBounds, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func() *cdproto.Message {
		t.Helper()
		msg := new(cdproto.Message)
		if err := c.Read(context.Background(), msg); err != nil {
			t.Fatalf("read: %v\nlog:\n%s", err, log.String())
		}
		return msg
	}
	if m := read(); m.Method != "Runtime.consoleAPICalled" || m.SessionID != session || len(m.Params) == 0 {
		t.Errorf("the message at the bound: %+v", m)
	}
	m := read()
	if m.ID != 42 || m.SessionID != session || m.Error == nil || m.Error.Code != ErrorCode ||
		!strings.Contains(m.Error.Message, fmt.Sprintf("%d bytes is larger than the bound of %d bytes", 2*testMax+1, testMax)) {
		t.Errorf("the oversized reply became %+v %+v", m, m.Error)
	}
	if m := read(); m.ID != 7 || m.Error != nil {
		t.Errorf("the last reply: %+v", m)
	}
	err = c.Read(context.Background(), new(cdproto.Message))
	if _, ok := err.(*websocket.CloseError); !ok {
		t.Errorf("after the close: %v", err)
	}
	for _, want := range []string{
		fmt.Sprintf("skipped a %d-byte message (event Runtime.consoleAPICalled)", 3*testMax),
		"dropped a binary websocket message",
		"dropped an unreadable 17-byte message",
		"(reply to 42), larger than the bound of 1024 bytes; answered with an error",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// commands serves chromedp's commands on ws: answer returns what to send
// for each, in order, before the next command is read.
func commands(t *testing.T, ws *websocket.Conn, answer func(id int64, method string) []string) {
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var cmd struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(b, &cmd); err != nil {
			t.Errorf("command %q: %v", b, err)
			return
		}
		for _, m := range answer(cmd.ID, cmd.Method) {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
				return
			}
		}
	}
}

// Through chromedp, attached with NewAllocator to the browser's endpoint:
// a command answered after an oversized event succeeds; a command whose
// reply is oversized fails at once with an error naming the bound.
func TestAllocatorThroughChromedp(t *testing.T) {
	srv := fakeBrowser(t, func(ws *websocket.Conn) {
		commands(t, ws, func(id int64, method string) []string {
			switch method {
			case browser.CommandGetVersion:
				return []string{bigEvent(5*testMax, ""), fmt.Sprintf(`{"id":%d,"result":{"protocolVersion":"1.3","product":"Fake/1"}}`, id)}
			case browser.CommandGetBrowserCommandLine:
				return []string{bigReply(4*testMax, int(id), "")}
			default:
				return []string{fmt.Sprintf(`{"id":%d,"result":{}}`, id)}
			}
		})
	})
	var log logLines
	allocCtx, cancelAlloc := NewAllocator(context.Background(), srv.URL, Options{Bounds: testBounds, Logf: log.logf})
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 10*time.Second)
	defer cancelT()
	v, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
	if err != nil || v.Product != "Fake/1" {
		t.Fatalf("getVersion after an oversized event: %+v %v\n%s", v, err, log.String())
	}
	_, err = chromedp.CallBrowser(ctx, browser.GetBrowserCommandLine, cdp.Empty{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than the bound of %d bytes", testMax)) {
		t.Fatalf("an oversized reply gave %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the command waited for the deadline: %v", ctx.Err())
	}
}

// The DevTools endpoint's /json/version is read within a bound and must
// name a websocket.
func TestResolve(t *testing.T) {
	serve := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ok := serve(200, `{"webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/x"}`)
	if got, err := resolve(context.Background(), ok); err != nil || got != "ws://127.0.0.1:1/devtools/browser/x" {
		t.Errorf("resolve: %q %v", got, err)
	}
	if got, err := resolve(context.Background(), "ws://localhost:9/devtools/browser/y"); err != nil || got != "ws://localhost:9/devtools/browser/y" {
		t.Errorf("a websocket address: %q %v", got, err)
	}
	for name, u := range map[string]string{
		"too large":  serve(200, `{"webSocketDebuggerUrl":"ws://127.0.0.1:1/`+strings.Repeat("a", maxVersionBytes)+`"}`),
		"no address": serve(200, `{"Browser":"x"}`),
		"not a ws":   serve(200, `{"webSocketDebuggerUrl":"http://127.0.0.1:1/"}`),
		"not JSON":   serve(200, `<html>`),
		"status":     serve(404, `{"webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/x"}`),
		"no port":    "http://127.0.0.1",
	} {
		if got, err := resolve(context.Background(), u); err == nil {
			t.Errorf("%s: resolved to %q", name, got)
		}
	}
}
