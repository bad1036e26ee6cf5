package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/sitebuild"
)

// The package as page authors install it: `make package` writes the
// tarball, and each project in testdata/bundlers (its package.json and
// package-lock.json kept in the repository) is installed once per lock
// file under build/bundlers/, gets the tarball installed from the file,
// is built for production, and is served as devserver serves a site.

// packageTarball is what `make package` writes.
func packageTarball(t *testing.T) string {
	t.Helper()
	tgz, err := filepath.Abs(filepath.Join("..", "build", "package", "pling-surface.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tgz); err != nil {
		t.Fatalf("the package is not built: run `make package` first, or `make test-e2e`, which does: %v", err)
	}
	return tgz
}

// buildProject installs testdata/bundlers/<name>, puts its sources and the
// package in, runs build (a command in the project) and returns the output
// directory, precompressed as a site is.
func buildProject(t *testing.T, name string, build ...string) string {
	t.Helper()
	tgz := packageTarball(t)
	src := filepath.Join("testdata", "bundlers", name)
	dir := npmDir(t, "the "+name+" test project", src, filepath.Join("bundlers", name), []string{"package.json", "package-lock.json"}, true)
	// The sources are written on every run: they are not part of what the
	// installed directory is named by.
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "package.json" || rel == "package-lock.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(what string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s in %s: %v\n%s", what, dir, err, out)
		}
	}
	// From the file, never a registry: --offline fails rather than ask one.
	run("install the tarball", "npm", "install", "--no-save", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", tgz)
	dist := filepath.Join(dir, "dist")
	if err := os.RemoveAll(dist); err != nil {
		t.Fatal(err)
	}
	run("the production build", build...)
	if _, err := sitebuild.Compress(dist, filepath.Join("..", "build", "compress-cache")); err != nil {
		t.Fatal(err)
	}
	return dist
}

// served is a bundled site behind devserver, with what it sent recorded.
type served struct {
	url  string
	mu   sync.Mutex
	sent map[string]http.Header // path -> headers of its last response
}

func serveBundled(t *testing.T, dist string) *served {
	t.Helper()
	s := &served{sent: map[string]http.Header{}}
	h := devserver.NewHandler(dist, devserver.Options{ScriptPolicy: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		s.mu.Lock()
		s.sent[r.URL.Path] = w.Header().Clone()
		s.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *served) header(path string) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[path]
}

var firstScriptTag = regexp.MustCompile(`<script type="module"[^>]*\ssrc="([^"]+)"`)

// firstScript is the src of the first script of dist/index.html, and its
// size raw and brotli.
func firstScript(t *testing.T, dist string) (src string, raw, br int64) {
	t.Helper()
	html, err := os.ReadFile(filepath.Join(dist, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	head := string(html)
	if i := strings.Index(head, "<script"); i < 0 || firstScriptTag.FindStringIndex(head) == nil || firstScriptTag.FindStringIndex(head)[0] != i {
		t.Fatalf("the first script of index.html is not the bundled module:\n%s", html)
	}
	src = firstScriptTag.FindStringSubmatch(head)[1]
	size := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(dist, filepath.FromSlash(strings.TrimPrefix(name, "/"))))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	return src, size(src), size(src + ".br")
}

type resource struct {
	Name    string `json:"name"`
	Encoded int64  `json:"encoded"`
	Decoded int64  `json:"decoded"`
}

const resourcesJS = `performance.getEntriesByType("resource").map((e) => ({ name: new URL(e.name).pathname, encoded: e.encodedBodySize, decoded: e.decodedBodySize }))`

// agentCall sends env on the private channel handle and decodes the reply.
func agentCall(t *testing.T, p *tab, handle string, env map[string]any) reply {
	t.Helper()
	return evalAgent[reply](t, p, `agent.portRequest(`+js(handle)+`, `+js(env)+`)`)
}

func description(t *testing.T, r reply) (ids []string, unchanged bool) {
	t.Helper()
	if !r.Envelope.OK {
		t.Fatalf("describe: %s", r)
	}
	var d struct {
		Capabilities []struct {
			ID string `json:"id"`
		} `json:"capabilities"`
		Unchanged bool `json:"capabilitiesUnchanged"`
	}
	if err := json.Unmarshal(r.Envelope.Result, &d); err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Capabilities {
		ids = append(ids, c.ID)
	}
	return ids, d.Unchanged
}

// promiseTrapJS is a later script that counts every use of Promise's
// globals and prototype until it is removed (window.__trap.stop()): the
// runtime makes none of its own once loaded, so what it counts while a
// lazy module loads is the bundler's chunk loader, where a later script
// could hand the surface a module of its own.
const promiseTrapJS = `(() => {
	const T = window.__trap = { calls: [] };
	const saved = [];
	const wrap = (obj, name, label) => {
		const f = obj[name];
		saved.push([obj, name, f]);
		obj[name] = function (...args) { T.calls.push(label); return Reflect.apply(f, this, args); };
	};
	for (const n of ["resolve", "all", "allSettled", "race", "reject"]) wrap(Promise, n, "Promise." + n);
	wrap(Promise.prototype, "then", "Promise.prototype.then");
	T.stop = () => { for (const [obj, name, f] of saved) obj[name] = f; return T.calls; };
	return true;
})()`

// TestBundledPages builds a minimal page with each bundler from the
// package and drives it as an agent: the bundled module is the first
// script and nothing else of the runtime loads before an agent speaks; a
// later script cannot swap the kernel; describe and invoke are answered on
// the private channel; the kernel arrives under a fingerprinted name,
// compressed; a lazily loaded module of the runtime loads as a chunk.
func TestBundledPages(t *testing.T) {
	for _, bc := range []struct {
		name  string
		build []string
		// the check of the package's types under tsc --strict, if any
		typecheck []string
	}{
		{"vite", []string{"node_modules/.bin/vite", "build", "--logLevel", "warn"}, []string{"node_modules/.bin/tsc", "-p", "."}},
		{"webpack", []string{"node", "build.js"}, nil},
	} {
		t.Run(bc.name, func(t *testing.T) {
			dist := buildProject(t, bc.name, bc.build...)
			if bc.typecheck != nil {
				cmd := exec.Command(bc.typecheck[0], bc.typecheck[1:]...)
				cmd.Dir = filepath.Dir(dist)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("tsc --strict: %v\n%s", err, out)
				}
			}
			src, raw, br := firstScript(t, dist)
			t.Logf("%s: first script %s: %d bytes, %d brotli", bc.name, src, raw, br)
			s := serveBundled(t, dist)
			p := openTab(t, s.url+"/")
			waitPage(t, p, `window.__app && window.__app.ready`)

			// Before an agent speaks, the page loaded the first script and
			// nothing else.
			before := evalPage[[]resource](t, p, resourcesJS)
			for _, r := range before {
				if r.Name != src {
					t.Errorf("before any agent spoke the page loaded %s", r.Name)
				}
			}
			// A later script stands wherever a kernel could be swapped in.
			if n := evalPage[int](t, p, swapKernelJS); n != 0 {
				t.Fatalf("the kernel was fetched before the attack was planted")
			}

			p.startAgent(t)
			a := evalAgent[connectAnswer](t, p, `agent.connect("bundler-test", {app: "bundled"})`)
			if a.Answer.Kind != "connected" {
				t.Fatalf("connect: %+v", a.Answer)
			}
			ids, _ := description(t, agentCall(t, p, a.Handle, describeEnv(t, nil)))
			if !slices.Contains(ids, "note.set") {
				t.Fatalf("describe offers %v", ids)
			}
			r := agentCall(t, p, a.Handle, invokeEnv(t, "note.set", map[string]any{"note": "bundled"}))
			if res := r.result(t); res["error"] != nil {
				t.Fatalf("invoke: %s", r)
			}
			if note := evalPage[string](t, p, `document.getElementById("note").textContent`); note != "bundled" {
				t.Errorf("the executor did not run: note %q", note)
			}
			type seen struct {
				Thens []string `json:"thens"`
				Calls []string `json:"calls"`
			}
			if got := evalPage[seen](t, p, `window.__swap`); len(got.Thens) != 0 || len(got.Calls) != 0 {
				t.Errorf("the later script was shown %v and called through %v while the kernel started", got.Thens, got.Calls)
			}

			// The kernel: once, under the bundler's fingerprinted name,
			// compressed, as application/wasm.
			var wasm []resource
			for _, r := range evalPage[[]resource](t, p, resourcesJS) {
				if strings.HasSuffix(r.Name, ".wasm") {
					wasm = append(wasm, r)
				}
			}
			if len(wasm) != 1 {
				t.Fatalf("the kernel was fetched as %v, want once", wasm)
			}
			if base := filepath.Base(wasm[0].Name); base == sitebuild.WasmName || !regexp.MustCompile(`[0-9A-Za-z_-]{8,}`).MatchString(strings.TrimSuffix(strings.TrimPrefix(base, "surface"), ".wasm")) {
				t.Errorf("the kernel's name %s is not fingerprinted", base)
			}
			h := s.header(wasm[0].Name)
			if h.Get("Content-Encoding") != "br" || h.Get("Content-Type") != "application/wasm" {
				t.Errorf("the kernel was sent with Content-Encoding %q, Content-Type %q", h.Get("Content-Encoding"), h.Get("Content-Type"))
			}
			if wasm[0].Encoded == 0 || wasm[0].Encoded*2 > wasm[0].Decoded {
				t.Errorf("the kernel arrived as %d bytes for %d", wasm[0].Encoded, wasm[0].Decoded)
			}

			// A module the runtime loads later (here WebMCP's bridge, with
			// no WebMCP in this browser) arrives as a chunk of the build.
			// What the bundler's loader asks of Promise meanwhile is what a
			// later script could stand in (js/README.md says so).
			loaded := len(evalPage[[]resource](t, p, resourcesJS))
			evalPage[bool](t, p, promiseTrapJS)
			if supported := evalPage[bool](t, p, `window.__app.webmcp()`); supported {
				t.Error("WebMCP is supported in this browser: the test expected none")
			}
			trapped := evalPage[[]string](t, p, `window.__trap.stop()`)
			t.Logf("%s: loading a lazy chunk used %v", bc.name, trapped)
			after := evalPage[[]resource](t, p, resourcesJS)
			if len(after) <= loaded {
				t.Fatal("surface.webmcp() loaded no module")
			}
			for _, r := range after[loaded:] {
				if !strings.HasSuffix(r.Name, ".js") || s.header(r.Name).Get("Content-Encoding") == "" && r.Decoded > 1024 {
					t.Errorf("the lazy module %s was sent as %q", r.Name, s.header(r.Name).Get("Content-Encoding"))
				}
			}
		})
	}
}

// TestBundledReact builds the React app with Vite and checks the binding:
// a component's action exists while it is mounted (and agents asking for
// capabilities: "changed" see it come and go), and an invoke runs the
// component's handler, which re-renders it.
func TestBundledReact(t *testing.T) {
	dist := buildProject(t, "react", "node_modules/.bin/vite", "build", "--logLevel", "warn")
	cmd := exec.Command("node_modules/.bin/tsc", "-p", ".")
	cmd.Dir = filepath.Dir(dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc --strict: %v\n%s", err, out)
	}
	s := serveBundled(t, dist)
	p := openTab(t, s.url+"/")
	waitPage(t, p, `window.__app && window.__app.ready`)
	p.startAgent(t)
	a := evalAgent[connectAnswer](t, p, `agent.connect("bundler-test", {app: "react"})`)
	if a.Answer.Kind != "connected" {
		t.Fatalf("connect: %+v", a.Answer)
	}
	describe := func(changed bool) ([]string, bool) {
		var input any
		if changed {
			input = map[string]any{"capabilities": "changed"}
		}
		return description(t, agentCall(t, p, a.Handle, describeEnv(t, input)))
	}
	if ids, _ := describe(false); !slices.Equal(ids, []string{"orders.note"}) {
		t.Fatalf("with <Order> mounted, describe offers %v", ids)
	}
	if ids, unchanged := describe(true); !unchanged || len(ids) != 0 {
		t.Errorf("nothing mounted or unmounted, yet capabilities: \"changed\" gave %v (unchanged %v)", ids, unchanged)
	}

	evalPage[bool](t, p, `(window.__app.exporter(true), true)`)
	waitPage(t, p, `document.querySelector('[data-testid="exporter"]')`)
	ids, unchanged := describe(true)
	if unchanged || !slices.Contains(ids, "orders.export") {
		t.Fatalf("after <Exporter> mounted, capabilities: \"changed\" gave %v (unchanged %v)", ids, unchanged)
	}
	if r := agentCall(t, p, a.Handle, invokeEnv(t, "orders.export", map[string]any{})); r.result(t)["error"] != nil {
		t.Fatalf("invoke orders.export: %s", r)
	}
	waitPage(t, p, `document.querySelector('[data-testid="exporter"]').textContent === "1"`)

	r := agentCall(t, p, a.Handle, invokeEnv(t, "orders.note", map[string]any{"note": "from the agent"}))
	if r.result(t)["error"] != nil {
		t.Fatalf("invoke orders.note: %s", r)
	}
	waitPage(t, p, `document.querySelector('[data-testid="note"]').textContent === "from the agent"`)
	if edits := evalPage[string](t, p, `document.querySelector('[data-testid="note"]').dataset.edits`); edits != "1" {
		t.Errorf("the handler ran %s times", edits)
	}

	evalPage[bool](t, p, `(window.__app.exporter(false), true)`)
	waitPage(t, p, `!document.querySelector('[data-testid="exporter"]')`)
	ids, unchanged = describe(true)
	if unchanged || slices.Contains(ids, "orders.export") || !slices.Contains(ids, "orders.note") {
		t.Fatalf("after <Exporter> unmounted, capabilities: \"changed\" gave %v (unchanged %v)", ids, unchanged)
	}
	if r := agentCall(t, p, a.Handle, invokeEnv(t, "orders.export", map[string]any{})); r.Envelope.OK && r.result(t)["error"] == nil {
		t.Errorf("orders.export still ran after its component unmounted: %s", r)
	}
}
