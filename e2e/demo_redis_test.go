package e2e

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/redistest"
)

// startDemo builds cmd/demo and serves the test site with it, as
// `make demo REDIS=...` does, and returns its URL. The server stops when
// the test ends.
func startDemo(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "demo")
	build := exec.Command("go", "build", "-o", bin, "./cmd/demo")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cmd/demo: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-dir", siteDir}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		i := strings.Index(line, "http://")
		if !ok || i < 0 {
			t.Fatalf("the demo did not announce itself: %q, stderr %q", line, stderr.String())
		}
		return strings.TrimSuffix(strings.Fields(line[i:])[0], "/")
	case <-time.After(testTimeout):
		t.Fatalf("the demo did not start: stderr %q", stderr.String())
	}
	return ""
}

// demoInvoke sends n searches at once through the demo's listening surface
// and returns their answers by code.
const demoInvoke = `(async (prefix, n) => {
	const ids = Array.from({ length: n }, (_, i) => prefix + "-" + i);
	const replies = await Promise.all(ids.map((id) => window.__demo.surface.handle({
		protocol: "pling.surface/0.1", id, method: "invoke", capability: "orders.search", input: { query: "SO-1004" },
	})));
	return replies.map((r) => (r.ok ? "ok" : r.error.code));
})`

// TestDemoRedisSharesOneBudget: the demo served with -redis keeps the rate
// budget in Redis, so two browser contexts (two cookie jars, as two
// browsers or two replicas' users would be) of the demo user spend one
// budget of 30, not 30 each; with Redis stopped the page refuses every call
// and runs nothing.
func TestDemoRedisSharesOneBudget(t *testing.T) {
	rs := redistest.Start(t)
	base := startDemo(t, "-redis", rs.Addr)

	var tabs []*tab
	for i := 0; i < 2; i++ {
		bctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		p := pageIn(t, bctx, base+"/", `typeof window.__demo === "object"`)
		evalPage[bool](t, p, `window.__demo.ready.then(() => true)`)
		// Open mode: calls need no grant, so only the budget refuses them.
		clickTestID(t, p, "delegation-open-mode")
		waitPage(t, p, `window.__demo.openMode === true`)
		tabs = append(tabs, p)
	}
	var all [][]string
	for i, p := range tabs {
		all = append(all, evalPage[[]string](t, p, fmt.Sprintf(`%s("tab%d", 20)`, demoInvoke, i)))
	}
	got := tally(all...)
	calls := executorCalls(t, tabs[0]) + executorCalls(t, tabs[1])
	if got["ok"] != 30 || got["RATE_LIMITED"] != 10 || calls != 30 {
		t.Fatalf("40 calls over two browser contexts: %v, executor ran %d; want 30 ok, 10 RATE_LIMITED, 30 runs", got, calls)
	}

	rs.Stop()
	got = tally(evalPage[[]string](t, tabs[1], fmt.Sprintf(`%s("down", 3)`, demoInvoke)))
	if got["RATE_LIMIT_UNAVAILABLE"] != 3 {
		t.Fatalf("with Redis stopped: %v, want 3 RATE_LIMIT_UNAVAILABLE", got)
	}
	if n := executorCalls(t, tabs[0]) + executorCalls(t, tabs[1]); n != calls {
		t.Fatalf("the executor ran %d times with Redis stopped", n-calls)
	}
}
