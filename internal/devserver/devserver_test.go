package devserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// site builds a served directory beside a secret one, with the traps an
// attacker would try: dotfiles, a symlink out of the root, a directory
// without an index.
func site(t *testing.T) (dir string, srv *httptest.Server) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "site")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{dir, secret, filepath.Join(dir, "sub"), filepath.Join(dir, "list"), filepath.Join(dir, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(dir, "index.html"):        "<p>index</p>",
		filepath.Join(dir, "m.wasm"):            "\x00asm",
		filepath.Join(dir, "sub", "index.html"): "<p>sub</p>",
		filepath.Join(dir, "list", "a.txt"):     "a",
		filepath.Join(dir, ".env"):              "TOKEN=secret",
		filepath.Join(dir, ".git", "config"):    "[core]",
		filepath.Join(secret, "key.txt"):        "private key",
	}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(dir, "escape.txt"): filepath.Join(secret, "key.txt"),
		filepath.Join(dir, "escape"):     secret,
		filepath.Join(dir, "relative"):   filepath.Join("..", "secret"),
		filepath.Join(dir, "inside.txt"): filepath.Join("list", "a.txt"),
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	srv = httptest.NewServer(Handler(dir))
	t.Cleanup(srv.Close)
	return dir, srv
}

func get(t *testing.T, srv *httptest.Server, method, path, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	// No redirects followed: a redirect to a listing is checked by its target.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestHandlerIsolatesAndTypesWasm(t *testing.T) {
	_, srv := site(t)
	resp, _ := get(t, srv, http.MethodGet, "/m.wasm", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for k, want := range map[string]string{
		"Content-Type":                 "application/wasm",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Embedder-Policy": "require-corp",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// TestHandlerServesOnlyTheSite: each path an attacker would try is 404 and
// never carries the secret; what the site holds is served.
func TestHandlerServesOnlyTheSite(t *testing.T) {
	_, srv := site(t)
	tests := []struct {
		name, path string
		status     int
		body       string
	}{
		{"the index", "/", 200, "<p>index</p>"},
		{"a directory with an index", "/sub/", 200, "<p>sub</p>"},
		{"a symlink that stays inside", "/inside.txt", 200, "a"},
		{"a dotfile", "/.env", 404, ""},
		{"a file in a dot directory", "/.git/config", 404, ""},
		{"a dot directory", "/.git/", 404, ""},
		{"an escaped dot", "/%2eenv", 404, ""},
		{"a symlink to a file outside", "/escape.txt", 404, ""},
		{"through a symlink to a directory outside", "/escape/key.txt", 404, ""},
		{"a relative symlink outside", "/relative/key.txt", 404, ""},
		{"a symlinked directory outside", "/escape/", 404, ""},
		{"a directory without an index", "/list/", 404, ""},
		{"the root's parent", "/../secret/key.txt", 404, ""},
		{"a missing file", "/nope.txt", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, srv, http.MethodGet, tc.path, "")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%q)", resp.StatusCode, tc.status, body)
			}
			if strings.Contains(body, "secret") || strings.Contains(body, "private key") || strings.Contains(body, "[core]") || strings.Contains(body, "a.txt") {
				t.Fatalf("body leaks what is outside the site: %q", body)
			}
			if tc.body != "" && body != tc.body {
				t.Fatalf("body %q, want %q", body, tc.body)
			}
		})
	}
	t.Run("a directory path without its slash", func(t *testing.T) {
		resp, body := get(t, srv, http.MethodGet, "/list", "")
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, "a.txt") {
			t.Fatalf("status %d %q, want 404 without a listing", resp.StatusCode, body)
		}
	})
	t.Run("only GET and HEAD", func(t *testing.T) {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			if resp, _ := get(t, srv, m, "/", ""); resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s: status %d, want 405", m, resp.StatusCode)
			}
		}
		if resp, _ := get(t, srv, http.MethodHead, "/", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD: status %d", resp.StatusCode)
		}
	})
}

// TestHandlerChecksHost: a page on another name that resolves to loopback
// (DNS rebinding) sends its own Host; it gets 421 and nothing of the site.
func TestHandlerChecksHost(t *testing.T) {
	_, srv := site(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:" + port, true},
		{"localhost:" + port, true},
		{"LOCALHOST:" + port, true},
		{"attacker.example:" + port, false},
		{"127.0.0.1.nip.io:" + port, false},
		{"127.0.0.1", false},
		{"127.0.0.1:1", false},
		{"localhost", false},
		{"0.0.0.0:" + port, false},
		{"[::1]:" + port, false}, // the server listens on 127.0.0.1
	}
	for _, tc := range tests {
		resp, body := get(t, srv, http.MethodGet, "/", tc.host)
		if ok := resp.StatusCode == http.StatusOK; ok != tc.ok {
			t.Errorf("Host %q: status %d, want ok=%v", tc.host, resp.StatusCode, tc.ok)
		}
		if !tc.ok && (resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, "index")) {
			t.Errorf("Host %q: status %d %q, want 421 without the site", tc.host, resp.StatusCode, body)
		}
	}
}

// TestHandlerHeaders: every answer, errors included, forbids framing by
// other origins and content sniffing.
func TestHandlerHeaders(t *testing.T) {
	_, srv := site(t)
	for _, tc := range []struct{ path, host string }{{"/", ""}, {"/m.wasm", ""}, {"/.env", ""}, {"/", "evil.example:80"}} {
		resp, _ := get(t, srv, http.MethodGet, tc.path, tc.host)
		for k, want := range map[string]string{
			"Content-Security-Policy": "frame-ancestors 'self'",
			"X-Frame-Options":         "SAMEORIGIN",
			"X-Content-Type-Options":  "nosniff",
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("%s (Host %q): %s = %q, want %q", tc.path, tc.host, k, got, want)
			}
		}
	}
}

// TestHandlerFollowsARebuiltSite: the site directory is opened per request,
// so replacing it (make site under a running demo) serves the new one.
func TestHandlerFollowsARebuiltSite(t *testing.T) {
	dir, srv := site(t)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("rebuilt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(t, srv, http.MethodGet, "/", ""); resp.StatusCode != http.StatusOK || body != "rebuilt" {
		t.Fatalf("status %d %q, want the rebuilt index", resp.StatusCode, body)
	}
}

// TestNewHandlerScriptPolicy: with ScriptPolicy every answer, refusals
// included, carries the policy js/README.md recommends, whose
// frame-ancestors keeps the framing defence; without it, frame-ancestors
// alone.
func TestNewHandlerScriptPolicy(t *testing.T) {
	dir, plain := site(t)
	strict := httptest.NewServer(NewHandler(dir, Options{ScriptPolicy: true}))
	t.Cleanup(strict.Close)
	if !strings.Contains(ScriptPolicy, "frame-ancestors 'self'") || !strings.Contains(ScriptPolicy, "script-src 'self' 'wasm-unsafe-eval'") {
		t.Fatalf("ScriptPolicy %q lacks frame-ancestors or script-src", ScriptPolicy)
	}
	for _, tc := range []struct{ path, host string }{{"/", ""}, {"/m.wasm", ""}, {"/.env", ""}, {"/", "evil.example:80"}} {
		for srv, want := range map[*httptest.Server]string{strict: ScriptPolicy, plain: "frame-ancestors 'self'"} {
			resp, _ := get(t, srv, http.MethodGet, tc.path, tc.host)
			if got := resp.Header.Get("Content-Security-Policy"); got != want {
				t.Errorf("%s (Host %q): Content-Security-Policy %q, want %q", tc.path, tc.host, got, want)
			}
		}
	}
}

func TestNegotiate(t *testing.T) {
	both := func(string) bool { return true }
	gzipOnly := func(c string) bool { return c == "gzip" }
	none := func(string) bool { return false }
	tests := []struct {
		header string
		has    func(string) bool
		want   string
	}{
		{"", both, ""},
		{"br", both, "br"},
		{"gzip", both, "gzip"},
		{"gzip, deflate, br, zstd", both, "br"}, // Chromium's
		{"gzip, deflate, br", gzipOnly, "gzip"},
		{"gzip, deflate, br", none, ""},
		{"br;q=0, gzip", both, "gzip"},
		{"br;q=0.0, gzip;q=0", both, ""},
		{"BR;Q=0.5", both, "br"},
		{"gzip;q=1, br;q=0.1", both, "br"}, // the server's preference among acceptable ones
		{"x-gzip", gzipOnly, "gzip"},
		{"*", both, "br"},
		{"*;q=0", both, ""},
		{"*, br;q=0", both, "gzip"},
		{"gzip;q=0, *", both, "br"},
		{"identity", both, ""},
		{"deflate", both, ""},
		{"br;q=2, gzip", both, "gzip"},    // a q out of range: that element is ignored
		{"br;q=abc, gzip", both, "gzip"},  // so is a malformed one
		{"br, br;q=0", both, ""},          // named twice: the stricter
		{" br ; q=0.8 ,gzip", both, "br"}, // spaces
		{",,br", both, "br"},
	}
	for _, tc := range tests {
		if got := Negotiate(tc.header, tc.has); got != tc.want {
			t.Errorf("Negotiate(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestHashed(t *testing.T) {
	for name, want := range map[string]bool{
		"surface.1a2b3c4d5e6f.wasm":    true,
		"pling-webmcp.1a2b3c4d.js":     true,
		"surface.1a2b3c4.wasm":         false, // 7 digits
		"surface.wasm":                 false,
		"pling-surface.js":             false,
		"surface.1A2B3C4D.wasm":        false,
		"surface.1a2b3c4d5e6g.wasm":    false,
		".1a2b3c4d.js":                 false,
		"pling-surface.global.js":      false,
		"surface.1a2b3c4d5e6f.wasm.br": false,
	} {
		if got := Hashed(name); got != want {
			t.Errorf("Hashed(%q) = %v, want %v", name, got, want)
		}
	}
}

// encodedSite is a site with precompressed siblings, as internal/sitebuild
// writes them: the bodies tell which file was sent.
func encodedSite(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"index.html":                   "<p>index</p>",
		"index.html.gz":                "index-gzip",
		"app.js":                       "app-identity",
		"app.js.br":                    "app-br",
		"app.js.gz":                    "app-gz",
		"surface.1a2b3c4d5e6f.wasm":    "\x00asm-identity",
		"surface.1a2b3c4d5e6f.wasm.br": "wasm-br",
		"styles.css":                   "css-identity",
		"types.d.ts":                   "ts-identity",
		"types.d.ts.br":                "ts-br",
		"notes.txt":                    "txt",
		"notes.txt.br":                 "not a sibling: .txt is not negotiable",
		"archive.tar.gz":               "a download",
		"sub/index.html":               "<p>sub</p>",
		"sub/index.html.br":            "sub-br",
		"data.json.br":                 "a sibling without its file",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// One time for all (app.js.br and .gz are the same size too): the
		// tag of an encoding must differ by more than its file's stat.
		if err := os.Chtimes(p, time.Unix(1.7e9, 0), time.Unix(1.7e9, 0)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(Handler(dir))
	t.Cleanup(srv.Close)
	return srv
}

// fetch sends a request with exactly the headers given (no Accept-Encoding
// of Go's own, no transparent decompression).
func fetch(t *testing.T, srv *httptest.Server, method, path string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestHandlerServesPrecompressed: the encoding the client prefers among
// the siblings present, with the original's type, Vary on every
// negotiable file, the length of what is sent, and caching by name.
func TestHandlerServesPrecompressed(t *testing.T) {
	srv := encodedSite(t)
	const immutable, revalidate = "public, max-age=31536000, immutable", "no-cache"
	tests := []struct {
		path, accept string
		status       int
		body         string
		encoding     string
		typ          string
		vary         bool
		cache        string
	}{
		{"/app.js", "gzip, deflate, br, zstd", 200, "app-br", "br", "text/javascript; charset=utf-8", true, revalidate},
		{"/app.js", "gzip", 200, "app-gz", "gzip", "text/javascript; charset=utf-8", true, revalidate},
		{"/app.js", "br;q=0, gzip", 200, "app-gz", "gzip", "text/javascript; charset=utf-8", true, revalidate},
		{"/app.js", "", 200, "app-identity", "", "text/javascript; charset=utf-8", true, revalidate},
		{"/app.js", "identity", 200, "app-identity", "", "text/javascript; charset=utf-8", true, revalidate},
		{"/surface.1a2b3c4d5e6f.wasm", "gzip, br", 200, "wasm-br", "br", "application/wasm", true, immutable},
		{"/surface.1a2b3c4d5e6f.wasm", "gzip", 200, "\x00asm-identity", "", "application/wasm", true, immutable}, // no .gz
		{"/", "br, gzip", 200, "index-gzip", "gzip", "text/html; charset=utf-8", true, revalidate},
		{"/sub/", "br", 200, "sub-br", "br", "text/html; charset=utf-8", true, revalidate},
		{"/styles.css", "br, gzip", 200, "css-identity", "", "text/css; charset=utf-8", true, revalidate},
		{"/types.d.ts", "br", 200, "ts-br", "br", "text/plain; charset=utf-8", true, revalidate},
		{"/notes.txt", "br", 200, "txt", "", "text/plain; charset=utf-8", false, revalidate},
		{"/archive.tar.gz", "br", 200, "a download", "", "", false, revalidate},
		// A sibling by its own name is 404; so is one without its file.
		{"/app.js.br", "br", 404, "", "", "", false, "no-store"},
		{"/app.js.gz", "", 404, "", "", "", false, "no-store"},
		{"/surface.1a2b3c4d5e6f.wasm.br", "br", 404, "", "", "", false, "no-store"},
		{"/data.json", "br", 404, "", "", "", false, "no-store"},
		{"/data.json.br", "br", 404, "", "", "", false, "no-store"},
	}
	for _, tc := range tests {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp, body := fetch(t, srv, method, tc.path, map[string]string{"Accept-Encoding": tc.accept})
			what := method + " " + tc.path + " (Accept-Encoding " + tc.accept + ")"
			if resp.StatusCode != tc.status {
				t.Errorf("%s: status %d, want %d", what, resp.StatusCode, tc.status)
				continue
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("%s: Cache-Control %q, want %q", what, got, tc.cache)
			}
			if tc.status != 200 {
				continue
			}
			wantBody := tc.body
			if method == http.MethodHead {
				wantBody = ""
			}
			if body != wantBody {
				t.Errorf("%s: body %q, want %q", what, body, wantBody)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("%s: Content-Encoding %q, want %q", what, got, tc.encoding)
			}
			if tc.typ != "" && resp.Header.Get("Content-Type") != tc.typ {
				t.Errorf("%s: Content-Type %q, want %q", what, resp.Header.Get("Content-Type"), tc.typ)
			}
			if got := resp.Header.Get("Vary") == "Accept-Encoding"; got != tc.vary {
				t.Errorf("%s: Vary %q, want Accept-Encoding: %v", what, resp.Header.Get("Vary"), tc.vary)
			}
			if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(tc.body)) {
				t.Errorf("%s: Content-Length %s, want %d", what, got, len(tc.body))
			}
			if resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
				t.Errorf("%s: no ETag or Last-Modified to revalidate with", what)
			}
		}
	}
}

// TestHandlerRevalidates: a file's tag answers 304 for the same encoding
// and not for another; a range of an encoded file is of its encoded bytes.
func TestHandlerRevalidates(t *testing.T) {
	srv := encodedSite(t)
	br, _ := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "br"})
	gz, _ := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "gzip"})
	if br.Header.Get("ETag") == gz.Header.Get("ETag") {
		t.Fatalf("br and gzip share the tag %s", br.Header.Get("ETag"))
	}
	if resp, _ := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "br", "If-None-Match": br.Header.Get("ETag")}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("the br tag again: status %d, want 304", resp.StatusCode)
	}
	if resp, _ := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": br.Header.Get("ETag")}); resp.StatusCode != http.StatusOK {
		t.Errorf("the br tag for gzip: status %d, want 200", resp.StatusCode)
	}
	if resp, _ := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"If-Modified-Since": br.Header.Get("Last-Modified")}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: status %d, want 304", resp.StatusCode)
	}
	resp, body := fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Accept-Encoding": "br", "Range": "bytes=0-1"})
	if resp.StatusCode != http.StatusPartialContent || body != "ap" || resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get("Content-Length") != "2" {
		t.Errorf("a range of the br file: status %d %q %v, want 206 \"ap\" of the encoded bytes, length 2", resp.StatusCode, body, resp.Header)
	}
	resp, body = fetch(t, srv, http.MethodGet, "/app.js", map[string]string{"Range": "bytes=0-2"})
	if resp.StatusCode != http.StatusPartialContent || body != "app" {
		t.Errorf("a range of the file: status %d %q, want 206 \"app\"", resp.StatusCode, body)
	}
}
