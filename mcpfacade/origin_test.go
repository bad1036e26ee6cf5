//go:build !(js || wasip1)

package mcpfacade

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade/internal/devtools"
)

func TestOriginOf(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/x?y":     "http://127.0.0.1:8080",
		"HTTP://LOCALHOST:80/":          "http://localhost",
		"https://example.com:443/a":     "https://example.com",
		"https://example.com:8443":      "https://example.com:8443",
		"http://[::1]:8080/":            "http://[::1]:8080",
		"about:blank":                   "null",
		"chrome-error://chromewebdata/": "chrome-error://chromewebdata",
	} {
		if got, err := originOf(raw); err != nil || got != want {
			t.Errorf("originOf(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// A tab is picked by its exact origin: a URL that only starts like -url
// (another port, a longer host) is another page.
func TestPickTabByOrigin(t *testing.T) {
	tabs := []*target.Info{
		{TargetID: "a", Type: "page", URL: "http://127.0.0.1:80801/"},
		{TargetID: "b", Type: "page", URL: "http://127.0.0.1:8080.evil.example/"},
		{TargetID: "c", Type: "page", URL: "http://127.0.0.1:8080/other"},
		{TargetID: "d", Type: "page", URL: "http://127.0.0.1:8080/"},
	}
	if id, _, err := pickTab(tabs, "http://127.0.0.1:8080/"); err != nil || id != "d" {
		t.Errorf("exact URL: %q %v", id, err)
	}
	if id, _, err := pickTab(tabs, "http://127.0.0.1:8080/orders"); err != nil || id != "c" {
		t.Errorf("same origin: %q %v", id, err)
	}
	if id, _, err := pickTab(tabs[:2], "http://127.0.0.1:8080/"); err != nil || id != "" {
		t.Errorf("look-alikes picked: %q %v", id, err)
	}
}

// A DevTools reply skipped for its size means the page answered: it is a
// refused answer (UNREADABLE_REPLY), naming the bound, never the page
// being unreachable.
func TestDevToolsRefusal(t *testing.T) {
	msg := "DevTools reply of 20000000 bytes is larger than the bound of 16777216 bytes; skipped unread"
	err := devtoolsRefusal(fmt.Errorf("run: %w", &cdproto.Error{Code: devtools.ErrorCode, Message: msg}))
	var rerr *client.ReplyError
	if !errors.As(err, &rerr) || !errors.Is(rerr.Err, client.ErrBadReply) || !strings.Contains(err.Error(), "bound of 16777216 bytes") {
		t.Fatalf("devtoolsRefusal: %v", err)
	}
	if e := rpcError(err); e.Code != CodeUnreadableReply || !strings.Contains(string(e.Data), UnreadableReply) {
		t.Errorf("as a JSON-RPC error: %d %s", e.Code, e.Data)
	}
	for _, other := range []error{
		&cdproto.Error{Code: -32000, Message: "Cannot find context with specified id"},
		errors.New("context canceled"),
	} {
		if err := devtoolsRefusal(other); err != nil {
			t.Errorf("devtoolsRefusal(%v) = %v", other, err)
		}
	}
}
