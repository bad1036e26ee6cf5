//go:build js && wasm

package hostbridge

import (
	"strings"
	"syscall/js"
	"testing"
)

// waitHost is a host with a lane and wait(ticket, kind, limitMs),
// which only records what it was given: the test answers the tickets
// itself, through the pling_answer export's function.
func waitHost(t *testing.T) js.Value {
	return host(t, `(() => {
	  const h = __t.host({ execute() { return new Promise(() => {}); } });
	  h.io = new Uint8Array(1024);
	  h.entryIO = new Uint8Array(1024);
	  h.waits = [];
	  h.wait = (ticket, kind, limitMs) => { h.waits.push({ ticket, kind, limitMs }); };
	  h.held = () => JSON.stringify({ held: true });
	  return h;
	})()`)
}

// lastWait returns the ticket, kind and limit of the last wait.
func lastWait(t *testing.T, h js.Value) (int32, int, int) {
	t.Helper()
	w := h.Get("waits")
	if w.Length() == 0 {
		t.Fatal("the bridge handed nothing to wait")
	}
	last := w.Index(w.Length() - 1)
	return int32(last.Get("ticket").Int()), last.Get("kind").Int(), last.Get("limitMs").Int()
}

// The wait contract: the executor's Promise goes to host.wait with the
// executor's limit, the answer comes back through pling_answer once, and
// a ticket answered, unknown, or given a length beyond entryIO is refused
// or fails closed.
func TestWaitAndAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string // written to entryIO; code is its length
		code    float64
		wantOK  bool
		wantMsg string
	}{
		{"text in entryIO", `{"n":1}`, 7, true, ""},
		{"held text", ``, codeHeld, true, ""},
		{"time limit", ``, codeTimedOut, false, "executor did not answer in time"},
		{"failed", ``, codeFailed, false, "executor failed"},
		{"length beyond entryIO", ``, 4096, false, "executor failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			h := waitHost(t)
			inst := create(t, h, Config{ExecuteTimeoutMs: 1234})
			p := inst.Call("handle", invokeReq("w", "orders.search", `{}`))
			ticket, kind, limit := lastWait(t, h)
			if kind != 5 || limit != 1234 {
				t.Fatalf("wait got kind %d, limit %d; want the executor's (5) with 1234 ms", kind, limit)
			}
			if tc.text != "" {
				js.CopyBytesToJS(h.Get("entryIO"), []byte(tc.text))
			}
			if got := testAnswer(ticket, tc.code); got != entryAccepted {
				t.Fatalf("pling_answer = %d", got)
			}
			if got := testAnswer(ticket, tc.code); got != entryRefused {
				t.Fatalf("a second answer to ticket %d = %d, want refused", ticket, got)
			}
			r := parseReply(t, wait(t, p))
			if r.OK != tc.wantOK || (tc.wantMsg != "" && (r.Error == nil || r.Error.Message != tc.wantMsg)) {
				t.Fatalf("got ok=%v %+v, want ok=%v %q", r.OK, r.Error, tc.wantOK, tc.wantMsg)
			}
			if tc.code == codeHeld && !strings.Contains(string(r.Result), "held") {
				t.Fatalf("result %s, want the held text", r.Result)
			}
			if got := testAnswer(ticket+1000, 0); got != entryRefused {
				t.Fatalf("an unknown ticket = %d, want refused", got)
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}
