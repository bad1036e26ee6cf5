package e2e

import (
	"strings"
	"testing"
)

// kernelAttackJS is a later script that goes for the kernel itself, the
// five ways that reached it through Go's wasm_exec.js: it redefines the
// getters of WebAssembly.Instance.prototype.exports and of the memory's
// buffer (the glue read both on every call), and puts a setter for
// "result" on Object.prototype (syscall/js assigned each callback's answer
// there, runtime.create's host included). With the exports it would answer
// a pending wait with its own text (a forged executor answer or session),
// or enter a call under the token of one in flight; window.__attack.try()
// makes those calls, in the old signatures and the new, and counts each
// one an export took.
const kernelAttackJS = `(() => {
	const A = window.__attack = { exportsHits: 0, memHits: 0, hosts: 0, taken: 0, exports: null };
	const inst = Object.getOwnPropertyDescriptor(WebAssembly.Instance.prototype, "exports");
	Object.defineProperty(WebAssembly.Instance.prototype, "exports", { configurable: true,
		get() { A.exportsHits++; A.exports = inst.get.call(this); return A.exports; } });
	const mem = Object.getOwnPropertyDescriptor(WebAssembly.Memory.prototype, "buffer");
	try {
		Object.defineProperty(WebAssembly.Memory.prototype, "buffer", { configurable: true,
			get() { A.memHits++; return mem.get.call(this); } });
	} catch {} // read-only where a runtime pinned it
	Object.defineProperty(Object.prototype, "result", { configurable: true,
		set(v) {
			if (v && typeof v === "object" && ("io" in v || "entryIO" in v || "sessionFor" in v)) A.hosts++;
			Object.defineProperty(this, "result", { value: v, writable: true, enumerable: true, configurable: true });
		} });
	A.try = () => {
		const ex = A.exports;
		if (!ex) return 0;
		for (let t = 1; t <= 64; t++) {
			for (const call of [() => ex.pling_answer(t, 2), () => ex.pling_answer(0, 0, t, 2),
				() => ex.pling_handle(t, 2, t, 2), () => ex.pling_handle(0, 0, t, 2, t, 2)]) {
				try { if (call() === 0) A.taken++; } catch {}
			}
		}
		return A.taken;
	};
	return true;
})()`

// TestLaterScriptCannotReachTheKernel: the attacks of kernelAttackJS,
// planted after the surface loaded and before the page made its surface
// (the demo makes its own lazily), then an agent's calls on the window
// (async session getter) and on a private channel (single-use
// credential), each with an executor held while the script tries the
// exports. The script is handed no export, no memory and no host; every
// answer is the page's own, once; the audit names the real agent.
func TestLaterScriptCannotReachTheKernel(t *testing.T) {
	p := openTestPage(t)
	evalPage[bool](t, p, kernelAttackJS)
	secret := randomHex(t, 16)
	setup(t, p, map[string]any{"session": "async", "execute": "held", "credential": "cred-" + secret})
	calls := pageCalls(t, p)

	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "window " + secret})
	r := heldInvoke(t, p, env, `window.__attack.try()`)
	if res := r.result(t); res["error"] != nil || !strings.Contains(string(r.Envelope.Result), "Note on T-1 updated") {
		t.Errorf("window call: %s", r)
	}

	a := evalAgent[connectAnswer](t, p, `agent.connect(`+js("cred-"+secret)+`, {app: "orders"})`)
	if a.Answer.Kind != "connected" {
		t.Fatalf("connect: %+v", a.Answer)
	}
	priv := invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "private " + secret})
	evalAgent[bool](t, p, `(globalThis.__private = agent.portRequest(`+js(a.Handle)+`, `+js(priv)+`), true)`)
	evalPage[bool](t, p, `(async () => {
		for (let i = 0; i < 400 && !window.__e2e.held(); i++) await new Promise((r) => setTimeout(r, 5));
		window.__attack.try();
		if (window.__e2e.held()) window.__e2e.release();
		return true;
	})()`)
	pr := evalAgent[reply](t, p, `globalThis.__private`)
	if res := pr.result(t); res["error"] != nil || !strings.Contains(string(pr.Envelope.Result), "Note on T-2 updated") {
		t.Errorf("private call: %s", pr)
	}

	type caught struct {
		ExportsHits int  `json:"exportsHits"`
		MemHits     int  `json:"memHits"`
		Hosts       int  `json:"hosts"`
		Taken       int  `json:"taken"`
		Exports     bool `json:"hasExports"`
	}
	got := evalPage[caught](t, p, `({ ...window.__attack, hasExports: !!window.__attack.exports, exports: undefined })`)
	if got != (caught{}) {
		t.Errorf("the later script reached %+v, want nothing", got)
	}
	if n := pageCalls(t, p) - calls; n != 2 {
		t.Errorf("the executor ran %d times for two calls", n)
	}
	for _, ev := range evalPage[[]map[string]any](t, p, `window.__e2e.audit()`) {
		if ev["agentId"] != nil && ev["agentId"] != "agent.e2e" {
			t.Errorf("audit event names another agent: %v", ev)
		}
	}
	if n := evalPage[int](t, p, `Object.getOwnPropertyNames(globalThis).filter((k) => { try { const v = globalThis[k]; return v && typeof v.stats === "function" && typeof v.create === "function"; } catch { return false; } }).length`); n != 0 {
		t.Errorf("%d globals hold the runtime", n)
	}
}

// swapKernelJS is a later script that tries to hand the surface a kernel
// of its own while the real one has not started: it stands in for every
// way to fetch bytes or make a WebAssembly module or instance, and answers
// the then lookup a Promise makes on the object it is resolved with (a
// Response, a Module, an Instance, bytes), where returning a then of its
// own would swap the object. It counts what it was shown.
const swapKernelJS = `(() => {
	const A = window.__swap = { thens: [], calls: [] };
	Object.defineProperty(Object.prototype, "then", { configurable: true, get() {
		const tag = Object.prototype.toString.call(this);
		if (/Response|Module|Instance|ArrayBuffer/.test(tag)) A.thens.push(tag);
		return undefined;
	} });
	const wrap = (obj, name, label) => {
		const f = obj[name];
		if (typeof f !== "function") return;
		obj[name] = new Proxy(f, {
			apply(t, self, args) { A.calls.push(label); return Reflect.apply(t, self, args); },
			construct(t, args, nt) { A.calls.push(label); return Reflect.construct(t, args, nt); },
		});
	};
	wrap(window, "fetch", "fetch");
	for (const n of ["compile", "compileStreaming", "instantiate", "instantiateStreaming", "Module", "Instance"]) wrap(WebAssembly, n, "WebAssembly." + n);
	wrap(window, "XMLHttpRequest", "XMLHttpRequest");
	for (const n of ["open", "send", "setRequestHeader"]) wrap(XMLHttpRequest.prototype, n, "XMLHttpRequest." + n);
	for (const n of ["response", "status", "responseType"]) {
		const d = Object.getOwnPropertyDescriptor(XMLHttpRequest.prototype, n);
		Object.defineProperty(XMLHttpRequest.prototype, n, { configurable: true,
			get() { A.calls.push("XMLHttpRequest." + n); return d.get.call(this); },
			set(v) { A.calls.push("XMLHttpRequest." + n + "="); if (d.set) d.set.call(this, v); } });
	}
	return performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$/.test(e.name)).length;
})()`

// TestLaterScriptCannotSwapTheKernel: the kernel starts when an agent
// first speaks, after every later script ran; one that planted swapKernelJS
// before that is neither called nor shown an object it could swap, and
// the agent's answers are the page's own.
func TestLaterScriptCannotSwapTheKernel(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{"session": "async"})
	if n := evalPage[int](t, p, swapKernelJS); n != 0 {
		t.Fatalf("surface.wasm was fetched %d times before the attack was planted", n)
	}
	calls := pageCalls(t, p)
	d := describeEnv(t, nil)
	if r := send(t, p, d); !r.Envelope.OK {
		t.Fatalf("describe: %s", r)
	}
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "kernel kept"})
	if r := send(t, p, env); r.result(t)["error"] != nil {
		t.Fatalf("invoke: %s", r)
	}
	if got := pageCalls(t, p) - calls; got != 1 {
		t.Errorf("the invoke ran the executor %d times", got)
	}
	if note := evalPage[string](t, p, `window.__e2e.note("T-2")`); note != "kernel kept" {
		t.Errorf("note %q", note)
	}
	type seen struct {
		Thens []string `json:"thens"`
		Calls []string `json:"calls"`
	}
	got := evalPage[seen](t, p, `window.__swap`)
	if len(got.Thens) != 0 || len(got.Calls) != 0 {
		t.Errorf("the later script was shown %v and called through %v while the kernel started", got.Thens, got.Calls)
	}
	if n := evalPage[int](t, p, `performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$/.test(e.name)).length`); n != 1 {
		t.Errorf("surface.wasm fetched %d times, want once", n)
	}
}
