package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/mcpfacade/nativehost"
	"pling.dev/agent/surface"
)

// Browser mode: the official TypeScript MCP client starts pling-mcp with
// -browser, which reaches the demo in a Chromium through the real extension
// and the real native messaging host, registered with `pling-mcp install`
// in the test's own user data directory. No DevTools port is involved on
// pling-mcp's side; the test drives the browser as the person does
// (pressing the extension's button, ticking boxes in its panel).

// failBound is how soon a call must fail when the browser side is gone.
const failBound = 5 * time.Second

// nativeBrowser is an extensionBrowser whose profile has pling-mcp's host
// installed, and whose host meets pling-mcp in runtimeDir.
type nativeBrowser struct {
	*extensionBrowser
	bin, profile, runtimeDir string
}

func startNativeBrowser(t *testing.T) *nativeBrowser {
	t.Helper()
	bin := buildFacade(t)
	profile := t.TempDir()
	// Short, so the socket's path fits a Unix socket address.
	rt, err := os.MkdirTemp("", "pmcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	out, err := exec.Command(bin, "install", "-user-data-dir", profile).CombinedOutput()
	manifest := filepath.Join(profile, "NativeMessagingHosts", nativehost.ManifestFile)
	if err != nil || !strings.Contains(string(out), "wrote "+manifest) {
		t.Fatalf("pling-mcp install: %v\n%s", err, out)
	}
	nb := &nativeBrowser{bin: bin, profile: profile, runtimeDir: rt}
	nb.start(t)
	return nb
}

// start starts the browser on the profile and waits for its host.
func (nb *nativeBrowser) start(t *testing.T) {
	t.Helper()
	b := startExtensionBrowserIn(t, nb.profile, chromedp.Env(nativehost.DirEnv+"="+nb.runtimeDir))
	if b.id != nativehost.ExtensionID {
		t.Fatalf("the extension's id is %s, want %s (fixed by the key in its manifest)", b.id, nativehost.ExtensionID)
	}
	nb.extensionBrowser = b
	nb.waitHost(t)
}

// waitHost waits until the browser has started the host and it listens.
func (nb *nativeBrowser) waitHost(t *testing.T) {
	t.Helper()
	sock := filepath.Join(nb.runtimeDir, nativehost.SocketName)
	deadline := time.Now().Add(testTimeout)
	for {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser never started pling-mcp's host (no %s)", sock)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connectBrowserMode starts a TypeScript client that launches pling-mcp in
// browser mode, bound to pageURL.
func (nb *nativeBrowser) connectBrowserMode(t *testing.T, name, pageURL string) *tsDriver {
	t.Helper()
	d := startTSDriver(t, tsClientDir(t))
	var conn struct {
		Server       struct{ Name string }
		Capabilities struct{ Tools struct{ ListChanged bool } }
	}
	d.do(t, "connect", map[string]any{
		"name": name, "command": nb.bin,
		"args": []string{"-browser", "-url", pageURL, "-app", "orders", "-poll", "0", "-v"},
		"env":  map[string]string{nativehost.DirEnv: nb.runtimeDir},
	}).ok(t, &conn)
	if conn.Server.Name != "pling-mcp" || !conn.Capabilities.Tools.ListChanged {
		t.Fatalf("initialize: %+v", conn)
	}
	return d
}

// agentsState is the extension's desktop-agent state, as its panel reads it.
type agentsState struct {
	Host struct {
		State   string `json:"state"`
		Message string `json:"message"`
		PID     int    `json:"pid"`
	} `json:"host"`
	Off     bool     `json:"off"`
	Sites   []string `json:"sites"`
	Clients []struct {
		Client, Origin string
	} `json:"clients"`
	Calls []struct {
		Client, Method, Capability, Outcome, RequestID string
	} `json:"calls"`
}

func readAgents(t *testing.T, panel *tab) agentsState {
	t.Helper()
	raw := evalPage[string](t, panel, `chrome.runtime.sendMessage({ type: "pling.agents.state" }).then((r) => JSON.stringify(r.value))`)
	var s agentsState
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// rpcFailure calls a tool and wants a JSON-RPC error; it returns the
// error's code, message and data code, and how long the call took.
func rpcFailure(t *testing.T, d *tsDriver, name string, args map[string]any) (int, string, string, time.Duration) {
	t.Helper()
	start := time.Now()
	a := d.do(t, "call", map[string]any{"name": name, "arguments": args})
	took := time.Since(start)
	if a.OK || a.Error == nil {
		t.Fatalf("%s answered %s, want an error", name, a.Result)
	}
	var data struct{ Code string }
	_ = json.Unmarshal(a.Error.Data, &data)
	return a.Error.Code, a.Error.Message, data.Code, took
}

// callFailure calls a tool and wants it to fail, as a JSON-RPC error or
// as a tool result with isError; it returns what it says and how long it
// took.
func callFailure(t *testing.T, d *tsDriver, name string, args map[string]any) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	a := d.do(t, "call", map[string]any{"name": name, "arguments": args})
	took := time.Since(start)
	if !a.OK {
		return fmt.Sprintf("%d %s %s", a.Error.Code, a.Error.Message, a.Error.Data), took
	}
	var r mcpCallResult
	_ = json.Unmarshal(a.Result, &r)
	if !r.IsError {
		t.Fatalf("%s succeeded: %s", name, a.Result)
	}
	return r.text(), took
}

// waitContextOnly waits until only the facade's own tool is listed.
func waitContextOnly(t *testing.T, d *tsDriver) {
	t.Helper()
	waitToolNames(t, d, []string{mcpfacade.ContextToolName})
}

// waitDemoTools waits until the demo's tools are listed.
func waitDemoTools(t *testing.T, d *tsDriver) {
	t.Helper()
	waitToolNames(t, d, browserDemoTools)
}

func waitToolNames(t *testing.T, d *tsDriver, want []string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		got := toolNames(listTools(t, d))
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %v, want %v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contextOnly(t *testing.T, d *tsDriver) {
	t.Helper()
	if got := toolNames(listTools(t, d)); !slices.Equal(got, []string{mcpfacade.ContextToolName}) {
		t.Fatalf("tools %v, want only %s", got, mcpfacade.ContextToolName)
	}
}

var browserDemoTools = []string{"approve--order", "orders-go_to_page", "orders-search", "orders-set_filter", mcpfacade.ContextToolName, "update_note--order"}

func TestMCPBrowserMode(t *testing.T) {
	nb := startNativeBrowser(t)
	demoURL := siteURL + "/?browser=" + randomHex(t, 6)
	p := nb.openTab(t, demoURL)
	waitDemoReady(t, p)

	d := nb.connectBrowserMode(t, "first-desktop-client", demoURL)

	t.Run("nothing before the person gives the tab", func(t *testing.T) {
		contextOnly(t, d)
		code, msg, data, took := rpcFailure(t, d, mcpfacade.ContextToolName, nil)
		if code != mcpfacade.CodePageUnreachable || data != mcpfacade.PageUnreachable || !strings.Contains(msg, "NOT_OPTED_IN") || took > failBound {
			t.Errorf("page_context before the opt-in: %d %q %s in %v", code, msg, data, took)
		}
	})

	panel := nb.openPanel(t, demoURL)
	waitPage(t, panel, `!document.querySelector('[data-testid="agents-site"]').disabled`)
	origin := evalPage[string](t, panel, `document.querySelector('[data-testid="agents-site"]').dataset.origin`)
	if u, _ := url.Parse(siteURL); origin != u.Scheme+"://"+u.Host {
		t.Fatalf("the panel offers the opt-in for %q", origin)
	}

	t.Run("granted but not opted in lists nothing", func(t *testing.T) {
		contextOnly(t, d)
		_, msg, _, _ := rpcFailure(t, d, mcpfacade.ContextToolName, nil)
		if !strings.Contains(msg, "NOT_OPTED_IN") {
			t.Errorf("page_context: %q", msg)
		}
	})

	t.Run("opt-in lists the tools", func(t *testing.T) {
		d.drainListChanged()
		click(t, panel, "agents-site")
		d.waitListChanged(t)
		if got := toolNames(listTools(t, d)); !slices.Equal(got, browserDemoTools) {
			t.Fatalf("tools %v, want %v", got, browserDemoTools)
		}
		waitPage(t, panel, `document.querySelector('[data-testid="agents-clients"]').textContent.includes("first-desktop-client")`)
	})

	t.Run("call", func(t *testing.T) {
		calls := executorCalls(t, p)
		const note = "Call Friday, from a desktop agent"
		r := callTool(t, d, "update_note--order", map[string]any{"record": "SO-1002", "note": note})
		if r.IsError {
			t.Fatalf("update_note--order: %s", r.text())
		}
		if got := noteShown(t, p, "SO-1002"); got != note {
			t.Errorf("SO-1002 shows %q, want %q", got, note)
		}
		if got := executorCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one more", calls, got)
		}
		rid, _ := r.structured(t)["requestId"].(string)
		// The person sees the call in the panel, with the audit's metadata.
		waitPage(t, panel, `[...document.querySelectorAll('[data-testid="agents-calls"] li')].some((li) => li.textContent.includes("update_note@order") && li.textContent.includes(`+js(rid)+`) && li.dataset.outcome === "ok")`)
		if strings.Contains(evalPage[string](t, panel, `document.querySelector('[data-testid="agents-calls"]').textContent`), note) {
			t.Errorf("the panel's call list shows the call's input")
		}
	})

	t.Run("business error", func(t *testing.T) {
		r := callTool(t, d, "update_note--order", map[string]any{"record": "SO-1003", "note": "locked?"})
		if s := r.structured(t); !r.IsError || s["code"] != "ORDER_LOCKED" {
			t.Errorf("isError %v structured %v", r.IsError, s)
		}
	})

	t.Run("approval pending", func(t *testing.T) {
		r := callTool(t, d, "approve--order", map[string]any{"record": "SO-1005"})
		if s := r.structured(t); r.IsError || s["approval"] != "pending" || !strings.Contains(r.text(), "Not done yet") {
			t.Errorf("isError %v structured %v text %q", r.IsError, s, r.text())
		}
		waitPage(t, p, `window.__demo.pendingApprovals().includes("SO-1005")`)
		clickTestID(t, p, "approval-later")
		waitPage(t, panel, `[...document.querySelectorAll('[data-testid="agents-calls"] li')].some((li) => li.dataset.outcome === "approval pending")`)
	})

	t.Run("several clients at once", func(t *testing.T) {
		d2 := nb.connectBrowserMode(t, "second-desktop-client", demoURL)
		if got := toolNames(listTools(t, d2)); !slices.Equal(got, browserDemoTools) {
			t.Fatalf("second client's tools %v", got)
		}
		done := make(chan mcpCallResult, 2)
		for i, dd := range []*tsDriver{d, d2} {
			go func() {
				var r mcpCallResult
				a := dd.do(t, "call", map[string]any{"name": "update_note--order", "arguments": map[string]any{"record": "SO-1004", "note": "client " + string(rune('A'+i))}})
				_ = json.Unmarshal(a.Result, &r)
				done <- r
			}()
		}
		for range 2 {
			if r := <-done; r.IsError || r.StructuredContent == nil {
				t.Errorf("a concurrent call: %s", r.text())
			}
		}
		waitPage(t, panel, `document.querySelector('[data-testid="agents-clients"]').dataset.count === "2"`)
		d2.do(t, "close", nil)
		waitPage(t, panel, `document.querySelector('[data-testid="agents-clients"]').dataset.count === "1"`)
	})

	t.Run("opting out in the panel", func(t *testing.T) {
		click(t, panel, "agents-site")
		waitContextOnly(t, d)
		click(t, panel, "agents-site")
		waitDemoTools(t, d)
	})

	t.Run("cut off", func(t *testing.T) {
		click(t, panel, "agents-off")
		waitContextOnly(t, d)
		code, msg, _, took := rpcFailure(t, d, mcpfacade.ContextToolName, nil)
		if code != mcpfacade.CodePageUnreachable || !strings.Contains(msg, "CUT_OFF") || took > failBound {
			t.Errorf("page_context while cut off: %d %q in %v", code, msg, took)
		}
		click(t, panel, "agents-off")
		waitDemoTools(t, d)
	})

	t.Run("revocation in the page", func(t *testing.T) {
		d.drainListChanged()
		clickTestID(t, p, "delegation-revoke")
		waitPage(t, p, `window.__demo.sessionState() === "revoked"`)
		calls := executorCalls(t, p)
		// A refusal is a tool result the model reads, as in DevTools mode.
		r := callTool(t, d, "orders-search", map[string]any{"query": "acme"})
		if st := r.structured(t); !r.IsError || st["code"] != string(surface.CodeSessionRevoked) {
			t.Errorf("call after revocation: isError %v %v %s", r.IsError, st, r.text())
		}
		if got := executorCalls(t, p); got != calls {
			t.Errorf("the executor ran after revocation")
		}
		waitContextOnly(t, d)
	})

	t.Run("a reload keeps the site", func(t *testing.T) {
		d.drainListChanged()
		if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		waitDemoReady(t, p)
		// The tools come back. Waited for by their names: the notification
		// of the revocation's removal may still be on its way when the
		// reload starts, so the first one seen after it proves nothing.
		waitDemoTools(t, d)
	})

	t.Run("a killed host is reported, then reconnected", func(t *testing.T) {
		s := readAgents(t, panel)
		if s.Host.State != "ready" || s.Host.PID <= 0 {
			t.Fatalf("host state %+v", s.Host)
		}
		d.drainListChanged()
		// The host is this test's browser's child; killed by its own pid.
		if err := syscall.Kill(s.Host.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Sent before pling-mcp saw the socket close, or refused after:
		// an unknown outcome or PAGE_UNREACHABLE, at once either way.
		msg, took := callFailure(t, d, "orders-search", map[string]any{"query": ""})
		if took > failBound || !strings.Contains(msg, "OUTCOME_UNKNOWN") && !strings.Contains(msg, "NOT_CONNECTED") {
			t.Errorf("the call after the host died: %q in %v", msg, took)
		}
		t.Logf("a call with the host killed: %q in %v", msg, took)
		// The extension starts a new host, pling-mcp dials it again, and the
		// tools come back.
		// pling-mcp re-dials every second: until it has, a call is refused
		// as not connected, then one goes through.
		waitDemoTools(t, d)
		deadline := time.Now().Add(testTimeout)
		for {
			a := d.do(t, "call", map[string]any{"name": "orders-search", "arguments": map[string]any{"query": ""}})
			var r mcpCallResult
			if a.OK {
				_ = json.Unmarshal(a.Result, &r)
			}
			if a.OK && !r.IsError {
				break
			}
			what := r.text()
			if !a.OK {
				what = a.Error.Message
			}
			if !strings.Contains(what, "NOT_CONNECTED") || time.Now().After(deadline) {
				t.Fatalf("a call after the reconnection: %s", what)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("a page has no way to the host", func(t *testing.T) {
		// Native messaging is for the extension's own worker and pages: the
		// page has no chrome.runtime to ask for it.
		if !evalPage[bool](t, p, `typeof chrome === "undefined" || !chrome.runtime || typeof chrome.runtime.connectNative !== "function"`) {
			t.Error("the page can reach chrome.runtime.connectNative")
		}
	})

	t.Run("another origin in the tab lists nothing", func(t *testing.T) {
		u, _ := url.Parse(siteURL)
		other := "http://localhost:" + u.Port() + "/"
		d.drainListChanged()
		if err := chromedp.Do(p.ctx, chromedp.Navigate(other)); err != nil {
			t.Fatal(err)
		}
		waitContextOnly(t, d)
		msg, took := callFailure(t, d, "update_note--order", map[string]any{"record": "SO-1002", "note": "to another site?"})
		if took > failBound {
			t.Errorf("took %v", took)
		}
		t.Logf("a call with the tab on another origin: %q", msg)
	})

	t.Run("a closed tab is reported", func(t *testing.T) {
		if err := chromedp.Do(p.ctx, chromedp.Navigate(demoURL)); err != nil {
			t.Fatal(err)
		}
		waitDemoReady(t, p)
		// Going to another origin ended the grant: the person presses the
		// button again.
		nb.pressAction(t, demoURL, true)
		waitDemoTools(t, d)
		if err := chromedp.Cancel(p.ctx); err != nil {
			t.Fatal(err)
		}
		code, msg, _, took := rpcFailure(t, d, "orders-search", map[string]any{"query": ""})
		if code != mcpfacade.CodePageUnreachable || !strings.Contains(msg, "NO_TAB") || took > failBound {
			t.Errorf("a call after the tab closed: %d %q in %v", code, msg, took)
		}
		waitContextOnly(t, d)
	})
}
