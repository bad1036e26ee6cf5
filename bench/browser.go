//go:build !js

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/headless"
)

// surfaceWasm is the surface.wasm `make bench-site` built: the site has it
// under a content-hashed name (internal/sitebuild).
func surfaceWasm(cfg config) string {
	return filepath.Join(cfg.dir, "surface.wasm")
}

// siteFiles are what `make bench-site` assembles and the browser run loads.
var siteFiles = []string{
	"pling/pling-surface.js",
	"pling/wasm_exec.js",
	"bench/bench.html",
	"bench/agent.js",
	"bench/hello.wasm",
	"bench/mcpb-page.js",
	"bench/mcp-client.js",
	"bench/first-contact.html",
	"bench/demo-without-boot.js",
}

// session is one headless Chromium serving one benchmark site.
type session struct {
	cfg     config
	base    string // http://127.0.0.1:port
	browser context.Context
	version string
	stop    func()
}

// startSession serves cfg.site cross-origin isolated on a free loopback port
// and starts Chromium with the flags of the browser tests.
func startSession(cfg config) (*session, error) {
	need := []string{surfaceWasm(cfg)}
	for _, f := range siteFiles {
		need = append(need, filepath.Join(cfg.site, f))
	}
	for _, f := range need {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("the benchmark site is incomplete (%v): run `make bench`, which assembles it", err)
		}
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return nil, fmt.Errorf("no chromium on PATH (`make chromium` installs Debian's): %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: devserver.Handler(cfg.site), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()

	profile, err := os.MkdirTemp("", "pling-bench-profile-")
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	s := &session{cfg: cfg, base: "http://" + ln.Addr().String(), browser: browserCtx}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancelBrowser()
			cancelAlloc() // waits for the browser process to exit
			_ = srv.Close()
			_ = os.RemoveAll(profile)
		})
	}
	if err := chromedp.Do(browserCtx); err != nil {
		s.stop()
		return nil, fmt.Errorf("start %s: %w", chromium, err)
	}
	v, err := chromedp.CallBrowser(browserCtx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		s.stop()
		return nil, err
	}
	s.version = v.Product
	return s, nil
}

// tab is one page of the session. Every page exception and console error
// is a failed measurement: a benchmark over a broken page measures nothing.
type tab struct {
	ctx    context.Context
	cancel func()
	world  runtime.ExecutionContextID // the caller's isolated world, once made

	mu       sync.Mutex
	problems []string
}

// openTab opens a tab; fresh puts it in a new browser context (its own
// renderer process, empty caches), as a first visit to the site would be.
func (s *session) openTab(timeout time.Duration, fresh bool) (*tab, error) {
	var opts []chromedp.ContextOption
	if fresh {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tabCtx, cancelTab := chromedp.NewContext(s.browser, opts...)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		return nil, fmt.Errorf("open tab: %w", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, timeout)
	t := &tab{ctx: ctx, cancel: func() { cancel(); cancelTab() }}
	if err := chromedp.Listen(tabCtx, t.onEvent); err != nil {
		t.cancel()
		return nil, err
	}
	return t, nil
}

func (t *tab) close() { t.cancel() }

func (t *tab) onEvent(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + ev.ExceptionDetails.Text
		if e := ev.ExceptionDetails.Exception; e != nil && e.Description != "" {
			msg += " " + e.Description
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		parts := []string{}
		for _, a := range ev.Args {
			if len(a.Value) > 0 {
				parts = append(parts, string(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		msg = "console.error: " + strings.Join(parts, " ")
	case *log.EventEntryAdded:
		if ev.Entry == nil || ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = "log: " + ev.Entry.Text + " " + ev.Entry.URL
	default:
		return
	}
	t.mu.Lock()
	t.problems = append(t.problems, msg)
	t.mu.Unlock()
}

// healthy fails when the page reported a problem so far.
func (t *tab) healthy() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.problems) > 0 {
		return fmt.Errorf("the page reported: %s", strings.Join(t.problems, "; "))
	}
	return nil
}

func (t *tab) navigate(url string) error {
	if err := chromedp.Do(t.ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	t.world = 0
	return nil
}

// eval evaluates expr in the page's own world, awaiting a promise.
func eval[T any](t *tab, expr string) (T, error) {
	v, err := chromedp.Run(t.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return v, fmt.Errorf("page: %s: %w", short(expr), err)
	}
	return v, nil
}

// evalAgent evaluates expr in the caller's isolated world.
func evalAgent[T any](t *tab, expr string) (T, error) {
	var zero T
	if t.world == 0 {
		return zero, errors.New("the caller's world was not created")
	}
	v, err := chromedp.Run(t.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise, func(p *runtime.EvaluateParams) {
		p.ContextID = t.world
	}))
	if err != nil {
		return v, fmt.Errorf("caller: %s: %w", short(expr), err)
	}
	return v, nil
}

// waitFor polls expr in the page's world until it is truthy, for at most d.
// It polls in the page rather than with chromedp.Poll, which evaluates in
// whichever context was made last (the isolated world, once there is one).
func waitFor(t *tab, expr string, d time.Duration) error {
	_, err := eval[bool](t, fmt.Sprintf(`new Promise((resolve, reject) => {
		const deadline = Date.now() + %d;
		let last;
		const look = () => {
			try { if (%s) return resolve(true); } catch (err) { last = err; }
			if (Date.now() > deadline) return reject(new Error("still false" + (last ? ": " + last : "")));
			setTimeout(look, 5);
		};
		look();
	})`, d.Milliseconds(), expr))
	return err
}

// startCaller creates an isolated world on the main frame, as a browser
// extension's content script gets one, and loads the given scripts in it.
func (t *tab) startCaller(scripts ...string) error {
	tree, err := chromedp.Call(t.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return err
	}
	w, err := chromedp.Call(t.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:   tree.FrameTree.Frame.ID,
		WorldName: "pling-bench-caller",
	})
	if err != nil {
		return err
	}
	t.world = w.ExecutionContextID
	for _, src := range scripts {
		if _, err := evalAgent[chromedp.Void](t, src); err != nil {
			return err
		}
	}
	return nil
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

func jsLit(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// startupSample is one cold load of a startup page.
type startupSample struct {
	MS       float64 `json:"ms"`
	Isolated bool    `json:"isolated"`
}

// coldStart loads page in a fresh browser context with the cache disabled
// and returns what the page measured from its script's start to ready.
// With profile set, Chromium's CPU profiler records the load.
func (s *session) coldStart(pageName string, profile *profiler.Profile) (float64, error) {
	t, err := s.openTab(60*time.Second, true)
	if err != nil {
		return 0, err
	}
	defer t.close()
	if _, err := chromedp.Call(t.ctx, network.Enable, network.EnableParams{}); err != nil {
		return 0, err
	}
	if _, err := chromedp.Call(t.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return 0, err
	}
	if profile != nil {
		if err := startProfiler(t); err != nil {
			return 0, err
		}
	}
	if err := t.navigate(s.base + "/bench/" + pageName); err != nil {
		return 0, err
	}
	if err := waitFor(t, `window.__startup`, 30*time.Second); err != nil {
		return 0, fmt.Errorf("%s never got ready: %w", pageName, err)
	}
	if profile != nil {
		res, err := chromedp.Call(t.ctx, profiler.Stop, cdp.Empty{})
		if err != nil {
			return 0, err
		}
		*profile = *res.Profile
	}
	r, err := eval[startupSample](t, `window.__startup`)
	if err != nil {
		return 0, err
	}
	if !r.Isolated {
		return 0, fmt.Errorf("%s is not cross-origin isolated: its clock is too coarse to measure", pageName)
	}
	return r.MS, t.healthy()
}

// startProfiler starts Chromium's sampling CPU profiler on the tab at a
// 50 µs interval.
func startProfiler(t *tab) error {
	if _, err := chromedp.Call(t.ctx, profiler.Enable, cdp.Empty{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(t.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 50}); err != nil {
		return err
	}
	_, err := chromedp.Call(t.ctx, profiler.Start, cdp.Empty{})
	return err
}
