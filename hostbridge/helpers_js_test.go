//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"strings"
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

func theRuntime(t testing.TB) js.Value {
	t.Helper()
	if rt.Type() != js.TypeObject {
		rt = NewRuntime()
	}
	return rt
}

// create makes an instance through the JS-facing runtime, as a page would,
// and answers a test instance that calls it through the module's exports:
// { handle(request, sessionGetter?, reply?, shared?), describe(input?,
// reply?), close(), slot, ... } (see harness).
func create(t testing.TB, h js.Value, cfg Config) js.Value {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inst := harness(t).Invoke(theRuntime(t), h, string(b))
	if e := inst.Get("error"); e.Type() == js.TypeString {
		t.Fatalf("create: %s", e.String())
	}
	t.Cleanup(func() { inst.Call("close") })
	return inst
}

// harnessJS gives a host what the bridge requires of one (a lane, reply,
// wait and held, sessionFor), unless the test's host brings its own, and
// wraps the instance in the methods the tests call, each a way through the
// exports as js/pling-surface.js takes them: handle and describe answer a
// Promise of the reply text, or, given a reply function, call it once with
// the texts decoded (reply.raw, when set, gets them as the bridge gave
// them). A number for a request is the length of one the caller wrote to
// entryIO. wait settles a Promise within its limit and answers it through
// pling_answer with the codes of exports_js.go.
const harnessJS = `(raw, k0, k1) => (runtime, h, config) => {
  // The exports as a test calls them: with the per-load secret.
  const exports = {
    pling_handle: (...a) => raw.pling_handle(k0, k1, ...a),
    pling_describe: (...a) => raw.pling_describe(k0, k1, ...a),
    pling_answer: (...a) => raw.pling_answer(k0, k1, ...a),
    pling_close: (...a) => raw.pling_close(k0, k1, ...a),
  };
  const size = 128 * 1024; // past the kernel's request limit, so that the kernel refuses by size
  const enc = new TextEncoder(), dec = new TextDecoder();
  const texts = (...ps) => { let at = 0; return ps.map((p) => {
    if (typeof p !== "number") return p;
    const s = dec.decode(h.io.subarray(at, at + p)); at += p; return s; }); };
  if (h.io === undefined) {
    h.io = new Uint8Array(size); h.entryIO = new Uint8Array(size);
    // The test's host takes its texts as strings: read the ones the bridge
    // laid out in io first, as js/pling-surface.js does.
    for (const name of ["view", "execute", "expose", "audit"]) {
      const f = h[name];
      if (typeof f === "function") h[name] = function (...ps) { return f.apply(this, texts(...ps)); };
    }
  }
  const replies = new Map(), sessions = new Map();
  let token = 0, held, parked;
  if (h.reply === undefined) h.reply = (tk, ...a) => {
    const r = replies.get(tk); replies.delete(tk); sessions.delete(tk);
    if (r !== undefined) r(...a);
  };
  if (h.sessionFor === undefined) h.sessionFor = (tk) => { const g = sessions.get(tk); return g === undefined ? undefined : g(); };
  const into = (buf) => (text) => {
    const r = enc.encodeInto(text, buf);
    return r.read === text.length ? r.written : undefined;
  };
  const toEntry = into(h.entryIO), toIO = into(h.io);
  // What a host function answered, in the codes of answers_js.go: a text
  // in io (or held), a Promise kept for wait, a number as it is.
  const code = (kind, v, put = toEntry) => {
    const text = (s) => { if (typeof s !== "string") return -1; const n = put(s); if (n !== undefined) return n; held = s; return -4; };
    switch (kind) {
      case 1: return v === null || v === undefined ? -2 : v === true ? -6 : text(v);
      case 2: {
        if (v === null || typeof v !== "object" || typeof v.allowed !== "boolean") return -1;
        if (v.allowed) return v.retryAfterMs === undefined || v.retryAfterMs === 0 ? 0 : -1;
        return typeof v.retryAfterMs === "number" && v.retryAfterMs > 0 && v.retryAfterMs !== Infinity ? v.retryAfterMs : -1;
      }
      case 4: return v === "claimed" ? 1 : v === "replayed" ? 2 : -1;
      case 0: case 3: case 5: return text(v);
    }
    return -1;
  };
  for (const [name, kind] of [["session", 1], ["sessionFor", 1], ["allow", 2], ["view", 3], ["claim", 4], ["execute", 5], ["actions", 0], ["expose", 0]]) {
    const f = h[name];
    if (typeof f !== "function") continue;
    h[name] = function (...ps) {
      const v = f.apply(this, ps);
      if (typeof v === "number") return v;
      if (v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function") { parked = v; return -5; }
      return code(kind, v, toIO);
    };
  }
  if (h.wait === undefined) h.wait = (ticket, kind, limitMs) => {
    const promise = parked;
    parked = undefined;
    let done = false;
    const give = (c) => { if (done) return; done = true; clearTimeout(timer); exports.pling_answer(ticket, c); };
    const timer = setTimeout(() => give(kind === 5 ? -3 : -1), limitMs);
    Promise.resolve(promise).then((v) => give(code(kind, v)), () => give(-1));
  };
  if (h.held === undefined) h.held = () => { const s = held; held = undefined; return s; };
  const inst = runtime.create(h, config);
  if (inst.error !== undefined) return inst;
  const call = (enter, reply, decode) => {
    let resolve, reject;
    const p = new Promise((a, b) => { resolve = a; reject = b; });
    const tk = ++token;
    replies.set(tk, (...a) => {
      if (reply !== undefined && reply.raw !== undefined) reply.raw(...a);
      const [out, capsId, capsText] = a;
      const d = decode ? texts(out, capsText) : [out, capsText];
      if (reply !== undefined) {
        if (capsId === undefined) reply(d[0]);
        else if (capsText === undefined) reply(d[0], capsId);
        else reply(d[0], capsId, d[1]);
      }
      resolve(d[0]);
    });
    let r;
    try { r = enter(tk); } finally { if (r !== 0) { replies.delete(tk); sessions.delete(tk); } }
    if (r !== 0) reject(new Error("the export refused the call: " + r));
    if (reply === undefined) return p;
    p.catch(() => {});
    return undefined;
  };
  return {
    slot: inst.slot, maxRequestBytes: inst.maxRequestBytes, maxResponseBytes: inst.maxResponseBytes,
    host: h, exports,
    handle(request, session, reply, shared) {
      return call((tk) => {
        // A number is the length of a request the caller wrote to entryIO.
        const n = typeof request === "number" ? request : toEntry(String(request));
        if (typeof session === "function") sessions.set(tk, session);
        return exports.pling_handle(inst.slot, n === undefined ? -1 : n, tk, (shared === true ? 1 : 0) | (typeof session === "function" ? 2 : 0));
      }, reply, true);
    },
    describe(input, reply) {
      return call((tk) => {
        const n = input === undefined || input === null ? -1 : toEntry(String(input));
        return exports.pling_describe(inst.slot, n === undefined ? -2 : n, tk);
      }, reply, true);
    },
    close() { return exports.pling_close(inst.slot); },
  };
}`

var harnessFn js.Value

// goOpts is fromRuntime's options with the Go object running this test
// binary, as loadSurface passes it.
func goOpts(t testing.TB) js.Value {
	t.Helper()
	harness(t)
	o := js.Global().Get("Object").New()
	o.Set("go", js.Global().Get("__plingTestGo"))
	k := testSecret()
	o.Set("secret", js.ValueOf([]any{k[0], k[1]}))
	return o
}

// testSecret sets the module's per-load secret (pling_init) once, as a host
// that runs the module itself does, and answers it.
func testSecret() [2]int32 {
	if !secretSet {
		enterInit(0x5eed1, 0x5eed2)
	}
	return secret
}

// testAnswer calls pling_answer with the secret.
func testAnswer(ticket int32, code float64) int32 {
	k := testSecret()
	return enterAnswer(k[0], k[1], ticket, code)
}

func harness(t testing.TB) js.Value {
	t.Helper()
	if harnessFn.Type() != js.TypeFunction {
		g := js.Global().Get("__plingTestGo")
		if g.Type() != js.TypeObject {
			t.Fatal("no Go object: run the tests with make test-js (hostbridge/testdata/exec_node.js)")
		}
		k := testSecret()
		harnessFn = js.Global().Call("eval", harnessJS).Invoke(g.Get("_inst").Get("exports"), k[0], k[1])
	}
	return harnessFn
}

// wait awaits a JS Promise from the test goroutine (never a callback).
// Its time limit is a JS timer raced with p, not a Go timer: a Go timer
// pending while the program waits makes the runtime re-arm a JS timeout
// on every entry, which tests that count timers would see.
func wait(t testing.TB, p js.Value) js.Value {
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
		return js.Undefined(), &hostError{op: "test", msg: "rejected: " + describe(o.v), reason: o.v}
	}
	return o.v, nil
}

// Stats counts what the bridge holds, so that tests (and a page, through
// the runtime's stats()) can check that nothing leaks.
type Stats struct {
	// LiveFuncs is the number of js.Funcs made and not released: the
	// runtime's own (create and stats), none per surface.
	LiveFuncs int
	// PendingAwaits is the number of host Promises being waited for.
	PendingAwaits int
	// Surfaces is the number of surfaces created and not closed.
	Surfaces int
	// FastEntries is the number of calls that came in through the
	// module's exports (see exports_js.go).
	FastEntries int
}

// ReadStats returns the current counters.
func ReadStats() Stats {
	return Stats{
		LiveFuncs:     int(liveFuncs.Load()),
		PendingAwaits: len(tickets),
		Surfaces:      len(slots),
		FastEntries:   fastEntries,
	}
}

// registryStats is what tests read.
type registryStats struct{ reads, parses int }

func (r *registry) stats() registryStats {
	return registryStats{reads: r.actionsReads, parses: r.actionsParse}
}
