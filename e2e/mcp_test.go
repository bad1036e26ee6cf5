package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/client"
	"pling.dev/agent/internal/headless"
	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/surface"
)

// The MCP facade against the demo page: the official TypeScript MCP client
// launches the built pling-mcp over stdio, and pling-mcp attaches through
// DevTools to a tab of a browser this test also drives, where the test plays
// the person (the delegation panel) and reads the DOM.

// mcpBrowser is a Chromium with a DevTools port, so that a second program
// can attach to its tabs as it would to a person's browser.
type mcpBrowser struct {
	ctx   context.Context
	wsURL string
}

func startMCPBrowser(t *testing.T) *mcpBrowser {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH: %v", err)
	}
	profile, err := os.MkdirTemp("", "pling-e2e-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile,
		remote.WebSocket, // a DevTools port instead of the pipe
	)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser process to exit
		// Chromium's helper processes can still write to the profile for a
		// moment after the browser exits; try again for a while.
		var err error
		for range 50 {
			if err = os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("remove the browser profile: %v", err)
	})
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	// Chromium writes its port and browser path here once it listens.
	port, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
	if err != nil {
		t.Fatalf("the browser's DevTools port: %v", err)
	}
	lines := strings.Fields(string(port))
	if len(lines) != 2 {
		t.Fatalf("DevToolsActivePort holds %q", port)
	}
	return &mcpBrowser{ctx: browserCtx, wsURL: "ws://127.0.0.1:" + lines[0] + lines[1]}
}

// openMCPDemo opens the demo in a new tab of b and waits until its surface
// listens; the tab fails the test on page errors, as openTab's do.
func openMCPDemo(t *testing.T, b *mcpBrowser, url string) *tab {
	t.Helper()
	tabCtx, cancelTab := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, 3*testTimeout)
	p := &tab{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelTab()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, msg := range p.problems {
			t.Errorf("page reported: %s", msg)
		}
	})
	if err := chromedp.Listen(tabCtx, p.onEvent); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	waitDemoReady(t, p)
	return p
}

func waitDemoReady(t *testing.T, p *tab) {
	t.Helper()
	waitPage(t, p, `typeof window.__demo === "object"`)
	evalPage[bool](t, p, `window.__demo.ready.then(() => true)`)
}

// buildFacade builds cmd/pling-mcp into a temporary directory.
func buildFacade(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(t.TempDir(), "pling-mcp")
	cmd := exec.Command(goBin, "build", "-o", bin, "pling.dev/agent/cmd/pling-mcp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build pling-mcp: %v\n%s", err, out)
	}
	return bin
}

// tsClientDir returns a directory holding the TypeScript client driver and
// its node_modules, installed with npm ci from the committed lock file. The
// directory is named by the hash of its inputs and made by a rename, so
// test binaries running side by side never see a half-made one.
func tsClientDir(t *testing.T) string {
	t.Helper()
	return npmDir(t, "the TypeScript MCP client", filepath.Join("..", "mcpfacade", "testdata", "tsclient"), "mcp-tsclient", []string{"package.json", "package-lock.json", "driver.mjs"}, true)
}

// npmDir installs the npm project in src (its files) under
// build/<build>/<hash of the files>, once, and returns where. With
// ignoreScripts no package's install script runs.
func npmDir(t *testing.T, what, src, buildName string, files []string, ignoreScripts bool) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install %s: %v", what, err)
	}
	h := sha256.New()
	contents := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		contents[f] = b
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	root, err := filepath.Abs(filepath.Join("..", "build", buildName))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:16])
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // gone after the rename; left over only on failure
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), contents[f], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"ci", "--no-audit", "--no-fund", "--loglevel=error"}
	if ignoreScripts {
		args = append(args, "--ignore-scripts")
	}
	cmd := exec.Command(npm, args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci for %s: %v\n%s", what, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(done); serr != nil {
			t.Fatalf("install %s: %v", what, err)
		}
		// Another test binary made it first.
	}
	return dir
}

// tsDriver runs testdata/tsclient/driver.mjs: the official TypeScript MCP
// client, one JSON command a line.
type tsDriver struct {
	in      io.WriteCloser
	answers chan tsAnswer
	events  chan int // the count of every tools/list_changed
	seq     int

	mu     sync.Mutex
	stderr bytes.Buffer // the driver's and the facade's
	seen   int          // list_changed notifications seen so far
}

type tsAnswer struct {
	ID     int             `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Event string `json:"event"`
	Count int    `json:"count"`
}

func (d *tsDriver) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.Write(b)
}

func startTSDriver(t *testing.T, dir string) *tsDriver {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the TypeScript MCP client: %v", err)
	}
	d := &tsDriver{answers: make(chan tsAnswer, 16), events: make(chan int, 64)}
	cmd := exec.Command(node, filepath.Join(dir, "driver.mjs"))
	cmd.Dir = dir
	cmd.Stderr = d
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.in = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var a tsAnswer
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				fmt.Fprintf(d, "driver printed %q\n", sc.Text())
				continue
			}
			if a.Event == "tools/list_changed" {
				d.events <- a.Count
				continue
			}
			d.answers <- a
		}
		close(d.answers)
	}()
	t.Cleanup(func() {
		in.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(testTimeout):
			_ = cmd.Process.Kill() // this test's own child, by its handle
			<-exited
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if t.Failed() || testing.Verbose() {
			t.Logf("TypeScript client and pling-mcp stderr:\n%s", d.stderr.String())
		}
	})
	return d
}

// do sends one command and waits for its answer.
func (d *tsDriver) do(t *testing.T, op string, args map[string]any) tsAnswer {
	t.Helper()
	d.seq++
	cmd := map[string]any{"id": d.seq, "op": op}
	for k, v := range args {
		cmd[k] = v
	}
	b, _ := json.Marshal(cmd)
	if _, err := d.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("driver: %v", err)
	}
	select {
	case a, ok := <-d.answers:
		if !ok {
			t.Fatalf("the driver exited before answering %s", op)
		}
		if a.ID != d.seq {
			t.Fatalf("driver answered %d, want %d", a.ID, d.seq)
		}
		return a
	case <-time.After(testTimeout):
		t.Fatalf("no answer to %s", op)
	}
	return tsAnswer{}
}

// ok fails unless the answer is a result, and decodes it.
func (a tsAnswer) ok(t *testing.T, v any) {
	t.Helper()
	if !a.OK {
		t.Fatalf("MCP call failed: %+v", a.Error)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		t.Fatalf("result %s: %v", a.Result, err)
	}
}

// waitListChanged waits for a tools/list_changed newer than the last one
// seen.
func (d *tsDriver) waitListChanged(t *testing.T) {
	t.Helper()
	deadline := time.After(testTimeout)
	for {
		select {
		case n := <-d.events:
			d.mu.Lock()
			newer := n > d.seen
			if newer {
				d.seen = n
			}
			d.mu.Unlock()
			if newer {
				return
			}
		case <-deadline:
			t.Fatal("no tools/list_changed")
		}
	}
}

// drainListChanged forgets notifications already received.
func (d *tsDriver) drainListChanged() {
	for {
		select {
		case n := <-d.events:
			d.mu.Lock()
			d.seen = max(d.seen, n)
			d.mu.Unlock()
		default:
			return
		}
	}
}

type mcpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations struct {
		ReadOnlyHint    bool  `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
	} `json:"annotations"`
	Meta map[string]any `json:"_meta"`
}

type mcpCallResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (r mcpCallResult) structured(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.StructuredContent, &m); err != nil {
		t.Fatalf("structured content %s: %v", r.StructuredContent, err)
	}
	return m
}

func (r mcpCallResult) text() string {
	var s []string
	for _, c := range r.Content {
		s = append(s, c.Text)
	}
	return strings.Join(s, "\n")
}

func listTools(t *testing.T, d *tsDriver) map[string]mcpTool {
	t.Helper()
	var tools []mcpTool
	d.do(t, "list", nil).ok(t, &tools)
	m := map[string]mcpTool{}
	for _, tl := range tools {
		m[tl.Name] = tl
	}
	return m
}

// modelToolName is the function-name pattern every major model API accepts.
var modelToolName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`)

func toolNames(m map[string]mcpTool) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func callTool(t *testing.T, d *tsDriver, name string, args map[string]any) mcpCallResult {
	t.Helper()
	var r mcpCallResult
	d.do(t, "call", map[string]any{"name": name, "arguments": args}).ok(t, &r)
	return r
}

func TestMCPFacadeWithTypeScriptClient(t *testing.T) {
	bin := buildFacade(t)
	dir := tsClientDir(t)
	br := startMCPBrowser(t)
	demoURL := siteURL + "/?mcp=" + randomHex(t, 6)
	p := openMCPDemo(t, br, demoURL)
	d := startTSDriver(t, dir)

	// Polling is off: the tool list follows the page only after calls and
	// navigations here, so every list_changed below has one known cause.
	var conn struct {
		Server       struct{ Name string }
		Capabilities struct {
			Tools     struct{ ListChanged bool }
			Resources *struct{}
		}
	}
	d.do(t, "connect", map[string]any{"command": bin, "args": []string{
		"-devtools", br.wsURL, "-url", demoURL, "-app", "orders", "-poll", "0", "-v",
	}}).ok(t, &conn)
	if conn.Server.Name != "pling-mcp" || !conn.Capabilities.Tools.ListChanged || conn.Capabilities.Resources == nil {
		t.Fatalf("initialize: %+v", conn)
	}

	t.Run("list", func(t *testing.T) {
		raw := d.do(t, "list", nil)
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, raw.Result, "", "  ")
		t.Logf("tools/list as the TypeScript client sees it:\n%s", pretty.String())
		tools := listTools(t, d)
		want := []string{"approve--order", "orders-go_to_page", "orders-search", "orders-set_filter", mcpfacade.ContextToolName, "update_note--order"}
		if got := toolNames(tools); !slices.Equal(got, want) {
			t.Fatalf("tools %v, want %v", got, want)
		}
		// Several model APIs refuse a whole tool list over one name
		// outside this pattern.
		for name := range tools {
			if !modelToolName.MatchString(name) {
				t.Errorf("tool name %q fails %s", name, modelToolName)
			}
		}
		if a := tools["orders-search"].Annotations; !a.ReadOnlyHint {
			t.Errorf("orders.search is not read-only: %+v", a)
		}
		note := tools["update_note--order"]
		if note.Meta[mcpfacade.MetaCapability] != "update_note@order" || note.Annotations.ReadOnlyHint ||
			note.Annotations.DestructiveHint == nil || *note.Annotations.DestructiveHint {
			t.Errorf("update_note--order: %+v", note)
		}
		var schema struct {
			Required   []string                  `json:"required"`
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(note.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		rec := schema.Properties["record"]
		desc, _ := rec["description"].(string)
		if len(schema.Required) == 0 || schema.Required[0] != "record" || rec["enum"] != nil ||
			!strings.Contains(desc, "48 can be named") || !strings.Contains(desc, mcpfacade.ContextToolName) {
			t.Errorf("record parameter of 48 orders: required %v, %v", schema.Required, rec)
		}
		if a := tools["approve--order"]; !strings.Contains(a.Description, "approval in the page every time") {
			t.Errorf("approve--order does not say it needs a person: %q", a.Description)
		}
	})

	t.Run("call", func(t *testing.T) {
		calls := executorCalls(t, p)
		const note = "Call Friday, from an MCP client"
		r := callTool(t, d, "update_note--order", map[string]any{"record": "SO-1002", "note": note})
		if r.IsError {
			t.Fatalf("update_note--order: %s", r.text())
		}
		s := r.structured(t)
		after, _ := s["after"].(map[string]any)
		recs, _ := after["records"].([]any)
		if len(recs) != 1 || !strings.Contains(fmt.Sprint(recs[0]), note) || s["requestId"] == "" {
			t.Errorf("structured content %v", s)
		}
		// The page changed, as the person sees it.
		if got := noteShown(t, p, "SO-1002"); got != note {
			t.Errorf("SO-1002 shows %q, want %q", got, note)
		}
		if got := executorCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one more", calls, got)
		}
		// And as the agent reads it back.
		r = callTool(t, d, mcpfacade.ContextToolName, map[string]any{"record": "SO-1002"})
		var view struct {
			App     string          `json:"app"`
			Context surface.Context `json:"context"`
		}
		if err := json.Unmarshal(r.StructuredContent, &view); err != nil {
			t.Fatal(err)
		}
		if view.App != "orders" || len(view.Context.Records) != 1 || view.Context.Records[0].Fields["note"] != note {
			t.Errorf("page_context for SO-1002: %+v", view)
		}
	})

	t.Run("business error", func(t *testing.T) {
		before := noteShown(t, p, "SO-1003")
		r := callTool(t, d, "update_note--order", map[string]any{"record": "SO-1003", "note": "locked?"})
		s := r.structured(t)
		if !r.IsError || s["code"] != "ORDER_LOCKED" || s["message"] == "" {
			t.Errorf("isError %v structured %v", r.IsError, s)
		}
		if got := noteShown(t, p, "SO-1003"); got != before {
			t.Errorf("the locked order's note changed to %q", got)
		}
	})

	t.Run("approval pending", func(t *testing.T) {
		r := callTool(t, d, "approve--order", map[string]any{"record": "SO-1005"})
		s := r.structured(t)
		if r.IsError || s["approval"] != "pending" || !strings.Contains(r.text(), "Not done yet") {
			t.Errorf("isError %v structured %v text %q", r.IsError, s, r.text())
		}
		waitPage(t, p, `window.__demo.pendingApprovals().includes("SO-1005")`)
		// The person puts it off; only they could confirm it.
		clickTestID(t, p, "approval-later")
	})

	grant := func(t *testing.T, drop ...string) {
		t.Helper()
		evalPage[bool](t, p, `(document.querySelectorAll('[data-testid="delegation-scopes"] input[type=checkbox]').forEach((b) => { b.checked = true }), true)`)
		for _, id := range drop {
			clickTestID(t, p, "delegation-scope-"+id)
		}
		old := evalPage[string](t, p, `(window.__demo.session() || {}).sessionId || ""`)
		clickTestID(t, p, "delegation-grant")
		waitPage(t, p, `(window.__demo.session() || {}).sessionId !== `+js(old))
	}

	t.Run("list_changed after a scope change", func(t *testing.T) {
		d.drainListChanged()
		grant(t, "update_note@order")
		// A call that changed the page's state spends no read of the list;
		// the next tools/list reads it, or asks for a read that the client
		// hears of as tools/list_changed.
		r := callTool(t, d, "orders-search", map[string]any{"query": ""})
		if r.IsError {
			t.Fatalf("orders.search: %s", r.text())
		}
		tools := listTools(t, d)
		if _, has := tools["update_note--order"]; has {
			d.waitListChanged(t)
			tools = listTools(t, d)
		}
		if _, has := tools["update_note--order"]; has {
			t.Errorf("update_note--order is still listed after the person took it out of scope: %v", toolNames(tools))
		}
		if _, has := tools["approve--order"]; !has {
			t.Errorf("approve--order went too: %v", toolNames(tools))
		}
	})

	t.Run("protocol error", func(t *testing.T) {
		d.drainListChanged()
		clickTestID(t, p, "delegation-revoke")
		waitPage(t, p, `window.__demo.sessionState() === "revoked"`)
		calls := executorCalls(t, p)
		// A refusal is a tool result the model reads, not a JSON-RPC error.
		r := callTool(t, d, "orders-search", map[string]any{"query": "acme"})
		if s := r.structured(t); !r.IsError || s["code"] != string(surface.CodeSessionRevoked) || !strings.Contains(r.text(), "nothing was done") {
			t.Errorf("a call after revocation: isError %v %v %s", r.IsError, s, r.text())
		}
		if got := executorCalls(t, p); got != calls {
			t.Errorf("the executor ran after revocation")
		}
		// The sync after the call finds the session revoked: nothing but
		// the context tool stays listed.
		d.waitListChanged(t)
		if got := toolNames(listTools(t, d)); !slices.Equal(got, []string{mcpfacade.ContextToolName}) {
			t.Errorf("tools after revocation %v", got)
		}
	})

	t.Run("navigation", func(t *testing.T) {
		d.drainListChanged()
		// A reload is a new document with a new demo session: the facade
		// makes a new world there and lists the tools again.
		if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		waitDemoReady(t, p)
		d.waitListChanged(t)
		tools := listTools(t, d)
		if _, has := tools["update_note--order"]; !has {
			t.Fatalf("tools after the reload %v", toolNames(tools))
		}
		r := callTool(t, d, "update_note--order", map[string]any{"record": "SO-1001", "note": "after the reload"})
		if r.IsError {
			t.Fatalf("call after the reload: %s", r.text())
		}
		if got := noteShown(t, p, "SO-1001"); got != "after the reload" {
			t.Errorf("SO-1001 shows %q", got)
		}
	})

	t.Run("close leaves the person's tab open", func(t *testing.T) {
		d.do(t, "close", nil)
		if got := noteShown(t, p, "SO-1001"); got != "after the reload" {
			t.Errorf("the tab is not the same after the facade left: %q", got)
		}
	})
}

// The page transport on its own: a started browser, and a call pending
// while the page navigates away.
func TestMCPPageTransport(t *testing.T) {
	t.Run("started browser", func(t *testing.T) {
		chromium, err := exec.LookPath("chromium")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		page, err := mcpfacade.OpenPage(ctx, mcpfacade.PageOptions{
			URL: siteURL + "/", ExecPath: chromium, Headless: true, NoSandbox: true, App: "orders",
		})
		if err != nil {
			t.Fatal(err)
		}
		// The first requests may go out before the page listens; the
		// client sends them again, with the same id.
		c := client.New(page, client.Options{App: "orders", Timeout: 2 * time.Second, Retries: 20})
		desc, err := c.Describe(ctx, client.DescribeInput{})
		if err != nil {
			t.Fatal(err)
		}
		if desc.App != "orders" || len(desc.Capabilities) != 5 {
			t.Errorf("description app %q with %d capabilities", desc.App, len(desc.Capabilities))
		}
		page.Close()
		select {
		case <-page.Done():
		case <-ctx.Done():
			t.Fatal("the started browser is still attached after Close")
		}
		if _, err := c.Describe(ctx, client.DescribeInput{}); !errors.Is(err, client.ErrClosed) {
			t.Errorf("describe after Close: %v", err)
		}
	})

	t.Run("navigation", func(t *testing.T) {
		br := startMCPBrowser(t)
		url := siteURL + "/?nav=" + randomHex(t, 6)
		p := openMCPDemo(t, br, url)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		var navigated atomic.Int32
		open := func(app string, onNav func()) *mcpfacade.Page {
			page, err := mcpfacade.OpenPage(ctx, mcpfacade.PageOptions{DevTools: br.wsURL, URL: url, App: app, OnNavigated: onNav})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { page.Close() })
			return page
		}
		// No surface on the page is "nobody": its requests wait forever.
		silent := open("nobody", nil)
		orders := open("orders", func() { navigated.Add(1) })
		c := client.New(orders, client.Options{App: "orders"})
		if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
			t.Fatal(err)
		}

		pending := make(chan error, 1)
		go func() {
			_, err := silent.RoundTrip(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"nav-1","method":"describe"}`))
			pending <- err
		}()
		// Give the request time to be posted before the page goes; if it
		// were not, the test would only be weaker, not wrong.
		p.sleep(t, settle)
		if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-pending:
			if !errors.Is(err, client.ErrNavigated) {
				t.Errorf("pending call ended with %v, want ErrNavigated", err)
			}
		case <-ctx.Done():
			t.Fatal("the pending call outlived the navigation")
		}
		waitDemoReady(t, p)
		if navigated.Load() == 0 {
			t.Error("OnNavigated was not called")
		}
		// The next call makes a new world in the new document.
		c2 := client.New(orders, client.Options{App: "orders", Timeout: 2 * time.Second, Retries: 20})
		if _, err := c2.Describe(ctx, client.DescribeInput{}); err != nil {
			t.Fatalf("describe after the reload: %v", err)
		}
		// Closing an attached page leaves the tab to the person.
		orders.Close()
		silent.Close()
		if st := evalPage[string](t, p, `document.querySelector('[data-testid="runtime-status"]').dataset.state`); st != "listening" {
			t.Errorf("the tab after the facade detached: runtime %q", st)
		}
	})

	t.Run("tab closed", func(t *testing.T) {
		br := startMCPBrowser(t)
		url := siteURL + "/?closed=" + randomHex(t, 6)
		tabCtx, cancelTab := chromedp.NewContext(br.ctx)
		defer cancelTab()
		if err := chromedp.Do(tabCtx, chromedp.Navigate(url)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		page, err := mcpfacade.OpenPage(ctx, mcpfacade.PageOptions{DevTools: br.wsURL, URL: url, App: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		defer page.Close()
		c := client.New(page, client.Options{App: "orders", Timeout: 2 * time.Second, Retries: 20})
		if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
			t.Fatal(err)
		}
		cancelTab() // the person closes the tab
		select {
		case <-page.Done():
		case <-ctx.Done():
			t.Fatal("the page transport did not notice that its tab closed")
		}
		if _, err := c.Describe(ctx, client.DescribeInput{}); !errors.Is(err, client.ErrClosed) {
			t.Errorf("describe on a closed tab: %v", err)
		}
	})
}

// serveFacadeHTTP runs pling-mcp over streamable HTTP on a free loopback
// port with args, and returns its endpoint. It is interrupted when the
// test ends, and must stop cleanly.
func serveFacadeHTTP(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	addr := make(chan string, 1)
	var log bytes.Buffer
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if rest, ok := strings.CutPrefix(line, "pling-mcp: serving MCP on "); ok {
				addr <- rest
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt) // this test's own child, by its handle
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("pling-mcp did not stop cleanly on an interrupt: %v", err)
			}
		case <-time.After(testTimeout):
			_ = cmd.Process.Kill()
			<-exited
			t.Error("pling-mcp did not stop on an interrupt")
		}
		logMu.Lock()
		defer logMu.Unlock()
		if t.Failed() {
			t.Logf("pling-mcp stderr:\n%s", log.String())
		}
	})
	var endpoint string
	select {
	case endpoint = <-addr:
	case err := <-exited:
		t.Fatalf("pling-mcp exited: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("pling-mcp never said where it serves")
	}
	return endpoint
}

// The command over streamable HTTP on loopback, called by the go-sdk client.
func TestMCPFacadeOverHTTP(t *testing.T) {
	bin := buildFacade(t)
	br := startMCPBrowser(t)
	url := siteURL + "/?http=" + randomHex(t, 6)
	p := openMCPDemo(t, br, url)

	endpoint := serveFacadeHTTP(t, bin, "-devtools", br.wsURL, "-url", url, "-app", "orders", "-poll", "0")

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "update_note--order") || !slices.Contains(names, mcpfacade.ContextToolName) {
		t.Fatalf("tools over HTTP: %v", names)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_note--order", Arguments: map[string]any{"record": "SO-1004", "note": "over HTTP"}})
	if err != nil || r.IsError {
		t.Fatalf("call over HTTP: %v %+v", err, r)
	}
	if got := noteShown(t, p, "SO-1004"); got != "over HTTP" {
		t.Errorf("SO-1004 shows %q", got)
	}
}

// The README's first command, as an MCP host runs it: the official
// TypeScript client starts `pling-mcp -url URL -app orders` with its default
// environment, which names no display, here as root. The browser must start
// (headless, without its sandbox, each said on stderr) and serve the demo.
func TestMCPFirstCommand(t *testing.T) {
	bin := buildFacade(t)
	dir := tsClientDir(t)
	d := startTSDriver(t, dir)
	var conn struct{ Server struct{ Name string } }
	d.do(t, "connect", map[string]any{"command": bin, "args": []string{"-url", siteURL + "/?first=" + randomHex(t, 6), "-app", "orders"}}).ok(t, &conn)
	if conn.Server.Name != "pling-mcp" {
		t.Fatalf("initialize: %+v", conn)
	}
	var tools map[string]mcpTool
	deadline := time.Now().Add(testTimeout)
	for {
		tools = listTools(t, d)
		if len(tools) > 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // the page may still be loading its surface
	}
	want := []string{"approve--order", "orders-go_to_page", "orders-search", "orders-set_filter", mcpfacade.ContextToolName, "update_note--order"}
	if got := toolNames(tools); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	d.mu.Lock()
	stderr := d.stderr.String()
	d.mu.Unlock()
	if !strings.Contains(stderr, "starts headless") {
		t.Errorf("stderr does not say the browser starts headless: %q", stderr)
	}
}
