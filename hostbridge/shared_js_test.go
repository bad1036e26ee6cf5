//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"strings"
	"syscall/js"
	"testing"
)

// replies is a JS reply function that records every call's arguments.
func replies(t *testing.T) (fn js.Value, calls func() [][]js.Value) {
	t.Helper()
	var got [][]js.Value
	f := js.FuncOf(func(_ js.Value, args []js.Value) any {
		got = append(got, append([]js.Value(nil), args...))
		return nil
	})
	t.Cleanup(f.Release)
	return f.Value, func() [][]js.Value { return got }
}

// waitCalls waits, outside any callback, until n replies arrived.
func waitCalls(t *testing.T, calls func() [][]js.Value, n int) [][]js.Value {
	t.Helper()
	for i := 0; i < 400 && len(calls()) < n; i++ {
		wait(t, js.Global().Call("eval", "new Promise((r) => setTimeout(r, 5))"))
	}
	if got := calls(); len(got) != n {
		t.Fatalf("%d replies, want %d", len(got), n)
	}
	return calls()
}

func TestHandleWithReplyFunction(t *testing.T) {
	h := host(t, `__t.host({ session: () => __t.session() })`)
	inst := create(t, h, Config{})
	fn, calls := replies(t)

	if r := inst.Call("handle", describeReq("r1"), js.Undefined(), fn); !r.IsUndefined() {
		t.Fatalf("handle with a reply function returned %v, want undefined", r.Type())
	}
	if r := inst.Call("handle", 42, js.Undefined(), fn); !r.IsUndefined() {
		t.Fatalf("handle of a bad request with a reply function returned %v, want undefined", r.Type())
	}
	got := waitCalls(t, calls, 2)
	for i, c := range got {
		if len(c) != 1 || c[0].Type() != js.TypeString {
			t.Fatalf("reply %d: %d arguments, want one string", i, len(c))
		}
	}
	if !strings.Contains(got[0][0].String(), `"ok":true`) || !strings.Contains(got[0][0].String(), `"orders.search"`) {
		t.Fatalf("describe reply: %s", got[0][0].String())
	}
	if !strings.Contains(got[1][0].String(), "INVALID_REQUEST") {
		t.Fatalf("bad request reply: %s", got[1][0].String())
	}
	// Without a reply function the answer is still a Promise.
	if r := handle(t, inst, describeReq("r2")); !r.OK {
		t.Fatalf("describe through the Promise failed: %+v", r.Error)
	}
}

// TestSharedCapabilityList pins shared mode: the list is sent once per
// version and scope, left out of later answers, and sent again when it
// changes or when the caller failed to take it.
func TestSharedCapabilityList(t *testing.T) {
	h := host(t, `(() => { const h = __t.host({ scope: ["orders.search", "update_note@order"] });
	  h.session = () => __t.session({ scope: h.scope }); return h; })()`)
	inst := create(t, h, Config{})
	fn, calls := replies(t)
	full := func(id string) string { return string(handle(t, inst, describeReq(id)).Result) }

	// ask sends a describe in shared mode and returns the reassembled result
	// with the list's id, and whether the list came with it.
	n := 0
	var held string // the list the caller keeps, as a real caller would
	ask := func(id string) (result string, capsID float64, sent bool) {
		t.Helper()
		inst.Call("handle", describeReq(id), js.Undefined(), fn, true)
		n++
		c := waitCalls(t, calls, n)[n-1]
		if len(c) < 2 {
			t.Fatalf("shared describe answered without a list id: %d arguments", len(c))
		}
		text, capsID := c[0].String(), c[1].Float()
		if !strings.Contains(text, `"capabilities":[]`) {
			t.Fatalf("shared answer still holds the list: %s", text)
		}
		if len(c) == 3 {
			held, sent = c[2].String(), true
		}
		var r reply
		if err := json.Unmarshal([]byte(strings.Replace(text, `"capabilities":[]`, `"capabilities":`+held, 1)), &r); err != nil {
			t.Fatalf("reassembled answer: %v", err)
		}
		return string(r.Result), capsID, sent
	}

	r1, id1, sent1 := ask("s1")
	if !sent1 || r1 != full("f1") {
		t.Fatalf("first shared answer: sent=%v\n got %s\nwant %s", sent1, r1, full("f1"))
	}
	r2, id2, sent2 := ask("s2")
	if sent2 || id2 != id1 || r2 != r1 {
		t.Fatalf("second shared answer: sent=%v id %v (first %v)\n got %s\nwant %s", sent2, id2, id1, r2, r1)
	}

	// Another scope is another list: sent, with a new id.
	js.Global().Call("eval", `(h) => { h.scope = ["orders.search"]; }`).Invoke(h)
	r3, id3, sent3 := ask("s3")
	if !sent3 || id3 == id1 || r3 != full("f3") || strings.Contains(r3, "update_note@order") {
		t.Fatalf("answer for a new scope: sent=%v id %v\n got %s\nwant %s", sent3, id3, r3, full("f3"))
	}

	// Invoke answers are never split.
	inst.Call("handle", invokeReq("s4", "orders.search", `{"q":"x"}`), js.Undefined(), fn, true)
	n++
	if c := waitCalls(t, calls, n)[n-1]; len(c) != 1 || !strings.Contains(c[0].String(), `"ok":true`) {
		t.Fatalf("shared-mode invoke: %d arguments, %s", len(c), c[0].String())
	}

	// A reply function that throws on the list has not kept it: the next
	// answer sends it again.
	js.Global().Call("eval", `(h) => { h.ver = 2; h.actionList.push({ id: "orders.extra", effect: "read" }); }`).Invoke(h)
	throwing := js.Global().Call("eval", `(calls) => (...a) => { calls.push(a.length); if (a.length === 3) throw new Error("not kept"); }`)
	counts := js.Global().Get("Array").New()
	inst.Call("handle", describeReq("s5"), js.Undefined(), throwing.Invoke(counts), true)
	for i := 0; i < 400 && counts.Length() == 0; i++ {
		wait(t, js.Global().Call("eval", "new Promise((r) => setTimeout(r, 5))"))
	}
	if counts.Length() != 1 || counts.Index(0).Int() != 3 {
		t.Fatalf("throwing reply got %d calls", counts.Length())
	}
	if _, _, sent := ask("s6"); !sent {
		t.Fatal("the list was not sent again after the caller failed to keep it")
	}
}

// TestModuleSharedRepliesMatchDirectAnswers checks the JS runtime's side of
// shared mode: replies posted by listen() carry the same descriptions as
// direct handle() calls, across repeats and a scope change.
func TestModuleSharedRepliesMatchDirectAnswers(t *testing.T) {
	fx(t)
	mod := importJS(t, "../js/pling-kernel.js")
	api := mod.Call("fromRuntime", theRuntime(t), goOpts(t))
	run := js.Global().Call("eval", `(async (api) => {
	  const origin = "https://shop.example";
	  const listeners = new Set();
	  const win = { location: { origin }, posted: [],
	    addEventListener: (type, fn) => listeners.add(fn), removeEventListener: (type, fn) => listeners.delete(fn),
	    postMessage(message) { win.posted.push(JSON.parse(JSON.stringify(message))); } };
	  const had = Object.prototype.hasOwnProperty.call(globalThis, "window");
	  const old = globalThis.window;
	  globalThis.window = win;
	  try {
	    const actions = [];
	    for (let i = 0; i < 5; i++) actions.push({ id: "a" + i, effect: "read", inputSchema: { type: "object" } });
	    let scope = actions.map((a) => a.id);
	    const surface = api.createSurface({
	      registry: api.defineRegistry({ actions, records: [{ id: "R1", kind: "k", fields: { x: 1 } }], version: 1 }),
	      execute: () => ({}),
	      session: () => ({ agentId: "a", sessionId: "s", userId: "u", expiresAt: Date.now() + 3600e3, scope }),
	    });
	    surface.listen();
	    const ask = async (id) => {
	      const before = win.posted.length;
	      for (const fn of [...listeners]) fn({ isTrusted: true, origin, source: win,
	        data: { channel: "pling.surface", kind: "request", envelope: { protocol: "pling.surface/0.1", id, method: "describe" } } });
	      for (let i = 0; i < 400 && win.posted.length === before; i++) await new Promise((r) => setTimeout(r, 5));
	      return win.posted[before].envelope;
	    };
	    const direct = async (id) => surface.handle({ protocol: "pling.surface/0.1", id, method: "describe" });
	    const problems = [];
	    const same = async (id, what) => {
	      const [a, b] = [await ask(id), await direct(id)];
	      if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(what + ": " + JSON.stringify(a) + " != " + JSON.stringify(b));
	      return a;
	    };
	    const first = await same("m1", "first");
	    await same("m2", "repeat");
	    await same("m3", "repeat again");
	    scope = ["a1", "a3"];
	    const narrowed = await same("m4", "new scope");
	    if (narrowed.result.capabilities.length !== 2 || first.result.capabilities.length !== 5) problems.push("lists not as scoped");
	    scope = actions.map((a) => a.id);
	    await same("m5", "old scope again");
	    surface.close();
	    return problems.join("\n");
	  } finally {
	    if (had) globalThis.window = old; else delete globalThis.window;
	  }
	})`)
	if problems := wait(t, run.Invoke(api)).String(); problems != "" {
		t.Fatal(problems)
	}
}
