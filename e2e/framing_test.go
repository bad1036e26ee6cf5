package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
)

// TestOtherOriginCannotFrameTheDemo: a page on another origin (a plain
// page, as any site on the web is) frames the demo to clickjack its Approve
// button. The demo server's frame-ancestors 'self' stops it; the same files
// served without the framing headers do load in the same attacker page, so
// the test can tell a blocked frame from a frame that merely failed, and the
// demo's own origin can still frame it.
func TestOtherOriginCannotFrameTheDemo(t *testing.T) {
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>attacker</title><body><p>Win a prize: click the button below</p></body>`)
	}))
	defer attacker.Close()
	unprotected := httptest.NewServer(withoutFraming(devserver.Handler(siteDir)))
	defer unprotected.Close()

	p := openTab(t, attacker.URL+"/")
	if got := frameURL(t, p, unprotected.URL+"/"); got != unprotected.URL+"/" {
		t.Fatalf("control: the demo without framing headers did not load in the attacker's frame (frame at %q)", got)
	}
	if got := frameURL(t, p, siteURL+"/"); got == siteURL+"/" {
		t.Errorf("the attacker's page framed the demo at %s", got)
	}
	// The refusal is Chromium's expected report, not a fault of the page.
	p.mu.Lock()
	kept := p.problems[:0]
	for _, msg := range p.problems {
		if !strings.Contains(msg, "frame-ancestors") && !strings.Contains(msg, "Refused to display") {
			kept = append(kept, msg)
		}
	}
	p.problems = kept
	p.mu.Unlock()

	self := openTab(t, siteURL+"/e2e/harness.html")
	if got := frameURL(t, self, siteURL+"/"); got != siteURL+"/" {
		t.Errorf("the demo's own origin could not frame it (frame at %q)", got)
	}
}

// frameURL adds an iframe of src to the page, waits for its load event, and
// returns the URL of the document the browser put in it (an error page's
// URL when the frame was refused).
func frameURL(t *testing.T, p *tab, src string) string {
	t.Helper()
	loaded := evalPage[bool](t, p, `new Promise((resolve) => {
		const f = document.createElement("iframe");
		f.src = `+js(src)+`;
		f.onload = () => resolve(true);
		setTimeout(() => resolve(false), 20000);
		document.body.append(f);
	})`)
	if !loaded {
		t.Fatalf("the frame of %s never fired load", src)
	}
	res, err := chromedp.Call(p.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatalf("frame tree: %v", err)
	}
	kids := res.FrameTree.ChildFrames
	if len(kids) == 0 {
		t.Fatal("no child frame")
	}
	return kids[len(kids)-1].Frame.URL
}

// withoutFraming drops the framing headers of h, for the control.
func withoutFraming(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(headerFilter{w, []string{"Content-Security-Policy", "X-Frame-Options"}, ""}, r)
	})
}
