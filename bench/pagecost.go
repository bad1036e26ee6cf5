//go:build !js

package main

import (
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"pling.dev/agent/internal/sitebuild"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
)

// The page-cost rows load the demo site as `make site` builds it, twice:
// as it is ("with") and with a boot.js that exports no runtime ("without",
// bench/web/demo-without-boot.js). Both copies get one line at the top of
// main.js, the page's own first module, which marks when it starts.
const (
	pageModuleMark = "pling-bench:page-module"
	// settleAfterLoad is how long a load is watched after the page's
	// module ran and the document finished loading: long enough for the
	// work a page starts at load, with no agent anywhere.
	settleAfterLoad = 1500 * time.Millisecond
)

// longTaskObserver runs before any script of the page (both variants) and
// keeps every long task (> 50 ms) of the load.
const longTaskObserver = `(() => {
  const tasks = [];
  Object.defineProperty(globalThis, "__benchLongTasks", { value: tasks });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) tasks.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (e) {}
})();`

// loadSample is one cold load of a demo variant.
type loadSample struct {
	Variant     string      `json:"variant"`
	CPU         float64     `json:"cpu"`          // Emulation.setCPUThrottlingRate
	ModuleMS    float64     `json:"moduleMs"`     // main.js started, ms after navigation start
	LongTasks   [][]float64 `json:"longTasks"`    // [start, duration] ms
	SurfaceB    int64       `json:"surfaceBytes"` // encoded bytes of /pling/ requests
	TotalB      int64       `json:"totalBytes"`   // of every request
	SurfaceURLs []string    `json:"surfaceUrls"`  // /pling/ paths requested
	WasmAsked   bool        `json:"wasmAsked"`    // a request for /pling/surface*.wasm was made
}

// demoSites assembles the two variants of the demo site under dir/demo
// from the built site in demo and the bench site's replacement boot.js.
func demoSites(cfg config) (with, without string, err error) {
	if _, err := os.Stat(filepath.Join(cfg.demo, "index.html")); err != nil {
		return "", "", fmt.Errorf("no demo site in %s (`make site` builds it; `make bench` does): %w", cfg.demo, err)
	}
	noBoot, err := os.ReadFile(filepath.Join(cfg.site, "bench", "demo-without-boot.js"))
	if err != nil {
		return "", "", err
	}
	root := filepath.Join(cfg.dir, "demo")
	if err := os.RemoveAll(root); err != nil {
		return "", "", err
	}
	with, without = filepath.Join(root, "with"), filepath.Join(root, "without")
	for _, d := range []string{with, without} {
		if err := copyTree(cfg.demo, d); err != nil {
			return "", "", err
		}
		if err := markPageModule(filepath.Join(d, "main.js")); err != nil {
			return "", "", err
		}
	}
	if err := os.WriteFile(filepath.Join(without, "boot.js"), noBoot, 0o644); err != nil {
		return "", "", err
	}
	// A site without the surface has nothing of it to preload either.
	if err := dropRuntimePreload(filepath.Join(without, "index.html")); err != nil {
		return "", "", err
	}
	// Both served as the demo is, precompressed: the siblings of the files
	// changed here are written anew (the rest come from the cache).
	for _, d := range []string{with, without} {
		if _, err := sitebuild.Compress(d, filepath.Join(cfg.dir, "compress-cache")); err != nil {
			return "", "", err
		}
	}
	return with, without, nil
}

// dropRuntimePreload removes the <link rel="modulepreload"> lines that name
// the runtime's files (/pling/) from a page.
func dropRuntimePreload(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var kept []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `rel="modulepreload"`) && strings.Contains(line, "pling/") {
			continue
		}
		kept = append(kept, line)
	}
	return os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644)
}

// markPageModule puts the start mark as main.js's first statement (its
// imports, hoisted, still load and run before it).
func markPageModule(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the demo's first module: %w", err)
	}
	line := fmt.Sprintf("performance.mark(%q);\n", pageModuleMark)
	return os.WriteFile(path, append([]byte(line), b...), 0o644)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// serveDemo serves dir as the demo server does (cmd/demo without Redis:
// the script policy on) on a free loopback port and returns its base URL.
func serveDemo(dir string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: devserver.NewHandler(dir, devserver.Options{ScriptPolicy: true}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// netLog totals a tab's requests from its Network events.
type netLog struct {
	mu        sync.Mutex
	paths     map[network.RequestID]string
	surfaceB  int64
	totalB    int64
	surface   []string
	wasmAsked bool
}

func newNetLog() *netLog { return &netLog{paths: map[network.RequestID]string{}} }

func (n *netLog) onEvent(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u, err := url.Parse(ev.Request.URL)
		if err != nil {
			return
		}
		n.paths[ev.RequestID] = u.Path
		if isSurfacePath(u.Path) {
			n.surface = append(n.surface, u.Path)
			if isKernelPath(u.Path) {
				n.wasmAsked = true
			}
		}
	case *network.EventLoadingFinished:
		p, ok := n.paths[ev.RequestID]
		if !ok {
			return
		}
		b := int64(ev.EncodedDataLength)
		n.totalB += b
		if isSurfacePath(p) {
			n.surfaceB += b
		}
	}
}

func isSurfacePath(p string) bool { return strings.HasPrefix(p, "/pling/") }

// isKernelPath: surface.wasm, or a content-hashed surface.<hash>.wasm.
func isKernelPath(p string) bool {
	base := p[strings.LastIndex(p, "/")+1:]
	return isSurfacePath(p) && strings.HasPrefix(base, "surface") && strings.HasSuffix(base, ".wasm")
}

// coldLoad opens base+"/" in a fresh browser context, cache off, CPU
// throttled by rate, and watches it until its first module ran, the
// document loaded and settleAfterLoad passed, no agent anywhere.
func (s *session) coldLoad(base, variant string, rate float64) (loadSample, error) {
	r := loadSample{Variant: variant, CPU: rate}
	t, err := s.openTab(2*time.Minute, true)
	if err != nil {
		return r, err
	}
	defer t.close()
	nl := newNetLog()
	if err := chromedp.Listen(t.ctx, nl.onEvent); err != nil {
		return r, err
	}
	if _, err := chromedp.Call(t.ctx, network.Enable, network.EnableParams{}); err != nil {
		return r, err
	}
	if _, err := chromedp.Call(t.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return r, err
	}
	if _, err := chromedp.Call(t.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: longTaskObserver}); err != nil {
		return r, err
	}
	if rate != 1 {
		if _, err := chromedp.Call(t.ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate}); err != nil {
			return r, err
		}
	}
	if err := t.navigate(base + "/"); err != nil {
		return r, err
	}
	if err := waitFor(t, fmt.Sprintf(`document.readyState === "complete" && performance.getEntriesByName(%q).length > 0`, pageModuleMark), 60*time.Second); err != nil {
		return r, fmt.Errorf("the demo (%s) never ran its first module: %w (%v)", variant, err, t.healthy())
	}
	time.Sleep(settleAfterLoad)
	type seen struct {
		Module   float64     `json:"module"`
		Long     [][]float64 `json:"long"`
		Isolated bool        `json:"isolated"`
	}
	v, err := eval[seen](t, fmt.Sprintf(`({ module: performance.getEntriesByName(%q)[0].startTime, long: globalThis.__benchLongTasks || [], isolated: crossOriginIsolated })`, pageModuleMark))
	if err != nil {
		return r, err
	}
	if !v.Isolated {
		return r, fmt.Errorf("the demo (%s) is not cross-origin isolated: its clock is too coarse to measure", variant)
	}
	r.ModuleMS, r.LongTasks = v.Module, v.Long
	if r.LongTasks == nil {
		r.LongTasks = [][]float64{}
	}
	nl.mu.Lock()
	r.SurfaceB, r.TotalB, r.SurfaceURLs, r.WasmAsked = nl.surfaceB, nl.totalB, append([]string(nil), nl.surface...), nl.wasmAsked
	nl.mu.Unlock()
	return r, t.healthy()
}

// pageLoads is what the page-cost stage measured.
type pageLoads struct {
	Loads []loadSample `json:"loads"`
	// SurfaceFiles are the /pling/ files a "with" load fetched, with their
	// sizes as a brotli server would send them.
	SurfaceFiles map[string]wasmSize `json:"surfaceFiles"`
}

// measurePageLoads loads both demo variants alternately (with, without;
// then without, with; ...) at each CPU rate: warm pairs first, discarded.
func measurePageLoads(s *session, pairs, warm int, rates []float64, sizeCache string, progress func(string)) (pageLoads, error) {
	var out pageLoads
	with, without, err := demoSites(s.cfg)
	if err != nil {
		return out, err
	}
	withURL, stopWith, err := serveDemo(with)
	if err != nil {
		return out, err
	}
	defer stopWith()
	withoutURL, stopWithout, err := serveDemo(without)
	if err != nil {
		return out, err
	}
	defer stopWithout()
	fetched := map[string]bool{}
	for _, rate := range rates {
		start := time.Now()
		for i := 0; i < warm+pairs; i++ {
			order := [][2]string{{"with", withURL}, {"without", withoutURL}}
			if i%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, v := range order {
				r, err := s.coldLoad(v[1], v[0], rate)
				if err != nil {
					return out, err
				}
				if i < warm {
					continue
				}
				out.Loads = append(out.Loads, r)
				if v[0] == "with" {
					for _, p := range r.SurfaceURLs {
						fetched[p] = true
					}
				}
			}
		}
		progress(fmt.Sprintf("demo at CPU %g×: %d loads with and without the surface in %s", rate, pairs, time.Since(start).Round(time.Second)))
	}
	var names []string
	for p := range fetched {
		names = append(names, p)
	}
	sort.Strings(names)
	paths := make([]string, len(names))
	for i, p := range names {
		paths[i] = filepath.Join(with, filepath.FromSlash(strings.TrimPrefix(p, "/")))
	}
	out.SurfaceFiles = map[string]wasmSize{}
	if len(paths) > 0 {
		sizes, err := measureSizesCached(sizeCache, paths...)
		if err != nil {
			return out, err
		}
		for i, p := range names {
			out.SurfaceFiles[p] = sizes[i]
		}
	}
	return out, nil
}

// contactSample is one agent's first describe on an idle page.
type contactSample struct {
	Mode    string    `json:"mode"`
	API     string    `json:"api"`     // createSurface, loadSurface, or none
	SetupMS float64   `json:"setupMs"` // the page's script start to a listening surface
	FirstMS float64   `json:"firstMs"` // the first describe, posted to answered
	WarmMS  []float64 `json:"warmMs"`  // the describes after it
	Timings *startup  `json:"timings,omitempty"`
	// WasmBefore: surface.wasm was requested before the first describe.
	WasmBefore bool `json:"wasmBefore"`
}

// startup is what surface.ready() resolves to.
type startup struct {
	FetchMS   float64 `json:"fetchMs"`
	CompileMS float64 `json:"compileMs"`
	StartMS   float64 `json:"startMs"`
	// Streamed: the module compiled while it downloaded; FetchMS is then
	// the time to the response's headers and CompileMS the rest.
	Streamed bool `json:"streamed"`
}

// contactModes are first-contact.html's ways of starting the surface; the
// last, today's loadSurface(), is the reference.
var contactModes = []string{"lazy", "idle", "today"}

// idleWait is how long a page is left alone before the agent speaks;
// with prefetch: "idle" the wait starts when the kernel's download ended,
// so that its compilation has finished too.
const idleWait = 2 * time.Second

// firstContact loads first-contact.html?mode= in a fresh context, lets
// it go idle, then describes from an isolated-world caller: once, then
// warm times more.
func (s *session) firstContact(mode string, warm int) (contactSample, error) {
	r := contactSample{Mode: mode}
	t, err := s.openTab(2*time.Minute, true)
	if err != nil {
		return r, err
	}
	defer t.close()
	nl := newNetLog()
	kernelDone := make(chan struct{}, 1)
	if err := chromedp.Listen(t.ctx, func(ev any) {
		nl.onEvent(ev)
		if f, ok := ev.(*network.EventLoadingFinished); ok {
			nl.mu.Lock()
			p := nl.paths[f.RequestID]
			nl.mu.Unlock()
			if isKernelPath(p) {
				select {
				case kernelDone <- struct{}{}:
				default:
				}
			}
		}
	}); err != nil {
		return r, err
	}
	if _, err := chromedp.Call(t.ctx, network.Enable, network.EnableParams{}); err != nil {
		return r, err
	}
	if _, err := chromedp.Call(t.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return r, err
	}
	if err := t.navigate(s.base + "/bench/first-contact.html?mode=" + mode); err != nil {
		return r, err
	}
	if err := waitFor(t, `window.__contact && window.__contact.ready`, 60*time.Second); err != nil {
		return r, fmt.Errorf("first-contact.html?mode=%s never got ready: %w (%v)", mode, err, t.healthy())
	}
	type state struct {
		API      string  `json:"api"`
		Setup    float64 `json:"setupMs"`
		Isolated bool    `json:"isolated"`
	}
	st, err := eval[state](t, `({ api: __contact.api, setupMs: __contact.setupMs || 0, isolated: __contact.isolated })`)
	if err != nil {
		return r, err
	}
	if !st.Isolated {
		return r, fmt.Errorf("first-contact.html is not cross-origin isolated: its clock is too coarse to measure")
	}
	r.API, r.SetupMS = st.API, st.Setup
	if r.API == "none" {
		return r, t.healthy()
	}
	if mode == "idle" {
		select {
		case <-kernelDone:
		case <-time.After(30 * time.Second):
			return r, fmt.Errorf(`prefetch: "idle" fetched no surface.wasm within 30 s`)
		}
	}
	time.Sleep(idleWait)
	nl.mu.Lock()
	r.WasmBefore = nl.wasmAsked
	nl.mu.Unlock()
	if err := connectAgent(s, t); err != nil {
		return r, err
	}
	first, err := evalAgent[[]float64](t, `benchAgent.time("describe-surface", 1)`)
	if err != nil {
		return r, err
	}
	r.FirstMS = first[0]
	if r.WarmMS, err = evalAgent[[]float64](t, fmt.Sprintf(`benchAgent.time("describe-surface", %d)`, warm)); err != nil {
		return r, err
	}
	if r.API == "createSurface" {
		tm, err := eval[startup](t, `__contact.timings().then((t) => ({ fetchMs: t.fetchMs, compileMs: t.compileMs, startMs: t.startMs, streamed: t.streamed === true }))`)
		if err != nil {
			return r, err
		}
		r.Timings = &tm
	}
	return r, t.healthy()
}

// connectAgent starts the caller of agent.js in an isolated world.
func connectAgent(s *session, t *tab) error {
	agent, err := os.ReadFile(filepath.Join(s.cfg.site, "bench", "agent.js"))
	if err != nil {
		return err
	}
	if err := t.startCaller(string(agent) + "\n//# sourceURL=caller/agent.js\n"); err != nil {
		return err
	}
	if ok, err := evalAgent[bool](t, `benchAgent.isolated()`); err != nil || !ok {
		return fmt.Errorf("the caller's world is not cross-origin isolated (%v)", err)
	}
	return nil
}

// measureFirstContact runs n first contacts of each mode, the modes in
// turn, after one untimed round. Modes the runtime lacks are tried once.
func measureFirstContact(s *session, n, warmDescribes int, progress func(string)) ([]contactSample, error) {
	var out []contactSample
	missing := map[string]bool{}
	start := time.Now()
	for i := -1; i < n; i++ {
		for _, m := range contactModes {
			if missing[m] {
				continue
			}
			r, err := s.firstContact(m, warmDescribes)
			if err != nil {
				return out, err
			}
			if r.API == "none" {
				missing[m] = true
				out = append(out, r)
				continue
			}
			if i >= 0 {
				out = append(out, r)
			}
		}
	}
	progress(fmt.Sprintf("first contact: %d pages per mode in %s", n, time.Since(start).Round(time.Second)))
	return out, nil
}
