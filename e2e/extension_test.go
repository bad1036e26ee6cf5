package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/extensions"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/headless"
)

// extensionTimeout bounds the whole extension scenario in its two tabs: it
// is one person's session with the demo and the panel, step after step.
const extensionTimeout = 4 * time.Minute

// extensionFiles are what `make extension` puts in build/extension.
var extensionFiles = []string{"manifest.json", "background.js", "content.js", "agents.js", "page.js", "panel.html", "panel.js",
	"panel-bounds.js", "panel-call.js", "panel-capabilities.js", "panel-connection.js", "panel-context.js", "panel-describe.js",
	"panel-dom.js", "panel-outcome.js", "panel-state.js", "panel-status.js", "panel-words.js",
	"pling-client.js", "pling-client.classic.js",
	// The client library's modules, which pling-client.js imports.
	"bounds.js", "checks.js", "classify.js", "description.js", "errors.js", "port-channel.js", "reply-size.js",
	"surface-client.js", "window-transport.js"}

// extensionBrowser is a Chromium of its own with the unpacked extension
// loaded: the shared browser of the other tests runs without extensions.
type extensionBrowser struct {
	ctx  context.Context
	id   string // the extension's id, as in chrome-extension://<id>/
	stop func() // closes the browser and waits for it to exit
}

func startExtensionBrowser(t *testing.T) *extensionBrowser {
	t.Helper()
	return startExtensionBrowserIn(t, t.TempDir())
}

// startExtensionBrowserIn is startExtensionBrowser with the profile
// directory profile, and extra allocator options.
func startExtensionBrowserIn(t *testing.T, profile string, extra ...chromedp.ExecAllocatorOption) *extensionBrowser {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "build", "extension"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range extensionFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("the packaged extension is incomplete (%v): run `make extension` first, or `make test-e2e`, which does", err)
		}
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("no chromium on PATH: %v", err)
	}
	// The profile is made before the browser's own cleanup is registered,
	// so it is removed after the browser has exited; t.TempDir fails the
	// test if it cannot remove it.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile, append([]chromedp.ExecAllocatorOption{
		// Debian's Chromium still honours --load-extension; the second flag
		// keeps every other (component) extension out of the way.
		chromedp.Flag("load-extension", dir),
		chromedp.Flag("disable-extensions-except", dir),
		// Lets the tests press the extension's toolbar button
		// (Extensions.triggerAction), which is what grants it a tab.
		chromedp.Flag("enable-unsafe-extension-debugging", true),
	}, extra...)...)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser process to exit
	}
	t.Cleanup(stop)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s with the extension: %v", chromium, err)
	}

	// The extension's service worker shows up as a target once it is loaded.
	deadline := time.Now().Add(60 * time.Second)
	for {
		targets, err := chromedp.Targets(browserCtx)
		if err != nil {
			t.Fatalf("targets: %v", err)
		}
		for _, ti := range targets {
			rest, ok := strings.CutPrefix(ti.URL, "chrome-extension://")
			if ok && ti.Type == "service_worker" && strings.HasSuffix(rest, "/background.js") {
				return &extensionBrowser{ctx: browserCtx, id: strings.TrimSuffix(rest, "/background.js"), stop: stop}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension's service worker never started; targets: %s", brief(fmt.Sprint(targets)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openTab is the harness's openTab in this browser, with the scenario's
// longer deadline.
func (b *extensionBrowser) openTab(t *testing.T, url string) *tab {
	t.Helper()
	tabCtx, cancelTab := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, extensionTimeout)
	p := &tab{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelTab()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, msg := range p.problems {
			t.Errorf("%s reported: %s", url, msg)
		}
	})
	if err := chromedp.Listen(tabCtx, p.onEvent); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	return p
}

// pressAction presses the extension's toolbar button on the tab showing
// pageURL, as a person does: that grants the extension this tab (activeTab),
// the only access it has, and opens the side panel in the tab's window. It
// returns the side panel's target, or "" when closePanel closed it again.
func (b *extensionBrowser) pressAction(t *testing.T, pageURL string, closePanel bool) target.ID {
	t.Helper()
	panels := func() map[target.ID]bool {
		res, err := chromedp.CallBrowser(b.ctx, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "page"}}})
		if err != nil {
			t.Fatalf("targets: %v", err)
		}
		out := map[target.ID]bool{}
		for _, ti := range res.TargetInfos {
			if ti.URL == "chrome-extension://"+b.id+"/panel.html" {
				out[ti.TargetID] = true
			}
		}
		return out
	}
	before := panels()
	res, err := chromedp.CallBrowser(b.ctx, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "tab"}}})
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	var tabs []target.ID
	for _, ti := range res.TargetInfos {
		if ti.URL == pageURL {
			tabs = append(tabs, ti.TargetID)
		}
	}
	if len(tabs) != 1 {
		t.Fatalf("want one tab showing %s, found %d", pageURL, len(tabs))
	}
	if _, err := chromedp.CallBrowser(b.ctx, extensions.TriggerAction, extensions.TriggerActionParams{ID: b.id, TargetID: string(tabs[0])}); err != nil {
		t.Fatalf("press the extension's button on %s: %v", pageURL, err)
	}
	wait := testTimeout
	if closePanel {
		wait = 5 * time.Second // the side panel may be open already
	}
	deadline := time.Now().Add(wait)
	for {
		for id := range panels() {
			if before[id] {
				continue
			}
			if !closePanel {
				return id
			}
			if _, err := chromedp.CallBrowser(b.ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
				t.Fatalf("close the side panel: %v", err)
			}
			return ""
		}
		if time.Now().After(deadline) {
			if closePanel {
				return "" // the side panel was open already
			}
			t.Fatalf("no side panel opened")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openPanel grants the extension the page's tab with its toolbar button,
// then opens the extension page as a tab pinned to that tab, the way a
// person can open it next to the page.
func (b *extensionBrowser) openPanel(t *testing.T, pageURL string) *tab {
	t.Helper()
	return b.openPanelWith(t, pageURL, "")
}

// openPanelWith is openPanel with more of the panel's query (&deadlineMs=).
func (b *extensionBrowser) openPanelWith(t *testing.T, pageURL, query string) *tab {
	t.Helper()
	b.pressAction(t, pageURL, true)
	base := "chrome-extension://" + b.id + "/panel.html"
	// First without a tab: it only reports that it has none, and its
	// chrome.tabs tells which tab shows the demo.
	panel := b.openTab(t, base+"?tab=none")
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "error"`)
	// The extension sees no tab's address; it may run a script only in the
	// tab it was given, so that is how it finds it.
	tabID := evalPage[int](t, panel, `chrome.tabs.query({}).then(async (tabs) => {
		const found = [];
		for (const x of tabs) {
			const href = await chrome.scripting.executeScript({ target: { tabId: x.id }, func: () => location.href }).then((r) => r[0].result, () => "");
			if (href.startsWith(`+js(pageURL)+`)) found.push(x.id);
		}
		if (found.length !== 1) throw new Error("want one granted tab showing the page, found " + found.length);
		return found[0];
	})`)
	if err := chromedp.Do(panel.ctx, chromedp.Navigate(fmt.Sprintf("%s?tab=%d%s", base, tabID, query))); err != nil {
		t.Fatalf("open the panel: %v", err)
	}
	return panel
}

// testID is the CSS selector of a data-testid.
func testID(id string) string {
	return fmt.Sprintf(`[data-testid=%q]`, id)
}

// click clicks an element as a person does (trusted mouse input).
func click(t testing.TB, p *tab, id string) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Click(testID(id))); err != nil {
		t.Fatalf("click %s: %v", id, err)
	}
}

// typeInto empties a field, then types text into it with key events.
func typeInto(t testing.TB, p *tab, id, text string) {
	t.Helper()
	evalPage[bool](t, p, `(document.querySelector(`+js(testID(id))+`).value = "", true)`)
	if err := chromedp.Do(p.ctx, chromedp.SendKeys(testID(id), text)); err != nil {
		t.Fatalf("type into %s: %v", id, err)
	}
}

// shown is what the panel's outcome box shows.
type shown struct {
	Outcome string `json:"outcome"`
	Code    string `json:"code"`
	Title   string `json:"title"`
	Text    string `json:"text"`
}

// invokeFromPanel presses Invoke and waits until the panel shows an outcome.
func invokeFromPanel(t testing.TB, panel *tab) shown {
	t.Helper()
	// The previous outcome is marked so a stale one cannot be read as this one.
	evalPage[bool](t, panel, `(document.querySelector('[data-testid="ext-outcome"]').dataset.outcome = "before-click", true)`)
	click(t, panel, "ext-invoke")
	waitPage(t, panel, `!["before-click", "waiting"].includes(document.querySelector('[data-testid="ext-outcome"]').dataset.outcome)`)
	return panelOutcome(t, panel)
}

func panelOutcome(t testing.TB, panel *tab) shown {
	t.Helper()
	return evalPage[shown](t, panel, `(() => {
		const box = document.querySelector('[data-testid="ext-outcome"]');
		const title = box.querySelector('[data-testid="ext-outcome-title"]');
		return { outcome: box.dataset.outcome, code: box.dataset.code || "", title: title ? title.textContent : "", text: box.textContent };
	})()`)
}

func panelStatus(t testing.TB, panel *tab) (state, text string) {
	t.Helper()
	s := evalPage[[]string](t, panel, `(() => { const s = document.querySelector('[data-testid="ext-status"]'); return [s.dataset.state, s.textContent]; })()`)
	return s[0], s[1]
}

// settledPanelStatus waits until the panel is not looking at its page (its
// status neither "connecting" nor "navigated") and has shown the same status
// for 300 ms, then returns that status read in one evaluation. A tab's load
// completing makes the panel look again, so a status read right after it
// first settles can be the look that follows.
func settledPanelStatus(t testing.TB, panel *tab) (state, text string) {
	t.Helper()
	s := evalPage[[]string](t, panel, `new Promise((resolve) => {
		const read = () => { const s = document.querySelector('[data-testid="ext-status"]'); return [s.dataset.state, s.textContent]; };
		let seen = null, since = 0;
		const look = () => {
			const now = read();
			if (["connecting", "navigated"].includes(now[0])) seen = null;
			else if (!seen || seen[0] !== now[0] || seen[1] !== now[1]) { seen = now; since = Date.now(); }
			else if (Date.now() - since >= 300) return resolve(now);
			setTimeout(look, 25);
		};
		look();
	})`)
	return s[0], s[1]
}

func waitConnected(t testing.TB, panel *tab) {
	t.Helper()
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "connected"`)
}

// selectCapability clicks a capability in the panel's list and waits for its form.
func selectCapability(t testing.TB, panel *tab, id string) {
	t.Helper()
	click(t, panel, "ext-cap-"+id)
	waitPage(t, panel, `!document.querySelector('[data-testid="ext-call"]').hidden && document.querySelector('[data-testid="ext-selected"]').textContent === `+js(id))
}

// useRecord picks a record with the Use button of its row in the panel's records table.
func useRecord(t testing.TB, panel *tab, id string) {
	t.Helper()
	click(t, panel, "ext-use-"+id)
	if got := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-record"]').value`); got != id {
		t.Fatalf("record picker holds %q after choosing %s", got, id)
	}
}

// TestExtension loads the packaged extension into Chromium and uses it as a
// person would: the demo in one tab, the extension page in another, pinned
// to it. Every step clicks and types in the extension page, then checks what
// the extension shows and what the page itself did. The steps run in order
// on one page, as one session.
func TestExtension(t *testing.T) {
	b := startExtensionBrowser(t)
	demo := b.openTab(t, siteURL+"/")
	waitPage(t, demo, `typeof window.__demo === "object"`)
	evalPage[bool](t, demo, `window.__demo.ready.then(() => true)`)
	evalPage[bool](t, demo, `(window.__e2eSamePage = true)`)
	panel := b.openPanel(t, siteURL+"/")
	waitConnected(t, panel)

	t.Run("a description crosses the extension's messaging once", func(t *testing.T) {
		// Messaging between the content script and the panel copies what it
		// carries as JSON: a reply the answer names three times (result,
		// description, envelope) costs three times its size, 3 MiB at the
		// client's 1 MiB bound.
		sizes := evalPage[[]int](t, panel, `chrome.tabs.sendMessage(Number(new URLSearchParams(location.search).get("tab")), { type: "pling.describe", app: "orders" }, { frameId: 0 })
			.then((a) => [JSON.stringify(a).length, JSON.stringify(a.value.outcome.envelope.result).length])`)
		if sizes[1] < 4000 || sizes[0] > sizes[1]+2000 {
			t.Errorf("the panel's answer is %d characters for a description of %d", sizes[0], sizes[1])
		}
	})

	t.Run("lists the capabilities", func(t *testing.T) {
		if app := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-app-name"]').textContent`); !strings.Contains(app, "orders") {
			t.Errorf("app shown as %q: want the orders surface", app)
		}
		// The demo offers a private channel, and the panel uses it by default.
		if tr := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-transport"]').dataset.transport`); tr != "port" {
			t.Errorf("transport %q, want the private channel", tr)
		}
		type capRow struct {
			ID       string `json:"id"`
			Effect   string `json:"effect"`
			Approval string `json:"approval"`
			Badge    bool   `json:"badge"`
		}
		rows := evalPage[[]capRow](t, panel, `[...document.querySelectorAll('[data-testid="ext-capabilities"] button')].map((b) => ({
			id: b.dataset.testid.slice("ext-cap-".length), effect: b.dataset.effect, approval: b.dataset.approval,
			badge: !!b.querySelector('.badge.approval') }))`)
		want := evalPage[[]string](t, demo, `window.__demo.actionIds()`)
		var got []string
		for _, r := range rows {
			got = append(got, r.ID)
			needsApproval := r.Approval != "none"
			if r.Badge != needsApproval {
				t.Errorf("%s: approval %q but approval badge shown = %v", r.ID, r.Approval, r.Badge)
			}
			if r.ID == "approve@order" && (r.Approval != "always" || r.Effect != "write") {
				t.Errorf("approve@order shown as %+v", r)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("panel lists %v, the page offers %v", got, want)
		}
		if s := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-summary"]').textContent`); !strings.Contains(s, "48 records") {
			t.Errorf("summary %q", s)
		}
	})

	t.Run("invokes a folded template and the page changes", func(t *testing.T) {
		const note = "Call back on Friday"
		calls := executorCalls(t, demo)
		audits := auditCount(t, demo)
		selectCapability(t, panel, "update_note@order")
		// The form comes from the schema: the record picker for the
		// template's parameter, then the note.
		if typ := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-field-note"]').dataset.type`); typ != "string" {
			t.Errorf("note field type %q", typ)
		}
		useRecord(t, panel, "SO-1002")
		typeInto(t, panel, "ext-field-note", note)
		got := invokeFromPanel(t, panel)
		if got.Outcome != "success" || !strings.Contains(got.Text, "SO-1002") {
			t.Fatalf("panel shows %+v, want success for SO-1002", got)
		}
		// The page's own table shows the note, and its executor ran once.
		waitPage(t, demo, `document.querySelector('[data-testid="order-note-text-SO-1002"]').textContent === `+js(note))
		if n := executorCalls(t, demo); n != calls+1 {
			t.Errorf("executor calls %d, want %d", n, calls+1)
		}
		// The page audited the call; the extension's own session ids are the page's.
		waitPage(t, demo, fmt.Sprintf(`window.__demo.auditEvents().length > %d`, audits))
		last := evalPage[map[string]any](t, demo, `window.__demo.auditEvents().at(-1)`)
		if last["capability"] != "update_note@order" || last["recordId"] != "SO-1002" || last["outcome"] != "ok" {
			t.Errorf("last audit event %v", last)
		}
		// The extension shows the change the page reported, and folds it into its records.
		after := evalPage[string](t, panel, `(() => { const a = document.querySelector('[data-testid="ext-after"]'); return a.hidden ? "" : a.textContent; })()`)
		if !strings.Contains(after, "SO-1002 note") || !strings.Contains(after, note) {
			t.Errorf("after shown as %q", after)
		}
		if row := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-record-row-SO-1002"]').textContent`); !strings.Contains(row, note) {
			t.Errorf("records table row %q does not show the new note", row)
		}
	})

	t.Run("business error", func(t *testing.T) {
		before := evalPage[string](t, demo, `window.__demo.order("SO-1003").note`)
		calls := executorCalls(t, demo)
		useRecord(t, panel, "SO-1003")
		typeInto(t, panel, "ext-field-note", "This must not stick")
		got := invokeFromPanel(t, panel)
		if got.Outcome != "business-error" || got.Code != "ORDER_LOCKED" || !strings.Contains(got.Title, "Business failure") {
			t.Fatalf("panel shows %+v, want a business failure ORDER_LOCKED", got)
		}
		// The executor ran and refused; the note did not change.
		if n := executorCalls(t, demo); n != calls+1 {
			t.Errorf("executor calls %d, want %d", n, calls+1)
		}
		if after := evalPage[string](t, demo, `window.__demo.order("SO-1003").note`); after != before {
			t.Errorf("SO-1003's note changed from %q to %q", before, after)
		}
		waitPage(t, demo, `[...document.querySelectorAll('[data-testid="toast"]')].some((x) => x.textContent.includes("SO-1003"))`)
	})

	t.Run("protocol error", func(t *testing.T) {
		calls := executorCalls(t, demo)
		selectCapability(t, panel, "orders.go_to_page")
		if typ := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-field-page"]').dataset.type`); typ != "integer" {
			t.Errorf("page field type %q, want integer", typ)
		}
		typeInto(t, panel, "ext-field-page", "99")
		got := invokeFromPanel(t, panel)
		if got.Outcome != "protocol-error" || got.Code != "INVALID_REQUEST" || !strings.Contains(got.Text, "/page") {
			t.Fatalf("panel shows %+v, want INVALID_REQUEST naming /page", got)
		}
		if n := executorCalls(t, demo); n != calls {
			t.Errorf("the executor ran for a request that failed its schema")
		}
		if page := evalPage[int](t, demo, `window.__demo.state().page`); page != 1 {
			t.Errorf("the page moved to page %d", page)
		}
		// A valid page does move the table, and the panel shows the new state.
		typeInto(t, panel, "ext-field-page", "2")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" {
			t.Fatalf("go to page 2: panel shows %+v", got)
		}
		waitPage(t, demo, `document.querySelector('[data-testid="order-row-SO-1009"]') !== null`)
		if after := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-after"]').textContent`); !strings.Contains(after, "state.page") {
			t.Errorf("after shown as %q, want the page change", after)
		}
	})

	t.Run("pages through records", func(t *testing.T) {
		click(t, panel, "ext-records-next")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-record-row-SO-1009"]') !== null`)
		if r := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-records-range"]').textContent`); r != "9–16 of 48" {
			t.Errorf("range %q", r)
		}
		click(t, panel, "ext-records-prev")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-record-row-SO-1001"]') !== null`)
	})

	t.Run("pending approval", func(t *testing.T) {
		const order = "SO-1005"
		if st := evalPage[string](t, demo, `window.__demo.order(`+js(order)+`).status`); st == "awaiting_approval" || st == "approved" {
			t.Fatalf("%s starts as %q", order, st)
		}
		selectCapability(t, panel, "approve@order")
		if meta := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-selected-meta"]').textContent`); !strings.Contains(meta, "Needs approval") {
			t.Errorf("capability details %q do not say it needs approval", meta)
		}
		useRecord(t, panel, order)
		got := invokeFromPanel(t, panel)
		if got.Outcome != "pending-approval" || !strings.Contains(got.Text, "cannot approve") {
			t.Fatalf("panel shows %+v, want a pending approval", got)
		}
		// The page waits for its person: the order and the dialog say so.
		waitPage(t, demo, `window.__demo.order(`+js(order)+`).status === "awaiting_approval"`)
		waitPage(t, demo, `document.querySelector('[data-testid="approval-dialog"]').open && document.querySelector('[data-testid="approval-order"]').textContent === `+js(order))
		// The person confirms in the page; describing again shows it.
		clickTestID(t, demo, "approval-confirm")
		waitPage(t, demo, `window.__demo.order(`+js(order)+`).status === "approved"`)
		click(t, panel, "ext-describe")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "connected" && document.querySelector('[data-testid="ext-record-row-`+order+`"] dd[data-field="status"]').textContent === "approved"`)
	})

	t.Run("revoked session", func(t *testing.T) {
		clickTestID(t, demo, "delegation-revoke")
		waitPage(t, demo, `window.__demo.sessionState() === "revoked"`)
		calls := executorCalls(t, demo)
		note := evalPage[string](t, demo, `window.__demo.order("SO-1002").note`)
		selectCapability(t, panel, "update_note@order")
		useRecord(t, panel, "SO-1002")
		typeInto(t, panel, "ext-field-note", "after the revocation")
		got := invokeFromPanel(t, panel)
		if got.Outcome != "protocol-error" || got.Code != "SESSION_REVOKED" || !strings.Contains(got.Text, "revoked") {
			t.Fatalf("panel shows %+v, want SESSION_REVOKED", got)
		}
		if n := executorCalls(t, demo); n != calls {
			t.Errorf("the executor ran after the revocation")
		}
		if after := evalPage[string](t, demo, `window.__demo.order("SO-1002").note`); after != note {
			t.Errorf("the note changed after the revocation: %q", after)
		}
		// Describing again tells the person too.
		click(t, panel, "ext-describe")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.code === "SESSION_REVOKED"`)
	})

	t.Run("the page switches surfaces", func(t *testing.T) {
		// Open mode makes the page stop its listener and listen with another
		// surface; on the page window the next call simply reaches it.
		click(t, demo, "delegation-open-mode")
		waitPage(t, demo, `window.__demo.openMode === true`)
		audits := auditCount(t, demo)
		selectCapability(t, panel, "update_note@order")
		useRecord(t, panel, "SO-1004")
		typeInto(t, panel, "ext-field-note", "in open mode")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" {
			t.Fatalf("panel shows %+v in open mode", got)
		}
		waitPage(t, demo, `window.__demo.order("SO-1004").note === "in open mode"`)
		// Served by the open-mode surface: audited without a session.
		waitPage(t, demo, fmt.Sprintf(`window.__demo.auditEvents().length > %d`, audits))
		if last := evalPage[map[string]any](t, demo, `window.__demo.auditEvents().at(-1)`); last["sessionId"] != nil || last["recordId"] != "SO-1004" {
			t.Errorf("last audit event %v, want SO-1004 without a session", last)
		}
	})

	t.Run("the page navigates", func(t *testing.T) {
		if !evalPage[bool](t, demo, `window.__e2eSamePage === true`) {
			t.Fatal("the demo page was reloaded before this step")
		}
		if err := chromedp.Do(demo.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		waitPage(t, demo, `typeof window.__demo === "object"`)
		evalPage[bool](t, demo, `window.__demo.ready.then(() => true)`)
		// The panel noticed, then described the new page: a fresh session,
		// so calls work again, and the new page's records.
		waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "connected" &&
			!document.querySelector('[data-testid="ext-record-row-SO-1004"]').textContent.includes("in open mode")`)
		selectCapability(t, panel, "update_note@order")
		useRecord(t, panel, "SO-1006")
		typeInto(t, panel, "ext-field-note", "after reload")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" {
			t.Fatalf("panel shows %+v on the reloaded page", got)
		}
		waitPage(t, demo, `document.querySelector('[data-testid="order-note-text-SO-1006"]').textContent === "after reload"`)
	})

	t.Run("answers come on the private channel", func(t *testing.T) {
		selectCapability(t, panel, "update_note@order")
		useRecord(t, panel, "SO-1007")
		typeInto(t, panel, "ext-field-note", "over the private channel")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" {
			t.Fatalf("panel shows %+v over the private channel", got)
		}
		if tr := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-outcome"]').dataset.transport + (document.querySelector('[data-testid="ext-forgeable"]') ? " forgeable" : "")`); tr != "port" {
			t.Errorf("outcome came on %q, want the private channel and no forgery warning", tr)
		}
		waitPage(t, demo, `document.querySelector('[data-testid="order-note-text-SO-1007"]').textContent === "over the private channel"`)
	})
}

// chooseApp picks an application in the panel's picker.
func chooseApp(t testing.TB, panel *tab, app string) {
	t.Helper()
	waitPage(t, panel, `!document.querySelector('[data-testid="ext-app"]').closest("label").hidden`)
	evalPage[bool](t, panel, `(() => {
		const s = document.querySelector('[data-testid="ext-app"]');
		s.value = `+js(app)+`;
		s.dispatchEvent(new Event("change"));
		return s.value === `+js(app)+`;
	})()`)
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "connected" &&
		document.querySelector('[data-testid="ext-app-name"]').textContent.includes(`+js(app)+`)`)
}

// TestExtensionTwoSurfaces uses the extension on a page with two
// applications: they are told apart by app, a template's own record
// parameter is honoured, a call waiting when the page navigates ends in a
// clear error, and a private channel that demands a credential is refused
// (the extension has none to give).
func TestExtensionTwoSurfaces(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := siteURL + "/e2e/extension-two.html"
	page := b.openTab(t, pageURL)
	waitPage(t, page, `window.__two && window.__two.ready`)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)

	capabilities := func(t testing.TB) []string {
		return evalPage[[]string](t, panel, `[...document.querySelectorAll('[data-testid="ext-capabilities"] button')].map((b) => b.dataset.testid.slice("ext-cap-".length))`)
	}

	t.Run("an invoke that names no app is refused, not run", func(t *testing.T) {
		// Posted on the window as any script of the page could: with two
		// surfaces listening it would reach both, so it is answered once,
		// without app, and runs on neither.
		type reply struct {
			Count int    `json:"count"`
			App   any    `json:"app"`
			Code  string `json:"code"`
		}
		before := evalPage[string](t, page, `document.querySelector('[data-testid="pinned"]').textContent`)
		got := evalPage[reply](t, page, `new Promise((resolve) => {
			const id = "no-app-" + Math.random().toString(36).slice(2);
			const seen = [];
			addEventListener("message", (e) => {
				const d = e.data;
				if (d && d.kind === "response" && d.envelope && d.envelope.id === id) seen.push(d);
			});
			postMessage({ channel: "pling.surface", kind: "request", envelope: { protocol: "pling.surface/0.1", id, method: "invoke", capability: "pin@card", input: { card: "C-3" } } }, location.origin);
			setTimeout(() => resolve({ count: seen.length, app: seen[0] ? (seen[0].app ?? null) : null, code: seen[0] && seen[0].envelope.error ? seen[0].envelope.error.code : "" }), 500);
		})`)
		if got.Count != 1 || got.App != nil || got.Code != "INVALID_REQUEST" {
			t.Errorf("answers %+v, want one INVALID_REQUEST without app", got)
		}
		if after := evalPage[string](t, page, `document.querySelector('[data-testid="pinned"]').textContent`); after != before {
			t.Errorf("pinned %q after a refused call (was %q)", after, before)
		}
	})

	t.Run("apps are told apart", func(t *testing.T) {
		apps := evalPage[[]string](t, panel, `[...document.querySelectorAll('[data-testid="ext-app"] option')].map((o) => o.value).sort()`)
		if strings.Join(apps, ",") != "board,desk" {
			t.Fatalf("app picker offers %v", apps)
		}
		chooseApp(t, panel, "board")
		if got := capabilities(t); strings.Join(got, ",") != "pin@card" {
			t.Errorf("board lists %v", got)
		}
		chooseApp(t, panel, "desk")
		if got := capabilities(t); strings.Join(got, ",") != "desk.wait" {
			t.Errorf("desk lists %v", got)
		}
	})

	t.Run("a template's own record parameter", func(t *testing.T) {
		chooseApp(t, panel, "board")
		selectCapability(t, panel, "pin@card")
		if p := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-record"]').dataset.param`); p != "card" {
			t.Errorf("record parameter %q, want card", p)
		}
		useRecord(t, panel, "C-2")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" || !strings.Contains(got.Text, "C-2 pinned") {
			t.Fatalf("panel shows %+v", got)
		}
		waitPage(t, page, `document.querySelector('[data-testid="pinned"]').textContent === "C-2"`)
		if n := evalPage[int](t, page, `window.__two.deskCalls()`); n != 0 {
			t.Errorf("the desk's executor ran %d times for a board call", n)
		}
	})

	t.Run("a call waiting when the page navigates", func(t *testing.T) {
		chooseApp(t, panel, "desk")
		selectCapability(t, panel, "desk.wait")
		click(t, panel, "ext-invoke")
		// The executor runs and never answers: the call waits.
		waitPage(t, page, `window.__two.deskCalls() === 1`)
		if got := panelOutcome(t, panel); got.Outcome != "waiting" {
			t.Fatalf("panel shows %+v while the call waits", got)
		}
		if err := chromedp.Do(page.ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		waitPage(t, panel, `document.querySelector('[data-testid="ext-outcome"]').dataset.outcome === "client-error"`)
		got := panelOutcome(t, panel)
		// The content script's client fails the call on pagehide and its
		// answer still reaches the panel before the page goes.
		if got.Code != "NAVIGATED" || !strings.Contains(got.Text, "unknown") {
			t.Errorf("panel shows %+v, want NAVIGATED with an unknown effect", got)
		}
		// The panel follows the new page.
		waitPage(t, page, `window.__two && window.__two.ready`)
		waitConnected(t, panel)
	})

	t.Run("a private channel that wants a credential", func(t *testing.T) {
		// The desk refuses a channel without a credential: the panel talks
		// over the page window and says answers there could be forged.
		chooseApp(t, panel, "desk")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-transport"]').dataset.transport === "window"`)
		if text := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-transport"]').textContent`); !strings.Contains(text, "refused") || !strings.Contains(text, "forge") {
			t.Errorf("transport shown as %q", text)
		}
		// The board's channel needs no credential.
		chooseApp(t, panel, "board")
		waitPage(t, panel, `document.querySelector('[data-testid="ext-transport"]').dataset.transport === "port"`)
	})
}
