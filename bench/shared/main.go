//go:build !js

// Command shared measures what sharing the rate limit and the replay guard
// costs: the added latency per invoke of shared: "indexeddb" and of the
// HTTP adapter over a Go backend on Redis, against the in-page default, in
// headless Chromium; and how many decisions per second Redis makes for the
// Go limiter and guard on this machine. Report only: `make bench` runs it
// after the main benchmarks. It needs the site (`make site`), Chromium and
// redis-server.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/headless"
	"pling.dev/agent/internal/redistest"
	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

func main() {
	dir := flag.String("dir", "build/bench", "where shared.md goes")
	site := flag.String("site", "build/site", "the assembled site (make site)")
	n := flag.Int("n", 400, "timed invokes per variant")
	warm := flag.Int("warm", 50, "untimed invokes per variant first")
	flag.Parse()
	if err := run(*dir, *site, *n, *warm); err != nil {
		fmt.Fprintln(os.Stderr, "bench/shared:", err)
		os.Exit(1)
	}
}

func run(dir, site string, n, warm int) error {
	srv, err := redistest.New()
	if err != nil {
		return err
	}
	defer srv.Close()
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()

	var report strings.Builder
	report.WriteString("## Shared limits and claims\n\n")

	lat, err := browserLatency(site, rc, n, warm)
	if err != nil {
		return err
	}
	report.WriteString(lat)
	dps, err := redisDecisions(rc)
	if err != nil {
		return err
	}
	report.WriteString(dps)

	fmt.Print(report.String())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "shared.md"), []byte(report.String()), 0o644)
}

// browserLatency times invokes through the three surfaces of web/shared.js.
func browserLatency(site string, rc *redis.Client, n, warm int) (string, error) {
	if _, err := os.Stat(filepath.Join(site, "pling", "pling-shared.js")); err != nil {
		return "", fmt.Errorf("the site is incomplete (%v): run `make site`", err)
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("no chromium on PATH (`make chromium` installs Debian's): %w", err)
	}
	opts := redisstate.Options{App: fmt.Sprintf("bench-%d", time.Now().UnixNano()), Timeout: 2 * time.Second}
	limiter, err := redisstate.NewLimiter(rc, 1_000_000, time.Minute, opts)
	if err != nil {
		return "", err
	}
	guard, err := redisstate.NewGuard(rc, opts)
	if err != nil {
		return "", err
	}
	state, err := redisstate.Handler(redisstate.HandlerOptions{
		Limiter: limiter, Guard: guard,
		// A benchmark has one user; a real backend checks its login here.
		Session: func(*http.Request) (string, bool) { return "bench", true },
	})
	if err != nil {
		return "", err
	}
	web, err := filepath.Abs(filepath.Join("bench", "shared", "web"))
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/", devserver.Handler(site))
	mux.Handle("/bench-shared/", http.StripPrefix("/bench-shared", devserver.Handler(web)))
	mux.Handle("/pling/state", state)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	profile, err := os.MkdirTemp("", "pling-bench-shared-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(profile)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile)...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 10*time.Minute)
	defer cancelT()
	url := "http://" + ln.Addr().String() + "/bench-shared/shared.html"
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return "", fmt.Errorf("load %s: %w", url, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.__benchShared && window.__benchShared.ready)`)); err != nil {
		return "", fmt.Errorf("wait for %s: %w", url, err)
	}
	samples, err := chromedp.Run(ctx, chromedp.Evaluate[map[string][]float64](fmt.Sprintf(`window.__benchShared.run(%d, %d)`, n, warm), chromedp.EvalAwaitPromise))
	if err != nil {
		return "", fmt.Errorf("run: %w", err)
	}
	executed, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.__benchShared.executed()`))
	if err != nil {
		return "", err
	}
	if want := 3 * (n + warm); executed != want {
		return "", fmt.Errorf("the executor ran %d times, want %d", executed, want)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Invoke through `surface.handle()` with a rate limit and a replay guard, %d timed invokes per variant, interleaved (ms):\n\n", n)
	b.WriteString("| variant | p50 | p99 | added p50 | added p99 |\n|---|---|---|---|---|\n")
	mem := samples["memory"]
	for _, name := range []string{"memory", "indexeddb", "http"} {
		s := samples[name]
		if len(s) != n {
			return "", fmt.Errorf("%s: %d samples, want %d", name, len(s), n)
		}
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %+.3f | %+.3f |\n", label(name), pct(s, 50), pct(s, 99), pct(s, 50)-pct(mem, 50), pct(s, 99)-pct(mem, 99))
	}
	b.WriteString("\n")
	return b.String(), nil
}

func label(name string) string {
	switch name {
	case "memory":
		return "in the page (default)"
	case "indexeddb":
		return `shared: "indexeddb"`
	}
	return "httpLimiter + httpGuard, Go backend on Redis"
}

// redisDecisions counts decisions per second of the Go limiter and guard
// on one client, with as many callers as a busy replica has requests.
func redisDecisions(rc *redis.Client) (string, error) {
	opts := redisstate.Options{App: fmt.Sprintf("dps-%d", time.Now().UnixNano()), Timeout: 2 * time.Second}
	limiter, err := redisstate.NewLimiter(rc, 60, time.Minute, opts)
	if err != nil {
		return "", err
	}
	guard, err := redisstate.NewGuard(rc, opts)
	if err != nil {
		return "", err
	}
	const callers = 32
	const span = 3 * time.Second
	var b strings.Builder
	fmt.Fprintf(&b, "Redis decisions per second, %d callers on one client for %s each:\n\n| decision | per second | failures |\n|---|---|---|\n", callers, span)
	for _, tc := range []struct {
		name string
		f    func(ctx context.Context, i int64) error
	}{
		{"limiter (Lua sliding window, 1000 sessions)", func(ctx context.Context, i int64) error {
			_, err := limiter.Allow(ctx, fmt.Sprintf("s-%d", i%1000), time.Time{})
			return err
		}},
		{"guard (SET NX PX, fresh ids)", func(ctx context.Context, i int64) error {
			_, err := guard.Claim(ctx, surface.ReplayKey{SessionID: "s", RequestID: fmt.Sprint(i)}, time.Time{}, time.Minute)
			return err
		}},
	} {
		var count, failed, seq atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), span)
		var wg sync.WaitGroup
		start := time.Now()
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if err := tc.f(context.Background(), seq.Add(1)); err != nil {
						failed.Add(1)
					} else {
						count.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		cancel()
		el := time.Since(start)
		fmt.Fprintf(&b, "| %s | %.0f | %d |\n", tc.name, float64(count.Load())/el.Seconds(), failed.Load())
	}
	b.WriteString("\n")
	return b.String(), nil
}

func pct(s []float64, p float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	i := int(float64(len(c)-1) * p / 100)
	return c[i]
}
