//go:build !(js || wasip1)

package mcpfacade_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/mcpfacade/nativehost"
)

// The command's browser mode and host mode refuse what they cannot serve,
// before anything listens, and write nothing on stdout, which is MCP's or
// the browser's.
func TestMainBrowserModeRefuses(t *testing.T) {
	t.Setenv(nativehost.DirEnv, filepath.Join(t.TempDir(), "rt"))
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"browser mode without -url", []string{"-browser"}, 2, "-browser needs -url"},
		{"browser mode with -devtools", []string{"-browser", "-url", "http://127.0.0.1:1/", "-devtools", "http://127.0.0.1:9222"}, 2, "-browser needs -url"},
		{"host for another extension", []string{"chrome-extension://abcdefghijklmnopabcdefghijklmnop/"}, 1, "another caller"},
		{"host for a web page", []string{"https://evil.test/"}, 1, "another caller"},
		{"install with a stray argument", []string{"install", "extra"}, 2, "unexpected arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := mcpfacade.Main(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout.String(), stderr.String(), tt.code, tt.want)
			}
		})
	}
	if _, err := os.Stat(os.Getenv(nativehost.DirEnv)); !os.IsNotExist(err) {
		t.Errorf("a refused host made its directory (%v)", err)
	}
}

// Browser mode serves with no browser at all: initialize answers, the page
// offers nothing, and a call says what is missing.
func TestMainBrowserModeWithoutBrowser(t *testing.T) {
	t.Setenv(nativehost.DirEnv, filepath.Join(t.TempDir(), "rt"))
	inR, inW := io.Pipe()
	stdout := &syncBuffer{}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- mcpfacade.Main(ctx, []string{"-browser", "-url", "http://127.0.0.1:1/", "-poll", "0"}, inR, stdout, &stderr)
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"page_context","arguments":{}}}
`)
	for !strings.Contains(stdout.String(), `"id":2`) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	code := <-done
	out := stdout.String()
	if code != 0 || !strings.Contains(out, "PAGE_UNREACHABLE") || !strings.Contains(out, "pling-mcp install") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, stderr.String())
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
