//go:build js && wasm

package hostbridge

import (
	"strings"
	"syscall/js"
	"testing"
)

// TestHostSessionMayAnswerTrueForTheSameSession pins the kernel side of the
// repeat answer: true means the session of the host's last session text,
// never anything else.
func TestHostSessionMayAnswerTrueForTheSameSession(t *testing.T) {
	h := host(t, `(() => { const h = __t.host(); h.answers = [];
	  h.session = () => h.answers.length ? h.answers.shift() : true; return h; })()`)
	push := func(vals ...any) {
		t.Helper()
		for _, v := range vals {
			h.Get("answers").Call("push", v)
		}
	}
	inst := create(t, h, Config{})
	scopeOf := func(r reply) string {
		if !r.OK {
			return "error " + r.code()
		}
		if strings.Contains(string(r.Result), "update_note@order") {
			return "both"
		}
		return "search"
	}

	// true with nothing answered before: no session to repeat.
	if r := handle(t, inst, describeReq("d0")); r.code() != "SESSION_INVALID" {
		t.Fatalf("true before any text: %+v", r)
	}
	narrow := fx(t).Call("session", js.ValueOf(map[string]any{"scope": []any{"orders.search"}}))
	push(narrow)
	if got := scopeOf(handle(t, inst, describeReq("d1"))); got != "search" {
		t.Fatalf("text: %s", got)
	}
	if got := scopeOf(handle(t, inst, describeReq("d2"))); got != "search" {
		t.Fatalf("true after text: %s, want the same session", got)
	}

	// A per-call getter's session never becomes what true repeats.
	wide := fx(t).Call("session")
	perCall := js.FuncOf(func(js.Value, []js.Value) any { return wide })
	defer perCall.Release()
	if got := scopeOf(handle(t, inst, describeReq("d3"), perCall.Value)); got != "both" {
		t.Fatalf("per-call session: %s", got)
	}
	if got := scopeOf(handle(t, inst, describeReq("d4"))); got != "search" {
		t.Fatalf("true after a per-call session: %s, want the host's last", got)
	}
	// A per-call getter cannot answer true.
	yes := js.FuncOf(func(js.Value, []js.Value) any { return true })
	defer yes.Release()
	if r := handle(t, inst, describeReq("d5"), yes.Value); r.code() != "SESSION_INVALID" {
		t.Fatalf("per-call true: %+v", r)
	}

	// After text that is not a session, true repeats nothing.
	push(`{"agentId":`)
	if r := handle(t, inst, describeReq("d6")); r.code() != "SESSION_INVALID" {
		t.Fatalf("malformed text: %+v", r)
	}
	if r := handle(t, inst, describeReq("d7")); r.code() != "SESSION_INVALID" {
		t.Fatalf("true after malformed text: %+v", r)
	}
	// false is not an answer.
	push(false)
	if r := handle(t, inst, describeReq("d8")); r.code() != "SESSION_INVALID" {
		t.Fatalf("false: %+v", r)
	}
}

// TestModuleSessionGetterRepeats checks the JS runtime's host session
// getter: true exactly when the session's fields are those of the last text.
func TestModuleSessionGetterRepeats(t *testing.T) {
	fx(t)
	mod := importJS(t, "../js/pling-kernel.js")
	run := js.Global().Call("eval", `(async (mod, runtime) => {
	  let host;
	  const api = mod.fromRuntime({ protocol: runtime.protocol, entryKey: runtime.entryKey, stats: () => runtime.stats(),
	    create(h, config) { host = h; return runtime.create(h, config); } }, { go: globalThis.__plingTestGo });
	  let current = { agentId: "a", sessionId: "s", userId: "u", expiresAt: 1e13, scope: ["x", "y"] };
	  let pending = null;
	  const surface = api.createSurface({ registry: api.defineRegistry({ actions: [] }), execute: () => ({}),
	    session: () => (pending !== null ? pending : current) });
	  const problems = [];
	  // Answers are codes (hostbridge/answers_js.go): a text's length in the
	  // host's io buffer, -6 the same session, -2 none, -5 a Promise parked.
	  const read = (v) => (v >= 0 ? new TextDecoder().decode(host.io.subarray(0, v)) : v === -6 ? true : v === -2 ? null : v);
	  const expect = (what, want) => {
	    const got = read(host.session());
	    const kind = got === true ? "true" : typeof got === "string" ? "text" : String(got);
	    if (kind !== want) problems.push(what + ": got " + kind + ", want " + want);
	    return got;
	  };
	  const first = expect("first", "text");
	  expect("same object", "true");
	  current = { ...current, scope: ["x", "y"] };
	  expect("equal copy", "true");
	  current.scope.push("z");
	  const grown = expect("scope grown in place", "text");
	  if (!grown.includes('"z"')) problems.push("grown scope text lacks z: " + grown);
	  expect("again", "true");
	  current.scope[0] = "w";
	  expect("scope changed in place", "text");
	  expect("changed again", "true");
	  Object.defineProperty(current.scope, 1, { enumerable: true, configurable: true, get: () => "y" });
	  expect("a scope element made an accessor", "text");
	  current.scope = ["w", "y", "z"];
	  expect("accessor gone", "text");
	  current.scope.length = 4;
	  expect("scope with a hole", "text");
	  current.scope = ["w", "y", "z"];
	  expect("hole gone", "text");
	  Object.setPrototypeOf(current.scope, Object.create(Array.prototype));
	  expect("scope of another prototype", "text");
	  current.scope = ["w", "y", "z"];
	  expect("prototype back", "text");
	  expect("prototype back, same again", "true");
	  current.userId = "u2";
	  expect("user", "text");
	  current.delegationId = "d";
	  expect("delegation", "text");
	  current.sessionId = "s2";
	  expect("session id", "text");
	  expect("ids again", "true");
	  current.expiresAt = new Date(2e13);
	  expect("expiry", "text");
	  expect("date again", "true");
	  current.revokedAt = 5;
	  expect("revoked", "text");
	  current.scope = { length: 0 };
	  expect("scope not an array", "text");
	  expect("not an array again", "text");
	  current.scope = ["x"];
	  current.agentId = { toString: () => "a" };
	  expect("object field", "text");
	  current.agentId = "a";
	  expect("back to plain", "text");
	  expect("plain again", "true");
	  const saved = current;
	  current = null;
	  expect("no session", "null");
	  current = saved;
	  expect("after null", "text");
  expect("after null, same again", "true");
	  pending = Promise.resolve(saved);
	  if (host.session() !== -5) problems.push("a Promise session was not parked");
	  host.wait(1 << 30, 1, 1); // takes the parked Promise; its answer finds no ticket
	  pending = null;
	  expect("after a Promise", "text");
	  expect("after a Promise, same again", "text");
	  surface.close();
	  if (first.length < 10) problems.push("first text: " + first);
	  return problems.join("\n");
	})`)
	if problems := wait(t, run.Invoke(mod, theRuntime(t))).String(); problems != "" {
		t.Fatal(problems)
	}
}
