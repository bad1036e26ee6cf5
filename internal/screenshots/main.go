//go:build !(js || wasip1)

// Command screenshots takes the README's pictures from the current build in
// headless Chromium, so they show what `make demo` and `make extension`
// produce today rather than what they once looked like:
//
//	make screenshots   # builds the site and the extension, then runs this
//	go run ./internal/screenshots -site build/site -extension build/extension -out docs/img
//
// It serves the site on a free loopback port, starts Chromium with WebMCP
// and the unpacked extension, and uses the demo as a person would: the
// agent console describes, updates a note and asks for an approval, which is
// left pending. Then it opens the extension's panel for the demo's tab,
// updates a note from there, and writes demo.png and extension-panel.png.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/extensions"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/headless"
)

// Window sizes: a common desktop for the page, and the width of a browser
// side panel for the extension.
const (
	pageWidth   = 1440
	pageHeight  = 900
	panelWidth  = 420
	panelHeight = 1100
)

func main() {
	site := flag.String("site", "build/site", "the assembled demo site (make site)")
	ext := flag.String("extension", "build/extension", "the unpacked extension (make extension)")
	out := flag.String("out", "docs/img", "where the PNG files go")
	flag.Parse()
	if err := run(*site, *ext, *out); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(site, ext, out string) error {
	// surface.wasm has a content-hashed name (internal/sitebuild).
	for _, f := range []string{filepath.Join(site, "index.html"), filepath.Join(site, "pling", "surface.*.wasm")} {
		if m, _ := filepath.Glob(f); len(m) == 0 {
			return fmt.Errorf("%s is missing: run `make site` first, or `make screenshots`, which does", f)
		}
	}
	extDir, err := filepath.Abs(ext)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(extDir, "manifest.json")); err != nil {
		return fmt.Errorf("%s has no manifest.json: run `make extension` first, or `make screenshots`, which does", extDir)
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return errors.New("no chromium on PATH: run `make chromium` (Debian's package) first")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: devserver.Handler(site), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	defer srv.Close()
	pageURL := "http://" + ln.Addr().String() + "/"

	profile, err := os.MkdirTemp("", "pling-screenshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-device-scale-factor", "1"),
		// The page's tools show in its top bar only where WebMCP exists.
		chromedp.Flag("enable-features", "WebMCPTesting"),
		chromedp.Flag("load-extension", extDir),
		chromedp.Flag("disable-extensions-except", extDir),
		// Lets this program press the extension's toolbar button
		// (Extensions.triggerAction), which is what grants it the tab.
		chromedp.Flag("enable-unsafe-extension-debugging", true),
	)...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(browser, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return fmt.Errorf("start %s: %w", chromium, err)
	}

	// The demo's tab stays open: the panel is opened for it.
	demoTab, closeDemo := chromedp.NewContext(ctx)
	defer closeDemo()
	demo, err := demoShot(demoTab, pageURL)
	if err != nil {
		return fmt.Errorf("demo page: %w", err)
	}
	if err := writePNG(filepath.Join(out, "demo.png"), demo); err != nil {
		return err
	}
	panel, err := panelShot(ctx, browser, pageURL)
	if err != nil {
		return fmt.Errorf("extension panel: %w", err)
	}
	return writePNG(filepath.Join(out, "extension-panel.png"), panel)
}

// demoShot drives the page's own agent console in tab, then captures the
// whole page.
func demoShot(tab context.Context, pageURL string) ([]byte, error) {
	err := chromedp.Do(tab,
		chromedp.EmulateViewport(pageWidth, pageHeight),
		chromedp.Navigate(pageURL),
		waitJS(`window.__demo && window.__demo.ready.then(() => true)`),
		waitJS(`document.querySelector('[data-testid="webmcp-status"]').dataset.state === "on"`),
		click("console-describe"),
		waitJS(`document.querySelector('[data-testid="console-outcome"]').dataset.outcome === "success"`),
	)
	if err != nil {
		return nil, err
	}
	if err := consoleInvoke(tab, "update_note@order", "SO-1002", map[string]string{"note": "Customer asked for a call back before Friday"}, "success"); err != nil {
		return nil, err
	}
	if err := consoleInvoke(tab, "approve@order", "SO-1005", nil, "pending-approval"); err != nil {
		return nil, err
	}
	err = chromedp.Do(tab,
		// The dialog would cover the table: the person decides later.
		waitJS(`document.querySelector('[data-testid="approval-dialog"]').open`),
		click("approval-later"),
		// Let the row flash of the agent's change fade.
		chromedp.Sleep(2*time.Second),
	)
	if err != nil {
		return nil, err
	}
	return chromedp.Run(tab, chromedp.FullScreenshot(100))
}

// consoleInvoke picks a capability and a record in the agent console, fills
// in fields, presses Invoke and waits for the outcome.
func consoleInvoke(tab context.Context, capability, record string, fields map[string]string, outcome string) error {
	set := fmt.Sprintf(`(() => {
	  const pick = (id, value) => {
	    const e = document.querySelector('[data-testid="' + id + '"]');
	    e.value = value;
	    e.dispatchEvent(new Event(e.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
	    if (e.value !== value) throw new Error(id + " has no " + value);
	  };
	  pick("console-capability", %q);
	  pick("console-record", %q);
	  const fields = %s;
	  for (const [k, v] of Object.entries(fields)) pick("console-field-" + k, v);
	})()`, capability, record, jsonObject(fields))
	return chromedp.Do(tab,
		chromedp.Evaluate[chromedp.Void](set),
		click("console-invoke"),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid="console-outcome"]').dataset.outcome === %q`, outcome)),
	)
}

// panelShot grants the extension the demo's tab with its toolbar button, as
// a person does, opens its panel for that tab at a side panel's width, and
// updates a note from it.
func panelShot(ctx, browser context.Context, pageURL string) ([]byte, error) {
	id, err := extensionID(ctx, browser)
	if err != nil {
		return nil, err
	}
	if err := pressAction(browser, id, pageURL); err != nil {
		return nil, err
	}
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	base := "chrome-extension://" + id + "/panel.html"
	if err := chromedp.Do(tab, chromedp.EmulateViewport(panelWidth, panelHeight), chromedp.Navigate(base+"?tab=none")); err != nil {
		return nil, err
	}
	// The extension sees no tab's address; it may run a script only in the
	// tab it was granted, so that is how it finds the demo's.
	tabID, err := chromedp.Run(tab, chromedp.Evaluate[int](fmt.Sprintf(`chrome.tabs.query({}).then(async (tabs) => {
	  const found = [];
	  for (const x of tabs) {
	    const href = await chrome.scripting.executeScript({ target: { tabId: x.id }, func: () => location.href }).then((r) => r[0].result, () => "");
	    if (href.startsWith(%q)) found.push(x.id);
	  }
	  if (found.length !== 1) throw new Error("want one granted tab showing the demo, found " + found.length);
	  return found[0];
	})`, pageURL), chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, err
	}
	err = chromedp.Do(tab,
		chromedp.Navigate(fmt.Sprintf("%s?tab=%d", base, tabID)),
		waitJS(`document.querySelector('[data-testid="ext-status"]').dataset.state === "connected"`),
		click("ext-cap-update_note@order"),
		waitJS(`!document.querySelector('[data-testid="ext-call"]').hidden`),
		click("ext-use-SO-1001"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="ext-field-note"]`), "Deliver to loading bay B, before 10:00"),
		click("ext-invoke"),
		waitJS(`["success", "business-error", "protocol-error", "pending-approval"].includes(document.querySelector('[data-testid="ext-outcome"]').dataset.outcome)`),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
		chromedp.Sleep(500*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	return chromedp.Run(tab, chromedp.CaptureScreenshot())
}

// pressAction presses the extension's toolbar button on the demo's tab,
// which grants it that tab (activeTab) and opens the browser's side panel;
// the side panel is closed again, since the picture is of the panel page
// opened at a fixed width.
func pressAction(browser context.Context, extID, pageURL string) error {
	panels := func() (map[target.ID]bool, error) {
		res, err := chromedp.CallBrowser(browser, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "page"}}})
		if err != nil {
			return nil, err
		}
		out := map[target.ID]bool{}
		for _, ti := range res.TargetInfos {
			if strings.HasPrefix(ti.URL, "chrome-extension://"+extID+"/panel.html") {
				out[ti.TargetID] = true
			}
		}
		return out, nil
	}
	before, err := panels()
	if err != nil {
		return err
	}
	res, err := chromedp.CallBrowser(browser, target.GetTargets, target.GetTargetsParams{Filter: target.Filter{{Type: "tab"}}})
	if err != nil {
		return err
	}
	var tabs []target.ID
	for _, ti := range res.TargetInfos {
		if ti.URL == pageURL {
			tabs = append(tabs, ti.TargetID)
		}
	}
	if len(tabs) != 1 {
		return fmt.Errorf("want one tab showing %s, found %d", pageURL, len(tabs))
	}
	if _, err := chromedp.CallBrowser(browser, extensions.TriggerAction, extensions.TriggerActionParams{ID: extID, TargetID: string(tabs[0])}); err != nil {
		return fmt.Errorf("press the extension's button: %w", err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		now, err := panels()
		if err != nil {
			return err
		}
		for id := range now {
			if !before[id] {
				_, err := chromedp.CallBrowser(browser, target.CloseTarget, target.CloseTargetParams{TargetID: id})
				return err
			}
		}
	}
	return nil // no side panel opened: the grant is what counts
}

// extensionID waits for the extension's service worker and reads its id.
func extensionID(ctx, browser context.Context) (string, error) {
	for {
		targets, err := chromedp.Targets(browser)
		if err != nil {
			return "", err
		}
		for _, ti := range targets {
			rest, ok := strings.CutPrefix(ti.URL, "chrome-extension://")
			if ok && ti.Type == "service_worker" && strings.HasSuffix(rest, "/background.js") {
				return strings.TrimSuffix(rest, "/background.js"), nil
			}
		}
		select {
		case <-ctx.Done():
			return "", errors.New("the extension's service worker never started")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitJS waits until expr (which may return a Promise) is truthy, polling
// in the page; a step that never comes true ends with the run's deadline.
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`new Promise((resolve) => {
	  const look = async () => {
	    try {
	      if (await (`+expr+`)) return resolve();
	    } catch {}
	    setTimeout(look, 50);
	  };
	  look();
	})`, chromedp.EvalAwaitPromise)
}

func click(testID string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid=%q]`, testID)))
}

func jsonObject(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{")
	first := true
	for k, v := range m {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", k, v)
	}
	b.WriteString("}")
	return b.String()
}

// writePNG writes a screenshot re-encoded at Go's best compression: the
// pictures live in the repository, so every kilobyte is paid on each clone.
func writePNG(path string, shot []byte) error {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return fmt.Errorf("%s: the browser's screenshot is not a PNG: %w", path, err)
	}
	// Go writes an opaque image as RGB, without Chromium's alpha channel.
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	b := img.Bounds()
	fmt.Printf("%s: %d×%d, %d KB\n", path, b.Dx(), b.Dy(), buf.Len()/1024)
	return nil
}
