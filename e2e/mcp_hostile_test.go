package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/mcpfacade"
)

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startFacadeProcess runs the built pling-mcp with args, driven by the
// go-sdk client over stdio as an MCP host drives it.
func startFacadeProcess(t *testing.T, args ...string) (*mcp.ClientSession, *exec.Cmd, chan struct{}) {
	t.Helper()
	bin := buildFacade(t)
	cmd := exec.Command(bin, args...)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DISPLAY=") && !strings.HasPrefix(e, "WAYLAND_DISPLAY=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	changed := make(chan struct{}, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "pling-e2e-go", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() || testing.Verbose() {
			t.Logf("pling-mcp stderr:\n%s", stderr.String())
		}
	})
	return cs, cmd, changed
}

// peakRSS is a process's peak resident memory in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

func toolSet(t *testing.T, cs *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tl := range res.Tools {
		out[tl.Name] = true
	}
	return out
}

// A page that answers the protocol itself with 300 MB replies: pling-mcp
// refuses them in the page, names the bound, never calls the page
// unreachable, starts serving at once, and stays under 100 MB resident.
func TestMCPHostileReplySize(t *testing.T) {
	const pad = 300_000_000
	url := siteURL + "/e2e/mcp-hostile.html?pad=" + strconv.Itoa(pad)
	start := time.Now()
	cs, cmd, _ := startFacadeProcess(t, "-url", url, "-app", "orders", "-poll", "0", "-timeout", "60s")
	t.Logf("initialize answered %v after the start", time.Since(start).Round(time.Millisecond))

	ctx := context.Background()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcpfacade.CodeUnreadableReply || !strings.Contains(we.Message, "larger than 2097152 bytes") {
		t.Fatalf("page_context over a 300 MB reply: %v", err)
	}
	var data map[string]any
	_ = json.Unmarshal(we.Data, &data)
	if data["code"] != mcpfacade.UnreadableReply {
		t.Errorf("labelled %v, want %s (the page did answer)", data["code"], mcpfacade.UnreadableReply)
	}
	rss := peakRSS(t, cmd.Process.Pid)
	t.Logf("pling-mcp peak resident memory after two %d-byte replies: %.1f MB", pad, float64(rss)/1e6)
	if rss > 100<<20 {
		t.Errorf("pling-mcp peaked at %.1f MB resident, over 100 MB", float64(rss)/1e6)
	}
}

// pling-mcp is bound to the exact origin of -url. The tab navigates to
// another origin whose page has its own surface: its tools are not listed,
// a call is refused naming the origin found, and that page receives
// nothing. Back on the bound origin, the tools return.
func TestMCPOriginBinding(t *testing.T) {
	br := startMCPBrowser(t)
	home := siteURL + "/e2e/mcp-hostile.html?tool=home.read"
	foreign := foreignURLs["same-site other port"] + "/mcp-hostile.html?tool=foreign.steal"
	tabCtx, cancelTab := chromedp.NewContext(br.ctx)
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatal(err)
	}
	// Navigations are started, not awaited: a cross-origin one may move
	// the tab to another renderer, and the tools list says when it is done.
	tabID := chromedp.FromContext(tabCtx).Target.TargetID
	// attach is a fresh attachment to the tab, whichever renderer it is in
	// now; cancelling it leaves the tab open.
	attach := func() (context.Context, context.CancelFunc) {
		return chromedp.NewContext(br.ctx, chromedp.WithTargetID(tabID), chromedp.WithDetachOnCancel())
	}
	nav := func(u string) {
		t.Helper()
		attached, cancelAttach := attach()
		defer cancelAttach()
		ctx, cancel := context.WithTimeout(attached, testTimeout)
		defer cancel()
		res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: u})
		if err == nil && res.ErrorText != "" {
			err = errors.New(res.ErrorText)
		}
		// A navigation that moves the tab to another renderer may end the
		// command's session before it answers: it was started.
		if err != nil && !strings.Contains(err.Error(), "navigated or closed") {
			t.Fatalf("navigate to %s: %v", u, err)
		}
	}
	nav(home)
	waitPageText := func(ctx context.Context, expr string) string {
		t.Helper()
		attached, cancel := attach()
		defer cancel()
		ctx, cancelWait := context.WithTimeout(attached, testTimeout)
		defer cancelWait()
		for {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
			if err == nil {
				return v
			}
			select {
			case <-ctx.Done():
				t.Fatalf("page: %v", err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	homeJSON, _ := json.Marshal(home)
	waitPageText(context.Background(), `location.href === `+string(homeJSON)+` && document.readyState === "complete" ? "ok" : 0`)
	cs, _, changed := startFacadeProcess(t, "-devtools", br.wsURL, "-url", home, "-app", "orders", "-poll", "0")

	waitTools := func(want map[string]bool) {
		t.Helper()
		deadline := time.After(testTimeout)
		for {
			got := toolSet(t, cs)
			ok := len(got) == len(want)
			for n := range want {
				ok = ok && got[n]
			}
			if ok {
				return
			}
			select {
			case <-changed:
			case <-time.After(200 * time.Millisecond):
			case <-deadline:
				t.Fatalf("tools %v, want %v", got, want)
			}
		}
	}
	waitTools(map[string]bool{"home-read": true, mcpfacade.ContextToolName: true})

	nav(foreign)
	waitTools(map[string]bool{mcpfacade.ContextToolName: true})
	foreignOrigin := foreignURLs["same-site other port"]
	for _, name := range []string{"foreign-steal", "home-read", mcpfacade.ContextToolName} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil {
			t.Fatalf("%s was called on %s", name, foreignOrigin)
		}
		// The facade's own tool stays listed and says why nothing works;
		// the page's tools are no longer listed at all.
		if name == mcpfacade.ContextToolName && !strings.Contains(err.Error(), foreignOrigin) {
			t.Errorf("%s refused without naming the origin found: %v", name, err)
		}
	}
	if o := waitPageText(context.Background(), `location.origin`); o != foreignOrigin {
		t.Fatalf("the tab shows %s, want %s", o, foreignOrigin)
	}
	if answered := waitPageText(context.Background(), `document.querySelector("[data-testid=answered]").textContent`); answered != "0" {
		t.Errorf("the page on %s received %s requests", foreignOrigin, answered)
	}

	nav(home)
	waitTools(map[string]bool{"home-read": true, mcpfacade.ContextToolName: true})
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "home-read", Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("back home: %v %+v", err, r)
	}
}

// floodURL is the hostile page that, on its first request, logs a
// size-byte string to its console n times and throws n errors with a
// size-byte message, all carried by DevTools to pling-mcp.
func floodURL(n, size int) string {
	return siteURL + "/e2e/mcp-hostile.html?console=" + strconv.Itoa(n) + "&size=" + strconv.Itoa(size)
}

// checkConsoleFlood reads the page's context through pling-mcp while the
// page floods DevTools with n console messages and n errors of size bytes,
// checks that the page did send them all and that the page's tool gets
// listed, and that pling-mcp did all this under 100 MB resident.
func checkConsoleFlood(t *testing.T, cs *mcp.ClientSession, pid int, changed <-chan struct{}, n, size int) {
	t.Helper()
	ctx := context.Background()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
	raw, _ := json.Marshal(r)
	want := 2 * n * size
	switch {
	case err != nil || r.IsError:
		t.Errorf("page_context while the page floods its console: %v %+v", err, r)
	case !strings.Contains(string(raw), `"logged":`+strconv.Itoa(want)):
		t.Errorf("the page did not report %d bytes sent to its console: %.300s", want, raw)
	}
	// The first describe may outlast the start-up wait while the page
	// floods; polling lists the tool once the page answers.
	deadline := time.After(testTimeout)
	for tools := toolSet(t, cs); !tools["hostile-tool"]; tools = toolSet(t, cs) {
		select {
		case <-changed:
		case <-time.After(500 * time.Millisecond):
		case <-deadline:
			t.Errorf("tools after the flood: %v, want hostile-tool listed", tools)
			tools["hostile-tool"] = true
		}
	}
	rss := peakRSS(t, pid)
	t.Logf("pling-mcp peak resident memory after %d bytes of console output: %.1f MB", want, float64(rss)/1e6)
	if rss > 100<<20 {
		t.Errorf("pling-mcp peaked at %.1f MB resident, over 100 MB", float64(rss)/1e6)
	}
}

// A page that logs 30 MB strings to its console and throws 30 MB errors,
// 300 MB in all, while pling-mcp started the browser (the DevTools pipe):
// pling-mcp still answers and stays under 100 MB resident. So it does when
// every message is just under the DevTools event bound, and is read.
func TestMCPHostileConsole(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, size int
	}{
		{"over the bounds", 5, 30_000_000},
		// Just under the 4 MiB event bound, so every message is read.
		{"under the event bound", 20, 4_100_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, cmd, changed := startFacadeProcess(t, "-url", floodURL(tc.n, tc.size), "-app", "orders", "-poll", "1s", "-timeout", "60s")
			checkConsoleFlood(t, cs, cmd.Process.Pid, changed, tc.n, tc.size)
		})
	}
}

// The same flood while pling-mcp is attached to a running browser with
// -devtools (a DevTools websocket).
func TestMCPHostileConsoleAttached(t *testing.T) {
	br := startMCPBrowser(t)
	const n, size = 5, 30_000_000
	url := floodURL(n, size)
	// The tab is created without attaching to it, so that only pling-mcp
	// receives its console.
	ctx, cancel := context.WithTimeout(br.ctx, testTimeout)
	defer cancel()
	if _, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: url}); err != nil {
		t.Fatal(err)
	}
	cs, cmd, changed := startFacadeProcess(t, "-devtools", br.wsURL, "-url", url, "-app", "orders", "-poll", "1s", "-timeout", "60s")
	checkConsoleFlood(t, cs, cmd.Process.Pid, changed, n, size)
}

// A reply within the page's 2 MiB bound but over the DevTools event bound
// once DevTools escapes it (1,000,000 characters U+0080, 2 MB of UTF-8,
// 6 MB as DevTools writes them) is a reply, not an event: it is read whole
// and the call succeeds, with the browser pling-mcp started and attached.
func TestMCPLargeReplyPassesDevToolsBound(t *testing.T) {
	url := siteURL + "/e2e/mcp-hostile.html?wide=1000000"
	call := func(t *testing.T, cs *mcp.ClientSession, pid int) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("page_context over a 6 MB DevTools reply: %v %+v", err, r)
		}
		if tools := toolSet(t, cs); !tools["hostile-tool"] {
			t.Errorf("tools: %v", tools)
		}
		rss := peakRSS(t, pid)
		t.Logf("pling-mcp peak resident memory: %.1f MB", float64(rss)/1e6)
		if rss > 100<<20 {
			t.Errorf("pling-mcp peaked at %.1f MB resident, over 100 MB", float64(rss)/1e6)
		}
	}
	t.Run("started", func(t *testing.T) {
		cs, cmd, _ := startFacadeProcess(t, "-url", url, "-app", "orders", "-poll", "0", "-timeout", "60s")
		call(t, cs, cmd.Process.Pid)
	})
	t.Run("attached", func(t *testing.T) {
		br := startMCPBrowser(t)
		ctx, cancel := context.WithTimeout(br.ctx, testTimeout)
		defer cancel()
		if _, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: url}); err != nil {
			t.Fatal(err)
		}
		cs, cmd, _ := startFacadeProcess(t, "-devtools", br.wsURL, "-url", url, "-app", "orders", "-poll", "0", "-timeout", "60s")
		call(t, cs, cmd.Process.Pid)
	})
}

// What a DevTools client mirrors of a page (its DOM, its frames) and what
// the facade builds from a description are the page's to grow: pling-mcp
// subscribes to none of the first and bounds the second, so it stays under
// 100 MB resident whatever the page does. Before, 100 attributes of 4 MB on
// <html> took it to 623 MB, 20,000 comments of 64 KB to 349 MB, 400
// iframes with 1 MB names to 585 MB, and a list of 15,001 tools to 110 MB.
func TestMCPHostileMirrorMemory(t *testing.T) {
	for _, tc := range []struct{ name, query string }{
		{"attributes", "mirror=attrs&n=100&size=4000000"},
		{"comments", "mirror=comments&n=20000&size=65536"},
		{"frames", "mirror=frames&n=400&size=1000000"},
		{"tools", "tools=15001"},
		{"schema members", "members=150000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := siteURL + "/e2e/mcp-hostile.html?" + tc.query
			cs, cmd, _ := startFacadeProcess(t, "-url", url, "-app", "orders", "-poll", "0", "-timeout", "60s")
			ctx := context.Background()
			// The first request set the page off; the page says in its
			// state when it is done, and a little later what it made has
			// reached pling-mcp.
			deadline := time.Now().Add(2 * time.Minute)
			for {
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
				if err != nil {
					t.Fatalf("page_context: %v", err)
				}
				b, _ := json.Marshal(r.StructuredContent)
				if !strings.Contains(tc.query, "mirror") || strings.Contains(string(b), `"filled":true`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the page never finished: %s", b)
				}
				time.Sleep(time.Second)
			}
			time.Sleep(2 * time.Second)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			rss := peakRSS(t, cmd.Process.Pid)
			t.Logf("pling-mcp peak resident memory: %.1f MB", float64(rss)/1e6)
			if rss > 100<<20 {
				t.Errorf("pling-mcp peaked at %.1f MB resident, over 100 MB", float64(rss)/1e6)
			}
		})
	}
}

// The page's rate budget is the agent's: against the demo's 30 requests a
// minute, 25 quick searches (each of which changes the page's state) all
// get results. Before, pling-mcp read the list again after each, and 25
// searches got 15 results.
func TestMCPSearchesWithinRateBudget(t *testing.T) {
	br := startMCPBrowser(t)
	url := siteURL + "/?budget=" + randomHex(t, 6)
	openMCPDemo(t, br, url)
	cs, _, _ := startFacadeProcess(t, "-devtools", br.wsURL, "-url", url, "-app", "orders", "-poll", "0")
	ctx := context.Background()
	got := 0
	for i := range 25 {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "orders-search", Arguments: map[string]any{"query": "SO-10" + strconv.Itoa(i%10)}})
		switch {
		case err != nil:
			t.Errorf("search %d: %v", i+1, err)
		case r.IsError:
			b, _ := json.Marshal(r.StructuredContent)
			t.Errorf("search %d: %s", i+1, b)
		default:
			got++
		}
	}
	if got != 25 {
		t.Errorf("%d of 25 searches got results", got)
	}
}
