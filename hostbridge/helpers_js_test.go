//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"
)

// fixture is evaluated once: a factory of host objects that count their
// calls, plus a console.error counter ("call to released function" is what
// syscall/js logs when JS calls a released func).
const fixture = `(() => {
  const t = {
    consoleErrors: [],
    host(over) {
      const h = {
        calls: { version: 0, actions: 0, view: 0, execute: [], session: 0, allow: 0, claim: 0, audit: [], auditError: [] },
        ver: 1,
        actionList: [
          { id: "orders.search", effect: "read",
            inputSchema: { type: "object", properties: { q: { type: "string" } } } },
          { id: "update_note@order", effect: "write", record: { kind: "order", total: 2 },
            inputSchema: { type: "object", properties: { note: { type: "string" }, n: { type: "integer" } }, additionalProperties: false } },
        ],
        records: [
          { id: "SO-1", kind: "order", fields: { note: "a" } },
          { id: "SO-2", kind: "order", fields: { note: "b" } },
        ],
        version() { this.calls.version++; return this.ver; },
        actions() { this.calls.actions++; return JSON.stringify(this.actionList); },
        view(q) {
          this.calls.view++;
          q = JSON.parse(q);
          const recs = q.ids ? this.records.filter((r) => q.ids.includes(r.id)) : this.records.slice(q.offset, q.offset + q.limit);
          return JSON.stringify({ route: "/orders", records: recs, recordIds: this.records.map((r) => r.id),
            recordIdsTotal: this.records.length, recordsTotal: this.records.length, state: {} });
        },
        execute(id, args, ctx) {
          this.calls.execute.push({ id, args, ctx: JSON.parse(ctx) });
          return Promise.resolve(JSON.stringify({ done: id }));
        },
      };
      return Object.assign(h, over || {});
    },
    session(over) {
      return JSON.stringify(Object.assign({ agentId: "agent-1", sessionId: "sess-1", userId: "user-1",
        expiresAt: Date.now() + 3600e3, scope: ["orders.search", "update_note@order"] }, over || {}));
    },
  };
  const orig = console.error;
  console.error = (...args) => { t.consoleErrors.push(args.map(String).join(" ")); orig.apply(console, args); };
  globalThis.__t = t;
  return t;
})()`

var fixtureT js.Value

func fx(t testing.TB) js.Value {
	t.Helper()
	if fixtureT.IsUndefined() || fixtureT.IsNull() || fixtureT.Type() == 0 {
		fixtureT = js.Global().Call("eval", fixture)
	}
	return fixtureT
}

// host evaluates a JS expression that builds a host; inside it __t is the fixture.
func host(t *testing.T, expr string) js.Value {
	t.Helper()
	fx(t)
	return js.Global().Call("eval", "(() => "+expr+")()")
}

var rt js.Value

func theRuntime(t *testing.T) js.Value {
	t.Helper()
	if rt.Type() != js.TypeObject {
		rt = NewRuntime()
	}
	return rt
}

// create makes an instance through the JS-facing runtime, as a page would.
func create(t *testing.T, h js.Value, cfg Config) js.Value {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inst := theRuntime(t).Call("create", h, string(b))
	if e := inst.Get("error"); e.Type() == js.TypeString {
		t.Fatalf("create: %s", e.String())
	}
	t.Cleanup(func() {
		if inst.Get("close").Type() == js.TypeFunction {
			inst.Call("close")
		}
	})
	return inst
}

// wait awaits a JS Promise from the test goroutine (never a callback).
// Its time limit is a JS timer raced with p, not a Go timer: a Go timer
// pending while the program waits makes the runtime re-arm a JS timeout
// on every entry, which tests that count timers would see.
func wait(t *testing.T, p js.Value) js.Value {
	t.Helper()
	v, err := awaitJS(withJSTimeout.Invoke(p, 20000))
	if err != nil {
		t.Fatalf("await: %v", err)
	}
	return v
}

var withJSTimeout = js.Global().Call("eval", `(p, ms) => {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no answer in " + ms + " ms")), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}`)

type reply struct {
	Protocol string          `json:"protocol"`
	ID       string          `json:"id"`
	OK       bool            `json:"ok"`
	Result   json.RawMessage `json:"result"`
	After    json.RawMessage `json:"after"`
	Error    *struct {
		Code         string `json:"code"`
		Message      string `json:"message"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	} `json:"error"`
}

func (r reply) code() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

func parseReply(t *testing.T, v js.Value) reply {
	t.Helper()
	if v.Type() != js.TypeString {
		t.Fatalf("answer is %s, want JSON text", v.Type())
	}
	var r reply
	if err := json.Unmarshal([]byte(v.String()), &r); err != nil {
		t.Fatalf("answer %q: %v", v.String(), err)
	}
	return r
}

func handle(t *testing.T, inst js.Value, request string, session ...js.Value) reply {
	t.Helper()
	args := []any{request}
	for _, s := range session {
		args = append(args, s)
	}
	return parseReply(t, wait(t, inst.Call("handle", args...)))
}

func describeReq(id string) string {
	return `{"protocol":"pling.surface/0.1","id":"` + id + `","method":"describe"}`
}

func invokeReq(id, capability, input string) string {
	return `{"protocol":"pling.surface/0.1","id":"` + id + `","method":"invoke","capability":"` + capability + `","input":` + input + `}`
}

func num(t *testing.T, v js.Value, path string) int {
	t.Helper()
	for _, k := range strings.Split(path, ".") {
		v = v.Get(k)
	}
	if v.Type() != js.TypeNumber {
		t.Fatalf("%s is %s, want a number", path, v.Type())
	}
	return v.Int()
}

// settleDown lets queued JS callbacks (late settlements) run.
func settleDown() { time.Sleep(30 * time.Millisecond) }

// checkNoLeaks asserts that no await is pending and no func beyond the
// baseline is live once the work is done.
func checkNoLeaks(t *testing.T, before Stats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := ReadStats()
		if st.PendingAwaits == 0 && st.LiveFuncs <= before.LiveFuncs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leak: %+v, baseline %+v", st, before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func consoleErrors(t *testing.T) int {
	return fx(t).Get("consoleErrors").Length()
}

// baseline reads the counters once the long-lived funcs (the runtime's and
// the Promise helpers') exist, so that only per-surface state is compared.
func baseline(t *testing.T) Stats {
	t.Helper()
	theRuntime(t)
	theEnv()
	return ReadStats()
}

// resetEnvForTest makes the next use look the built-ins up again (a test
// polyfills Promise.withResolvers and wants the other code path). Nothing
// may be awaiting when it runs.
func resetEnvForTest() {
	if env != nil {
		release(env.settle)
		release(env.capture)
	}
	envOnce = sync.Once{}
	env = nil
}

// awaitJS waits for the Promise (or value) p on the calling goroutine,
// which must not be a js.FuncOf callback.
func awaitJS(p js.Value) (js.Value, error) {
	type outcome struct {
		v  js.Value
		ok bool
	}
	ch := make(chan outcome, 1)
	var ok, fail js.Func
	ok = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- outcome{args[0], true}
		return nil
	})
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- outcome{args[0], false}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	js.Global().Get("Promise").Call("resolve", p).Call("then", ok, fail)
	o := <-ch
	if !o.ok {
		return js.Undefined(), &Error{Op: "test", Kind: KindRejected, Msg: describe(o.v), Reason: o.v}
	}
	return o.v, nil
}
