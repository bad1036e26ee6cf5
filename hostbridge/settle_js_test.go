//go:build js && wasm

package hostbridge

import (
	"strings"
	"syscall/js"
	"testing"
)

// settlingHost builds a host whose executeAsync wraps exec the way
// js/pling-surface.js does: text at once for an immediate answer, else
// undefined and a later settle(id, ok, value). execute itself fails, so a
// test passes only when executeAsync was used.
func settlingHost(t *testing.T, exec string) js.Value {
	t.Helper()
	return host(t, `(() => {
	  const exec = `+exec+`;
	  const isThenable = (v) => v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
	  return __t.host({
	    execute() { throw new Error("execute must not be called when executeAsync exists"); },
	    executeAsync(id, args, ctx, settle, callId) {
	      const r = exec(id, args, ctx);
	      if (!isThenable(r)) return r;
	      Promise.resolve(r).then((text) => settle(callId, true, text), (reason) => settle(callId, false, reason));
	      return undefined;
	    },
	  });
	})()`)
}

func TestSettlingExecutorOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name, execute string
		wantOK        bool
		wantCode      string
		wantResult    string
	}{
		{"fulfils", `() => Promise.resolve(JSON.stringify({ n: 1 }))`, true, "", `{"n":1}`},
		{"answers synchronously", `() => JSON.stringify([1, 2])`, true, "", `[1,2]`},
		{"business failure", `() => Promise.resolve(JSON.stringify({ error: { code: "LOCKED", message: "no", stack: "s" } }))`, true, "", `{"error":{"code":"LOCKED","message":"no"}}`},
		{"rejects", `() => Promise.reject(new Error("backend down"))`, false, "INTERNAL_ERROR", ""},
		{"rejects with undefined", `() => Promise.reject()`, false, "INTERNAL_ERROR", ""},
		{"throws synchronously", `() => { throw new Error("sync"); }`, false, "INTERNAL_ERROR", ""},
		{"fulfils with a non-string", `() => Promise.resolve({ n: 1 })`, false, "INTERNAL_ERROR", ""},
		{"answers a non-string", `() => 42`, false, "INTERNAL_ERROR", ""},
		{"answers invalid JSON", `() => "{nope"`, false, "INTERNAL_ERROR", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			inst := create(t, settlingHost(t, tc.execute), Config{})
			r := handle(t, inst, invokeReq("i", "orders.search", `{}`))
			if r.OK != tc.wantOK || r.code() != tc.wantCode {
				t.Fatalf("ok=%v code=%q, want ok=%v code=%q", r.OK, r.code(), tc.wantOK, tc.wantCode)
			}
			if tc.wantResult != "" && string(r.Result) != tc.wantResult {
				t.Fatalf("result %s, want %s", r.Result, tc.wantResult)
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}

func TestSettlingExecutorThatNeverSettlesTimesOutWithoutLeaking(t *testing.T) {
	errorsBefore := consoleErrors(t)
	before := baseline(t)
	h := settlingHost(t, `() => new Promise((resolve) => { __t.late = resolve; })`)
	inst := create(t, h, Config{ExecuteTimeoutMs: 50})

	r := handle(t, inst, invokeReq("slow", "orders.search", `{}`))
	if r.code() != "INTERNAL_ERROR" || !strings.Contains(r.Error.Message, "in time") {
		t.Fatalf("got %+v, want INTERNAL_ERROR for a timeout", r.Error)
	}
	if n := ReadStats().PendingAwaits; n != 0 {
		t.Fatalf("%d awaits still pending after the timeout", n)
	}
	// The answer comes late: nobody waits, nothing is logged, nothing breaks.
	js.Global().Call("eval", `__t.late(JSON.stringify({ late: true }))`)
	settleDown()
	if n := consoleErrors(t) - errorsBefore; n != 0 {
		t.Fatalf("late settlement logged %d console errors", n)
	}
	if r := handle(t, inst, invokeReq("next", "orders.search", `{}`)); r.code() != "INTERNAL_ERROR" {
		t.Fatalf("second never-settling call: %+v", r)
	}
	inst.Call("close")
	checkNoLeaks(t, before)
}

// TestTimedExecutor: a host that keeps the time limit itself is given the
// configured limit, and its timeout settlement ends the call with the
// kernel's timeout answer and nothing left waiting.
func TestTimedExecutor(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		wantOK     bool
		wantMsg    string
	}{
		{"answers later", `Promise.resolve().then(() => settle(callId, true, JSON.stringify({ n: 1 })))`, true, ""},
		{"answers at once", `return JSON.stringify({ n: 1 })`, true, ""},
		{"times out", `Promise.resolve().then(() => settle(callId, false, undefined, true))`, false, "executor did not answer in time"},
		{"rejects", `Promise.resolve().then(() => settle(callId, false, new Error("no")))`, false, "executor failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			h := host(t, `__t.host({
			  execute() { throw new Error("execute must not be called when executeTimed exists"); },
			  executeTimed(id, args, ctx, settle, callId, limitMs) {
			    this.limits = (this.limits || []).concat([limitMs]);
			    `+tc.body+`;
			  },
			})`)
			inst := create(t, h, Config{ExecuteTimeoutMs: 1234})
			r := handle(t, inst, invokeReq("i", "orders.search", `{}`))
			if r.OK != tc.wantOK || (tc.wantMsg != "" && (r.Error == nil || r.Error.Message != tc.wantMsg)) {
				t.Fatalf("got ok=%v %+v, want ok=%v %q", r.OK, r.Error, tc.wantOK, tc.wantMsg)
			}
			if got := h.Get("limits"); got.Length() != 1 || got.Index(0).Int() != 1234 {
				t.Fatalf("executeTimed was given limits %v, want [1234]", js.Global().Get("JSON").Call("stringify", got))
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}
