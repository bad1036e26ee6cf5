package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"pling.dev/agent/surface"
)

// The tests in this file play a hostile script that runs in the page's own
// JavaScript world AFTER the surface has loaded (an XSS payload, a
// compromised third-party script). Such a script may patch any built-in;
// what it must not do is change the session the kernel sees, obtain or drive
// a private channel, read a private reply, or make one request run twice.

// forgedSessionJS defines window.__forged(): the session a hostile script
// would like the kernel to see (another agent and user, never revoked).
const forgedSessionJS = `window.__forged = () => ({ agentId: "agent.evil", sessionId: "ses_evil", userId: "u-evil",
  expiresAt: Date.now() + 3600000, scope: ["orders.search", "update_note@order", "orders.import"] });
window.__forgedText = () => JSON.stringify(window.__forged());`

// laterPatches are the built-in patches a later script tries on the session
// path. Against the pling-surface.js before this file, every case made a
// revoked session work, revoked a valid one, or forged the page's reading,
// except the Object.prototype.scope setter, JSON.stringify (captured there
// already), TextEncoder.encodeInto and Reflect.apply, which held before too
// and are kept so that they keep holding. ok is the code a call under a valid session gets afterwards ("" for
// success): a toJSON planted on Object.prototype makes the page's own data
// unreadable, so the surface refuses (fails closed) instead of reading it.
var laterPatches = []struct {
	name, js string
	session  string // test page session mode for the valid session
	revoked  string // and for the revoked one
	ok       surface.Code
}{
	{"Object.prototype.toJSON returns a forged session", `Object.defineProperty(Object.prototype, "toJSON", { configurable: true, writable: true,
		value: function () { return this && typeof this === "object" && "sessionId" in this && "scope" in this ? window.__forged() : this; } })`,
		"", "revoked", ""},
	{"Object.prototype.revokedAt revokes every session", `Object.prototype.revokedAt = 1`, "", "revoked", ""},
	{"a getter on Object.prototype.revokedAt", `Object.defineProperty(Object.prototype, "revokedAt", { configurable: true, get() { return 1; } })`, "", "revoked", ""},
	{"a setter on Object.prototype.scope", `Object.defineProperty(Object.prototype, "scope", { configurable: true, get() { return ["orders.search", "update_note@order", "orders.import"]; }, set(v) {} })`, "", "revoked", ""},
	{"JSON.stringify replaced", `{ const f = JSON.stringify; JSON.stringify = function (v, ...r) {
		return f.call(this, v && typeof v === "object" && "sessionId" in v ? window.__forged() : v, ...r); }; }`, "", "revoked", ""},
	{"Promise.prototype.then rewrites an async session", `{ const then = Promise.prototype.then;
		const swap = (v) => (v && typeof v === "object" && "sessionId" in v ? window.__forged()
			: typeof v === "string" && v.includes("ses_e2e") ? window.__forgedText() : v);
		Promise.prototype.then = function (ok, fail) { return then.call(this, typeof ok === "function" ? (v) => ok(swap(v)) : ok, fail); }; }`,
		"async", "asyncRevoked", ""},
	{"TextEncoder.prototype.encodeInto rewrites session text", `{ const enc = TextEncoder.prototype.encodeInto;
		TextEncoder.prototype.encodeInto = function (text, into) {
			return enc.call(this, typeof text === "string" && text.includes('"sessionId"') ? window.__forgedText() : text, into); }; }`,
		"", "revoked", ""},
	{"TextDecoder.prototype.decode rewrites what the page reads", `{ const dec = TextDecoder.prototype.decode;
		TextDecoder.prototype.decode = function (...a) { const s = dec.apply(this, a); return s.includes("SESSION_REVOKED") ? s.replace(/"ok":false.*$/, '"ok":true,"result":{}}') : s; }; }`,
		"", "revoked", ""},
	// Go's own glue (wasm_exec.js) looks these up as it runs; the runtime's
	// glue (pling-glue.js) captured them when it was evaluated.
	{"Date moves the kernel's clock back an hour", `{ const gt = Date.prototype.getTime;
		try { Date.prototype.getTime = function () { return gt.call(this) - 3600000; }; } catch {}
		try { const D = Date; window.Date = class extends D { getTime() { return super.getTime() - 3600000; } }; } catch {} }`,
		"", "revoked", ""},
	{"Reflect.apply writes another session into the kernel's buffer", `{ const ap = Reflect.apply;
		try { Reflect.apply = function (f, self, args) {
			const r = ap(f, self, args);
			if (self && self.io instanceof Uint8Array && typeof r === "number" &&
				new TextDecoder().decode(self.io.slice(0, r)).includes('"sessionId"')) {
				return new TextEncoder().encodeInto(window.__forgedText(), self.io).written;
			}
			return r;
		}; } catch {} }`, "", "revoked", ""},
	{"Uint8Array.prototype.subarray hands the kernel other bytes", `{ const sub = Uint8Array.prototype.subarray;
		try { Uint8Array.prototype.subarray = function (a, b) {
			const v = sub.call(this, a, b);
			const text = new TextDecoder().decode(v);
			if (text.startsWith('{"agentId"')) { const f = new TextEncoder().encode(window.__forgedText()); const out = new Uint8Array(v.length); out.set(f.slice(0, v.length)); return out; }
			return v;
		}; } catch {} }`, "", "revoked", ""},
	// The glue's pool of free value ids and its map of values to ids, which
	// in wasm_exec.js a later script's methods would answer for.
	{"Array.prototype.pop and Map.prototype.get hand the glue ids in use", `{ const pop = Array.prototype.pop, get = Map.prototype.get;
		const fromGlue = () => /wasm_exec/.test(new Error().stack);
		try { Array.prototype.pop = function () { return this.length === 0 && fromGlue() ? 7 : pop.call(this); }; } catch {}
		try { Map.prototype.get = function (k) { const v = get.call(this, k);
			return v === undefined && k !== null && (typeof k === "object" || typeof k === "function") && fromGlue() ? 5 : v; }; } catch {} }`,
		"", "revoked", ""},
	{"an index setter on Array.prototype", `{ try { Object.defineProperty(Array.prototype, "2", { configurable: true, set(v) {
			Object.defineProperty(this, "2", { value: v, writable: true, enumerable: true, configurable: true }); } }); } catch {} }`,
		"", "revoked", ""},
	// The same, with a name taken away first (a count of names was once
	// how it was detected).
	{"an index setter on Array.prototype in place of a deleted method", `{ try { delete Array.prototype.flatMap; Object.defineProperty(Array.prototype, "2", { configurable: true, set(v) {
			Object.defineProperty(this, "2", { value: v, writable: true, enumerable: true, configurable: true }); } }); } catch {} }`,
		"", "revoked", ""},
	{"an index getter on Object.prototype in place of a deleted method", `{ try { delete Object.prototype.__lookupSetter__; Object.defineProperty(Object.prototype, "1", { configurable: true,
			get() { return "orders.import"; }, set(v) { Object.defineProperty(this, "1", { value: v, writable: true, enumerable: true, configurable: true }); } }); } catch {} }`,
		"", "revoked", ""},
	// The last index a call's arguments filled in wasm_exec.js
	// (hostbridge.maxCallArgs - 1); the glue's have no prototype.
	{"an index setter on Object.prototype at the last argument index", `{ try { Object.defineProperty(Object.prototype, "7", { configurable: true,
			set(v) { Object.defineProperty(this, "7", { value: v, writable: true, enumerable: true, configurable: true }); } }); } catch {} }`,
		"", "revoked", ""},
}

// TestLaterScriptSession applies each patch after the surface loaded, then
// calls under a revoked session (which must stay revoked) and under a valid
// one (which must stay the page's: its agent in the audit, its answer).
func TestLaterScriptSession(t *testing.T) {
	for _, c := range laterPatches {
		t.Run(c.name, func(t *testing.T) {
			p := openTestPage(t)
			evalPage[bool](t, p, `(() => { `+forgedSessionJS+`; return true; })()`)
			setup(t, p, map[string]any{"session": c.revoked})
			evalPage[bool](t, p, `(() => { `+c.js+`; return true; })()`)

			calls := pageCalls(t, p)
			env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "after a later script"})
			revoked := surface.CodeSessionRevoked
			wantCode(t, send(t, p, env), env["id"].(string), revoked)
			d := describeEnv(t, nil)
			wantCode(t, send(t, p, d), d["id"].(string), revoked)
			if got := pageCalls(t, p); got != calls {
				t.Errorf("a revoked session ran the executor %d times", got-calls)
			}

			setup(t, p, map[string]any{"session": c.session})
			env = invokeEnv(t, "orders.search", map[string]any{"query": "T"})
			r := send(t, p, env)
			if c.ok == "" {
				if res := r.result(t); res["error"] != nil {
					t.Errorf("valid session: %s", r)
				}
			} else {
				wantCode(t, r, env["id"].(string), c.ok)
			}
			audit := evalPage[[]map[string]any](t, p, `window.__e2e.audit()`)
			if len(audit) == 0 {
				t.Fatal("no audit events")
			}
			for _, ev := range audit {
				if ev["agentId"] != nil && ev["agentId"] != "agent.e2e" || ev["sessionId"] != nil && ev["sessionId"] != "ses_e2e" {
					t.Errorf("audit event names another session: %v", ev)
				}
			}
			if last := audit[len(audit)-1]; last["requestId"] != env["id"] || last["agentId"] != "agent.e2e" {
				t.Errorf("last audit event %v, want %s by agent.e2e", last, env["id"])
			}
		})
	}
}

// TestLaterScriptIndexSettersSeeNothing: a later script puts a setter on
// Object.prototype for every index from 8 (the first index no call into
// JavaScript fills: hostbridge.maxCallArgs) up, each writing through as a
// plain assignment would, so that the page works on. The page then makes a
// new surface, whose host and session getter the Go runtime's glue stores
// in arrays it grows by assignment, and an agent calls it. The calls work,
// and no setter sees a value the glue writes.
func TestLaterScriptIndexSettersSeeNothing(t *testing.T) {
	p := openTestPage(t)
	evalPage[bool](t, p, `(() => {
		const seen = [];
		const fromGlue = () => /wasm_exec/.test(new Error().stack);
		for (let i = 8; i < 16384; i++) {
			Object.defineProperty(Object.prototype, i, { configurable: true,
				get() { return undefined; },
				set(v) {
					Object.defineProperty(this, i, { value: v, writable: true, enumerable: true, configurable: true });
					if (fromGlue()) seen.push(i + ": " + typeof v);
				} });
		}
		window.__indexSeen = () => seen.slice(0, 10).join(", ") + (seen.length > 10 ? " and " + (seen.length - 10) + " more" : "");
		return true;
	})()`)
	setup(t, p, map[string]any{"replay": true})
	calls := pageCalls(t, p)
	if d := describe(t, p, nil); len(d.Capabilities) == 0 {
		t.Fatal("describe lists no capabilities")
	}
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "index setters"})
	if r := send(t, p, env); r.result(t)["error"] != nil {
		t.Fatalf("invoke: %s", r)
	}
	if got := pageCalls(t, p) - calls; got != 1 {
		t.Errorf("one invoke ran the executor %d times", got)
	}
	if seen := evalPage[string](t, p, `window.__indexSeen()`); seen != "" {
		t.Errorf("the later script's index setters saw what the glue stored: %s", seen)
	}
}

// TestLaterScriptIndexSettersReadNoPrivateRequest: index setters a later
// script puts on Object.prototype run for arrays filled by assignment, so
// the runtime must never put what crosses the private channel into such an
// array: a request and the records its describe answers are the caller's
// alone. The first case is index 0, where Go's glue filled call arguments;
// the second indices past it, with a request nested as deep.
func TestLaterScriptIndexSettersReadNoPrivateRequest(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to int
		wantFail bool
	}{
		{"index 0", 0, 1, false},
		{"indices 8 to 63", 8, 64, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openTestPage(t)
			secret := randomHex(t, 16)
			setup(t, p, map[string]any{"credential": "cred-" + secret})
			a := evalAgent[connectAnswer](t, p, `agent.connect(`+js("cred-"+secret)+`, {app: "orders"})`)
			if a.Answer.Kind != "connected" {
				t.Fatalf("answer %+v, want connected", a.Answer)
			}
			// A record that holds the secret, before the later script runs:
			// a describe over the channel then answers it.
			note := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "private " + secret})
			if r := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(note)+`)`); r.result(t)["error"] != nil {
				t.Fatalf("invoke over the port: %s", r)
			}
			evalPage[bool](t, p, `(() => {
				const seen = [];
				for (let i = `+strconv.Itoa(c.from)+`; i < `+strconv.Itoa(c.to)+`; i++) {
					Object.defineProperty(Object.prototype, i, { configurable: true,
						get() { return undefined; },
						set(v) {
							Object.defineProperty(this, i, { value: v, writable: true, enumerable: true, configurable: true });
							try { Object.defineProperty(seen, seen.length, { value: JSON.stringify(v), enumerable: true, configurable: true }); } catch {}
						} });
				}
				window.__indexSeen = () => seen.join(" | ");
				return true;
			})()`)
			// The secret at the bottom of ten levels: what an index past
			// eight would be handed holds it.
			var input any = map[string]any{"secret": secret}
			for i := 0; i < 10; i++ {
				input = map[string]any{"n": input}
			}
			env := invokeEnv(t, "orders.search", input)
			r := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(env)+`)`)
			if c.wantFail {
				wantCode(t, r, env["id"].(string), surface.CodeInternalError)
			}
			d := describeEnv(t, nil)
			r = evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(d)+`)`)
			if c.wantFail {
				wantCode(t, r, d["id"].(string), surface.CodeInternalError)
			} else if desc := r.description(t); len(desc.Context.Records) == 0 {
				t.Errorf("describe over the port answered no records")
			}
			if seen := evalPage[string](t, p, `window.__indexSeen()`); strings.Contains(seen, secret) {
				t.Errorf("the later script's index setters read what crossed the private channel: %s", brief(seen))
			}
		})
	}
}

// connectAnswer is what agent.connect resolves to.
type connectAnswer struct {
	Handle string `json:"handle"`
	Answer struct {
		Channel string `json:"channel"`
		Kind    string `json:"kind"`
		App     string `json:"app"`
	} `json:"answer"`
}

// spyJS is a later script that tries every way it knows to obtain the
// private channel's port or read what crosses it: listeners in both phases
// and as onmessage, a wrapped addEventListener, patched MessageEvent and
// MessagePort prototypes, and setters on Object.prototype for the members
// replies are made of. window.__spy() reports what it got. (An index setter
// on Array.prototype makes every call fail closed: TestLaterScriptSession.)
const spyJS = `(() => {
  const got = { connects: 0, ports: 0, replies: [], requests: 0 };
  const look = (e) => {
    const d = e.data;
    if (d && d.kind === "connect") got.connects++;
    if (e.ports && e.ports.length) got.ports += e.ports.length;
  };
  addEventListener("message", look, true);
  addEventListener("message", look);
  window.onmessage = look;
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, opts) {
    if (this instanceof MessagePort) got.ports++;
    return add.call(this, type, fn, opts);
  };
  const portsOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, "ports").get;
  Object.defineProperty(MessageEvent.prototype, "ports", { configurable: true, get() {
    const p = portsOf.call(this);
    got.ports += p.length;
    return p;
  } });
  const dataOf = Object.getOwnPropertyDescriptor(MessageEvent.prototype, "data").get;
  Object.defineProperty(MessageEvent.prototype, "data", { configurable: true, get() {
    const d = dataOf.call(this);
    if (this.target instanceof MessagePort && d && d.kind === "request") got.requests++;
    return d;
  } });
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (m, ...rest) {
    got.ports++;
    got.replies.push(JSON.stringify(m));
    return post.call(this, m, ...rest);
  };
  for (const name of ["start", "close"]) {
    const f = MessagePort.prototype[name];
    MessagePort.prototype[name] = function () { got.ports++; return f.call(this); };
  }
  const onmsg = Object.getOwnPropertyDescriptor(MessagePort.prototype, "onmessage");
  Object.defineProperty(MessagePort.prototype, "onmessage", { configurable: true, get: onmsg.get,
    set(fn) { got.ports++; return onmsg.set.call(this, fn); } });
  Event.prototype.stopImmediatePropagation = function () {};
  for (const name of ["envelope", "channel", "kind", "app", "capabilities"]) {
    Object.defineProperty(Object.prototype, name, { configurable: true, set(v) {
      got.replies.push(name + "=" + JSON.stringify(v));
      Object.defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
    } });
  }
  window.__spy = () => got;
  return true;
})()`

// TestLaterScriptPrivateChannel: a later script can neither receive the
// connect message nor its port, nor read or forge what crosses the channel.
func TestLaterScriptPrivateChannel(t *testing.T) {
	p := openTestPage(t)
	secret := randomHex(t, 16)
	setup(t, p, map[string]any{"credential": "cred-" + secret})
	evalPage[bool](t, p, spyJS)

	a := evalAgent[connectAnswer](t, p, `agent.connect(`+js("cred-"+secret)+`, {app: "orders"})`)
	if a.Answer.Kind != "connected" {
		t.Fatalf("answer %+v, want connected", a.Answer)
	}
	d := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(describeEnv(t, nil))+`)`).description(t)
	if len(d.Capabilities) != 3 {
		t.Errorf("describe over the port lists %d capabilities", len(d.Capabilities))
	}
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "private " + secret})
	r := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(env)+`)`)
	if res := r.result(t); res["error"] != nil {
		t.Fatalf("invoke over the port: %s", r)
	}
	type spy struct {
		Connects int      `json:"connects"`
		Ports    int      `json:"ports"`
		Replies  []string `json:"replies"`
		Requests int      `json:"requests"`
	}
	got := evalPage[spy](t, p, `window.__spy()`)
	if got.Connects != 0 || got.Ports != 0 || got.Requests != 0 {
		t.Errorf("the later script saw %d connect messages, %d ports, %d private requests", got.Connects, got.Ports, got.Requests)
	}
	for _, s := range got.Replies {
		if strings.Contains(s, secret) || strings.Contains(s, "capabilities") || strings.Contains(s, "envelope") {
			t.Errorf("the later script read a private reply: %s", brief(s))
		}
	}
	if len(got.Replies) != 0 {
		t.Errorf("the later script captured %d values from the channel: %s", len(got.Replies), brief(strings.Join(got.Replies, " | ")))
	}
}

// TestLaterScriptCannotRunTwice: a later script copies every request it
// sees on the window and posts it again. With replay protection the copy is
// refused and the executor runs once.
func TestLaterScriptCannotRunTwice(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{"replay": true})
	evalPage[bool](t, p, `(() => { const copied = new Set(); addEventListener("message", (e) => {
		const d = e.data;
		const env = d && d.kind === "request" ? d.envelope : d && d.method === "invoke" && !("ok" in d) ? d : null;
		if (!env || copied.has(env.id)) return;
		copied.add(env.id);
		postMessage(JSON.parse(JSON.stringify(d)), location.origin);
	}); window.__copied = () => copied.size; return true; })()`)
	calls := pageCalls(t, p)
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-3", "note": "once"})
	if r := send(t, p, env); r.result(t)["error"] != nil {
		t.Fatalf("invoke: %s", r)
	}
	b := invokeEnv(t, "update_note@order", map[string]any{"record": "T-3", "note": "once, bare"})
	if r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(b)+`)`); !r.OK {
		t.Fatalf("bare invoke: %+v", r)
	}
	p.sleep(t, settle)
	if got := pageCalls(t, p) - calls; got != 2 {
		t.Errorf("two invokes ran the executor %d times", got)
	}
	if n := evalPage[int](t, p, `window.__copied()`); n < 2 {
		t.Errorf("the later script copied %d requests: it did not attack", n)
	}
}

// TestPrivateChannelSlots: channels are freed on close, when the client
// goes away without a word (after the idle time), and never more than the
// per-origin bound are held; 1,000 connect/close rounds leave none held.
func TestPrivateChannelSlots(t *testing.T) {
	p := openTestPage(t)
	channels := func() int { return evalPage[int](t, p, `window.__e2e.channels()`) }

	t.Run("1000 rounds", func(t *testing.T) {
		setup(t, p, map[string]any{"credential": "cred-rounds"})
		kinds := evalAgent[map[string]int](t, p, `agent.rounds(1000, "cred-rounds")`)
		if kinds["connected"] != 1000 {
			t.Errorf("answers %v, want 1000 connected", kinds)
		}
		waitPage(t, p, `window.__e2e.channels() === 0`)
	})

	t.Run("per origin", func(t *testing.T) {
		setup(t, p, map[string]any{"maxChannelsPerOrigin": 4})
		var open []string
		for i := 0; i < 4; i++ {
			a := evalAgent[connectAnswer](t, p, `agent.connect()`)
			if a.Answer.Kind != "connected" {
				t.Fatalf("channel %d: %+v", i, a.Answer)
			}
			open = append(open, a.Handle)
		}
		if a := evalAgent[connectAnswer](t, p, `agent.connect()`); a.Answer.Kind != "refused" {
			t.Errorf("a fifth channel from one origin: %+v, want refused", a.Answer)
		}
		if n := channels(); n != 4 {
			t.Errorf("%d channels held, want 4", n)
		}
		evalAgent[bool](t, p, `(agent.closePort(`+js(open[0])+`), true)`)
		waitPage(t, p, `window.__e2e.channels() === 3`)
		if a := evalAgent[connectAnswer](t, p, `agent.connect()`); a.Answer.Kind != "connected" {
			t.Errorf("after one closed: %+v, want connected", a.Answer)
		}
	})

	t.Run("client gone without a word", func(t *testing.T) {
		setup(t, p, map[string]any{"channelIdleMs": 300})
		// As many as one origin may hold; the idle time frees them all.
		kinds := evalAgent[map[string]int](t, p, `agent.rounds(16, undefined, {say: false})`)
		if kinds["connected"] != 16 {
			t.Errorf("answers %v", kinds)
		}
		waitPage(t, p, `window.__e2e.channels() === 0`)
		if a := evalAgent[connectAnswer](t, p, `agent.connect()`); a.Answer.Kind != "connected" {
			t.Errorf("after the idle time: %+v, want connected", a.Answer)
		}
	})

	t.Run("idle", func(t *testing.T) {
		setup(t, p, map[string]any{"channelIdleMs": 300})
		a := evalAgent[connectAnswer](t, p, `agent.connect()`)
		if a.Answer.Kind != "connected" {
			t.Fatalf("%+v", a.Answer)
		}
		// A request keeps it open; then it idles out and says so.
		if r := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(describeEnv(t, map[string]any{"limit": 0}))+`)`); !r.Envelope.OK {
			t.Fatalf("describe: %s", r)
		}
		waitPage(t, p, `window.__e2e.channels() === 0`)
		type msg struct {
			Kind string `json:"kind"`
		}
		log := evalAgent[[]msg](t, p, `agent.portLog(`+js(a.Handle)+`)`)
		if len(log) == 0 || log[len(log)-1].Kind != "closed" {
			t.Errorf("port log %+v, want it to end with closed", log)
		}
	})
}

// TestBareEnvelopes: a client that speaks only spec 03's envelopes gets
// bare replies, on the window and on a private channel, with every check.
func TestBareEnvelopes(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{"replay": true})

	t.Run("window", func(t *testing.T) {
		env := describeEnv(t, map[string]any{"limit": 1})
		r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(env)+`)`)
		if !r.OK || r.ID != env["id"] || r.Protocol != surface.Protocol {
			t.Fatalf("bare describe: %+v", r)
		}
		type seen struct {
			Data       map[string]any `json:"data"`
			Origin     string         `json:"origin"`
			FromWindow bool           `json:"fromWindow"`
		}
		all := evalAgent[[]seen](t, p, `agent.bareReplies()`)
		last := all[len(all)-1]
		if _, wrapped := last.Data["channel"]; wrapped || last.Origin != siteURL || !last.FromWindow {
			t.Errorf("bare reply %v from %s (window %v), want an unwrapped envelope from %s", brief(js(last.Data)), last.Origin, last.FromWindow, siteURL)
		}
		bad := describeEnv(t, nil)
		bad["protocol"] = "pling.surface/0.2"
		if r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(bad)+`)`); r.OK || r.Error == nil || r.Error.Code != surface.CodeProtocolVersionUnsupported {
			t.Errorf("bare request of another version: %+v", r)
		}
		odd := describeEnv(t, nil)
		odd["session"] = map[string]any{"sessionId": "ses_forged"}
		if r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(odd)+`)`); r.OK || r.Error == nil || r.Error.Code != surface.CodeInvalidRequest {
			t.Errorf("bare request carrying a session: %+v", r)
		}
		inv := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "bare"})
		if r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(inv)+`)`); !r.OK {
			t.Fatalf("bare invoke: %+v", r)
		}
		if r := evalAgent[envelope](t, p, `agent.bareRequest(`+js(inv)+`)`); r.OK || r.Error == nil || r.Error.Code != surface.CodeReplayDetected {
			t.Errorf("bare invoke sent again: %+v, want REPLAY_DETECTED", r)
		}
		if got := pageNote(t, p, "T-1"); got != "bare" {
			t.Errorf("T-1 shows %q", got)
		}
	})

	t.Run("private channel", func(t *testing.T) {
		a := evalAgent[connectAnswer](t, p, `agent.connect()`)
		if a.Answer.Kind != "connected" {
			t.Fatalf("%+v", a.Answer)
		}
		env := describeEnv(t, map[string]any{"limit": 0})
		r := evalAgent[map[string]any](t, p, `agent.portBare(`+js(a.Handle)+`, `+js(env)+`)`)
		if r["ok"] != true || r["id"] != env["id"] || r["channel"] != nil || r["envelope"] != nil {
			t.Errorf("bare reply on the port: %s", brief(js(r)))
		}
		n := len(evalAgent[[]any](t, p, `agent.bareReplies()`))
		inv := invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "bare port"})
		r = evalAgent[map[string]any](t, p, `agent.portBare(`+js(a.Handle)+`, `+js(inv)+`)`)
		if r["ok"] != true {
			t.Errorf("bare invoke on the port: %s", brief(js(r)))
		}
		if m := len(evalAgent[[]any](t, p, `agent.bareReplies()`)); m != n {
			t.Errorf("a port reply also went to the window")
		}
	})
}

// TestWindowRepliesCanBeForged pins what the threat model says about the
// window transport: a same-window script can stop the real reply and post a
// forged one, and the client cannot tell. Over the private channel it cannot.
func TestWindowRepliesCanBeForged(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{"execute": "slow"})
	// The script answers every request it sees at once, before the page's
	// executor (which asks its backend) can.
	evalPage[bool](t, p, `(() => { addEventListener("message", (e) => {
		const d = e.data;
		if (!d || d.kind !== "request" || !d.envelope) return;
		postMessage({ channel: "pling.surface", kind: "response", app: "orders",
			envelope: { protocol: d.envelope.protocol, id: d.envelope.id, ok: true, result: { forged: true } } }, location.origin);
	}); return true; })()`)
	env := invokeEnv(t, "orders.search", map[string]any{"query": "zzz"})
	if res := send(t, p, env).result(t); res["forged"] != true {
		t.Errorf("over the window the agent got %v: the forgery the threat model describes did not happen, check the test", res)
	}
	a := evalAgent[connectAnswer](t, p, `agent.connect()`)
	env = invokeEnv(t, "orders.search", map[string]any{"query": "zzz"})
	res := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(env)+`)`).result(t)
	if res["forged"] == true || fmt.Sprint(res["matches"]) != "0" {
		t.Errorf("over the private channel the agent got %v, want the page's own answer", res)
	}
}

// TestPrivateChannelFreedOnNavigation: a page that is left (here a frame
// that navigates) closes its channels and says so on each port first.
func TestPrivateChannelFreedOnNavigation(t *testing.T) {
	p := openTestPage(t)
	got := evalPage[[]string](t, p, `new Promise((resolve, reject) => {
		const kinds = [];
		const f = document.createElement("iframe");
		f.src = "/e2e/surface.html";
		document.body.append(f);
		const timer = setTimeout(() => reject(new Error("no answer: " + JSON.stringify(kinds))), 20000);
		const start = () => {
			const w = f.contentWindow;
			if (!w.__e2e || !w.__e2e.ready) return setTimeout(start, 25);
			w.__e2e.setup({ allowedOrigins: [location.origin] });
			const { port1, port2 } = new MessageChannel();
			port1.onmessage = (e) => {
				kinds.push(e.data.kind);
				if (e.data.kind === "connected") {
					kinds.push("held:" + w.__e2e.channels());
					f.src = "/e2e/harness.html"; // leave the page
				} else if (e.data.kind === "closed") {
					clearTimeout(timer);
					resolve(kinds);
				}
			};
			w.postMessage({ channel: "pling.surface", kind: "connect", app: "orders" }, location.origin, [port2]);
		};
		f.onload = () => { f.onload = null; start(); };
	})`)
	if strings.Join(got, ",") != "connected,held:1,closed" {
		t.Errorf("the channel saw %v, want connected, held 1, then closed when the frame navigated", got)
	}
}

// TestDemoLoadsTheSurfaceFirst: the demo does what the page-author guide
// asks, since pages copy it: its first script is the surface's first
// script, every script is a module, and nothing waits for the kernel. A
// script planted before every script of the document sees main.js publish
// __demo and records whether surface.wasm had been asked for by then; it
// must not have been, nor before an agent speaks, and then exactly once.
func TestDemoLoadsTheSurfaceFirst(t *testing.T) {
	p := openTabFirst(t, siteURL+"/", `Object.defineProperty(window, "__demo", {
		configurable: true,
		get() { return undefined; },
		set(v) {
			window.__wasmAtMain = performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$/.test(e.name)).length;
			Object.defineProperty(window, "__demo", { value: v, writable: true, enumerable: true, configurable: true });
		},
	});`)
	waitPage(t, p, `typeof window.__demo === "object"`)
	evalPage[bool](t, p, `window.__demo.ready.then(() => true)`)
	wasmRequests := func() int {
		return evalPage[int](t, p, `performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$/.test(e.name)).length`)
	}
	if got := evalPage[int](t, p, `window.__wasmAtMain`); got != 0 {
		t.Errorf("when main.js ran, surface.wasm had been asked for %d times: the page's code waited for the kernel", got)
	}
	p.sleep(t, settle)
	if n := wasmRequests(); n != 0 {
		t.Errorf("surface.wasm was asked for %d times before any agent spoke", n)
	}
	// Of the runtime's files, a visitor no agent speaks to pays for the
	// first script only: the kernel's host and glue, WebMCP's bridge and
	// shared state come when they are first needed.
	runtimeFiles := func() []string {
		return evalPage[[]string](t, p, `performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname).filter((p) => p.startsWith("/pling/")).map((p) => p.slice(7)).sort()`)
	}
	if got := runtimeFiles(); len(got) != 1 || got[0] != "pling-surface.js" {
		t.Errorf("before any agent spoke, the page fetched the runtime's %q, want only the first script", got)
	}
	p.startAgent(t)
	type script struct {
		Src  string `json:"src"`
		Type string `json:"type"`
	}
	got := evalPage[[]script](t, p, `[...document.scripts].map((s) => ({ src: s.getAttribute("src") || "(inline)", type: s.type }))`)
	if len(got) == 0 || got[0].Src != "boot.js" {
		t.Fatalf("scripts %+v, want boot.js first", got)
	}
	for _, s := range got {
		if s.Type != "module" {
			t.Errorf("script %s is %q, not a module: it could run before the surface", s.Src, s.Type)
		}
	}
	// And the surface's listener does precede the page's: a connect
	// message never reaches a listener the page adds.
	evalPage[bool](t, p, `(window.__sawConnect = 0, addEventListener("message", (e) => { if (e.data && e.data.kind === "connect") window.__sawConnect++; }), true)`)
	if a := evalAgent[connectAnswer](t, p, `agent.connect(undefined, {app: "orders"})`); a.Answer.Kind != "connected" {
		t.Fatalf("connect: %+v", a.Answer)
	}
	if n := evalPage[int](t, p, `window.__sawConnect`); n != 0 {
		t.Errorf("a page listener saw %d connect messages", n)
	}
	d := describeEnv(t, nil)
	if r := evalAgent[reply](t, p, `agent.request(`+js(d)+`, {wrapper: {app: "orders"}})`); r.Envelope.ID != d["id"] {
		t.Errorf("the first describe: %s", r)
	}
	if n := wasmRequests(); n != 1 {
		t.Errorf("after an agent spoke, surface.wasm was asked for %d times, want once", n)
	}
	kernelHost := 0
	for _, f := range runtimeFiles() {
		if strings.HasPrefix(f, "pling-kernel.") && strings.HasSuffix(f, ".js") {
			kernelHost++
		}
	}
	if kernelHost != 1 {
		t.Errorf("after an agent spoke, the kernel's host (pling-kernel.*.js) was fetched %d times, want once: %q", kernelHost, runtimeFiles())
	}
}

// TestLaterScriptWhileLoading: a setter planted on Object.prototype while
// the kernel starts (ready() has asked for surface.wasm, which has not
// arrived), for a member wasm_exec.js gives its Go object (_inst, the
// instance with the kernel's memory) or one syscall/js assigns (result),
// sees nothing: the glue (pling-glue.js) keeps its state in closures and
// makes what it hands Go without prototype.
func TestLaterScriptWhileLoading(t *testing.T) {
	p := openHarness(t)
	type caught struct {
		Loaded bool     `json:"loaded"`
		Seen   []string `json:"seen"`
	}
	got := evalPage[caught](t, p, `(async () => {
		const mod = await import("/pling/pling-surface.js");
		const s = mod.createSurface({ registry: { version: () => 1, actions: () => [], view: () => ({ records: [] }) }, execute: () => ({}) });
		const started = s.ready();
		const seen = [];
		for (const name of ["_inst", "result", "_pendingEvent", "mem", "exports", "then"]) {
			Object.defineProperty(Object.prototype, name, { configurable: true, set(v) {
				seen.push(name);
				Object.defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
			} });
		}
		try {
			await started;
			await s.describe();
			s.close();
		} finally {
			for (const name of ["_inst", "result", "_pendingEvent", "mem", "exports", "then"]) delete Object.prototype[name];
		}
		return { loaded: true, seen };
	})()`)
	if !got.Loaded || len(got.Seen) != 0 {
		t.Errorf("a script that ran while the surface loaded got %+v, want nothing", got)
	}
}

// TestLaterScriptWhileLoadingGlueMethods: the glue captured the methods it
// calls on its id pool and maps when its module was evaluated, so a script
// that replaces Array.prototype.pop, push or Map.prototype.get, delete
// while the kernel starts is never called by it.
func TestLaterScriptWhileLoadingGlueMethods(t *testing.T) {
	for _, m := range []string{"Array.prototype.pop", "Array.prototype.push", "Map.prototype.get", "Map.prototype.delete"} {
		t.Run(m, func(t *testing.T) {
			p := openHarness(t)
			got := evalPage[string](t, p, `(async () => {
				const mod = await import("/pling/pling-surface.js");
				const s = mod.createSurface({ registry: { version: () => 1, actions: () => [], view: () => ({ records: [] }) }, execute: () => ({}) });
				const started = s.ready();
				const had = `+m+`;
				let calls = 0;
				`+m+` = function (...a) { calls++; return had.apply(this, a); };
				try {
					await started;
					await s.describe();
					s.close();
					return "loaded, " + calls + " calls";
				} catch (e) {
					return String(e.message);
				} finally {
					`+m+` = had;
				}
			})()`)
			if got != "loaded, 0 calls" {
				t.Errorf("loadSurface with %s replaced while loading: %q, want it loaded without calling it", m, got)
			}
		})
	}
}

// TestLoadingLeavesPageBuiltinsAlone: the one change the surface makes to
// the page's built-ins is the documented one, then as undefined on
// Response.prototype and WebAssembly.Module.prototype (js/README.md);
// Array.prototype, Map.prototype and Promise, which pages polyfill and
// whose fast paths every array, map and Promise of the page uses, stay as
// they were (row P of make bench measures what that saves).
func TestLoadingLeavesPageBuiltinsAlone(t *testing.T) {
	p := openHarness(t)
	got := evalPage[[]string](t, p, `(async () => {
		const mod = await import("/pling/pling-surface.js");
		await mod.loadSurface();
		const fixed = [];
		for (const [o, names] of [[Array.prototype, ["push", "pop", "fill", "slice", "map"]], [Map.prototype, ["get", "set", "delete", "has"]], [Promise, ["resolve"]], [Promise.prototype, ["then"]]]) {
			for (const n of names) {
				const d = Object.getOwnPropertyDescriptor(o, n);
				if (!d.writable || !d.configurable) fixed.push(n);
			}
		}
		for (const [o, name] of [[Object.prototype, "Object.prototype"], [Array.prototype, "Array.prototype"], [Function.prototype, "Function.prototype"]]) {
			if (Object.getOwnPropertyDescriptor(o, "then") !== undefined) fixed.push(name + ".then");
		}
		for (const [C, name] of [[Response, "Response"], [WebAssembly.Module, "WebAssembly.Module"]]) {
			const d = Object.getOwnPropertyDescriptor(C.prototype, "then");
			if (!d || d.value !== undefined || d.writable || d.configurable || d.enumerable) fixed.push(name + ".prototype.then is not the documented one");
		}
		return fixed;
	})()`)
	if len(got) != 0 {
		t.Errorf("loading the surface: %v", got)
	}
}

// TestLaterScriptSecondLoad: once the surface has loaded, a page module
// that calls loadSurface again gets the real API, whatever a later script
// planted: a then on Object.prototype that would resolve the call with an
// API of its own, or the global that names the running loader.
func TestLaterScriptSecondLoad(t *testing.T) {
	for name, plant := range map[string]string{
		"Object.prototype.then": `Object.defineProperty(Object.prototype, "then", { configurable: true,
			get() { return this !== fake && this && typeof this.createSurface === "function" ? (ok) => { hooked++; ok(fake); } : undefined; } });
			undo = () => delete Object.prototype.then;`,
		"the loader's global": `const key = Symbol.for("pling.surface.runtime");
			const had = globalThis[key];
			globalThis[key] = { then(ok) { hooked++; ok(window.__plingSurfaceRuntime); return Promise.resolve(fake); } };
			undo = () => { globalThis[key] = had; };`,
	} {
		t.Run(name, func(t *testing.T) {
			p := openHarness(t)
			type result struct {
				Hooked int  `json:"hooked"`
				Real   bool `json:"real"`
			}
			got := evalPage[result](t, p, `(async () => {
				const mod = await import("/pling/pling-surface.js");
				await mod.loadSurface();
				let hooked = 0;
				let undo = () => {};
				const fake = Object.freeze({ createSurface() { throw new Error("the fake API"); }, defineRegistry() {} });
				`+plant+`
				let api;
				try {
					api = await mod.loadSurface();
				} finally {
					undo();
				}
				return { hooked, real: api !== fake && typeof api.createSurface === "function" && api.SURFACE_PROTOCOL === "pling.surface/0.1" };
			})()`)
			if got.Hooked != 0 || !got.Real {
				t.Errorf("the second loadSurface: %+v, want the real API and nothing hooked", got)
			}
		})
	}
}

// TestLaterScriptGlobalEntry: the classic-script entry, once it has loaded
// the surface, hands a later call of PlingSurface.loadSurface the real API,
// whether a later script replaced window.PlingSurface or patched
// Promise.prototype.then.
func TestLaterScriptGlobalEntry(t *testing.T) {
	for name, plant := range map[string]string{
		"window.PlingSurface": `try { window.PlingSurface = Object.freeze({ loadSurface: () => { hooked++; return Promise.resolve(fake); } }); } catch {}
			try { Object.defineProperty(window, "PlingSurface", { value: { loadSurface: () => { hooked++; return Promise.resolve(fake); } } }); } catch {}`,
		"Promise.prototype.then": `const then = Promise.prototype.then;
			Promise.prototype.then = function (ok, fail) {
				return then.call(this, (v) => { if (v && typeof v.loadSurface === "function") { hooked++; return ok({ loadSurface: () => fake }); } return ok ? ok(v) : v; }, fail);
			};
			undo = () => { Promise.prototype.then = then; };`,
	} {
		t.Run(name, func(t *testing.T) {
			p := openHarness(t)
			type result struct {
				First  bool `json:"first"`
				Hooked int  `json:"hooked"`
				Real   bool `json:"real"`
			}
			got := evalPage[result](t, p, `(async () => {
				await new Promise((ok, fail) => {
					const s = document.createElement("script");
					s.src = "/pling/pling-surface.global.js";
					s.onload = ok;
					s.onerror = () => fail(new Error("pling-surface.global.js did not load"));
					document.head.append(s);
				});
				const real = (api) => api && typeof api.createSurface === "function" && api.SURFACE_PROTOCOL === "pling.surface/0.1";
				const first = real(await PlingSurface.loadSurface());
				let hooked = 0;
				let undo = () => {};
				const fake = Object.freeze({ createSurface() { throw new Error("the fake API"); }, defineRegistry() {} });
				`+plant+`
				let api;
				try {
					api = await PlingSurface.loadSurface();
				} finally {
					undo();
				}
				return { first, hooked, real: api !== fake && real(api) };
			})()`)
			if !got.First || got.Hooked != 0 || !got.Real {
				t.Errorf("PlingSurface.loadSurface after load: %+v, want the real API both times and nothing hooked", got)
			}
		})
	}
}

// TestLaterScriptDates: JSON.stringify writes a Date through members of
// Date.prototype (toJSON, which calls Symbol.toPrimitive, valueOf and
// toISOString), so a later script replacing one of them would rewrite
// every date in the page's data and its executor's results. Each attempt
// either fails, leaving the date as it was, or makes the call fail closed
// before the executor runs.
func TestLaterScriptDates(t *testing.T) {
	for name, plant := range map[string]string{
		"toJSON":             `Date.prototype.toJSON = function () { return "forged"; };`,
		"toISOString":        `Date.prototype.toISOString = function () { return "forged"; };`,
		"valueOf":            `Date.prototype.valueOf = function () { return NaN; };`,
		"Symbol.toPrimitive": `Object.defineProperty(Date.prototype, Symbol.toPrimitive, { value: () => NaN, configurable: true });`,
	} {
		t.Run(name, func(t *testing.T) {
			p := openHarness(t)
			type result struct {
				Before string `json:"before"`
				After  string `json:"after"`
				Code   string `json:"code"`
				Runs   int    `json:"runs"`
			}
			got := evalPage[result](t, p, `(async () => {
				const { createSurface, defineRegistry } = await (await import("/pling/pling-surface.js")).loadSurface();
				let runs = 0;
				const surface = createSurface({
					registry: defineRegistry({ actions: [{ id: "orders.shipped", description: "When the order shipped", effect: "read",
						inputSchema: { type: "object", additionalProperties: false } }] }),
					execute: () => (runs++, { at: new Date(0) }),
				});
				const call = (id) => surface.handle({ protocol: "pling.surface/0.1", id, method: "invoke", capability: "orders.shipped", input: {} });
				const first = await call("d1");
				try { `+plant+` } catch {}
				const r = await call("d2");
				surface.close();
				return { before: first.result.at, after: r.ok ? String(r.result.at) : "", code: r.ok ? "" : r.error.code, runs };
			})()`)
			const iso = "1970-01-01T00:00:00.000Z"
			if got.Before != iso {
				t.Fatalf("before the patch the date read %q, want %q", got.Before, iso)
			}
			failedClosed := got.Code == string(surface.CodeInternalError) && got.Runs == 1
			if got.After != iso && !failedClosed {
				t.Errorf("after a later script replaced Date.prototype.%s: %+v; want the date %q, or INTERNAL_ERROR with the executor not run", name, got, iso)
			}
		})
	}
}

// TestLaterScriptIndexAccessorInFlight: a later script puts an accessor for
// index 1 on Array.prototype (or Object.prototype) while a call waits for
// its executor. Go's glue filled a new array by index for every call into
// JavaScript, and could then pass no more than one argument; the runtime's
// glue makes them without prototype, so the call that waited, one made
// while the accessor stays and one after it is gone are each answered as
// without it, and the executor runs once for each.
func TestLaterScriptIndexAccessorInFlight(t *testing.T) {
	for _, c := range []struct{ name, js string }{
		{"a getter alone", `Object.defineProperty(Array.prototype, "1", { configurable: true, get() { return "orders.import"; } })`},
		{"a setter that writes through", `Object.defineProperty(Array.prototype, "1", { configurable: true,
			set(v) { Object.defineProperty(this, "1", { value: v, writable: true, enumerable: true, configurable: true }); } })`},
		{"a getter alone on Object.prototype", `Object.defineProperty(Object.prototype, "1", { configurable: true, get() { return "orders.import"; } })`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openTestPage(t)
			setup(t, p, map[string]any{"execute": "held"})
			calls := pageCalls(t, p)
			env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "in flight"})
			if r := heldInvoke(t, p, env, c.js); r.result(t)["error"] != nil {
				t.Errorf("the call in flight: %s", r)
			}
			during := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "during"})
			if r := heldInvoke(t, p, during, ""); r.result(t)["error"] != nil {
				t.Errorf("a call while the accessor stays: %s", r)
			}
			after := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "after"})
			evalPage[bool](t, p, `delete Array.prototype[1] && delete Object.prototype[1]`)
			if r := heldInvoke(t, p, after, ""); r.result(t)["error"] != nil {
				t.Errorf("after the accessor was deleted: %s", r)
			}
			if got := pageCalls(t, p) - calls; got != 3 {
				t.Errorf("three calls reached the executor, which ran %d times", got)
			}
		})
	}
}

// heldInvoke sends env to a page whose executor is held, runs js in the
// page once the executor waits, then lets it answer, and returns the reply.
func heldInvoke(t *testing.T, p *tab, env map[string]any, script string) reply {
	t.Helper()
	evalAgent[bool](t, p, `(globalThis.__inflight = agent.request(`+js(env)+`, { timeoutMs: 5000 }), true)`)
	// Not waitPage: a call refused before the executor never holds it.
	evalPage[bool](t, p, `(async () => {
		for (let i = 0; i < 400 && !window.__e2e.held(); i++) await new Promise((r) => setTimeout(r, 5));
		`+script+`;
		if (window.__e2e.held()) window.__e2e.release();
		return true;
	})()`)
	return evalAgent[reply](t, p, `globalThis.__inflight`)
}
