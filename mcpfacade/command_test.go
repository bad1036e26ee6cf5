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
		{name: "negative poll", args: []string{"-url", "x", "-poll", "-1s"}, code: 2, want: "must not be negative"},
		{name: "stray arguments", args: []string{"-url", "x", "extra"}, code: 2, want: "unexpected arguments"},
		{name: "unknown flag", args: []string{"-bogus"}, code: 2, want: "flag provided but not defined"},
		{name: "help", args: []string{"-h"}, code: 0, want: "Usage:"},
		// Nothing listens on port 1: the command fails without serving.
		{name: "unreachable browser", args: []string{"-devtools", "http://127.0.0.1:1", "-url", "http://127.0.0.1:1/"}, code: 1, want: "connect to http://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			code := mcpfacade.Main(ctx, tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout is the MCP channel, but got %q", stdout.String())
			}
		})
	}
}
