//go:build js && wasm

package hostbridge

import (
	"strings"
	"syscall/js"
	"testing"
)

// laneAdaptor turns a host written against the plain text contract into
// one that offers a lane, the way js/pling-surface.js builds its host: text
// parameters given as numbers are read from io, text answers go back
// through io when they fit, a later executor answer goes to entryIO. It
// counts which way each text went, so a test fails if the bridge stops
// using the lane, and can be told to answer lengths the bridge must refuse.
const laneAdaptor = `(h, size) => {
  const io = new Uint8Array(size), entryIO = new Uint8Array(size);
  const dec = new TextDecoder(), enc = new TextEncoder();
  const n = { paramsInIO: 0, paramsAsStrings: 0, answersInIO: 0, answersAsStrings: 0, entries: 0 };
  let depth = 0;
  const texts = (...ps) => {
    let at = 0;
    return ps.map((p) => {
      if (typeof p !== "number") { n.paramsAsStrings++; return p; }
      n.paramsInIO++;
      const s = dec.decode(io.subarray(at, at + p));
      at += p;
      return s;
    });
  };
  const put = (buf, s, count) => {
    const r = enc.encodeInto(s, buf);
    if (r.read !== s.length) { if (count) n.answersAsStrings++; return s; }
    if (count) n.answersInIO++;
    return r.written;
  };
  const answer = (v) => (typeof v === "string" ? put(io, v, true) : v);
  const run = (f) => { depth++; try { return f(); } finally { depth--; } };
  const l = {
    io, entryIO, n,
    bad: undefined, // when set, view() answers this instead of its text
    toKernel: (s) => { if (depth > 0) return s; n.entries++; return put(entryIO, s, false); },
    run,
  };
  const laned = Object.assign({}, h, {
    io, entryIO,
    actions: () => answer(run(() => h.actions())),
    view: (q) => l.bad !== undefined ? l.bad : answer(run(() => h.view(texts(q)[0]))),
    execute: (...a) => {
      const r = run(() => h.execute(...texts(...a)));
      return typeof r === "string" ? answer(r) : r;
    },
  });
  if (h.session) laned.session = () => answer(run(() => h.session()));
  if (h.audit) laned.audit = (e) => run(() => h.audit(texts(e)[0]));
  if (h.expose) laned.expose = (ids) => answer(run(() => h.expose(texts(ids)[0])));
  laned.lane = l;
  return laned;
}`

// lanedHost builds the fixture host with over applied, behind a lane of
// size bytes.
func lanedHost(t *testing.T, over string, size int) js.Value {
	t.Helper()
	fx(t)
	adapt := js.Global().Call("eval", "("+laneAdaptor+")")
	return adapt.Invoke(host(t, `__t.host(`+over+`)`), size)
}

func laneCount(h js.Value, name string) int { return h.Get("lane").Get("n").Get(name).Int() }

// handleText sends request through the lane's entryIO when it fits, as
// the JS runtime does, and waits for the answer.
func handleText(t *testing.T, inst, h js.Value, request string) reply {
	t.Helper()
	arg := h.Get("lane").Call("toKernel", request)
	return parseReply(t, wait(t, inst.Call("handle", arg)))
}

const laneOver = `{
  session: () => __t.session(),
  audit(e) { this.calls.audit.push(JSON.parse(e)); },
  expose(ids) { return JSON.stringify(JSON.parse(ids).map(() => true)); },
}`

func TestLaneCarriesTheTexts(t *testing.T) {
	plain := create(t, host(t, `__t.host(`+laneOver+`)`), Config{})
	h := lanedHost(t, laneOver, 64<<10)
	inst := create(t, h, Config{})

	for _, req := range []string{
		describeReq("d1"),
		invokeReq("i1", "update_note@order", `{"record":"SO-1","note":"lane ✓"}`),
		invokeReq("i2", "orders.search", `{"q":"ß"}`),
		invokeReq("i3", "update_note@order", `{"record":"SO-9","note":"x"}`), // refused: no such record
	} {
		want := handle(t, plain, req)
		got := handleText(t, inst, h, req)
		if got.OK != want.OK || got.code() != want.code() || string(got.Result) != string(want.Result) || string(got.After) != string(want.After) {
			t.Errorf("%s: through the lane %+v %s %s, as strings %+v %s %s", req, got.Error, got.Result, got.After, want.Error, want.Result, want.After)
		}
	}
	// Every text went through the buffers: none was a string. (The
	// executor's Promise settles to a string, which the bridge reads
	// itself: only the four requests were written to entryIO.)
	for name, min := range map[string]int{"paramsInIO": 8, "answersInIO": 8, "entries": 4} {
		if n := laneCount(h, name); n < min {
			t.Errorf("%s = %d, want at least %d", name, n, min)
		}
	}
	for _, name := range []string{"paramsAsStrings", "answersAsStrings"} {
		if n := laneCount(h, name); n != 0 {
			t.Errorf("%s = %d, want 0", name, n)
		}
	}
	if n := h.Get("calls").Get("audit").Length(); n != 4 {
		t.Errorf("%d audit events through the lane, want 4", n)
	}
	if got := h.Get("calls").Get("audit").Index(1).Get("recordId").String(); got != "SO-1" {
		t.Errorf("audit event read from io names record %q", got)
	}
}

// A reply function is given its text through io too, and in shared mode
// the capability list after it.
func TestLaneRepliesThroughIO(t *testing.T) {
	h := lanedHost(t, laneOver, 64<<10)
	inst := create(t, h, Config{})
	fn, calls := replies(t)
	// What host.reply was given, before the test's harness decoded it: the
	// texts' lengths in io, never the texts.
	raw := js.Global().Call("eval", `(() => { const f = (...a) => { f.got.push(a.map((p) => typeof p)); }; f.got = []; return f; })()`)
	decode := js.Global().Call("eval", `(fn, raw) => { const f = (...a) => fn(...a); f.raw = raw; return f; }`).Invoke(fn, raw)

	inst.Call("handle", h.Get("lane").Call("toKernel", describeReq("s1")), js.Undefined(), decode, true)
	inst.Call("handle", h.Get("lane").Call("toKernel", describeReq("s2")), js.Undefined(), decode, true)
	got := waitCalls(t, calls, 2)
	if kinds := js.Global().Get("JSON").Call("stringify", raw.Get("got")).String(); kinds != `[["number","number","number"],["number","number"]]` {
		t.Fatalf("host.reply was given %s, want the texts as lengths in io", kinds)
	}
	first, second := got[0], got[1]
	if len(first) != 3 || len(second) != 2 {
		t.Fatalf("shared replies had %d and %d arguments, want 3 then 2", len(first), len(second))
	}
	text, list := first[0].String(), first[2].String()
	if !strings.Contains(text, `"capabilities":[]`) || !strings.Contains(list, `"orders.search"`) {
		t.Fatalf("first shared reply: %s / %s", text, list)
	}
	if !strings.Contains(second[0].String(), `"id":"s2"`) {
		t.Fatalf("second shared reply: %s", second[0].String())
	}
}

// Texts that do not fit the buffers go as strings, in both directions.
// (The request itself must fit entryIO: the export takes nothing else.)
func TestLaneFallsBackToStrings(t *testing.T) {
	req := invokeReq("big", "update_note@order", `{"record":"SO-2","note":"`+strings.Repeat("n", 100)+`"}`)
	h := lanedHost(t, laneOver, len(req)+8)
	inst := create(t, h, Config{})
	r := handleText(t, inst, h, req)
	if !r.OK || string(r.Result) != `{"done":"update_note@order:SO-2"}` {
		t.Fatalf("invoke through a small lane: %+v %s", r.Error, r.Result)
	}
	if got := h.Get("calls").Get("execute").Index(0).Get("args").String(); got != `{"note":"`+strings.Repeat("n", 100)+`"}` {
		t.Fatalf("executor was given %s", got)
	}
	if laneCount(h, "paramsAsStrings") == 0 || laneCount(h, "answersAsStrings") == 0 {
		t.Fatalf("no text fell back to a string: %d params, %d answers", laneCount(h, "paramsAsStrings"), laneCount(h, "answersAsStrings"))
	}
}

// A length the bridge cannot trust is refused with a structured answer,
// never read past the buffer, and never taken for text.
func TestLaneRefusesBadLengths(t *testing.T) {
	for _, bad := range []string{"-1", "1e9", "1.5", "NaN", "Infinity", "65537"} {
		t.Run("view answers "+bad, func(t *testing.T) {
			h := lanedHost(t, laneOver, 64<<10)
			h.Get("lane").Set("bad", js.Global().Call("eval", bad))
			inst := create(t, h, Config{})
			r := handleText(t, inst, h, describeReq("d"))
			if r.code() != "INTERNAL_ERROR" {
				t.Fatalf("got ok=%v %+v, want INTERNAL_ERROR", r.OK, r.Error)
			}
		})
	}
	t.Run("request lengths", func(t *testing.T) {
		h := lanedHost(t, laneOver, 64<<10)
		inst := create(t, h, Config{})
		// A length outside entryIO is refused by the export, before
		// anything is read; nothing answers it. (The export's parameters
		// are wasm i32s: 1.5 and NaN arrive as 1 and 0, lengths in range.)
		ex, slot := inst.Get("exports"), inst.Get("slot")
		for _, n := range []any{-1, 64<<10 + 1, 1<<31 - 1} {
			if r := ex.Call("pling_handle", slot, n, 777, 0).Int(); r != -1 {
				t.Errorf("pling_handle of length %v answered %d, want -1", n, r)
			}
		}
		for _, n := range []any{1.5, js.Global().Get("NaN")} {
			if r := parseReply(t, wait(t, inst.Call("handle", n))); r.code() != "INVALID_REQUEST" {
				t.Errorf("handle(%v): %+v, want INVALID_REQUEST", n, r.Error)
			}
		}
	})
}

// Page code that calls the surface from inside a host function gets its
// answer, and the call it interrupted gets its own: the nested request goes
// as a string, and the bridge's nested host calls reuse io only after the
// outer host function read its texts.
func TestLaneNestedCall(t *testing.T) {
	h := lanedHost(t, laneOver, 64<<10)
	g := js.Global().Get("__t")
	g.Set("laneHost", h)
	h.Set("execute", js.Global().Call("eval", `(() => {
	  const l = __t.laneHost.lane, inner = __t.laneHost.execute;
	  return (id, args, ctx) => {
	    const r = inner(id, args, ctx); // reads its texts first
	    l.run(() => {
	      __t.nested = __t.inst.handle(l.toKernel(JSON.stringify({ protocol: "pling.surface/0.1", id: "in", method: "describe" })));
	    });
	    return r;
	  };
	})()`))
	inst := create(t, h, Config{})
	g.Set("inst", inst)
	entries := laneCount(h, "entries")
	r := handleText(t, inst, h, invokeReq("out", "update_note@order", `{"record":"SO-2","note":"outer"}`))
	if !r.OK || string(r.Result) != `{"done":"update_note@order:SO-2"}` {
		t.Fatalf("outer invoke: %+v %s", r.Error, r.Result)
	}
	if got := h.Get("calls").Get("execute").Index(0).Get("args").String(); got != `{"note":"outer"}` {
		t.Fatalf("executor was given %s", got)
	}
	inner := parseReply(t, wait(t, g.Get("nested")))
	if !inner.OK || inner.ID != "in" || !strings.Contains(string(inner.Result), "orders.search") {
		t.Fatalf("nested describe: %+v id %q", inner.Error, inner.ID)
	}
	// The outer request used entryIO; the nested request did not.
	if n := laneCount(h, "entries") - entries; n != 1 {
		t.Fatalf("%d texts written to entryIO, want 1", n)
	}
}

// Only two Uint8Arrays of one length make a lane; anything else leaves the
// host on strings.
func TestLaneNeedsTwoEqualBuffers(t *testing.T) {
	for name, expr := range map[string]string{
		"none":           `({})`,
		"arrays":         `({ io: [], entryIO: [] })`,
		"unequal":        `({ io: new Uint8Array(64), entryIO: new Uint8Array(32) })`,
		"empty":          `({ io: new Uint8Array(0), entryIO: new Uint8Array(0) })`,
		"other typed":    `({ io: new Uint16Array(64), entryIO: new Uint16Array(64) })`,
		"getter throws":  `({ get io() { throw new Error("no"); }, entryIO: new Uint8Array(64) })`,
		"only io":        `({ io: new Uint8Array(64) })`,
		"beyond the max": `({ io: new Uint8Array(2 << 20), entryIO: new Uint8Array(2 << 20) })`,
	} {
		t.Run(name, func(t *testing.T) {
			if l := newLane(js.Global().Call("eval", expr)); l.size != 0 {
				t.Fatalf("lane of %d bytes, want none", l.size)
			}
		})
	}
	if l := newLane(js.Global().Call("eval", `({ io: new Uint8Array(64), entryIO: new Uint8Array(64) })`)); l.size != 64 {
		t.Fatalf("lane of %d bytes, want 64", l.size)
	}
}
