package devserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
