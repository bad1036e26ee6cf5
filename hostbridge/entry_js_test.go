//go:build js && wasm

package hostbridge

import (
	"strings"
	"syscall/js"
	"testing"
)

// replyHost adds to a laned host what the JS runtime adds when it calls
// through the exports: reply(token, text, ...) keeping each token's answer,
// answer(token), a Promise of it, and executors that only note the call, so
// that a test settles it itself.
const replyHost = `(h) => {
  const dec = new TextDecoder();
  const answers = new Map(), waiting = new Map();
  h.replyCalls = 0;
  h.reply = (token, out) => {
    h.replyCalls++;
    const text = typeof out === "number" ? dec.decode(h.io.subarray(0, out)) : out;
    answers.set(token, text);
    const w = waiting.get(token);
    if (w) w(text);
  };
  h.answer = (token) => answers.has(token) ? Promise.resolve(answers.get(token)) : new Promise((r) => waiting.set(token, r));
  h.calls.started = [];
  h.started = () => new Promise((r) => { h.onStart = r; });
  const note = (callId, limit) => { h.calls.started.push({ callId, limit }); if (h.onStart) h.onStart(callId); };
  h.manual = {
    executeAsync: (id, args, ctx, settle, callId) => { note(callId); return undefined; },
    executeTimed: (id, args, ctx, settle, callId, limit) => { note(callId, limit); return undefined; },
  };
  return h;
}`

// entryHost is lanedHost with replyHost's additions and over applied.
func entryHost(t *testing.T, over string) js.Value {
	t.Helper()
	h := lanedHost(t, over, 64<<10)
	return js.Global().Call("eval", "("+replyHost+")").Invoke(h)
}

func slotOf(t *testing.T, inst js.Value) int32 {
	t.Helper()
	s := inst.Get("slot")
	if s.Type() != js.TypeNumber {
		t.Fatal("instance has no slot: its host offers reply and a lane")
	}
	return int32(s.Int())
}

// enter writes request to entryIO and calls the handle export with it, as
// the JS runtime does, and reports what the export answered.
func enter(t *testing.T, h, inst js.Value, token int32, request string) int32 {
	t.Helper()
	n := h.Get("lane").Call("toKernel", request)
	if n.Type() != js.TypeNumber {
		t.Fatalf("request did not fit entryIO")
	}
	return enterHandle(slotOf(t, inst), int32(n.Int()), token, 0)
}

func answerOf(t *testing.T, h js.Value, token int32) reply {
	t.Helper()
	return parseReply(t, wait(t, h.Call("answer", token)))
}

// A request through the export gets the answer it gets through handle(),
// delivered to reply under its token.
func TestEntryHandleAnswersThroughReply(t *testing.T) {
	plain := create(t, host(t, `__t.host(`+laneOver+`)`), Config{})
	h := entryHost(t, laneOver)
	inst := create(t, h, Config{})
	before := ReadStats().FastEntries

	reqs := []string{
		describeReq("d1"),
		invokeReq("i1", "update_note@order", `{"record":"SO-1","note":"by export"}`),
		invokeReq("i2", "orders.search", `{"q":"x"}`),
		invokeReq("i3", "update_note@order", `{"record":"SO-9","note":"x"}`), // no such record
		`{"protocol":"pling.surface/9","id":"v","method":"describe"}`,
		`not json`,
	}
	for i, req := range reqs {
		if got := enter(t, h, inst, int32(100+i), req); got != entryAccepted {
			t.Fatalf("%s: export answered %d", req, got)
		}
		want := handle(t, plain, req)
		got := answerOf(t, h, int32(100+i))
		if got.ID != want.ID || got.OK != want.OK || got.code() != want.code() || string(got.Result) != string(want.Result) || string(got.After) != string(want.After) {
			t.Errorf("%s: by export %+v %s, by handle %+v %s", req, got, got.Result, want, want.Result)
		}
	}
	if n := h.Get("replyCalls").Int(); n != len(reqs) {
		t.Errorf("reply called %d times for %d requests", n, len(reqs))
	}
	if n := ReadStats().FastEntries - before; n != len(reqs) {
		t.Errorf("FastEntries rose by %d, want %d", n, len(reqs))
	}
	if got := h.Get("calls").Get("execute").Index(0).Get("args").String(); got != `{"note":"by export"}` {
		t.Errorf("executor was given %s", got)
	}
}

// An oversize request is refused with a structured answer, not run.
func TestEntryOversizeRequest(t *testing.T) {
	h := entryHost(t, laneOver)
	inst := create(t, h, Config{})
	slot := slotOf(t, inst)
	n := h.Get("lane").Call("toKernel", describeReq("x")).Int()
	s := slotSurface(slot)
	limit := s.limits.MaxRequestBytes
	s.limits.MaxRequestBytes = n - 1
	defer func() { s.limits.MaxRequestBytes = limit }()
	if got := enterHandle(slot, int32(n), 2, 0); got != entryAccepted {
		t.Fatalf("export answered %d", got)
	}
	if r := answerOf(t, h, 2); r.code() != "INVALID_REQUEST" || !strings.Contains(r.Error.Message, "size limit") {
		t.Fatalf("oversize request: %+v", r.Error)
	}
	if n := h.Get("calls").Get("view").Int(); n != 0 {
		t.Fatalf("oversize request read the view %d times", n)
	}
}

// The export refuses what it cannot take, and then nothing answers: the
// JS side takes the js.FuncOf path instead.
func TestEntryRefusals(t *testing.T) {
	h := entryHost(t, laneOver)
	inst := create(t, h, Config{})
	slot := slotOf(t, inst)
	for _, c := range []struct {
		name        string
		slot, n     int32
		wantRefused bool
	}{
		{"unknown slot", slot + 1000, 10, true},
		{"slot 0", 0, 10, true},
		{"negative length", slot, -1, true},
		{"length past entryIO", slot, 64<<10 + 1, true},
	} {
		if got := enterHandle(c.slot, c.n, 7, 0); (got == entryRefused) != c.wantRefused {
			t.Errorf("%s: export answered %d", c.name, got)
		}
	}
	for _, id := range []float64{0, -1, 0.5, 1 << 60} {
		if got := enterSettle(id, 0); got != entryRefused {
			t.Errorf("settle(%v): export answered %d", id, got)
		}
	}
	if got := enterSettle(1, -2); got != entryRefused {
		t.Errorf("settle with length -2: export answered %d", got)
	}
	// A closed instance is no longer reachable by its slot.
	inst.Call("close")
	if got := enterHandle(slot, 10, 8, 0); got != entryRefused {
		t.Errorf("closed instance: export answered %d", got)
	}
	if slotSurface(slot) != nil {
		t.Error("closed instance still holds its slot")
	}
	// Nothing was answered for any refused call.
	if n := h.Get("replyCalls").Int(); n != 0 {
		t.Errorf("reply called %d times for refused calls", n)
	}
}

// The export takes one call until the runtime runs: a second is refused
// (and would take the js.FuncOf path), and the first keeps its own text
// even though entryIO was written again.
func TestEntryOneCallAtATime(t *testing.T) {
	h := entryHost(t, laneOver)
	inst := create(t, h, Config{})
	// The test goroutine does not park between these calls, so the
	// dispatcher cannot run in between, as when JS calls the export twice
	// without resuming the runtime.
	first := enter(t, h, inst, 1, describeReq("first"))
	second := enter(t, h, inst, 2, describeReq("second-and-longer"))
	if first != entryAccepted || second != entryRefused {
		t.Fatalf("exports answered %d and %d, want %d then %d", first, second, entryAccepted, entryRefused)
	}
	if r := answerOf(t, h, 1); !r.OK || r.ID != "first" {
		t.Fatalf("first call: %+v", r)
	}
	if got := enter(t, h, inst, 3, describeReq("third")); got != entryAccepted {
		t.Fatalf("after the runtime ran, export answered %d", got)
	}
	if r := answerOf(t, h, 3); !r.OK || r.ID != "third" {
		t.Fatalf("third call: %+v", r)
	}
	if n := h.Get("replyCalls").Int(); n != 2 {
		t.Fatalf("reply called %d times, want 2", n)
	}
}

// Two invokes waiting for their executors are answered each under its own
// token, whichever settles first.
func TestEntryTwoInFlight(t *testing.T) {
	h := entryHost(t, laneOver)
	h.Set("executeAsync", h.Get("manual").Get("executeAsync"))
	inst := create(t, h, Config{})
	var ids []float64
	for i, note := range []string{"a", "b"} {
		started := h.Call("started")
		enter(t, h, inst, int32(i+1), invokeReq("call-"+note, "update_note@order", `{"record":"SO-1","note":"`+note+`"}`))
		ids = append(ids, wait(t, started).Float())
	}
	for i := len(ids) - 1; i >= 0; i-- {
		n := h.Get("lane").Call("toKernel", `{"answer":`+string(rune('0'+i))+`}`).Int()
		if got := enterSettle(ids[i], int32(n)); got != entryAccepted {
			t.Fatalf("settle export answered %d", got)
		}
		r := answerOf(t, h, int32(i+1))
		if want := `{"answer":` + string(rune('0'+i)) + `}`; !r.OK || string(r.Result) != want || r.ID != []string{"call-a", "call-b"}[i] {
			t.Fatalf("call %d: %+v %s, want %s", i, r.Error, r.Result, want)
		}
	}
}

// The executor's answer and its timeout come in through the settle export.
func TestEntrySettle(t *testing.T) {
	for _, c := range []struct {
		name     string
		executor string // the host function that starts the call
		settle   func(t *testing.T, h js.Value, callID float64) int32
		check    func(t *testing.T, r reply)
	}{{
		name:     "answer in entryIO",
		executor: "executeAsync",
		settle: func(t *testing.T, h js.Value, id float64) int32 {
			n := h.Get("lane").Call("toKernel", `{"title":"settled by export ✓"}`)
			return enterSettle(id, int32(n.Int()))
		},
		check: func(t *testing.T, r reply) {
			if !r.OK || string(r.Result) != `{"title":"settled by export ✓"}` {
				t.Fatalf("got %+v %s", r.Error, r.Result)
			}
		},
	}, {
		name:     "time limit passed",
		executor: "executeTimed",
		settle: func(t *testing.T, h js.Value, id float64) int32 {
			return enterSettle(id, settleTimedOut)
		},
		check: func(t *testing.T, r reply) {
			if r.code() != "INTERNAL_ERROR" || !strings.Contains(r.Error.Message, "in time") {
				t.Fatalf("got %+v", r.Error)
			}
		},
	}, {
		name:     "length past the waiter's entryIO",
		executor: "executeAsync",
		settle: func(t *testing.T, h js.Value, id float64) int32 {
			return enterSettle(id, 64<<10+1)
		},
		check: func(t *testing.T, r reply) {
			if r.code() != "INTERNAL_ERROR" {
				t.Fatalf("got ok=%v %+v, want INTERNAL_ERROR", r.OK, r.Error)
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			h := entryHost(t, laneOver)
			h.Set(c.executor, h.Get("manual").Get(c.executor))
			inst := create(t, h, Config{})
			started := h.Call("started")
			if got := enter(t, h, inst, 1, invokeReq("s", "orders.search", `{}`)); got != entryAccepted {
				t.Fatalf("handle export answered %d", got)
			}
			id := wait(t, started).Float()
			if pendingCount() != 1 {
				t.Fatalf("%d awaits pending, want the executor's", pendingCount())
			}
			if got := c.settle(t, h, id); got != entryAccepted {
				t.Fatalf("settle export answered %d", got)
			}
			c.check(t, answerOf(t, h, 1))
			if pendingCount() != 0 {
				t.Fatalf("%d awaits left pending", pendingCount())
			}
			// A second settlement of the same call finds nobody: dropped.
			if got := c.settle(t, h, id); got != entryAccepted {
				t.Fatalf("late settle export answered %d", got)
			}
			if n := h.Get("replyCalls").Int(); n != 1 {
				t.Fatalf("reply called %d times", n)
			}
		})
	}
}

// A panic while a taken request starts still answers it, and the
// dispatcher keeps serving.
func TestEntryPanicStillAnswers(t *testing.T) {
	h := entryHost(t, laneOver)
	inst := create(t, h, Config{})
	testHook = func(op string) {
		if op == "enter.handle" {
			panic("boom")
		}
	}
	got := enter(t, h, inst, 1, describeReq("p"))
	r := answerOf(t, h, 1)
	testHook = nil
	if got != entryAccepted || r.code() != "INTERNAL_ERROR" {
		t.Fatalf("export answered %d, reply %+v", got, r.Error)
	}
	enter(t, h, inst, 2, describeReq("after"))
	if r := answerOf(t, h, 2); !r.OK || r.ID != "after" {
		t.Fatalf("after the panic: %+v", r)
	}
}

// A call with a session getter of its own reaches it through the host's
// sessionFor(token); without one for its token it has no session and is
// refused, and a host without sessionFor refuses such calls outright.
func TestEntryPerCallSession(t *testing.T) {
	over := `{
	  sessionFor(token) { return token === 5 ? __t.session({ sessionId: "call-5", scope: ["orders.search"] }) : undefined; },
	}`
	h := entryHost(t, over)
	inst := create(t, h, Config{})
	n := h.Get("lane").Call("toKernel", describeReq("own")).Int()
	if got := enterHandle(slotOf(t, inst), int32(n), 5, flagSession); got != entryAccepted {
		t.Fatalf("export answered %d", got)
	}
	r := answerOf(t, h, 5)
	if !r.OK || !strings.Contains(string(r.Result), `"orders.search"`) || strings.Contains(string(r.Result), `"update_note@order"`) {
		t.Fatalf("describe under the call's own session: %+v %s", r.Error, r.Result)
	}

	n = h.Get("lane").Call("toKernel", describeReq("none")).Int()
	enterHandle(slotOf(t, inst), int32(n), 6, flagSession)
	if r := answerOf(t, h, 6); r.code() != "SESSION_REQUIRED" {
		t.Fatalf("no getter for the token: %+v", r.Error)
	}

	plain := entryHost(t, laneOver)
	pinst := create(t, plain, Config{})
	if got := enterHandle(slotOf(t, pinst), int32(n), 7, flagSession); got != entryRefused {
		t.Fatalf("host without sessionFor: export answered %d", got)
	}
}
