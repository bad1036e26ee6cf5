package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// hostilePage is the address of the page that answers the protocol itself
// (testdata/foreign/extension-hostile.js), on the test site's origin or on
// another one.
func hostilePage(origin, mode string, n int) string {
	base := origin + "/extension-hostile.html"
	if origin == siteURL {
		base = siteURL + "/e2e/foreign/extension-hostile.html"
	}
	return fmt.Sprintf("%s?mode=%s&n=%d", base, mode, n)
}

// waitFor is waitPage with its own, shorter, deadline: a panel that waits
// for ever fails here instead of passing late.
func waitFor(t testing.TB, p *tab, d time.Duration, expr string) {
	t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`new Promise((resolve, reject) => {
		const deadline = Date.now() + `+fmt.Sprint(d.Milliseconds())+`;
		const look = () => {
			try { if (`+expr+`) return resolve(true); } catch {}
			if (Date.now() > deadline) return reject(new Error("still false after `+d.String()+`"));
			setTimeout(look, 25);
		};
		look();
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("waiting for %s: %v", short(expr), err)
	}
}

// hiddenChars matches what must never reach the panel's text raw: bidi
// overrides and isolates, zero-width characters and controls.
const hiddenChars = `/[\u202A-\u202E\u2066-\u2069\u200B-\u200F\u0000-\u0008\u001B\u007F]/`

// TestExtensionHostilePageText: what a page writes into its description
// reaches the person as the page's words. A right-to-left override in an id
// is shown as a visible mark, not obeyed; an effect string that imitates
// the panel's own badges and trust wording is shown outside any badge; the
// panel's badges come only from the values the protocol defines.
func TestExtensionHostilePageText(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "bidi", 0)
	b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	waitPage(t, panel, `document.querySelector('[data-testid="ext-capabilities"]').dataset.complete === "true"`)

	type view struct {
		RLOText    string   `json:"rloText"`
		BlankText  string   `json:"blankText"`
		Badges     []string `json:"badges"`
		Claim      string   `json:"claim"`
		RawHidden  bool     `json:"rawHidden"`
		Isolated   bool     `json:"isolated"`
		PageTexts  int      `json:"pageTexts"`
		Feedback   string   `json:"feedback"`
		ApproveBtn string   `json:"approveBtn"`
		Signals    int      `json:"signals"`
	}
	v := evalPage[view](t, panel, `(() => {
		const caps = [...document.querySelectorAll('[data-testid="ext-capabilities"] button')];
		const rlo = caps.find((b) => b.dataset.testid.includes("view_order"));
		const approve = caps.find((b) => b.dataset.testid === "ext-cap-approve.all");
		const texts = [...document.querySelectorAll(".page-text")];
		return {
			rloText: rlo.querySelector("code").textContent,
			blankText: caps.find((b) => b.dataset.testid.includes("export")).querySelector("code").textContent,
			badges: [...document.querySelectorAll(".badge")].map((x) => x.textContent),
			claim: (document.querySelector('[data-testid="ext-cap-claim-approve.all"]') || {}).textContent || "",
			rawHidden: `+hiddenChars+`.test(document.body.innerText),
			isolated: texts.every((x) => getComputedStyle(x).unicodeBidi === "isolate" && x.closest(".badge") === null),
			pageTexts: texts.length,
			feedback: document.querySelector('[data-testid="ext-feedback"]').textContent,
			approveBtn: approve.textContent,
			signals: document.querySelectorAll('[data-testid="ext-status"] .page-text, [data-testid="ext-outcome-title"] .page-text, [data-testid="ext-transport"] .page-text').length,
		};
	})()`)
	if v.RLOText != "view_order⟨U+202E⟩eteled_lla" {
		t.Errorf("the id with a right-to-left override reads %q", v.RLOText)
	}
	if v.BlankText != "export⟨U+E0100⟩⟨U+2800⟩.all" {
		t.Errorf("the id with characters that show nothing reads %q", v.BlankText)
	}
	if v.RawHidden {
		t.Error("the panel shows a raw bidi, zero-width or control character")
	}
	if !v.Isolated || v.PageTexts < 4 {
		t.Errorf("page texts isolated = %v (%d of them), and never inside a badge", v.Isolated, v.PageTexts)
	}
	known := map[string]bool{"reads": true, "writes": true, "destructive": true, "may ask a person": true, "needs a person's approval": true, "one record": true, "too large to call here": true, "off screen": true}
	for _, badge := range v.Badges {
		if !known[badge] {
			t.Errorf("a badge reads %q: badges come from a closed set", badge)
		}
	}
	if !strings.Contains(v.Claim, "in the page's words") || !strings.Contains(v.Claim, "verified by Pling") || !strings.Contains(v.Claim, "⟨U+2066⟩") {
		t.Errorf("the page's own effect and approval words are shown as %q", v.Claim)
	}
	if v.Signals != 0 {
		t.Errorf("%d page texts inside the panel's status, outcome title or transport", v.Signals)
	}
	if !strings.Contains(v.Feedback, "⟨U+202E⟩") {
		t.Errorf("feedback shown as %q", v.Feedback)
	}
}

// TestExtensionHostileBounds: a page that sends too much gets a refusal that
// names the bound, never a hang, an empty list or a frozen panel.
func TestExtensionHostileBounds(t *testing.T) {
	b := startExtensionBrowser(t)
	open := func(t *testing.T, mode string, n int) (*tab, *tab) {
		pageURL := hostilePage(siteURL, mode, n)
		p := b.openTab(t, pageURL)
		waitPage(t, p, `window.__hostile !== undefined`)
		return p, b.openPanel(t, pageURL)
	}
	status := func(t *testing.T, panel *tab) (string, string, string) {
		waitPage(t, panel, `!["connecting", "navigated"].includes(document.querySelector('[data-testid="ext-status"]').dataset.state)`)
		s := evalPage[[]string](t, panel, `(() => { const s = document.querySelector('[data-testid="ext-status"]'); return [s.dataset.state, s.dataset.code || "", s.textContent]; })()`)
		return s[0], s[1], s[2]
	}

	t.Run("400,000 capabilities: the reply is over the byte bound", func(t *testing.T) {
		_, panel := open(t, "many", 400000)
		state, code, text := status(t, panel)
		if state != "error" || code != "REPLY_OUT_OF_BOUNDS" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
		if n := evalPage[int](t, panel, `document.querySelectorAll('[data-testid="ext-capabilities"] li').length`); n != 0 {
			t.Errorf("%d capabilities listed", n)
		}
		if got := panelOutcome(t, panel); !strings.Contains(got.Text, "1048576 bytes") {
			t.Errorf("the refusal does not name the bound: %+v", got)
		}
	})

	t.Run("an enum of 1,000,000 values: the reply is over the byte bound", func(t *testing.T) {
		_, panel := open(t, "enum", 1000000)
		if state, code, text := status(t, panel); state != "error" || code != "REPLY_OUT_OF_BOUNDS" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
	})

	t.Run("2,000 capabilities: over the panel's count bound", func(t *testing.T) {
		_, panel := open(t, "many", 2000)
		state, code, text := status(t, panel)
		if state != "error" || code != "BOUND_EXCEEDED" || !strings.Contains(text, "2000 capabilities, more than the 1000") {
			t.Fatalf("status %s %s %q", state, code, text)
		}
	})

	t.Run("1,000 capabilities are listed a chunk at a time", func(t *testing.T) {
		pageURL := hostilePage(siteURL, "many", 1000)
		b.openTab(t, pageURL)
		panel := b.openPanelWith(t, pageURL, "")
		// Count what each DOM change adds to the list from the start.
		evalPage[bool](t, panel, `(() => {
			window.__adds = [document.querySelector('[data-testid="ext-capabilities"]').querySelectorAll("button").length];
			new MutationObserver((records) => { for (const r of records) if (r.target.dataset.testid === "ext-capabilities") window.__adds.push(r.addedNodes.length); })
				.observe(document.querySelector('[data-testid="ext-capabilities"]'), { childList: true });
			return true;
		})()`)
		waitPage(t, panel, `document.querySelector('[data-testid="ext-capabilities"]').dataset.complete === "true"`)
		adds := evalPage[[]int](t, panel, `window.__adds.filter((n, i) => i === 0 || n > 0)`)
		total, most := 0, 0
		for i, n := range adds {
			total += n
			if i > 0 {
				most = max(most, n)
			}
		}
		// The first number is what was there when the observer started.
		if total != 1000 || most > 40 || len(adds) < 20 {
			t.Errorf("the list grew by %v: %d in all, at most %d at a time, want 1000 in chunks of at most 40", adds, total, most)
		}
	})

	t.Run("an enum of 5,000 values: the capability cannot be called here, and says why", func(t *testing.T) {
		_, panel := open(t, "enum", 5000)
		if state, code, text := status(t, panel); state != "connected" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
		selectCapability(t, panel, "pick.one")
		got := evalPage[[]string](t, panel, `[document.querySelector('[data-testid="ext-form-refused"]')?.textContent ?? "", String(document.querySelector('[data-testid="ext-invoke"]').disabled), String(document.querySelectorAll("option").length)]`)
		if !strings.Contains(got[0], "5000 values, more than 1000") || got[1] != "true" {
			t.Errorf("form shows %q, invoke disabled %s", got[0], got[1])
		}
		// The capability next to it still works.
		selectCapability(t, panel, "notes.add")
		typeInto(t, panel, "ext-field-note", "still works")
		if got := invokeFromPanel(t, panel); got.Outcome != "success" {
			t.Errorf("notes.add: %+v", got)
		}
	})

	t.Run("a context without records", func(t *testing.T) {
		_, panel := open(t, "norecords", 0)
		if state, code, text := status(t, panel); state != "connected" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
		if r := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-records-range"]').textContent`); !strings.HasPrefix(r, "No records") {
			t.Errorf("records range %q", r)
		}
	})

	t.Run("60 applications named by 1 MiB each: the panel gets 20 short names", func(t *testing.T) {
		_, panel := open(t, "apps", 60)
		if state, code, text := status(t, panel); state != "connected" {
			t.Fatalf("status %s %s %q %+v", state, code, text, panelOutcome(t, panel))
		}
		// What discovery handed the panel is what its picker holds.
		got := evalPage[[]int](t, panel, `(() => {
			const names = [...document.querySelectorAll('[data-testid="ext-app"] option')].map((o) => o.value);
			return [names.length, names.reduce((n, a) => n + a.length, 0), names.filter((a, i) => a === "app-" + i).length];
		})()`)
		if got[1] > 20*256 {
			t.Fatalf("the panel holds %d characters of app names", got[1])
		}
		if got[0] != 20 || got[2] != 20 {
			t.Errorf("the picker offers %d apps, %d of them app-0 to app-19 in order", got[0], got[2])
		}
	})

	t.Run("applications refusing with codes of 900,000 characters: discovery hands the panel short codes", func(t *testing.T) {
		_, panel := open(t, "appcodes", 20)
		// The panel's own discover ran; ask once more and weigh the answer.
		n := evalPage[int](t, panel, `(async () => {
			const tab = Number(new URLSearchParams(location.search).get("tab"));
			const r = await chrome.tabs.sendMessage(tab, { type: "pling.discover" }, { frameId: 0 });
			return JSON.stringify(r).length;
		})()`)
		if n > 20*300 {
			t.Errorf("discovery handed the panel %d characters", n)
		}
	})

	t.Run("an element named like the content script's marker does not turn the panel away", func(t *testing.T) {
		pageURL := hostilePage(siteURL, "many", 3)
		p := b.openTab(t, pageURL)
		waitPage(t, p, `window.__hostile !== undefined`)
		evalPage[bool](t, p, `(() => { const d = document.createElement("div"); d.id = "__plingExtensionContent"; document.body.append(d); return true; })()`)
		panel := b.openPanel(t, pageURL)
		if state, code, text := status(t, panel); state != "connected" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
	})

	t.Run("a 50 MB describe is refused naming the bound, and not asked for again", func(t *testing.T) {
		p, panel := open(t, "huge", 50<<20)
		state, code, text := status(t, panel)
		if state != "error" || code != "REPLY_OUT_OF_BOUNDS" {
			t.Fatalf("status %s %s %q", state, code, text)
		}
		// An answer, even a refused one, is not asked for again.
		asked := evalPage[int](t, p, `window.__hostile.describe`)
		time.Sleep(1500 * time.Millisecond)
		if n := evalPage[int](t, p, `window.__hostile.describe`); n != asked {
			t.Errorf("the page was asked to describe itself %d times after the refusal (%d before)", n-asked, asked)
		}
	})
}

// TestExtensionHostileBusyPage: a page that freezes its thread when an
// invoke arrives freezes the content script's timers with it. The panel
// keeps its own deadline and says the call's effect is unknown.
func TestExtensionHostileBusyPage(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "busy", 60000)
	b.openTab(t, pageURL)
	panel := b.openPanelWith(t, pageURL, "&deadlineMs=3000")
	waitConnected(t, panel)
	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "freeze")
	click(t, panel, "ext-invoke")
	// The page stays frozen for a minute; the panel answers long before.
	waitFor(t, panel, 20*time.Second, `document.querySelector('[data-testid="ext-outcome"]').dataset.outcome === "client-error"`)
	got := panelOutcome(t, panel)
	if got.Code != "TIMEOUT" || !strings.Contains(got.Text, "unknown") {
		t.Errorf("panel shows %+v, want TIMEOUT with an unknown effect", got)
	}
}

// TestExtensionHostileTransport: on the private channel (the default where
// the page offers one) answers reach the extension only; a page that
// refuses it is talked to over the window, where a page script can answer
// in the surface's place, and the panel says so next to the answer.
func TestExtensionHostileTransport(t *testing.T) {
	b := startExtensionBrowser(t)
	for _, tc := range []struct {
		mode, want, transport string
		forgeable             bool
	}{
		{"plain", "done", "port", false},
		{"window-only", "done (forged by a page script)", "window", true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			pageURL := hostilePage(siteURL, tc.mode, 0)
			p := b.openTab(t, pageURL)
			panel := b.openPanel(t, pageURL)
			waitConnected(t, panel)
			selectCapability(t, panel, "notes.add")
			typeInto(t, panel, "ext-field-note", "hello")
			got := invokeFromPanel(t, panel)
			if got.Outcome != "success" || !strings.Contains(got.Text, tc.want) {
				t.Fatalf("panel shows %+v", got)
			}
			forgeable := evalPage[bool](t, panel, `document.querySelector('[data-testid="ext-forgeable"]') !== null`)
			if forgeable != tc.forgeable {
				t.Errorf("forgery warning shown = %v, want %v", forgeable, tc.forgeable)
			}
			if via := evalPage[string](t, p, `window.__hostile.invokes[0].via`); via != tc.transport {
				t.Errorf("the invoke came on %q, want %q", via, tc.transport)
			}
		})
	}
}

// TestExtensionDraftsStayWithTheirOrigin: a note typed for one page is not
// sent to the page the tab navigates to. The panel clears the form and says
// so, loses the tab (the person's grant was for the first page), and after
// the person grants the new page, names its origin next to Invoke.
func TestExtensionDraftsStayWithTheirOrigin(t *testing.T) {
	b := startExtensionBrowser(t)
	first := hostilePage(siteURL, "plain", 0)
	p := b.openTab(t, first)
	panel := b.openPanel(t, first)
	waitConnected(t, panel)
	if o := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-invoke-origin"] code').textContent`); o != siteURL {
		t.Errorf("Invoke sends to %q, want %q", o, siteURL)
	}
	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "meant for the first page")

	other := foreignURLs["cross-site"]
	second := hostilePage(other, "plain", 0)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(second)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, panel, `!document.querySelector('[data-testid="ext-notice"]').hidden`)
	type form struct {
		Notice   string `json:"notice"`
		Hidden   bool   `json:"hidden"`
		Fields   int    `json:"fields"`
		Disabled bool   `json:"disabled"`
	}
	f := evalPage[form](t, panel, `({
		notice: document.querySelector('[data-testid="ext-notice"]').textContent,
		hidden: document.querySelector('[data-testid="ext-call"]').hidden,
		fields: document.querySelectorAll('[data-testid="ext-form"] [data-name]').length,
		disabled: document.querySelector('[data-testid="ext-invoke"]').disabled,
	})`)
	if !strings.Contains(f.Notice, "form was cleared") || !f.Hidden || f.Fields != 0 || !f.Disabled {
		t.Errorf("after navigating away the form is %+v", f)
	}
	// The grant was for the first page: the panel says it cannot read this one.
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "not-scriptable"`)
	if _, text := panelStatus(t, panel); !strings.Contains(text, "Press the Pling button") {
		t.Errorf("status %q", text)
	}
	// The person grants the new page (the panel reads it at once); the call
	// would go to its origin.
	b.pressAction(t, second, true)
	waitConnected(t, panel)
	if o := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-invoke-origin"] code').textContent`); o != other {
		t.Errorf("Invoke sends to %q, want %q", o, other)
	}
	if !evalPage[bool](t, panel, `document.querySelector('[data-testid="ext-call"]').hidden`) {
		t.Error("a capability is still selected on the new page")
	}
	if n := evalPage[int](t, p, `window.__hostile.invoke`); n != 0 {
		t.Errorf("the second page received %d invokes", n)
	}
}

// attachTarget drives an existing target (the side panel) as a tab.
func (b *extensionBrowser) attachTarget(t *testing.T, id target.ID) *tab {
	t.Helper()
	tabCtx, cancelTab := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("attach to %s: %v", id, err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, extensionTimeout)
	p := &tab{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelTab()
	})
	return p
}

// attachURL drives the one page target showing url.
func (b *extensionBrowser) attachURL(t *testing.T, url string) *tab {
	t.Helper()
	res, err := chromedp.CallBrowser(b.ctx, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "page"}}})
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	var found []target.ID
	for _, ti := range res.TargetInfos {
		if ti.URL == url {
			found = append(found, ti.TargetID)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one page showing %s, found %d", url, len(found))
	}
	return b.attachTarget(t, found[0])
}

// TestExtensionSidePanelFollowsItsWindow: the side panel shows the active
// tab of its own window. A second window taking focus changes nothing; a
// tab opened in its own window that the person has not granted is named as
// one the extension cannot read.
func TestExtensionSidePanelFollowsItsWindow(t *testing.T) {
	b := startExtensionBrowser(t)
	first := hostilePage(siteURL, "plain", 0)
	b.openTab(t, first)
	side := b.attachTarget(t, b.pressAction(t, first, false))
	waitConnected(t, side)
	own := evalPage[int](t, side, `chrome.windows.getCurrent().then((w) => w.id)`)

	// Another window opens and takes focus, showing a page with a surface.
	other := hostilePage(foreignURLs["cross-site"], "plain", 0)
	evalPage[bool](t, side, `chrome.windows.create({ url: `+js(other)+`, focused: true }).then(() => true)`)
	time.Sleep(2 * time.Second) // what a panel following the focus would do, it does by now
	if n := evalPage[int](t, b.attachURL(t, other), `window.__hostile.describe`); n != 0 {
		t.Errorf("the side panel asked the other window's page to describe itself %d times", n)
	}
	// The panel may be looking at its own tab again (its load completing
	// after the first connect asks for that); once that look is over it
	// must still be connected to its own window's page.
	if state, text := settledPanelStatus(t, side); state != "connected" {
		t.Errorf("after another window took focus the side panel shows %s %q", state, text)
	}
	if o := evalPage[string](t, side, `document.querySelector('[data-testid="ext-invoke-origin"] code').textContent`); o != siteURL {
		t.Errorf("the side panel now sends to %q, want its own window's %q", o, siteURL)
	}

	// A new tab in the panel's own window: followed, and named as one the
	// extension may not read. The panel looks at it when it becomes active
	// and again when its load completes; the status is read after both.
	evalPage[bool](t, side, fmt.Sprintf(`chrome.tabs.create({ windowId: %d, url: %s, active: true }).then(async (tab) => {
		while ((await chrome.tabs.get(tab.id)).status !== "complete") await new Promise((r) => setTimeout(r, 25));
		return true;
	})`, own, js(hostilePage(siteURL, "plain", 1))))
	if state, text := settledPanelStatus(t, side); state != "not-scriptable" || !strings.Contains(text, "may not read this page") {
		t.Errorf("status %s %q", state, text)
	}
}

// TestExtensionPanelLayout measures the panel at the side panel's common
// widths with the demo: nothing scrolls sideways, nothing sticks out, the
// record fields and the Invoke row keep readable widths. Screenshots go to
// build/screenshots/.
func TestExtensionPanelLayout(t *testing.T) {
	b := startExtensionBrowser(t)
	demo := b.openTab(t, siteURL+"/")
	waitPage(t, demo, `typeof window.__demo === "object"`)
	evalPage[bool](t, demo, `window.__demo.ready.then(() => true)`)
	panel := b.openPanel(t, siteURL+"/")
	waitConnected(t, panel)
	selectCapability(t, panel, "update_note@order")
	useRecord(t, panel, "SO-1002")
	typeInto(t, panel, "ext-field-note", "Call back on Friday")
	if got := invokeFromPanel(t, panel); got.Outcome != "success" {
		t.Fatalf("invoke: %+v", got)
	}
	dir := filepath.Join("..", "build", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type layout struct {
		ScrollWidth int      `json:"scrollWidth"`
		Width       int      `json:"width"`
		Outside     []string `json:"outside"`
		Invoke      float64  `json:"invoke"`
		SendsTo     float64  `json:"sendsTo"`
		Value       float64  `json:"value"`
		Capability  float64  `json:"capability"`
		List        float64  `json:"list"`
		HiddenShown []string `json:"hiddenShown"`
	}
	for _, w := range []int64{320, 400, 560} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			if _, err := chromedp.Call(panel.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: 1400, DeviceScaleFactor: 1}); err != nil {
				t.Fatal(err)
			}
			l := evalPage[layout](t, panel, `new Promise((r) => requestAnimationFrame(() => r((() => {
				window.scrollTo(0, 0);
				const W = document.documentElement.clientWidth;
				const outside = [...document.querySelectorAll("body *")].filter((e) => {
					const b = e.getBoundingClientRect();
					return b.width > 0 && b.right > W + 0.5 && !e.closest("pre, details:not([open])");
				}).map((e) => e.tagName + "." + e.className + "[" + (e.dataset.testid || "") + "]");
				const w = (sel) => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().width : -1; };
				return {
					scrollWidth: document.documentElement.scrollWidth, width: W, outside,
					invoke: w('[data-testid="ext-invoke"]'), sendsTo: w('[data-testid="ext-invoke-origin"]'),
					value: w('[data-testid="ext-record-row-SO-1002"] dd[data-field="note"]'),
					capability: w('[data-testid="ext-cap-update_note@order"]'), list: w('[data-testid="ext-capabilities"]'),
					hiddenShown: [...document.querySelectorAll("[hidden]")].filter((e) => getComputedStyle(e).display !== "none").map((e) => e.tagName + "." + e.className),
				};
			})())))`)
			// The demo has one app: no app picker. Nothing hidden is shown.
			if len(l.HiddenShown) > 0 {
				t.Errorf("hidden but shown: %v", l.HiddenShown)
			}
			if l.ScrollWidth > l.Width {
				t.Errorf("scrolls sideways: %d > %d", l.ScrollWidth, l.Width)
			}
			if len(l.Outside) > 0 {
				t.Errorf("sticking out of %d px: %v", l.Width, l.Outside)
			}
			if l.Invoke < 60 || l.SendsTo < 100 || l.Value < 120 || l.Capability < l.List-1 {
				t.Errorf("widths at %d px: %+v", w, l)
			}
			shot, err := chromedp.Call(panel.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("extension-panel-%d.png", w)), shot.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestExtensionHostileFieldNames: the page names the members of its input
// schemas, and the panel builds form controls from them. Named controls
// shadow their form's own properties (form.append, form.querySelectorAll,
// form.replaceChildren), so members named after those once broke the form:
// it stopped rendering, kept the last page's fields through a navigation
// and showed them under the next page's capability. A member named
// __proto__ was dropped from the input. Whatever the names, every member
// gets its field, each call sends what was typed, and a navigation clears
// the form.
func TestExtensionHostileFieldNames(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "fieldnames", 0)
	p := b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	fields := func() []string {
		return evalPage[[]string](t, panel, `[...document.querySelectorAll('[data-testid="ext-form"] input, [data-testid="ext-form"] select, [data-testid="ext-form"] textarea')].map((c) => c.dataset.testid)`)
	}
	names := []string{"note", "append", "querySelectorAll", "replaceChildren", "__proto__"}

	selectCapability(t, panel, "form.names")
	if got := fields(); len(got) != len(names) {
		t.Fatalf("form.names has fields %v, want one for each of %v", got, names)
	}
	for _, n := range names {
		typeInto(t, panel, "ext-field-"+n, "v-"+n)
	}
	if got := invokeFromPanel(t, panel); got.Outcome != "success" {
		t.Fatalf("form.names: %+v", got)
	}
	sent := evalPage[[]string](t, p, `(() => { const i = window.__hostile.invokes[0].input; return Object.keys(i).sort().map((k) => k + "=" + i[k]); })()`)
	want := []string{"__proto__=v-__proto__", "append=v-append", "note=v-note", "querySelectorAll=v-querySelectorAll", "replaceChildren=v-replaceChildren"}
	if strings.Join(sent, ",") != strings.Join(want, ",") {
		t.Errorf("the page received %v, want %v", sent, want)
	}

	// The capability beside it gets its own form, and sends only its own member.
	selectCapability(t, panel, "notes.add")
	if got := fields(); len(got) != 1 || got[0] != "ext-field-note" {
		t.Fatalf("notes.add has fields %v, want only ext-field-note", got)
	}
	typeInto(t, panel, "ext-field-note", "only this")
	if got := invokeFromPanel(t, panel); got.Outcome != "success" {
		t.Fatalf("notes.add: %+v", got)
	}
	if got := evalPage[string](t, p, `JSON.stringify(window.__hostile.invokes[1])`); got != `{"capability":"notes.add","input":{"note":"only this"},"via":"port"}` {
		t.Errorf("the page received %s", got)
	}

	// A draft for form.names is cleared by a navigation, and never shown
	// under the next page's capability.
	selectCapability(t, panel, "form.names")
	typeInto(t, panel, "ext-field-replaceChildren", "typed for the first page")
	next := hostilePage(siteURL, "plain", 1)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(next)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, panel, `!document.querySelector('[data-testid="ext-notice"]').hidden`)
	if got := fields(); len(got) != 0 {
		t.Errorf("after the navigation the form still has %v", got)
	}
	waitConnected(t, panel)
	selectCapability(t, panel, "notes.add")
	if got := fields(); len(got) != 1 || got[0] != "ext-field-note" {
		t.Errorf("on the next page notes.add has fields %v, want only ext-field-note", got)
	}
}

// watchStalls starts timing p's thread: the function it returns reports
// the longest the thread went without running a 20 ms timer since then.
func watchStalls(t *testing.T, p *tab) func() float64 {
	t.Helper()
	evalPage[bool](t, p, `(() => {
		let last = performance.now();
		window.__gap = 0;
		setInterval(() => { const now = performance.now(); window.__gap = Math.max(window.__gap, now - last); last = now; }, 20);
		return true;
	})()`)
	return func() float64 { return evalPage[float64](t, p, `window.__gap`) }
}

// TestExtensionHostileAfterList: an invoke's after-observation is the
// page's, within the client's 1 MiB. The panel folds it into the records
// it shows; it once looked each reported record up in every record of
// the last description, so 30,000 records described and 30,000 changes
// reported (about 1 MB in all) froze the panel for minutes, O(n·m). The
// panel's thread now never stops for long, and the change to a shown
// record is shown.
func TestExtensionHostileAfterList(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "afterflood", 30000)
	b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "folded")
	longestStall := watchStalls(t, panel)
	if got := invokeFromPanel(t, panel); got.Outcome != "success" {
		t.Fatalf("notes.add: %+v", got)
	}
	waitPage(t, panel, `document.querySelector('[data-testid="ext-record-row-R-1"] dd[data-field="note"]').textContent === "folded"`)
	time.Sleep(100 * time.Millisecond)
	if gap := longestStall(); gap > 1000 {
		t.Errorf("the panel's thread stopped for %.0f ms while it read the changes", gap)
	}
}

// TestExtensionHostileDeepJSON: the panel shows the page's state and the
// reply envelope as indented JSON, cut at 20,000 characters. Indentation
// grows with depth, so 4,000 arrays nested 118 deep, under 1 MB and within
// the client's bounds, are 130 million characters indented: the panel
// once wrote all of them before cutting, for seconds on its thread. It
// now stops writing at the cut.
func TestExtensionHostileDeepJSON(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "deep", 4000)
	b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	longestStall := watchStalls(t, panel)
	// Described again with the clock running, then invoked.
	evalPage[bool](t, panel, `(document.querySelector('[data-testid="ext-state"]').textContent = "", true)`)
	click(t, panel, "ext-describe")
	waitPage(t, panel, `document.querySelector('[data-testid="ext-state"]').textContent.length > 0`)
	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "deep")
	if got := invokeFromPanel(t, panel); got.Outcome != "success" {
		t.Fatalf("notes.add: %+v", got)
	}
	time.Sleep(100 * time.Millisecond)
	texts := evalPage[[]string](t, panel, `[document.querySelector('[data-testid="ext-state"]').textContent, document.querySelector('[data-testid="ext-response"]').textContent]`)
	for i, text := range texts {
		// 20,000 characters of JSON, indented on lines of its own.
		if len(text) > 25000 || !strings.Contains(text, "\"deep\": [\n") || strings.Contains(text, "⟨U+000A⟩") || !strings.Contains(text, "more characters") {
			t.Errorf("shown text %d: %d characters, starting %q", i, len(text), short(text))
		}
	}
	if gap := longestStall(); gap > 1000 {
		t.Errorf("the panel's thread stopped for %.0f ms while it showed the page's JSON", gap)
	}
}

// TestExtensionHostileCodes: a protocol failure's code is the page's
// string. It must not reach the panel's own words: the status line once
// took a paging refusal's code raw and whole (an override and 5,000
// characters written as the panel's status), and the outcome's hint was
// looked up by the code, so "constructor" showed the source of Object as
// the panel's hint.
func TestExtensionHostileCodes(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "codes", 0)
	b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)

	click(t, panel, "ext-records-next")
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "error"`)
	status := evalPage[[]string](t, panel, `(() => { const s = document.querySelector('[data-testid="ext-status"]'); return [s.textContent, String(`+hiddenChars+`.test(s.textContent)), String(s.querySelectorAll(".page-text").length)]; })()`)
	if len(status[0]) > 300 || status[1] != "false" || status[2] != "0" || strings.Contains(status[0], "Connected to the page") {
		t.Errorf("status after a refused page of records: %q (%d characters), hidden %s, page texts %s", short(status[0]), len(status[0]), status[1], status[2])
	}
	if got := panelOutcome(t, panel); !strings.Contains(got.Text, "⟨U+202E⟩Connected") || !strings.Contains(got.Text, "more characters") {
		t.Errorf("the refusal's code is not shown as the page's words under Result: %q", short(got.Text))
	}

	selectCapability(t, panel, "notes.add")
	for _, code := range []string{"constructor", "__proto__"} {
		typeInto(t, panel, "ext-field-note", code)
		got := invokeFromPanel(t, panel)
		if got.Outcome != "protocol-error" || got.Code != code || strings.Contains(got.Text, "native code") || strings.Contains(got.Text, "[object") || !strings.Contains(got.Text, "The page did not run the call.") {
			t.Errorf("refused with %s, the panel shows %+v", code, got)
		}
	}
}

// TestExtensionPanelWords: every piece of the page's text in the panel is
// visibly the page's, and every sentence of the panel's is true. The
// page's title, written in the panel's voice, is labelled as the page's;
// ids that differ only in case, or mix scripts, are flagged; a reply the
// extension refused is labelled as the extension's refusal, not in the
// page's words; after a cross-origin navigation the header no longer shows
// the old origin and title.
func TestExtensionPanelWords(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "words", 0)
	p := b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	waitPage(t, panel, `document.querySelector('[data-testid="ext-capabilities"]').dataset.complete === "true"`)

	header := evalPage[string](t, panel, `document.querySelector('[data-testid="ext-target"]').textContent`)
	if !strings.Contains(header, "in the page's words: Private channel") {
		t.Errorf("the header shows the page's title unmarked: %q", header)
	}
	look := evalPage[map[string]string](t, panel, `Object.fromEntries([...document.querySelectorAll('[data-testid="ext-capabilities"] button')].map((b) => [b.dataset.testid, (b.querySelector(".lookalike") || {}).textContent || ""]))`)
	if !strings.Contains(look["ext-cap-\u0430pprove"], "mixes scripts (Cyrillic, Latin)") {
		t.Errorf("the Cyrillic look-alike is not flagged: %q", look)
	}
	for _, id := range []string{"approve", "Approve"} {
		if !strings.Contains(look["ext-cap-"+id], "only in letter case") {
			t.Errorf("%s is not flagged as differing only in case: %q", id, look["ext-cap-"+id])
		}
	}
	if look["ext-cap-notes.add"] != "" {
		t.Errorf("notes.add is flagged: %q", look["ext-cap-notes.add"])
	}

	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "hello")
	got := invokeFromPanel(t, panel)
	if got.Code != "MALFORMED_RESPONSE" || strings.Contains(got.Text, "in the page's words") || !strings.Contains(got.Text, "the extension's own") {
		t.Errorf("the extension's own refusal of a reply reads %+v", got)
	}

	other := foreignURLs["cross-site"]
	if err := chromedp.Do(p.ctx, chromedp.Navigate(hostilePage(other, "plain", 0))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, panel, `document.querySelector('[data-testid="ext-status"]').dataset.state === "not-scriptable"`)
	header = evalPage[string](t, panel, `document.querySelector('[data-testid="ext-target"]').textContent`)
	if strings.Contains(header, siteURL) || strings.Contains(header, "verified by Pling") {
		t.Errorf("after a cross-origin navigation the header still reads %q", header)
	}
}

// TestExtensionPanelSaysWhoClosed: after a call timed out on the private
// channel the content script closes the channel; the panel says the
// extension closed it, not the page.
func TestExtensionPanelSaysWhoClosed(t *testing.T) {
	b := startExtensionBrowser(t)
	pageURL := hostilePage(siteURL, "busy", 1) // never answers an invoke
	b.openTab(t, pageURL)
	panel := b.openPanel(t, pageURL)
	waitConnected(t, panel)
	selectCapability(t, panel, "notes.add")
	typeInto(t, panel, "ext-field-note", "unanswered")
	click(t, panel, "ext-invoke")
	waitFor(t, panel, 60*time.Second, `document.querySelector('[data-testid="ext-status"]').dataset.state === "closed"`)
	if _, text := panelStatus(t, panel); strings.Contains(text, "page's surface closed") || !strings.Contains(text, "extension closed") {
		t.Errorf("after the extension closed the channel the panel says %q", text)
	}
}
