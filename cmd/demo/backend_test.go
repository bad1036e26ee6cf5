package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pling.dev/agent/internal/redistest"
)

// TestRedisRefusesNonLoopback: a Redis another machine could share is
// refused before anything listens or connects, in one line.
func TestRedisRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"10.0.0.5:6379", "redis.example.com:6379", ":6379", "0.0.0.0:6379", "127.0.0.1"} {
		t.Run(addr, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-dir", siteDir(t), "-redis", addr}, &out, &errb)
			if code != 2 || out.Len() != 0 {
				t.Errorf("exit %d stdout %q, want 2 and nothing served", code, out.String())
			}
			oneLine(t, errb.String())
			if !strings.Contains(errb.String(), "-redis") {
				t.Errorf("stderr %q does not name -redis", errb.String())
			}
		})
	}
}

// TestRedisUnreachable: a loopback Redis that does not answer is one line
// at start, and nothing is served.
func TestRedisUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port nobody listens on
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-dir", siteDir(t), "-redis", addr}, &out, &errb)
	if code != 1 || out.Len() != 0 {
		t.Errorf("exit %d stdout %q, want 1 and nothing served", code, out.String())
	}
	oneLine(t, errb.String())
	if !strings.Contains(errb.String(), "Redis at "+addr+" does not answer") || !strings.Contains(errb.String(), "drop -redis") {
		t.Errorf("stderr %q", errb.String())
	}
}

func post(t *testing.T, url, body string, cookies []*http.Cookie) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, strings.TrimSpace(string(b))
}

// TestRedisMode: the config names the state endpoint and hands out the demo
// user's cookie; the endpoint refuses callers without that cookie (a forged
// one included) and counts one budget for every holder of it.
func TestRedisMode(t *testing.T) {
	rs := redistest.Start(t)
	base, _ := startDemo(t, "-redis", rs.Addr)

	resp, body := get(t, base+"/config.json")
	if resp.StatusCode != 200 || body != `{"sharedState":"/pling/state"}` {
		t.Fatalf("config: %d %q", resp.StatusCode, body)
	}
	var cookies []*http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName && c.HttpOnly && c.SameSite == http.SameSiteStrictMode {
			cookies = append(cookies, c)
		}
	}
	if len(cookies) != 1 {
		t.Fatalf("config set %v, want one HttpOnly SameSite=Strict %s", resp.Cookies(), cookieName)
	}
	forged := []*http.Cookie{{Name: cookieName, Value: strings.Repeat("0", len(cookies[0].Value))}}
	for name, c := range map[string][]*http.Cookie{"none": nil, "forged": forged} {
		if code, body := post(t, base+statePath, `{"op":"allow"}`, c); code != http.StatusUnauthorized {
			t.Errorf("%s cookie: %d %s, want 401", name, code, body)
		}
	}
	// A second "tab" holding the same cookie spends the same budget.
	allowed := 0
	for i := 0; i < demoMaxRequests+5; i++ {
		code, body := post(t, base+statePath, `{"op":"allow"}`, cookies)
		switch {
		case code == 200 && body == `{"allowed":true}`:
			allowed++
		case code == 200 && strings.HasPrefix(body, `{"allowed":false,"retryAfterMs":`):
		default:
			t.Fatalf("allow %d: %d %s", i, code, body)
		}
	}
	if allowed != demoMaxRequests {
		t.Errorf("allowed %d of %d, want %d", allowed, demoMaxRequests+5, demoMaxRequests)
	}
	for i, want := range []string{`{"claim":"claimed"}`, `{"claim":"replayed"}`} {
		if code, body := post(t, base+statePath, `{"op":"claim","requestId":"r-1"}`, cookies); code != 200 || body != want {
			t.Errorf("claim %d: %d %s, want %s", i, code, body, want)
		}
	}
	// A DNS-rebinding page (a foreign Host) gets neither cookie nor budget.
	req, _ := http.NewRequest(http.MethodGet, base+"/config.json", nil)
	req.Host = "attacker.example:80"
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusMisdirectedRequest || len(r.Cookies()) != 0 {
		t.Errorf("foreign Host on config: %v %v", r, err)
	}
	// Redis gone: the endpoint says unavailable, which the page refuses on.
	rs.Stop()
	if code, body := post(t, base+statePath, `{"op":"allow"}`, cookies); code != http.StatusServiceUnavailable {
		t.Errorf("Redis stopped: %d %s, want 503", code, body)
	}
}

// TestPlainModeConfig: without -redis the config is the site's own file
// (web/config.json, {}), no cookie is handed out and there is no state
// endpoint, so the page keeps its limits in itself.
func TestPlainModeConfig(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan int, 1)
	dir := siteDir(t)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-dir", dir}, out, io.Discard) }()
	base := strings.TrimSuffix(waitURL(t, out, done), "/")
	if resp, body := get(t, base+"/config.json"); resp.StatusCode != 200 || body != "{}" || len(resp.Cookies()) != 0 {
		t.Errorf("config: %d %q %v", resp.StatusCode, body, resp.Cookies())
	}
	if code, _ := post(t, base+statePath, `{"op":"allow"}`, nil); code == 200 {
		t.Errorf("state endpoint answered 200 without -redis")
	}
}

// TestRedisModeAuditsTheStateEndpoint: claims and allows posted to the
// state endpoint directly (a flood of fresh ids without allows, a
// pre-claim, a caller without the cookie) each leave one line of the
// demo's audit log on stderr, with the outcome and no request id in clear.
func TestRedisModeAuditsTheStateEndpoint(t *testing.T) {
	base, errb := startDemo(t, "-redis", redistest.Start(t).Addr)
	resp, _ := get(t, base+"/config.json")
	cookies := resp.Cookies()
	const flood = demoMaxRequests + 7
	for i := 0; i < flood; i++ {
		post(t, base+statePath, fmt.Sprintf(`{"op":"claim","requestId":"flood-%d"}`, i), cookies)
	}
	post(t, base+statePath, `{"op":"claim","requestId":"flood-pre"}`, nil)
	post(t, base+statePath, `{"op":"allow"}`, cookies)

	outcomes := map[string]int{}
	for _, line := range strings.Split(errb.String(), "\n") {
		rest, ok := strings.CutPrefix(line, auditPrefix)
		if !ok {
			continue
		}
		if strings.Contains(rest, "flood-") {
			t.Errorf("an audit line holds a request id in clear: %s", line)
		}
		var ev struct {
			Op, Outcome, SessionID, ClaimKey string
			Status                           int
		}
		if err := json.Unmarshal([]byte(rest), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev.Op == "claim" && len(ev.ClaimKey) != 64 {
			t.Errorf("a claim without its key hash: %s", line)
		}
		outcomes[ev.Outcome]++
	}
	want := map[string]int{"claimed": demoMaxRequests, "claims_limited": flood - demoMaxRequests, "refused": 1, "allowed": 1}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("audit outcomes %v, want %v; stderr:\n%s", outcomes, want, errb.String())
	}
}

// startDemo runs the demo on a free loopback port with a site of its own
// and the extra flags, until the test ends (when it must exit 0). It
// answers the demo's URL without the final slash, and its stderr, which
// the server's goroutines write.
func startDemo(t *testing.T, extra ...string) (base string, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-dir", siteDir(t)}, extra...), out, stderr)
	}()
	base = strings.TrimSuffix(waitURL(t, out, done), "/")
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	})
	return base, stderr
}
