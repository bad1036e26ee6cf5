package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// The sources whose property names are planted on Object.prototype and
// Array.prototype: every module of the runtime (js/*.js: the first script's,
// its glue, shared state, WebMCP), and Go's own wasm_exec.js (the glue the
// runtime's replaced, whose names an attack on the old design would use).
func tripwireSources(t *testing.T) []string {
	files, err := filepath.Glob("../js/*.js")
	if err != nil || len(files) < 10 {
		t.Fatalf("the runtime's modules: %v %v", files, err)
	}
	return append(files, filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"))
}

var (
	dotName    = regexp.MustCompile(`\.\s*([A-Za-z_$][\w$]*)`)
	quotedName = regexp.MustCompile("[\"'`]([A-Za-z_$][\\w$]*)[\"'`]")
	keyName    = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*:`)
)

// sourceNames extracts every name the sources read or write as a property
// (after a dot, as a quoted string, as an object key), so that a new name
// is covered without anyone listing it.
func sourceNames(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range tripwireSources(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{dotName, quotedName, keyName} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				seen[m[1]] = true
			}
		}
	}
	// The indices the glue once filled call arguments at.
	for i := 0; i < 10; i++ {
		seen[string(rune('0'+i))] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// plantJS plants the wires. Every configurable property of the global
// object, of each built-in constructor and namespace it holds, of their
// prototypes, and of the intrinsics no global names (%TypedArray%, the
// iterator prototypes, async and generator functions) becomes an accessor
// that records its name and behaves as the property did; on
// Object.prototype and Array.prototype, each source name that is not there
// gets one too. It uses only what it captured before it planted, and makes
// every descriptor without prototype.
const plantJS = `(names) => {
	const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf, setPrototypeOf, hasOwn } = Object;
	const { ownKeys, apply } = Reflect;
	const symbolText = Function.prototype.call.bind(Object.getOwnPropertyDescriptor(Symbol.prototype, "description").get);
	const hits = setPrototypeOf([], null);
	const seen = new WeakSet();
	const seenHas = Function.prototype.call.bind(WeakSet.prototype.has);
	const seenAdd = Function.prototype.call.bind(WeakSet.prototype.add);
	let armed = false;
	let planted = 0;
	const ErrorCtor = Error;
	Error.stackTraceLimit = 40;
	const where1 = setPrototypeOf({}, null);
	const tagOf = Function.prototype.call.bind(Object.prototype.toString);
	const hit = (name, self) => {
		if (!armed) return;
		armed = false;
		hits[hits.length] = name;
		if (where1[name] === undefined) where1[name] = "on " + tagOf(self) + ": " + new ErrorCtor().stack;
		armed = true;
	};
	const wire = (obj, where, key) => {
		const d = getOwnPropertyDescriptor(obj, key);
		if (d === undefined || !d.configurable) return;
		if (where === "globalThis" && (key === "__trip" || key === "agent")) return;
		// V8 reads it without running an accessor; wired, no Error has a stack.
		if (obj === Error && key === "stackTraceLimit") return;
		const name = where + "." + (typeof key === "symbol" ? "[" + symbolText(key) + "]" : key);
		if (hasOwn(d, "value")) {
			let v = d.value;
			defineProperty(obj, key, { __proto__: null, configurable: true, enumerable: d.enumerable,
				get() { hit(name, this); return v; },
				set(x) {
					hit(name, this);
					if (this === obj) v = x;
					else defineProperty(this, key, { __proto__: null, value: x, writable: true, enumerable: true, configurable: true });
				} });
		} else {
			const g = d.get, s = d.set;
			defineProperty(obj, key, { __proto__: null, configurable: true, enumerable: d.enumerable,
				get: g === undefined ? undefined : function () { hit(name, this); return apply(g, this, []); },
				set: s === undefined ? undefined : function (x) { hit(name, this); return apply(s, this, [x]); } });
		}
		planted++;
	};
	const walk = (obj, where) => {
		if (obj === null || (typeof obj !== "object" && typeof obj !== "function") || seenHas(seen, obj)) return;
		seenAdd(seen, obj);
		const keys = ownKeys(obj);
		for (let i = 0; i < keys.length; i++) wire(obj, where, keys[i]);
	};
	const g = globalThis;
	const roots = setPrototypeOf([], null);
	const globals = ownKeys(g);
	for (let i = 0; i < globals.length; i++) {
		const k = globals[i];
		if (typeof k !== "string" || !/^[A-Z]/.test(k) && k !== "crypto" && k !== "performance" && k !== "console") continue;
		const d = getOwnPropertyDescriptor(g, k);
		const v = d && hasOwn(d, "value") ? d.value : undefined;
		if (v === null || (typeof v !== "object" && typeof v !== "function")) continue;
		roots[roots.length] = [v, k];
		if (typeof v === "function" && v.prototype !== null && typeof v.prototype === "object") roots[roots.length] = [v.prototype, k + ".prototype"];
		if (typeof v === "object" && k !== "crypto" && k !== "performance" && k !== "console") {
			// A namespace (WebAssembly, Intl): its constructors too.
			const inner = ownKeys(v);
			for (let j = 0; j < inner.length; j++) {
				const id = getOwnPropertyDescriptor(v, inner[j]);
				const c = id && hasOwn(id, "value") ? id.value : undefined;
				if (typeof c === "function" && c.prototype !== null && typeof c.prototype === "object") {
					roots[roots.length] = [c, k + "." + String(inner[j])];
					roots[roots.length] = [c.prototype, k + "." + String(inner[j]) + ".prototype"];
				}
			}
		}
		if (typeof v === "object" && getPrototypeOf(v) !== null) roots[roots.length] = [getPrototypeOf(v), k + ".[[Prototype]]"];
	}
	const TypedArray = getPrototypeOf(Uint8Array);
	roots[roots.length] = [TypedArray, "%TypedArray%"];
	roots[roots.length] = [TypedArray.prototype, "%TypedArray%.prototype"];
	roots[roots.length] = [getPrototypeOf([][Symbol.iterator]()), "%ArrayIteratorPrototype%"];
	roots[roots.length] = [getPrototypeOf(getPrototypeOf([][Symbol.iterator]())), "%IteratorPrototype%"];
	roots[roots.length] = [getPrototypeOf(new Map()[Symbol.iterator]()), "%MapIteratorPrototype%"];
	roots[roots.length] = [getPrototypeOf("x"[Symbol.iterator]()), "%StringIteratorPrototype%"];
	roots[roots.length] = [getPrototypeOf(async function () {}), "%AsyncFunction.prototype%"];
	roots[roots.length] = [getPrototypeOf(function* () {}), "%GeneratorFunction.prototype%"];
	roots[roots.length] = [g, "globalThis"];
	// Object.prototype and Array.prototype last: until then the planting
	// itself reads through them.
	for (let i = 0; i < roots.length; i++) {
		const [obj, where] = roots[i];
		if (obj === Object.prototype || obj === Array.prototype) continue;
		walk(obj, where);
	}
	for (const [proto, where] of [[Array.prototype, "Array.prototype"], [Object.prototype, "Object.prototype"]]) {
		for (let i = 0; i < names.length; i++) {
			const name = names[i];
			if (name === "__proto__" || hasOwn(proto, name)) continue;
			defineProperty(proto, name, { __proto__: null, configurable: true, enumerable: false,
				get() { hit(where + "." + name, this); return undefined; },
				set(x) { hit(where + "." + name, this); defineProperty(this, name, { __proto__: null, value: x, writable: true, enumerable: true, configurable: true }); } });
			planted++;
		}
		walk(proto, where);
	}
	const copy = () => { const out = []; for (let i = 0; i < hits.length; i++) out[i] = hits[i]; return out; };
	defineProperty(globalThis, "__wires", { __proto__: null, value: {
		__proto__: null,
		planted: () => planted,
		hits: () => { const was = armed; armed = false; const h = copy(); armed = was; return h; },
		stacks: () => { const was = armed; armed = false; const o = {}; for (const k in where1) o[k] = where1[k]; armed = was; return o; },
		arm: () => { armed = true; return true; },
		disarm: () => { armed = false; return true; },
	} });
	return planted;
}`

// TestTripwires: once the surface has loaded, nothing it does looks up a
// property a later script could redefine. The wires are planted after
// load; then an agent describes and invokes on the window and on a private
// channel (async session getters, async executor, authenticate), the page
// creates a second surface (with the backend's shared state, the first has
// IndexedDB's), and both answer again. Every answer must be right and no
// wire may fire; the failure names each one that did.
func TestTripwires(t *testing.T) {
	names := sourceNames(t)
	p := openTab(t, siteURL+"/e2e/tripwire.html")
	plant := func() {
		waitPage(t, p, `window.__trip && window.__trip.ready`)
		planted := evalPage[int](t, p, "("+plantJS+")("+js(names)+")")
		t.Logf("%d wires planted, %d names taken from the sources", planted, len(names))
		if planted < 1000 {
			t.Fatalf("only %d wires planted", planted)
		}
		p.startAgent(t)
		evalPage[bool](t, p, `__wires.arm()`)
	}
	plant()

	check := func(what string, r reply) {
		t.Helper()
		if !r.Envelope.OK {
			t.Errorf("%s: %s", what, r)
		}
	}
	run := func(app string) (privateID string) {
		check(app+" describe", evalAgent[reply](t, p, `agent.request(`+js(describeEnv(t, nil))+`, {wrapper: {app: `+js(app)+`}})`))
		inv := evalAgent[reply](t, p, `agent.request(`+js(invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "wired"}))+`, {wrapper: {app: `+js(app)+`}})`)
		check(app+" invoke", inv)
		if inv.Envelope.OK && !strings.Contains(string(inv.Envelope.Result), `"done update_note@order:T-2"`) {
			t.Errorf("%s invoke result %s", app, inv.Envelope.Result)
		}
		a := evalAgent[connectAnswer](t, p, `agent.connect("cred-trip", {app: `+js(app)+`})`)
		if a.Answer.Kind != "connected" {
			t.Errorf("%s connect: %+v", app, a.Answer)
		}
		check(app+" private describe", evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(describeEnv(t, nil))+`)`))
		pr := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(invokeEnv(t, "secret.read", map[string]any{}))+`)`)
		check(app+" private invoke", pr)
		again := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(envWithID(pr.Envelope.ID, "secret.read"))+`)`)
		if again.code() != "REPLAY_DETECTED" {
			t.Errorf("%s: the same request again: %s, want REPLAY_DETECTED", app, again)
		}
		return pr.Envelope.ID
	}
	fired := func() {
		t.Helper()
		hits := evalPage[[]string](t, p, `__wires.hits()`)
		if len(hits) == 0 {
			return
		}
		count := map[string]int{}
		for _, h := range hits {
			count[h]++
		}
		var lines []string
		for n, c := range count {
			lines = append(lines, fmt.Sprintf("%s (%d)", n, c))
		}
		sort.Strings(lines)
		t.Errorf("%d wires fired (%d distinct): %s", len(hits), len(lines), strings.Join(lines, ", "))
		for n, st := range evalPage[map[string]string](t, p, `__wires.stacks()`) {
			t.Logf("%s first fired at:\n%s", n, st)
		}
	}
	before := run("orders")
	evalPage[bool](t, p, `__trip.second()`)
	run("other")
	run("orders")
	fired()

	// A reload: the claims kept in IndexedDB outlive the page, and the
	// wires are planted again in the new one.
	if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	plant()
	run("orders")
	a := evalAgent[connectAnswer](t, p, `agent.connect("cred-trip", {app: "orders"})`)
	if a.Answer.Kind != "connected" {
		t.Fatalf("connect after the reload: %+v", a.Answer)
	}
	if again := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(envWithID(before, "secret.read"))+`)`); again.code() != "REPLAY_DETECTED" {
		t.Errorf("a request from before the reload, again: %s, want REPLAY_DETECTED", again)
	}
	fired()
}

// envWithID is an invoke of capability with empty input under id.
func envWithID(id, capability string) map[string]any {
	return map[string]any{"protocol": "pling.surface/0.1", "id": id, "method": "invoke", "capability": capability, "input": map[string]any{}}
}

// tripState answers httpLimiter and httpGuard as a backend would: every
// request allowed, each request id claimed once.
func tripState() http.Handler {
	var mu sync.Mutex
	claimed := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Op        string `json:"op"`
			RequestID string `json:"requestId"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, `{"error":"request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch body.Op {
		case "allow":
			w.Write([]byte(`{"allowed":true}`))
		case "claim":
			mu.Lock()
			seen := claimed[body.RequestID]
			claimed[body.RequestID] = true
			mu.Unlock()
			if seen {
				w.Write([]byte(`{"claim":"replayed"}`))
			} else {
				w.Write([]byte(`{"claim":"claimed"}`))
			}
		default:
			http.Error(w, `{"error":"request"}`, http.StatusBadRequest)
		}
	})
}
