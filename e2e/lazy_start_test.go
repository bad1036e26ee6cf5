package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// flakyKernel serves /flaky/<key>/surface.wasm: 503 the first time each
// key is asked for, the site's kernel after that.
func flakyKernel(site string) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/flaky/")
		mu.Lock()
		first := !seen[key]
		seen[key] = true
		mu.Unlock()
		if first {
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		}
		files, _ := filepath.Glob(filepath.Join(site, "pling", "surface.*.wasm"))
		if len(files) != 1 {
			http.Error(w, "no kernel in the site", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/wasm")
		http.ServeFile(w, r, files[0])
	})
}

// untypedKernel serves /untyped/<key>/surface.wasm as the site's kernel
// with a Content-Type that is not application/wasm, as a server that does
// not know the type would.
func untypedKernel(site string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files, _ := filepath.Glob(filepath.Join(site, "pling", "surface.*.wasm"))
		if len(files) != 1 {
			http.Error(w, "no kernel in the site", http.StatusInternalServerError)
			return
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
}

// forgive drops the problems the page reported that mention part: a
// failure the test provoked.
func (p *tab) forgive(part string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.problems[:0]
	for _, m := range p.problems {
		if !strings.Contains(m, part) {
			kept = append(kept, m)
		}
	}
	p.problems = kept
}

// wasmFetchesJS counts the page's requests for a kernel file.
const wasmFetchesJS = `performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$/.test(e.name)).length`

// TestLazyStartHoldsCalls: calls made before the kernel is up wait for
// it, in order, and each is answered once: twenty invokes and describes
// on the window from an agent and through handle() from the page, all
// sent before the first could be answered. The executor runs once per
// invoke and the kernel is fetched once.
func TestLazyStartHoldsCalls(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{})
	if n := evalPage[int](t, p, wasmFetchesJS); n != 0 {
		t.Fatalf("the kernel was fetched %d times before any call", n)
	}
	calls := pageCalls(t, p)
	var envs []map[string]any
	for i := 0; i < 10; i++ {
		envs = append(envs, invokeEnv(t, "orders.search", map[string]any{"query": "T"}), describeEnv(t, nil))
	}
	page := evalPage[bool](t, p, `(window.__held = Promise.all(`+js(envs)+`.map((e) => window.__e2e.surface().handle({ ...e, id: e.id + ".page" }))), true)`)
	if !page {
		t.Fatal("handle")
	}
	got := evalAgent[[]reply](t, p, `Promise.all(`+js(envs)+`.map((e) => agent.request(e, {wrapper: {app: "orders"}})))`)
	fromPage := evalPage[[]envelope](t, p, `window.__held`)
	for i, r := range got {
		if r.Envelope.ID != envs[i]["id"] || !r.Envelope.OK {
			t.Errorf("agent call %d: %s", i, r)
		}
	}
	for i, e := range fromPage {
		if e.ID != envs[i]["id"].(string)+".page" || !e.OK {
			t.Errorf("page call %d: %+v", i, e)
		}
	}
	p.sleep(t, settle)
	if n := pageCalls(t, p) - calls; n != 20 {
		t.Errorf("20 invokes ran the executor %d times", n)
	}
	if n := evalPage[int](t, p, wasmFetchesJS); n != 1 {
		t.Errorf("the kernel was fetched %d times, want once", n)
	}
}

// TestLazyStartHoldsABoundedNumber: at most 256 calls of a surface wait
// for the kernel; the rest are refused at once with INTERNAL_ERROR, and
// every call is answered.
func TestLazyStartHoldsABoundedNumber(t *testing.T) {
	p := openTestPage(t)
	setup(t, p, map[string]any{})
	type tally struct {
		OK      int            `json:"ok"`
		Refused map[string]int `json:"refused"`
	}
	got := evalPage[tally](t, p, `(async () => {
		const s = window.__e2e.surface();
		const all = await Promise.all(Array.from({ length: 300 }, (_, i) =>
			s.handle({ protocol: "pling.surface/0.1", id: "held-" + i, method: "describe" })));
		const out = { ok: 0, refused: {} };
		for (const e of all) if (e.ok) out.ok++; else out.refused[e.error.code] = (out.refused[e.error.code] || 0) + 1;
		return out;
	})()`)
	if got.OK != 256 || got.Refused["INTERNAL_ERROR"] != 44 || len(got.Refused) != 1 {
		t.Errorf("300 calls before the start: %+v, want 256 answered and 44 INTERNAL_ERROR", got)
	}
}

// TestLazyStartFailureRetries: when the kernel cannot be fetched, the
// calls waiting get a structured INTERNAL_ERROR reply (never silence) and
// ready() rejects; the next call starts it again, and is answered.
func TestLazyStartFailureRetries(t *testing.T) {
	p := openTestPage(t)
	t.Cleanup(func() { p.forgive("/flaky/") })
	setup(t, p, map[string]any{"wasmURL": "/flaky/" + randomHex(t, 8) + "/surface.wasm"})
	calls := pageCalls(t, p)
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "after a failed start"})
	if r := send(t, p, env); r.code() != "INTERNAL_ERROR" || r.Envelope.ID != env["id"] {
		t.Fatalf("a call while the start failed: %s, want INTERNAL_ERROR", r)
	}
	if n := pageCalls(t, p) - calls; n != 0 {
		t.Errorf("the executor ran %d times for a call the kernel never saw", n)
	}
	if r := send(t, p, env); r.result(t)["error"] != nil {
		t.Fatalf("the same call again, after a restart: %s", r)
	}
	if n := pageCalls(t, p) - calls; n != 1 {
		t.Errorf("the executor ran %d times, want once", n)
	}
	tm := evalPage[startTimings](t, p, `window.__e2e.surface().ready().then((t) => ({ ...t }))`)
	if tm.FetchMs <= 0 || tm.CompileMs <= 0 || tm.StartMs <= 0 {
		t.Errorf("ready() timings %+v, want each measured", tm)
	}
}

// TestLazyStartReadyRejects: ready() rejects with the reason when the
// start fails, and a surface closed while the kernel starts answers its
// waiting calls "surface is closed" without running the executor.
func TestLazyStartReadyRejects(t *testing.T) {
	p := openTestPage(t)
	t.Cleanup(func() { p.forgive("/flaky/") })
	setup(t, p, map[string]any{"wasmURL": "/flaky/" + randomHex(t, 8) + "/surface.wasm"})
	if got := evalPage[string](t, p, `window.__e2e.surface().ready().then(() => "ready", (e) => "rejected: " + e.message)`); !strings.Contains(got, "rejected: ") || !strings.Contains(got, "503") {
		t.Errorf("ready() with a kernel that could not be fetched: %q", got)
	}
	setup(t, p, map[string]any{})
	calls := pageCalls(t, p)
	got := evalPage[envelope](t, p, `(() => {
		const s = window.__e2e.surface();
		const r = s.handle({ protocol: "pling.surface/0.1", id: "closing-1", method: "invoke", capability: "orders.search", input: { query: "T" } });
		s.close();
		return r;
	})()`)
	if got.OK || got.Error == nil || got.Error.Code != "INTERNAL_ERROR" || !strings.Contains(got.Error.Message, "closed") {
		t.Errorf("a call held when the surface closed: %+v", got)
	}
	p.sleep(t, settle)
	if n := pageCalls(t, p) - calls; n != 0 {
		t.Errorf("the executor ran %d times for a closed surface", n)
	}
}

// TestLazyStartOptions: by default nothing is fetched before the first
// call; prefetch: "idle" fetches, compiles, starts and warms the kernel
// once the page is idle; start: "eager" starts it at once. None of them
// posts on the window, audits or calls the page's executor.
func TestLazyStartOptions(t *testing.T) {
	for _, c := range []struct {
		name    string
		config  map[string]any
		fetched int
	}{
		{"default", map[string]any{}, 0},
		{"prefetch idle", map[string]any{"prefetch": "idle"}, 1},
		{"start eager", map[string]any{"start": "eager"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openTestPage(t)
			// Whatever the runtime does before an agent speaks (prefetch
			// warms the kernel with a describe of its own) posts nothing
			// on the window and calls nothing of the page's.
			evalPage[bool](t, p, `(window.__posted = 0, addEventListener("message", () => window.__posted++), true)`)
			setup(t, p, c.config)
			p.sleep(t, 2*settle)
			if n := evalPage[int](t, p, wasmFetchesJS); n != c.fetched {
				t.Errorf("the kernel was fetched %d times before any call, want %d", n, c.fetched)
			}
			if n := evalPage[int](t, p, `window.__posted`); n != 0 {
				t.Errorf("%d messages were posted on the window before any agent spoke", n)
			}
			if n := evalPage[int](t, p, `window.__e2e.audit().length + window.__e2e.calls()`); n != 0 {
				t.Errorf("%d audit events or executor calls before any agent spoke", n)
			}
			if r := send(t, p, describeEnv(t, nil)); !r.Envelope.OK {
				t.Errorf("describe: %s", r)
			}
			if n := evalPage[int](t, p, wasmFetchesJS); n != 1 {
				t.Errorf("the kernel was fetched %d times, want once", n)
			}
		})
	}
}

type startTimings struct {
	FetchMs   float64 `json:"fetchMs"`
	CompileMs float64 `json:"compileMs"`
	StartMs   float64 `json:"startMs"`
	Streamed  bool    `json:"streamed"`
}

// TestLazyStartStreams: the kernel compiles while it downloads where the
// server sends it as application/wasm; from a server that does not, it is
// downloaded again and compiled whole, and every call is answered either
// way.
func TestLazyStartStreams(t *testing.T) {
	for _, c := range []struct {
		name, wasmURL string
		streamed      bool
		fetches       int
	}{
		{"application/wasm", "", true, 1},
		{"another type", "/untyped/" + randomHex(t, 8) + "/surface.wasm", false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openTestPage(t)
			config := map[string]any{}
			if c.wasmURL != "" {
				config["wasmURL"] = c.wasmURL
				t.Cleanup(func() { p.forgive("/untyped/") })
			}
			setup(t, p, config)
			if r := send(t, p, describeEnv(t, nil)); !r.Envelope.OK {
				t.Fatalf("describe: %s", r)
			}
			tm := evalPage[startTimings](t, p, `window.__e2e.surface().ready().then((t) => ({ ...t }))`)
			if tm.Streamed != c.streamed {
				t.Errorf("ready() %+v: streamed %v, want %v", tm, tm.Streamed, c.streamed)
			}
			fetched := evalPage[int](t, p, `performance.getEntriesByType("resource").filter((e) => /surface[.][0-9a-f.]*wasm$|\/untyped\//.test(e.name)).length`)
			if fetched != c.fetches {
				t.Errorf("the kernel was fetched %d times, want %d", fetched, c.fetches)
			}
		})
	}
}
