package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

var surfaceWasmURL = regexp.MustCompile(`/pling/surface(\.[0-9a-f]+)?\.wasm$`)

// TestDemoWasmArrivesBrotli: the demo's kernel crosses the network as
// brotli, far below its size, with the type that lets Chromium compile it
// while it streams, and compiles.
func TestDemoWasmArrivesBrotli(t *testing.T) {
	tabCtx, cancelTab := chromedp.NewContext(browser)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(tabCtx, testTimeout)
	defer cancel()

	var mu sync.Mutex
	// What the tab's events told of the first surface.wasm response.
	var seen struct {
		requestID               network.RequestID
		url, encoding, mimeType string
		encoded                 float64
	}
	finished := make(chan struct{})
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	err := chromedp.Listen(tabCtx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			if seen.requestID == "" && surfaceWasmURL.MatchString(ev.Response.URL) {
				seen.requestID, seen.url, seen.mimeType = ev.RequestID, ev.Response.URL, ev.Response.MimeType
				for k, v := range ev.Response.Headers {
					if strings.EqualFold(k, "Content-Encoding") {
						seen.encoding, _ = v.(string)
					}
				}
			}
		case *network.EventLoadingFinished:
			if seen.requestID != "" && ev.RequestID == seen.requestID && seen.encoded == 0 {
				seen.encoded = ev.EncodedDataLength
				close(finished)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The cache off: an earlier tab may hold the file, and a response from
	// the cache says nothing of the transfer.
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(siteURL+"/")); err != nil {
		t.Fatal(err)
	}
	// __demo appears when main.js runs; ready settles when its surfaces are made.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`typeof window.__demo === "object"`)); err != nil {
		t.Fatal(err)
	}
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__demo.ready.then(() => true)`, chromedp.EvalAwaitPromise)); err != nil || !ok {
		t.Fatalf("the demo did not start: %v", err)
	}
	// The kernel starts when the surface is first called: the page's own
	// describe is the first contact here.
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__demo.surface.ready().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil || !ok {
		t.Fatalf("the kernel did not start: %v", err)
	}
	select {
	case <-finished:
	case <-ctx.Done():
		t.Fatal("no surface.wasm response finished loading")
	}
	// Read under the lock and let go of it: the listener runs on the
	// goroutine that delivers every answer of the tab.
	mu.Lock()
	got := seen
	mu.Unlock()
	url, encoding, mimeType, encoded := got.url, got.encoding, got.mimeType, got.encoded
	name := url[strings.LastIndex(url, "/")+1:]
	fi, err := os.Stat(filepath.Join(siteDir, "pling", name))
	if err != nil {
		t.Fatal(err)
	}
	if encoding != "br" {
		t.Errorf("%s arrived with Content-Encoding %q, want br", name, encoding)
	}
	if mimeType != "application/wasm" {
		t.Errorf("%s arrived as %q, want application/wasm", name, mimeType)
	}
	// Brotli makes it about a fifth; a third leaves room for headers.
	if encoded <= 0 || encoded > float64(fi.Size())/3 {
		t.Errorf("%s: %.0f bytes on the wire for %d decoded, want under a third", name, encoded, fi.Size())
	}
	t.Logf("%s: %.0f bytes on the wire, %d decoded", name, encoded, fi.Size())

	exports, err := chromedp.Run(ctx, chromedp.Evaluate[int](`WebAssembly.compileStreaming(fetch(`+strconv.Quote(url)+`)).then((m) => WebAssembly.Module.exports(m).length)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("compileStreaming: %v", err)
	}
	if exports == 0 {
		t.Error("the compiled module exports nothing")
	}
}
