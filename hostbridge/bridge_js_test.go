//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"strings"
	"syscall/js"
	"testing"
)

func TestRegistryActionsReadOnlyWhenVersionChanges(t *testing.T) {
	h := host(t, `__t.host()`)
	inst := create(t, h, Config{})

	for i := 0; i < 3; i++ {
		if r := handle(t, inst, describeReq("d")); !r.OK {
			t.Fatalf("describe failed: %+v", r.Error)
		}
	}
	if got := num(t, h, "calls.actions"); got != 1 {
		t.Fatalf("actions() read %d times for an unchanged version, want 1", got)
	}
	if got := num(t, h, "calls.version"); got < 3 {
		t.Fatalf("version() read %d times, want one per read", got)
	}

	// A new version, with a new action: read once more, and the new action shows.
	js.Global().Call("eval", `(h) => { h.ver = 2; h.actionList.push({ id: "orders.export", effect: "read" }); }`).Invoke(h)
	r := handle(t, inst, describeReq("d2"))
	if got := num(t, h, "calls.actions"); got != 2 {
		t.Fatalf("actions() read %d times after a version change, want 2", got)
	}
	if !strings.Contains(string(r.Result), `"orders.export"`) {
		t.Fatalf("new action missing after version change: %s", r.Result)
	}

	// An invoke reads the registry several times; still no new actions() call.
	if r := handle(t, inst, invokeReq("i1", "orders.search", `{"q":"x"}`)); !r.OK {
		t.Fatalf("invoke failed: %+v", r.Error)
	}
	if got := num(t, h, "calls.actions"); got != 2 {
		t.Fatalf("actions() read %d times after an invoke, want 2", got)
	}
}

func TestRegistryWithoutVersionReadsEveryCallButParsesOnChange(t *testing.T) {
	h := host(t, `__t.host({ version: undefined })`)
	inst := create(t, h, Config{})
	s := slots[int32(inst.Get("slot").Int())]

	for i := 0; i < 3; i++ {
		handle(t, inst, describeReq("d"))
	}
	st := s.reg.stats()
	if st.reads != 3 || st.parses != 1 {
		t.Fatalf("without version(): reads=%d parses=%d, want 3 and 1", st.reads, st.parses)
	}
	js.Global().Call("eval", `(h) => { h.actionList.pop(); }`).Invoke(h)
	r := handle(t, inst, describeReq("d"))
	if st := s.reg.stats(); st.parses != 2 {
		t.Fatalf("changed actions text parsed %d times, want 2", st.parses)
	}
	if strings.Contains(string(r.Result), "update_note@order") {
		t.Fatalf("removed action still described: %s", r.Result)
	}
}

func TestRegistryFailuresAreInternalError(t *testing.T) {
	for _, tc := range []struct{ name, over string }{
		{"actions throws", `{ actions() { throw new Error("boom"); } }`},
		{"actions not text", `{ actions() { return []; } }`},
		{"actions not JSON", `{ actions() { return "[{"; } }`},
		{"version throws", `{ version() { throw new Error("boom"); } }`},
		{"view throws", `{ view() { throw new TypeError("boom"); } }`},
		{"view undefined", `{ view() { return undefined; } }`},
		{"view rejects", `{ view() { return Promise.reject(new Error("no")); } }`},
		{"view wrong shape", `{ view() { return JSON.stringify({ records: "x" }); } }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := create(t, host(t, `__t.host(`+tc.over+`)`), Config{})
			if r := handle(t, inst, describeReq("d")); r.code() != "INTERNAL_ERROR" {
				t.Fatalf("code %q, want INTERNAL_ERROR", r.code())
			}
		})
	}
}

func TestRegistryViewPromise(t *testing.T) {
	h := host(t, `__t.host({ view(q) { const v = __t.host().view.call(this, q); return new Promise((r) => setTimeout(() => r(v), 1)); } })`)
	inst := create(t, h, Config{})
	r := handle(t, inst, describeReq("d"))
	if !r.OK || !strings.Contains(string(r.Result), `"SO-1"`) {
		t.Fatalf("describe over an async view: %+v %s", r.Error, r.Result)
	}
}

func TestExecutorOutcomes(t *testing.T) {
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
		{"throws a string", `() => { throw "str"; }`, false, "INTERNAL_ERROR", ""},
		{"fulfils with a non-string", `() => Promise.resolve({ n: 1 })`, false, "INTERNAL_ERROR", ""},
		{"answers a non-string", `() => 42`, false, "INTERNAL_ERROR", ""},
		{"answers invalid JSON", `() => "{nope"`, false, "INTERNAL_ERROR", ""},
		{"answers an object whose then getter throws", `() => ({ get then() { throw new Error("trap"); } })`, false, "INTERNAL_ERROR", ""},
		{"rejects with an object whose message getter throws", `() => Promise.reject({ get message() { throw new Error("trap"); } })`, false, "INTERNAL_ERROR", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			inst := create(t, host(t, `__t.host({ execute: `+tc.execute+` })`), Config{})
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

func TestExecutorThatNeverSettlesTimesOutWithoutLeaking(t *testing.T) {
	errorsBefore := consoleErrors(t)
	before := baseline(t)
	h := host(t, `__t.host({ execute() { return __t.fast ? Promise.resolve("1") : new Promise((resolve) => { __t.late = resolve; }); } })`)
	inst := create(t, h, Config{ExecuteTimeoutMs: 50})

	r := handle(t, inst, invokeReq("slow", "orders.search", `{}`))
	if r.code() != "INTERNAL_ERROR" || !strings.Contains(r.Error.Message, "in time") {
		t.Fatalf("got %+v, want INTERNAL_ERROR for a timeout", r.Error)
	}
	if n := ReadStats().PendingAwaits; n != 0 {
		t.Fatalf("%d awaits still pending after the timeout", n)
	}

	// The Promise settles late: nobody waits, nothing is logged, nothing breaks.
	js.Global().Call("eval", `__t.late(JSON.stringify({ late: true }))`)
	settleDown()
	if n := consoleErrors(t) - errorsBefore; n != 0 {
		t.Fatalf("late settlement logged %d console errors", n)
	}
	// The bridge looks the host's functions up once: the same one answers now.
	js.Global().Call("eval", `__t.fast = true`)
	defer js.Global().Call("eval", `delete __t.fast`)
	if r := handle(t, inst, invokeReq("next", "orders.search", `{}`)); !r.OK {
		t.Fatalf("call after a late settlement failed: %+v", r.Error)
	}
	inst.Call("close")
	checkNoLeaks(t, before)
}

func TestPanickingCallbackDoesNotStopTheProgram(t *testing.T) {
	inst := create(t, host(t, `__t.host()`), Config{})
	for _, op := range []string{"handle.run", "describe.run", "answer"} {
		t.Run(op, func(t *testing.T) {
			testHook = func(got string) {
				if got == op {
					panic("injected panic in " + op)
				}
			}
			var v js.Value
			switch op {
			case "answer":
				// The step after the executor's Promise settled.
				v = wait(t, inst.Call("handle", invokeReq("p", "orders.search", `{}`)))
				if r := parseReply(t, v); r.code() != "INTERNAL_ERROR" {
					t.Fatalf("panicking %s answered %q, want INTERNAL_ERROR", op, r.code())
				}
			case "handle.run":
				v = wait(t, inst.Call("handle", describeReq("p")))
				if r := parseReply(t, v); r.code() != "INTERNAL_ERROR" {
					t.Fatalf("panicking %s answered %q, want INTERNAL_ERROR", op, r.code())
				}
			default:
				v = wait(t, inst.Call("describe"))
				if !strings.Contains(v.String(), "INTERNAL_ERROR") {
					t.Fatalf("panicking %s answered %s", op, v.String())
				}
			}
			testHook = nil
			if r := handle(t, inst, describeReq("after")); !r.OK {
				t.Fatalf("call after a panic failed: %+v", r.Error)
			}
		})
	}
	testHook = nil
}

func TestBadArgumentsGetStructuredAnswers(t *testing.T) {
	inst := create(t, host(t, `__t.host()`), Config{})
	for _, tc := range []struct {
		name string
		call func() js.Value
		want string
	}{
		{"handle()", func() js.Value { return inst.Call("handle") }, "INVALID_REQUEST"},
		{"handle(42)", func() js.Value { return inst.Call("handle", 42) }, "INVALID_REQUEST"},
		{"handle({})", func() js.Value { return inst.Call("handle", js.Global().Get("Object").New()) }, "INVALID_REQUEST"},
		{"handle(not JSON)", func() js.Value { return inst.Call("handle", "{") }, "INVALID_REQUEST"},
		{"handle(oversize)", func() js.Value { return inst.Call("handle", strings.Repeat(" ", 64<<10+1)) }, "INVALID_REQUEST"},
		{"handle(array)", func() js.Value { return inst.Call("handle", "[]") }, "INVALID_REQUEST"},
		{"describe(42)", func() js.Value { return inst.Call("describe", 42) }, "INVALID_REQUEST"},
		{"describe(unknown field)", func() js.Value { return inst.Call("describe", `{"nope":1}`) }, "INVALID_REQUEST"},
		{"describe(record and limit)", func() js.Value { return inst.Call("describe", `{"record":"SO-1","limit":1}`) }, "INVALID_REQUEST"},
		{"describe(limit 1.5)", func() js.Value { return inst.Call("describe", `{"limit":1.5}`) }, "INVALID_REQUEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := wait(t, tc.call())
			if !strings.Contains(v.String(), `"code":"`+tc.want+`"`) {
				t.Fatalf("answer %s, want code %s", v.String(), tc.want)
			}
		})
	}
	// The exports refuse what names no instance or no text they can read,
	// and nothing answers a refused call.
	ex, slot := inst.Get("exports"), inst.Get("slot").Int()
	for _, tc := range []struct {
		name string
		r    js.Value
	}{
		{"handle: unknown slot", ex.Call("pling_handle", slot+1000, 2, 9001, 0)},
		{"handle: negative length", ex.Call("pling_handle", slot, -1, 9002, 0)},
		{"handle: length beyond entryIO", ex.Call("pling_handle", slot, 1<<20, 9003, 0)},
		{"describe: length below -1", ex.Call("pling_describe", slot, -2, 9004)},
		{"describe: unknown slot", ex.Call("pling_describe", 0, -1, 9005)},
		{"answer: unknown ticket", ex.Call("pling_answer", 1<<30, 0)},
		{"close: unknown slot", ex.Call("pling_close", slot+1000)},
	} {
		if tc.r.Int() != -1 {
			t.Errorf("%s answered %d, want -1", tc.name, tc.r.Int())
		}
	}
	for _, tc := range []struct {
		name string
		args []any
	}{
		{"no args", nil},
		{"host null", []any{js.Null(), "{}"}},
		{"config not text", []any{host(t, `__t.host()`), 1}},
		{"config unknown field", []any{host(t, `__t.host()`), `{"sesion":1}`}},
		{"host without execute", []any{host(t, `__t.host({ execute: undefined })`), `{}`}},
		// The exports are the only way in: a host must take their answers.
		{"host without the lane", []any{host(t, `__t.host({ reply() {}, wait() {}, held() {} })`), `{}`}},
		{"lane of unequal buffers", []any{host(t, `__t.host({ reply() {}, wait() {}, held() {}, io: new Uint8Array(64), entryIO: new Uint8Array(32) })`), `{}`}},
		{"host without reply", []any{host(t, `__t.host({ wait() {}, held() {}, io: new Uint8Array(64), entryIO: new Uint8Array(64) })`), `{}`}},
		{"host without wait", []any{host(t, `__t.host({ reply() {}, held() {}, io: new Uint8Array(64), entryIO: new Uint8Array(64) })`), `{}`}},
		{"negative timeout", []any{host(t, `__t.host()`), `{"executeTimeoutMs":-1}`}},
		{"rate limit without bounds", []any{host(t, `__t.host()`), `{"rateLimit":{}}`}},
	} {
		t.Run("create/"+tc.name, func(t *testing.T) {
			v := theRuntime(t).Call("create", tc.args...)
			if v.Get("error").Type() != js.TypeString {
				t.Fatal("create accepted bad arguments")
			}
		})
	}
}

func TestLoneSurrogateInRequestIsRefused(t *testing.T) {
	h := host(t, `__t.host()`)
	inst := create(t, h, Config{})
	for _, tc := range []struct{ name, input string }{
		{"high alone", `{"q":"\ud800"}`},
		{"low alone", `{"q":"x\udc00"}`},
		{"reversed pair", `{"q":"\udc00\ud800"}`},
		{"in a key", `{"\ud83d":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handle(t, inst, invokeReq("s", "orders.search", tc.input))
			if r.code() != "INVALID_REQUEST" {
				t.Fatalf("code %q, want INVALID_REQUEST", r.code())
			}
		})
	}
	if n := h.Get("calls").Get("execute").Length(); n != 0 {
		t.Fatalf("executor ran %d times on refused input", n)
	}
	// A proper pair is a character, not a surrogate.
	r := handle(t, inst, invokeReq("pair", "orders.search", `{"q":"\ud83d\ude00"}`))
	if !r.OK {
		t.Fatalf("escaped surrogate pair refused: %+v", r.Error)
	}
	if got := h.Get("calls").Get("execute").Index(0).Get("args").String(); got != `{"q":"😀"}` {
		t.Fatalf("argsJson = %s", got)
	}
}

func TestBigIntegerStaysExactIntoArgsJSON(t *testing.T) {
	h := host(t, `__t.host()`)
	inst := create(t, h, Config{})
	const big = "123456789012345678901234567890"
	r := handle(t, inst, invokeReq("big", "update_note@order", `{"record":"SO-1","note":"x","n":`+big+`}`))
	if !r.OK {
		t.Fatalf("invoke failed: %+v", r.Error)
	}
	call := h.Get("calls").Get("execute").Index(0)
	if got := call.Get("id").String(); got != "update_note@order:SO-1" {
		t.Fatalf("executor got action %q", got)
	}
	args := call.Get("args").String()
	if !strings.Contains(args, `"n":`+big) || strings.Contains(args, "record") {
		t.Fatalf("argsJson = %s, want the exact integer and no record parameter", args)
	}
	ctx := call.Get("ctx")
	if ctx.Get("requestId").String() != "big" || ctx.Get("record").String() != "SO-1" || ctx.Get("capability").String() != "update_note@order" {
		t.Fatalf("call context = %s", js.Global().Get("JSON").Call("stringify", ctx).String())
	}
}

func TestSessionSources(t *testing.T) {
	for _, tc := range []struct {
		name, session string
		cfg           Config
		want          string // "" = ok
	}{
		{"sync text", `() => __t.session()`, Config{}, ""},
		{"promise", `() => Promise.resolve(__t.session())`, Config{}, ""},
		{"delayed promise", `() => new Promise((r) => setTimeout(() => r(__t.session()), 5))`, Config{}, ""},
		{"null", `() => null`, Config{}, "SESSION_REQUIRED"},
		{"promise of null", `() => Promise.resolve(null)`, Config{}, "SESSION_REQUIRED"},
		{"throws", `() => { throw new Error("x"); }`, Config{}, "SESSION_INVALID"},
		{"rejects", `() => Promise.reject(new Error("x"))`, Config{}, "SESSION_INVALID"},
		{"never settles", `() => new Promise(() => {})`, Config{HostTimeoutMs: 50}, "SESSION_INVALID"},
		{"not text", `() => ({ agentId: "a" })`, Config{}, "SESSION_INVALID"},
		{"then getter throws", `() => ({ get then() { throw new Error("trap"); } })`, Config{}, "SESSION_INVALID"},
		{"missing scope", `() => __t.session({ scope: undefined })`, Config{}, "SESSION_INVALID"},
		{"expiresAt as text", `() => __t.session({ expiresAt: "tomorrow" })`, Config{}, "SESSION_INVALID"},
		{"lone surrogate id", `() => __t.session({ sessionId: "\ud800" })`, Config{}, "SESSION_INVALID"},
		{"expired", `() => __t.session({ expiresAt: Date.now() - 1000 })`, Config{}, "SESSION_EXPIRED"},
		{"revoked", `() => __t.session({ revokedAt: Date.now() - 1000 })`, Config{}, "SESSION_REVOKED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			h := host(t, `__t.host({ session: `+tc.session+` })`)
			inst := create(t, h, tc.cfg)
			r := handle(t, inst, describeReq("d"))
			if r.code() != tc.want {
				t.Fatalf("handle: code %q, want %q", r.code(), tc.want)
			}
			// The direct describe keeps session codes too.
			v := wait(t, inst.Call("describe"))
			if tc.want != "" && !strings.Contains(v.String(), `"code":"`+tc.want+`"`) {
				t.Fatalf("describe: %s, want %s", v.String(), tc.want)
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}

func TestSessionScopeLimitsCapabilities(t *testing.T) {
	h := host(t, `__t.host({ session: () => __t.session({ scope: ["orders.search"] }) })`)
	inst := create(t, h, Config{})
	r := handle(t, inst, describeReq("d"))
	if !r.OK || strings.Contains(string(r.Result), "update_note") || !strings.Contains(string(r.Result), "orders.search") {
		t.Fatalf("scoped describe: %+v %s", r.Error, r.Result)
	}
	if r := handle(t, inst, invokeReq("i", "update_note@order", `{"record":"SO-1","note":"x"}`)); r.code() != "CAPABILITY_NOT_EXPOSED" {
		t.Fatalf("out-of-scope invoke: %q", r.code())
	}
}

func TestPerCallSessionGetter(t *testing.T) {
	narrow := js.Global().Call("eval", `() => __t.session({ sessionId: "port", scope: ["orders.search"] })`)
	none := js.Global().Call("eval", `() => null`)

	t.Run("open-mode surface", func(t *testing.T) {
		inst := create(t, host(t, `__t.host()`), Config{})
		if r := handle(t, inst, describeReq("open")); !r.OK || !strings.Contains(string(r.Result), "update_note") {
			t.Fatalf("open mode: %+v", r.Error)
		}
		r := handle(t, inst, describeReq("port"), narrow)
		if !r.OK || strings.Contains(string(r.Result), "update_note") {
			t.Fatalf("per-call session not applied: %+v %s", r.Error, r.Result)
		}
		if r := handle(t, inst, describeReq("port"), none); r.code() != "SESSION_REQUIRED" {
			t.Fatalf("per-call null session: %q, want SESSION_REQUIRED", r.code())
		}
	})
	t.Run("surface with its own session", func(t *testing.T) {
		h := host(t, `__t.host({ session: () => __t.session() })`)
		inst := create(t, h, Config{})
		r := handle(t, inst, describeReq("port"), narrow)
		if !r.OK || strings.Contains(string(r.Result), "update_note") {
			t.Fatalf("per-call session not applied: %+v %s", r.Error, r.Result)
		}
	})
}

func TestLimiterAdapter(t *testing.T) {
	for _, tc := range []struct {
		name, allow string
		cfg         Config
		want        string
		retryAfter  int64
	}{
		{"allow", `() => ({ allowed: true })`, Config{}, "", 0},
		{"allow with zero retry", `() => ({ allowed: true, retryAfterMs: 0 })`, Config{}, "", 0},
		{"promise of allow", `() => Promise.resolve({ allowed: true })`, Config{}, "", 0},
		{"deny", `() => ({ allowed: false, retryAfterMs: 1500 })`, Config{}, "RATE_LIMITED", 1500},
		{"deny fractional", `() => ({ allowed: false, retryAfterMs: 0.2 })`, Config{}, "RATE_LIMITED", 1},
		{"undefined", `() => undefined`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"null", `() => null`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"true", `() => true`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"empty object", `() => ({})`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"allowed as text", `() => ({ allowed: "true" })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"allow with retry", `() => ({ allowed: true, retryAfterMs: 5 })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"deny without retry", `() => ({ allowed: false })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"deny with zero retry", `() => ({ allowed: false, retryAfterMs: 0 })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"deny with NaN retry", `() => ({ allowed: false, retryAfterMs: NaN })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"deny with Infinity retry", `() => ({ allowed: false, retryAfterMs: Infinity })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"getter throws", `() => ({ get allowed() { throw new Error("x"); } })`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"throws", `() => { throw new Error("redis down"); }`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"rejects", `() => Promise.reject(new Error("redis down"))`, Config{}, "RATE_LIMIT_UNAVAILABLE", 0},
		{"never settles", `() => new Promise(() => {})`, Config{HostTimeoutMs: 50}, "RATE_LIMIT_UNAVAILABLE", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			h := host(t, `__t.host({ allow(key, now) { this.calls.allow++; this.lastKey = key; this.lastNow = now; return (`+tc.allow+`)(); } })`)
			cfg := tc.cfg
			cfg.RateLimit = &RateLimitConfig{}
			inst := create(t, h, cfg)
			r := handle(t, inst, invokeReq("i", "orders.search", `{}`))
			if r.code() != tc.want {
				t.Fatalf("code %q, want %q", r.code(), tc.want)
			}
			if tc.retryAfter != 0 && r.Error.RetryAfterMs != tc.retryAfter {
				t.Fatalf("retryAfterMs %d, want %d", r.Error.RetryAfterMs, tc.retryAfter)
			}
			executed := h.Get("calls").Get("execute").Length()
			if (tc.want == "") != (executed == 1) {
				t.Fatalf("executor ran %d times with code %q", executed, tc.want)
			}
			if h.Get("lastNow").Type() != js.TypeNumber || h.Get("lastKey").Type() != js.TypeString {
				t.Fatal("limiter not called with (key, nowMs)")
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}

func TestBuiltInRateLimit(t *testing.T) {
	h := host(t, `__t.host({ session: () => __t.session() })`)
	inst := create(t, h, Config{RateLimit: &RateLimitConfig{MaxRequests: 2, WindowMs: 60000}})
	for i := 0; i < 2; i++ {
		if r := handle(t, inst, describeReq("d")); !r.OK {
			t.Fatalf("request %d refused: %+v", i, r.Error)
		}
	}
	r := handle(t, inst, describeReq("d"))
	if r.code() != "RATE_LIMITED" || r.Error.RetryAfterMs <= 0 {
		t.Fatalf("third request: %+v", r.Error)
	}
}

func TestReplayGuardAdapter(t *testing.T) {
	for _, tc := range []struct {
		name, claim string
		cfg         Config
		want        string
	}{
		{"claimed", `() => "claimed"`, Config{}, ""},
		{"promise of claimed", `() => Promise.resolve("claimed")`, Config{}, ""},
		{"replayed", `() => "replayed"`, Config{}, "REPLAY_DETECTED"},
		{"upper case", `() => "CLAIMED"`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"true", `() => true`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"undefined", `() => undefined`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"object", `() => ({ status: "claimed" })`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"throws", `() => { throw new Error("x"); }`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"rejects", `() => Promise.reject("x")`, Config{}, "REPLAY_GUARD_UNAVAILABLE"},
		{"never settles", `() => new Promise(() => {})`, Config{HostTimeoutMs: 50}, "REPLAY_GUARD_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			h := host(t, `__t.host({ session: () => __t.session(), claim(s, r, w) { this.calls.claim++; this.lastClaim = [s, r, w]; return (`+tc.claim+`)(); } })`)
			cfg := tc.cfg
			cfg.Replay = &ReplayConfig{WindowMs: 1000}
			inst := create(t, h, cfg)
			r := handle(t, inst, invokeReq("req-7", "orders.search", `{}`))
			if r.code() != tc.want {
				t.Fatalf("code %q, want %q", r.code(), tc.want)
			}
			executed := h.Get("calls").Get("execute").Length()
			if (tc.want == "") != (executed == 1) {
				t.Fatalf("executor ran %d times with code %q", executed, tc.want)
			}
			claim := js.Global().Get("JSON").Call("stringify", h.Get("lastClaim")).String()
			if claim != `["sess-1","req-7",1000]` {
				t.Fatalf("claim arguments %s", claim)
			}
			inst.Call("close")
			checkNoLeaks(t, before)
		})
	}
}

func TestBuiltInReplayGuard(t *testing.T) {
	h := host(t, `__t.host({ session: () => __t.session() })`)
	inst := create(t, h, Config{Replay: &ReplayConfig{}})
	if r := handle(t, inst, invokeReq("once", "orders.search", `{}`)); !r.OK {
		t.Fatalf("first invoke: %+v", r.Error)
	}
	if r := handle(t, inst, invokeReq("once", "orders.search", `{}`)); r.code() != "REPLAY_DETECTED" {
		t.Fatalf("second invoke: %q", r.code())
	}
	if n := h.Get("calls").Get("execute").Length(); n != 1 {
		t.Fatalf("executor ran %d times, want 1", n)
	}
}

func TestAuditHooks(t *testing.T) {
	for _, tc := range []struct {
		name, audit string
		cfg         Config
		wantErrors  int
	}{
		{"sync sink", `(e) => { __t.events.push(JSON.parse(e)); }`, Config{}, 0},
		{"async sink", `(e) => { __t.events.push(JSON.parse(e)); return Promise.resolve(); }`, Config{}, 0},
		{"throwing sink", `(e) => { __t.events.push(JSON.parse(e)); throw new Error("disk full"); }`, Config{}, 1},
		// A sink's Promise is the host's to watch (js/pling-surface.js
		// reports its failure to onAuditError): the reply never waits for it.
		{"hanging sink", `(e) => { __t.events.push(JSON.parse(e)); return new Promise(() => {}); }`, Config{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseline(t)
			js.Global().Call("eval", `__t.events = []; __t.auditErrors = [];`)
			h := host(t, `__t.host({ audit: `+tc.audit+`, auditError(reason, message, e) { __t.auditErrors.push({ reason, message, event: JSON.parse(e) }); } })`)
			inst := create(t, h, tc.cfg)
			r := handle(t, inst, invokeReq("a1", "update_note@order", `{"record":"SO-2","note":"secret note"}`))
			if !r.OK {
				t.Fatalf("audit failure changed the response: %+v", r.Error)
			}
			events := js.Global().Get("__t").Get("events")
			if events.Length() != 1 {
				t.Fatalf("%d audit events, want 1", events.Length())
			}
			ev := js.Global().Get("JSON").Call("stringify", events.Index(0)).String()
			for _, want := range []string{`"requestId":"a1"`, `"method":"invoke"`, `"capability":"update_note@order"`, `"recordId":"SO-2"`, `"outcome":"ok"`} {
				if !strings.Contains(ev, want) {
					t.Fatalf("event %s lacks %s", ev, want)
				}
			}
			if strings.Contains(ev, "secret") {
				t.Fatalf("event carries input: %s", ev)
			}
			inst.Call("close")
			checkNoLeaks(t, before) // nothing waits for the hanging sink
			if n := js.Global().Get("__t").Get("auditErrors").Length(); n != tc.wantErrors {
				t.Fatalf("%d audit errors reported, want %d", n, tc.wantErrors)
			}
			if tc.wantErrors == 1 && tc.name != "hanging sink" {
				reason := js.Global().Get("__t").Get("auditErrors").Index(0).Get("reason")
				if reason.Get("message").String() != "disk full" {
					t.Fatal("onAuditError did not get the sink's own error")
				}
			}
		})
	}
}

func TestExposeFunctionIsAskedInBulkOncePerVersion(t *testing.T) {
	h := host(t, `__t.host({ expose(ids) { this.exposeCalls = (this.exposeCalls || 0) + 1; return JSON.stringify(JSON.parse(ids).map((id) => id === "orders.search")); } })`)
	inst := create(t, h, Config{})
	for i := 0; i < 3; i++ {
		r := handle(t, inst, describeReq("d"))
		if !r.OK || strings.Contains(string(r.Result), "update_note") {
			t.Fatalf("expose not applied: %+v %s", r.Error, r.Result)
		}
	}
	if n := h.Get("exposeCalls").Int(); n != 1 {
		t.Fatalf("expose() called %d times for one version, want 1", n)
	}
	if r := handle(t, inst, invokeReq("i", "update_note@order", `{"record":"SO-1","note":"x"}`)); r.code() != "CAPABILITY_NOT_EXPOSED" {
		t.Fatalf("unexposed invoke: %q", r.code())
	}
}

func TestExposeList(t *testing.T) {
	inst := create(t, host(t, `__t.host()`), Config{Expose: []string{"update_note@order"}})
	r := handle(t, inst, describeReq("d"))
	if !r.OK || strings.Contains(string(r.Result), "orders.search") || !strings.Contains(string(r.Result), "update_note@order") {
		t.Fatalf("expose list not applied: %s", r.Result)
	}
}

func TestDescribeDirect(t *testing.T) {
	inst := create(t, host(t, `__t.host()`), Config{App: "orders", RecordLimit: 1})
	var d struct {
		OK     bool `json:"ok"`
		Result struct {
			App     string `json:"app"`
			Context struct {
				Records      []struct{ ID string } `json:"records"`
				RecordsTotal int                   `json:"recordsTotal"`
			} `json:"context"`
		} `json:"result"`
	}
	for _, tc := range []struct {
		input string
		want  []string
	}{
		{"", []string{"SO-1"}},
		{`{"offset":1}`, []string{"SO-2"}},
		{`{"record":["SO-2","SO-1"]}`, []string{"SO-2", "SO-1"}},
		{`{"limit":0}`, nil},
	} {
		var v js.Value
		if tc.input == "" {
			v = wait(t, inst.Call("describe"))
		} else {
			v = wait(t, inst.Call("describe", tc.input))
		}
		d.Result.Context.Records = nil
		if err := json.Unmarshal([]byte(v.String()), &d); err != nil || !d.OK {
			t.Fatalf("describe(%s): %s", tc.input, v.String())
		}
		var got []string
		for _, r := range d.Result.Context.Records {
			got = append(got, r.ID)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || d.Result.App != "orders" || d.Result.Context.RecordsTotal != 2 {
			t.Fatalf("describe(%s) = %s", tc.input, v.String())
		}
	}
}

func TestClosedSurface(t *testing.T) {
	before := baseline(t)
	inst := create(t, host(t, `__t.host()`), Config{})
	if got := ReadStats().LiveFuncs - before.LiveFuncs; got != 0 {
		t.Fatalf("an open surface holds %d funcs, want none", got)
	}
	if got := ReadStats().Surfaces - before.Surfaces; got != 1 {
		t.Fatalf("%d surfaces open, want 1", got)
	}
	ex, slot := inst.Get("exports"), inst.Get("slot")
	if r := ex.Call("pling_close", slot).Int(); r != 0 {
		t.Fatalf("pling_close answered %d, want 0", r)
	}
	// Closed: every export refuses the slot, a second close included.
	for name, r := range map[string]js.Value{
		"handle":   ex.Call("pling_handle", slot, 2, 1, 0),
		"describe": ex.Call("pling_describe", slot, -1, 1),
		"close":    ex.Call("pling_close", slot),
	} {
		if r.Int() != -1 {
			t.Errorf("%s after close answered %d, want -1", name, r.Int())
		}
	}
	if got := ReadStats(); got.LiveFuncs != before.LiveFuncs || got.Surfaces != before.Surfaces {
		t.Fatalf("after close: %+v, baseline %+v", got, before)
	}
}

func TestManyCallsLeaveNothingBehind(t *testing.T) {
	before := baseline(t)
	h := host(t, `__t.host({ session: () => Promise.resolve(__t.session()), execute: () => new Promise((r) => setTimeout(() => r("true"), 0)) })`)
	inst := create(t, h, Config{RateLimit: &RateLimitConfig{MaxRequests: 1000, WindowMs: 1000}, Replay: &ReplayConfig{}})
	promises := make([]js.Value, 0, 100)
	for i := 0; i < 100; i++ {
		promises = append(promises, inst.Call("handle", invokeReq("m"+string(rune('a'+i%26))+string(rune('a'+i/26)), "orders.search", `{}`)))
	}
	for _, p := range promises {
		if r := parseReply(t, wait(t, p)); !r.OK {
			t.Fatalf("concurrent call failed: %+v", r.Error)
		}
	}
	inst.Call("close")
	checkNoLeaks(t, before)
}
