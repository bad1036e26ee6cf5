//go:build !(js || wasip1)

package mcpfacade

import (
	"testing"

	"github.com/chromedp/cdproto/target"
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
