// Package e2e drives the assembled site in headless Chromium: the demo page
// and small test pages that load the same runtime, with an external agent
// that runs as a content script would, in an isolated world of the page.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/headless"
)

var (
	// siteURL serves the assembled site at / and testdata/ at /e2e/, so the
	// test pages load the runtime from the same origin as the demo.
	siteURL string
	// foreignURLs serve testdata/foreign/ and testdata/mcp-hostile.* from
	// other origins: another port of the same host (same site), and another
	// host name (another site).
	foreignURLs map[string]string
	// browser is the one Chromium of this test binary; each test opens a tab.
	browser context.Context
	// siteDir is the assembled test site (make test-site).
	siteDir string
)

// requiredSiteFiles are what `make site` assembles and the tests load, as
// patterns: surface.wasm has a content-hashed name.
var requiredSiteFiles = []string{
	"index.html",
	"pling/pling-surface.js",
	"pling/surface.*.wasm",
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	// The tests have a site of their own, so that building it never pulls
	// the files from under a running `make demo` (build/site).
	site, err := filepath.Abs(filepath.Join("..", "build", "test-site"))
	if err != nil {
		return 1, err
	}
	for _, f := range requiredSiteFiles {
		if m, _ := filepath.Glob(filepath.Join(site, f)); len(m) == 0 {
			return 1, fmt.Errorf("the assembled test site is incomplete (%s): run `make test-site` first, or `make test-e2e`, which does", filepath.Join(site, f))
		}
	}
	siteDir = site
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return 1, fmt.Errorf("no chromium on PATH: run `make chromium` first, or `make test-e2e`, which does: %w", err)
	}

	mux := http.NewServeMux()
	// The demo is served as make demo serves it, under the script policy
	// js/README.md recommends; the test pages at /e2e/, which add scripts
	// as a later script would, are not.
	mux.Handle("/", devserver.NewHandler(site, devserver.Options{ScriptPolicy: true}))
	mux.Handle("/e2e/", http.StripPrefix("/e2e", devserver.Handler("testdata")))
	mux.Handle("/trip-state", tripState())
	mux.Handle("/flaky/", flakyKernel(site))
	mux.Handle("/untyped/", untypedKernel(site))
	main := httptest.NewServer(mux)
	defer main.Close()
	siteURL = main.URL

	// The foreign pages are embedded by the isolated site, so they must opt
	// in to being embedded cross-origin and be isolated themselves, or
	// Chromium never loads them and the hostile tests would prove nothing.
	// The page that answers the protocol itself is the same page on either
	// origin, so it is served from one copy.
	foreignMux := http.NewServeMux()
	foreignMux.Handle("/", devserver.Handler(filepath.Join("testdata", "foreign")))
	foreignMux.Handle("/mcp-hostile.html", devserver.Handler("testdata"))
	foreignMux.Handle("/mcp-hostile.js", devserver.Handler("testdata"))
	foreign := httptest.NewServer(embeddable(foreignMux))
	defer foreign.Close()
	foreignURLs = map[string]string{
		"same-site other port": foreign.URL,
		"cross-site":           strings.Replace(foreign.URL, "127.0.0.1", "localhost", 1),
	}

	profile, err := os.MkdirTemp("", "pling-e2e-profile-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(profile)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), headless.Options(chromium, profile)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	stop := func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser process to exit
	}
	if err := chromedp.Do(browserCtx); err != nil {
		stop()
		return 1, fmt.Errorf("start %s: %w", chromium, err)
	}
	browser = browserCtx

	code := m.Run()
	stop()
	if err := os.RemoveAll(profile); err != nil {
		return 1, fmt.Errorf("remove the browser profile: %w", err)
	}
	if _, err := os.Stat(profile); !errors.Is(err, os.ErrNotExist) {
		return 1, fmt.Errorf("the browser profile %s is still there", profile)
	}
	return code, nil
}

// embeddable lets an isolated page on another origin embed h's pages: the
// same-origin resource policy of devserver becomes cross-origin and its
// framing headers go.
func embeddable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
		h.ServeHTTP(headerFilter{w, []string{"Content-Security-Policy", "X-Frame-Options"}, "cross-origin"}, r)
	})
}

// headerFilter drops the drop headers (and sets the resource policy to corp,
// when not empty) just before the headers go out.
type headerFilter struct {
	http.ResponseWriter
	drop []string
	corp string
}

func (f headerFilter) fix() {
	for _, k := range f.drop {
		f.Header().Del(k)
	}
	if f.corp != "" {
		f.Header().Set("Cross-Origin-Resource-Policy", f.corp)
	}
}

func (f headerFilter) WriteHeader(code int) {
	f.fix()
	f.ResponseWriter.WriteHeader(code)
}

func (f headerFilter) Write(b []byte) (int, error) {
	f.fix()
	return f.ResponseWriter.Write(b)
}
