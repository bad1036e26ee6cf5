package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/internal/redistest"
)

func siteDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>demo</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// oneLine fails unless s is exactly one non-empty line.
func oneLine(t *testing.T, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 || len(strings.TrimSpace(s)) == 0 {
		t.Errorf("want one line, got %q", s)
	}
}

// TestRefusesNonLoopback: every address another machine could reach is
// refused before anything listens, with one line saying why.
func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8395", ":8395", "[::]:8395", "192.168.1.10:8395", "example.com:8395", "127.0.0.1.nip.io:8395", "10.0.0.1:0"} {
		t.Run(addr, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"-addr", addr, "-dir", siteDir(t)}, &out, &errb)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			oneLine(t, errb.String())
			if !strings.Contains(errb.String(), "not a loopback address") || out.Len() != 0 {
				t.Errorf("stderr %q stdout %q", errb.String(), out.String())
			}
		})
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000"} {
		t.Run(addr, func(t *testing.T) {
			var errb bytes.Buffer
			if code := run(context.Background(), []string{"-addr", addr, "-dir", siteDir(t)}, io.Discard, &errb); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			oneLine(t, errb.String())
		})
	}
}

// TestServesOnLoopback: loopback addresses are served, and the server
// stops when its context ends.
func TestServesOnLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "127.0.0.2:0"} {
		t.Run(addr, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			out := &syncBuffer{}
			var errb bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- run(ctx, []string{"-addr", addr, "-dir", siteDir(t)}, out, &errb) }()
			url := waitURL(t, out, done)
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "<p>demo</p>" {
				t.Errorf("GET %s: %d %q", url, resp.StatusCode, body)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("exit %d after stop, stderr %q", code, errb.String())
			}
		})
	}
}

// TestBusyPortSuggestsPORT: a port in use is one line that names PORT=.
func TestBusyPortSuggestsPORT(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	var errb bytes.Buffer
	code := run(context.Background(), []string{"-addr", ln.Addr().String(), "-dir", siteDir(t)}, io.Discard, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	oneLine(t, errb.String())
	if !strings.Contains(errb.String(), "port "+port+" is in use") || !strings.Contains(errb.String(), "make demo PORT=") {
		t.Errorf("stderr %q, want the busy port and a PORT= suggestion", errb.String())
	}
}

// TestMissingSite: no site is one line that says to build it.
func TestMissingSite(t *testing.T) {
	var errb bytes.Buffer
	code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-dir", filepath.Join(t.TempDir(), "none")}, io.Discard, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	oneLine(t, errb.String())
	if !strings.Contains(errb.String(), "make site") {
		t.Errorf("stderr %q, want make site", errb.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitURL waits for the line that announces the server and returns its URL.
func waitURL(t *testing.T, out *syncBuffer, done chan int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("run exited %d before serving", code)
		default:
		}
		if s := out.String(); strings.Contains(s, "http://") {
			var url string
			if _, err := fmt.Sscanf(s[strings.Index(s, "http://"):], "%s", &url); err == nil {
				return url
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server never announced itself")
	return ""
}

// TestDemoSendsTheScriptPolicy: the demo's page comes with the
// Content-Security-Policy js/README.md ("Loading the surface first") tells
// pages to send, word for word, in plain mode and with -redis.
func TestDemoSendsTheScriptPolicy(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "js", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Loading the surface first")
	_, block, ok := strings.Cut(section, "Content-Security-Policy:")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("js/README.md recommends no Content-Security-Policy under \"Loading the surface first\"")
	}
	want := strings.Join(strings.Fields(block), " ")
	if !strings.Contains(want, "script-src 'self' 'wasm-unsafe-eval'") {
		t.Fatalf("the policy js/README.md recommends has no script-src: %q", want)
	}
	modes := map[string][]string{"plain": nil}
	if _, err := exec.LookPath("redis-server"); err == nil {
		modes["redis"] = []string{"-redis", redistest.Start(t).Addr}
	}
	for mode, extra := range modes {
		t.Run(mode, func(t *testing.T) {
			base, _ := startDemo(t, extra...)
			resp, _ := get(t, base+"/")
			if got := resp.Header.Get("Content-Security-Policy"); got != want {
				t.Errorf("GET %s/: Content-Security-Policy %q, want %q", base, got, want)
			}
		})
	}
}
