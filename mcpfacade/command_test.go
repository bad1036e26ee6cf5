package mcpfacade_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/mcpfacade"
)

func timeAfter() <-chan time.Time { return time.After(wait) }

// Usage errors are found before any browser is started or reached.
func TestMainRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "nothing to attach to", args: nil, code: 2, want: "-url or -devtools is required"},
		{name: "HTTP on every interface", args: []string{"-url", "http://127.0.0.1:1/", "-http", ":8765"}, code: 2, want: "every interface"},
		{name: "HTTP on a public address", args: []string{"-url", "http://127.0.0.1:1/", "-http", "0.0.0.0:8765"}, code: 2, want: "-allow-non-loopback"},
		{name: "negative poll", args: []string{"-url", "http://x/", "-poll", "-1s"}, code: 2, want: "must not be negative"},
		{name: "stray arguments", args: []string{"-url", "http://x/", "extra"}, code: 2, want: "unexpected arguments"},
		{name: "unknown flag", args: []string{"-bogus"}, code: 2, want: "flag provided but not defined"},
		{name: "help", args: []string{"-h"}, code: 0, want: "Usage:"},
		{name: "not a URL", args: []string{"-url", "notaurl"}, code: 2, want: `-url "notaurl" is not a web address`},
		{name: "not a web URL", args: []string{"-url", "ftp://127.0.0.1/"}, code: 2, want: "-url"},
		{name: "DevTools not a URL", args: []string{"-devtools", "9222"}, code: 2, want: `-devtools "9222"`},
		// Nothing listens on port 1: the command fails without serving.
		{name: "unreachable browser", args: []string{"-devtools", "http://127.0.0.1:1", "-url", "http://127.0.0.1:1/"}, code: 1, want: "cannot reach the browser at http://127.0.0.1:1"},
		{name: "no browser to start", args: []string{"-url", "http://127.0.0.1:1/", "-chromium", "/nonexistent/chromium"}, code: 1, want: "-chromium"},
	}
	// Without a display, as a person on a server would be.
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			code := mcpfacade.Main(ctx, tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
			// A failure is one line that says what to do, never a
			// library's internals (a note on how the browser starts may
			// come first, one line too).
			if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); tt.code == 1 &&
				(!strings.Contains(lines[len(lines)-1], tt.want) || len(lines) > 2 || strings.Contains(stderr.String(), "CHROMEDP")) {
				t.Errorf("not one plain line: %q", stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout is the MCP channel, but got %q", stdout.String())
			}
		})
	}
}

// The browser's mode follows the machine: headless without a display, and
// no sandbox as root (Chromium refuses to start otherwise), each said once.
func TestBrowserMode(t *testing.T) {
	tests := []struct {
		name                 string
		display              bool
		root                 bool
		headless, noSandbox  *bool
		wantHeadless, wantNS bool
		note                 string
		err                  string
	}{
		{name: "desktop", display: true, wantHeadless: false},
		{name: "no display", wantHeadless: true, note: "no display"},
		{name: "no display, visible asked", headless: new(false), err: "no display"},
		{name: "root", display: true, root: true, wantNS: true, note: "root"},
		{name: "root, sandbox asked", display: true, root: true, noSandbox: new(false), err: "root"},
		{name: "headless asked", display: true, headless: new(true), wantHeadless: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ns, note, err := mcpfacade.BrowserMode(tt.display, tt.root, tt.headless, tt.noSandbox)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || h != tt.wantHeadless || ns != tt.wantNS || !strings.Contains(note, tt.note) {
				t.Fatalf("headless %v noSandbox %v note %q err %v", h, ns, note, err)
			}
		})
	}
}
