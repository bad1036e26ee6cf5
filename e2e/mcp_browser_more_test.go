package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/mcpfacade/nativehost"
)

// optIn gives the extension the tab showing pageURL with its button and
// ticks "Let desktop agents use this site" in its panel, as a person does.
func (nb *nativeBrowser) optIn(t *testing.T, pageURL string) *tab {
	t.Helper()
	panel := nb.openPanel(t, pageURL)
	waitPage(t, panel, `!document.querySelector('[data-testid="agents-site"]').disabled`)
	if !evalPage[bool](t, panel, `document.querySelector('[data-testid="agents-site"]').checked`) {
		click(t, panel, "agents-site")
	}
	waitPage(t, panel, `document.querySelector('[data-testid="agents-site"]').checked`)
	return panel
}

// goClient starts pling-mcp in browser mode under the Go SDK's client, with
// the pid for its memory.
func (nb *nativeBrowser) goClient(t *testing.T, pageURL string, extra ...string) (*mcp.ClientSession, int, chan struct{}) {
	t.Helper()
	t.Setenv(nativehost.DirEnv, nb.runtimeDir)
	cs, cmd, changed := startFacadeProcess(t, append([]string{"-browser", "-url", pageURL, "-app", "orders", "-poll", "0"}, extra...)...)
	return cs, cmd.Process.Pid, changed
}

// waitToolsWhere polls the tool list until ok says it is right.
func waitToolsWhere(t *testing.T, cs *mcp.ClientSession, ok func([]*mcp.Tool) bool) []*mcp.Tool {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		res, err := cs.ListTools(context.Background(), nil)
		if err == nil && ok(res.Tools) {
			return res.Tools
		}
		if time.Now().After(deadline) {
			var names []string
			if res != nil {
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
			}
			t.Fatalf("tools %v (%v) never became right", names, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The hostile-page tests of DevTools mode, in browser mode: a capability id
// hiding a bidi override, a 300 MB reply, and a 2 MB reply of characters
// that JSON escaping would grow.
func TestMCPBrowserModeHostile(t *testing.T) {
	nb := startNativeBrowser(t)
	// The id hides U+202E and must be sent back exactly.
	pageURL := siteURL + "/e2e/mcp-hostile.html?tool=" + url.QueryEscape("x.\u202e@order")
	p := nb.openTab(t, pageURL)
	waitPage(t, p, `document.readyState === "complete"`)
	panel := nb.optIn(t, pageURL)
	cs, pid, _ := nb.goClient(t, pageURL, "-timeout", "60s")

	t.Run("text in titles and names that keep their meaning", func(t *testing.T) {
		tools := waitToolsWhere(t, cs, func(ts []*mcp.Tool) bool { return len(ts) == 2 })
		var tool *mcp.Tool
		for _, tl := range tools {
			if tl.Name != mcpfacade.ContextToolName {
				tool = tl
			}
		}
		raw, _ := json.Marshal(tool)
		if !regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`).MatchString(tool.Name) || !strings.Contains(tool.Name, "---") {
			t.Errorf("the tool's name %q", tool.Name)
		}
		if strings.ContainsRune(string(raw), '\u202e') || !strings.Contains(string(raw), `\\u{202E}`) {
			t.Errorf("the hidden character is not shown as the page's: %s", raw)
		}
		if tool.Meta[mcpfacade.MetaCapability] == "x.\u202e@order" {
			t.Errorf("_meta holds the raw id: %s", raw)
		}
		// The same name after the page lists it again.
		if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		waitPage(t, p, `document.readyState === "complete"`)
		waitToolsWhere(t, cs, func(ts []*mcp.Tool) bool {
			return len(ts) == 2 && slices.ContainsFunc(ts, func(x *mcp.Tool) bool { return x.Name == tool.Name })
		})
	})

	hostPID := readAgents(t, panel).Host.PID
	nav := func(u string) {
		t.Helper()
		if err := chromedp.Do(p.ctx, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		waitPage(t, p, `document.readyState === "complete"`)
	}

	t.Run("reply size", func(t *testing.T) {
		nav(siteURL + "/e2e/mcp-hostile.html?pad=300000000")
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != mcpfacade.CodeUnreadableReply || !strings.Contains(we.Message, "larger than 2097152 bytes") {
			t.Fatalf("page_context over a 300 MB reply: %v", err)
		}
		for name, p := range map[string]int{"pling-mcp": pid, "the native host": hostPID} {
			rss := peakRSS(t, p)
			t.Logf("%s peak resident memory after a 300 MB reply: %.1f MB", name, float64(rss)/1e6)
			if rss > 100<<20 {
				t.Errorf("%s peaked at %.1f MB resident, over 100 MB", name, float64(rss)/1e6)
			}
		}
	})

	t.Run("a 2 MB reply passes whole", func(t *testing.T) {
		nav(siteURL + "/e2e/mcp-hostile.html?wide=1000000")
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("page_context with a 2 MB reply: %v %+v", err, r)
		}
		rss := peakRSS(t, pid)
		t.Logf("pling-mcp peak resident memory: %.1f MB", float64(rss)/1e6)
	})
}

// The MV3 worker stopped, the extension reloaded, the browser restarted:
// each ends the MCP client's call in an error within the bound, and the
// agent's reach comes back as far as the person's grants do.
func TestMCPBrowserModeRestarts(t *testing.T) {
	nb := startNativeBrowser(t)
	demoURL := siteURL + "/?restarts=" + randomHex(t, 6)
	p := nb.openTab(t, demoURL)
	waitDemoReady(t, p)
	panel := nb.optIn(t, demoURL)
	cs, _, _ := nb.goClient(t, demoURL)
	hasTools := func(ts []*mcp.Tool) bool { return len(ts) == len(browserDemoTools) }
	noPageTools := func(ts []*mcp.Tool) bool { return len(ts) == 1 }
	waitToolsWhere(t, cs, hasTools)

	callFails := func(t *testing.T, want string) {
		t.Helper()
		start := time.Now()
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpfacade.ContextToolName, Arguments: map[string]any{}})
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), want) || took > failBound {
			t.Errorf("a call: %v after %v, want an error naming %s within %v", err, took, want, failBound)
		}
		t.Logf("a call: %v, after %v", err, took.Round(time.Millisecond))
	}
	sock := filepath.Join(nb.runtimeDir, nativehost.SocketName)
	waitNoHost := func(t *testing.T) {
		t.Helper()
		deadline := time.Now().Add(testTimeout)
		for {
			if _, err := os.Stat(sock); errors.Is(err, os.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the host is still listening")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	t.Run("the worker stopped", func(t *testing.T) {
		if _, err := chromedp.Call(panel.ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
			t.Fatalf("the ServiceWorker domain: %v", err)
		}
		if _, err := chromedp.Call(panel.ctx, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
			t.Fatalf("stop the service workers: %v", err)
		}
		waitNoHost(t)
		callFails(t, "NOT_CONNECTED")
		waitToolsWhere(t, cs, noPageTools)
		// Anything that wakes the worker (here the panel asking for its
		// state) starts the host again; the tab it was given is remembered.
		if err := chromedp.Do(panel.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		nb.waitHost(t)
		waitToolsWhere(t, cs, hasTools)
	})

	t.Run("the extension reloaded", func(t *testing.T) {
		// The panel's page goes with the extension.
		_, _ = chromedp.Run(panel.ctx, chromedp.Evaluate[bool](`setTimeout(() => chrome.runtime.reload(), 0), true`))
		waitNoHost(t)
		callFails(t, "")
		waitToolsWhere(t, cs, noPageTools)
		// A reloaded extension does not come back in this headless
		// Chromium 156 (run with --load-extension and
		// --disable-extensions-except): its pages answer
		// net::ERR_BLOCKED_BY_CLIENT, pressing its button makes the browser
		// exit with a segmentation fault, and loading it again with
		// Extensions.loadUnpacked (same id) leaves its pages blocked. What
		// is held here is the MCP side: the call above failed within the
		// bound, and the tools are gone.
		waitToolsWhere(t, cs, noPageTools)
	})

	t.Run("the browser restarted", func(t *testing.T) {
		nb.stop()
		callFails(t, "NOT_CONNECTED")
		waitToolsWhere(t, cs, noPageTools)
		nb.start(t)
		p2 := nb.openTab(t, demoURL)
		waitDemoReady(t, p2)
		nb.pressAction(t, demoURL, true)
		waitToolsWhere(t, cs, hasTools)
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "update_note--order", Arguments: map[string]any{"record": "SO-1002", "note": "after the restart"}})
		if err != nil || r.IsError {
			t.Fatalf("a call after the restart: %v %+v", err, r)
		}
		if got := noteShown(t, p2, "SO-1002"); got != "after the restart" {
			t.Errorf("SO-1002 shows %q", got)
		}
	})
}
