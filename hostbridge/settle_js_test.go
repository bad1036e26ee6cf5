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
