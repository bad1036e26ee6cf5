package e2e

import (
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"pling.dev/agent/surface"
)

// TestDemoProtocolErrors reaches each request-level protocol failure from
// the page, over postMessage, and checks that none of them runs the executor.
func TestDemoProtocolErrors(t *testing.T) {
	p := openDemo(t)
	cases := []struct {
		name string
		env  func(t *testing.T) map[string]any
		code surface.Code
	}{
		{"invoke without capability", func(t *testing.T) map[string]any {
			e := invokeEnv(t, "", nil)
			delete(e, "capability")
			return e
		}, surface.CodeInvalidRequest},
		{"invoke input not an object", func(t *testing.T) map[string]any {
			return invokeEnv(t, "orders.search", []any{"SO-1002"})
		}, surface.CodeInvalidRequest},
		{"invoke input fails its schema", func(t *testing.T) map[string]any {
			return invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": 1234})
		}, surface.CodeInvalidRequest},
		{"invoke on a record that does not exist", func(t *testing.T) map[string]any {
			return invokeEnv(t, "update_note@order", map[string]any{"record": "SO-9999", "note": "x"})
		}, surface.CodeInvalidRequest},
		{"invoke with an unknown member", func(t *testing.T) map[string]any {
			e := invokeEnv(t, "orders.search", map[string]any{"query": "x"})
			e["priority"] = "high"
			return e
		}, surface.CodeInvalidRequest},
		{"describe with record and offset", func(t *testing.T) map[string]any {
			return describeEnv(t, map[string]any{"record": "SO-1002", "offset": 1})
		}, surface.CodeInvalidRequest},
		{"describe with an unknown input field", func(t *testing.T) map[string]any {
			return describeEnv(t, map[string]any{"everything": true})
		}, surface.CodeInvalidRequest},
		{"describe with a negative limit", func(t *testing.T) map[string]any {
			return describeEnv(t, map[string]any{"limit": -1})
		}, surface.CodeInvalidRequest},
		{"describe with 21 records", func(t *testing.T) map[string]any {
			var ids []string
			for i := 1001; i <= 1021; i++ {
				ids = append(ids, "SO-"+strconv.Itoa(i))
			}
			return describeEnv(t, map[string]any{"record": ids})
		}, surface.CodeInvalidRequest},
		{"another protocol version", func(t *testing.T) map[string]any {
			e := describeEnv(t, nil)
			e["protocol"] = "pling.surface/0.2"
			return e
		}, surface.CodeProtocolVersionUnsupported},
		{"a method 0.1 does not have", func(t *testing.T) map[string]any {
			e := describeEnv(t, nil)
			e["method"] = "observe"
			return e
		}, surface.CodeMethodNotSupported},
		{"a capability the page does not have", func(t *testing.T) map[string]any {
			return invokeEnv(t, "orders.delete_all", map[string]any{})
		}, surface.CodeCapabilityNotExposed},
		{"a per-record action id instead of its template", func(t *testing.T) map[string]any {
			return invokeEnv(t, "update_note@order:SO-1002", map[string]any{"note": "x"})
		}, surface.CodeCapabilityNotExposed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := executorCalls(t, p)
			env := tc.env(t)
			r := send(t, p, env)
			wantCode(t, r, env["id"].(string), tc.code)
			if got := executorCalls(t, p); got != calls {
				t.Errorf("executor calls %d -> %d: a refused request ran", calls, got)
			}
		})
	}

	t.Run("replayed invoke", func(t *testing.T) {
		calls := executorCalls(t, p)
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1004", "note": "first"})
		if r := send(t, p, env); !r.Envelope.OK || r.result(t)["error"] != nil {
			t.Fatalf("first invoke: %s", r)
		}
		env["input"] = map[string]any{"record": "SO-1004", "note": "second"}
		wantCode(t, send(t, p, env), env["id"].(string), surface.CodeReplayDetected)
		if got := executorCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want exactly one", calls, got)
		}
		if got := noteShown(t, p, "SO-1004"); got != "first" {
			t.Errorf("SO-1004 shows %q, want first", got)
		}
	})
}

// TestDemoRateLimit sends requests until the session's window is full: the
// next request is refused with a positive retry hint, an invoke included,
// which then runs nothing.
func TestDemoRateLimit(t *testing.T) {
	p := openDemo(t)
	const most = 200 // far above any sensible demo limit; reaching it fails
	ok := 0
	var limited reply
	for i := 0; i < most; i++ {
		r := send(t, p, describeEnv(t, map[string]any{"limit": 0}))
		if r.code() == string(surface.CodeRateLimited) {
			limited = r
			break
		}
		if !r.Envelope.OK {
			t.Fatalf("request %d: %s", i+1, r)
		}
		ok++
	}
	if limited.Envelope.Error == nil {
		t.Fatalf("%d describes in a row were all admitted", most)
	}
	if ok == 0 {
		t.Fatal("the very first request was rate limited")
	}
	if limited.Envelope.Error.RetryAfterMs <= 0 {
		t.Errorf("RATE_LIMITED without a positive retryAfterMs: %s", limited)
	}
	calls := executorCalls(t, p)
	before := noteShown(t, p, "SO-1002")
	env := invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": "over the limit"})
	r := send(t, p, env)
	wantCode(t, r, env["id"].(string), surface.CodeRateLimited)
	if r.Envelope.Error.RetryAfterMs <= 0 {
		t.Errorf("RATE_LIMITED without a positive retryAfterMs: %s", r)
	}
	if got := executorCalls(t, p); got != calls {
		t.Errorf("a rate-limited invoke ran the executor (%d -> %d)", calls, got)
	}
	if got := noteShown(t, p, "SO-1002"); got != before {
		t.Errorf("SO-1002 shows %q, was %q", got, before)
	}
}

// TestDemoSessionLifecycle drives the delegation panel as a person would:
// a narrower grant hides a capability, a revocation and an expiry refuse the
// next request, and none of it reloads the page.
func TestDemoSessionLifecycle(t *testing.T) {
	p := openDemo(t)
	evalPage[bool](t, p, `(window.__e2eSamePage = true)`)
	defer func() {
		if !evalPage[bool](t, p, `window.__e2eSamePage === true`) {
			t.Error("the page was reloaded")
		}
	}()
	grant := func(t *testing.T, minutes string, drop ...string) {
		t.Helper()
		// Check every scope box, then clear the ones to drop.
		evalPage[bool](t, p, `(document.querySelectorAll('[data-testid="delegation-scopes"] input[type=checkbox]').forEach((b) => { b.checked = true }), true)`)
		for _, id := range drop {
			clickTestID(t, p, "delegation-scope-"+id)
		}
		if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="delegation-expiry"]`), minutes)); err != nil {
			t.Fatal(err)
		}
		old := evalPage[string](t, p, `(window.__demo.session() || {}).sessionId || ""`)
		clickTestID(t, p, "delegation-grant")
		waitPage(t, p, `(window.__demo.session() || {}).sessionId !== `+js(old))
	}
	capIDs := func(d surface.Description) []string {
		var out []string
		for _, c := range d.Capabilities {
			out = append(out, c.ID)
		}
		return out
	}

	t.Run("narrower scope", func(t *testing.T) {
		grant(t, "30", "update_note@order")
		d := describe(t, p, nil)
		if ids := capIDs(d); slices.Contains(ids, "update_note@order") || !slices.Contains(ids, "approve@order") {
			t.Errorf("capabilities %v: want approve@order without update_note@order", ids)
		}
		calls := executorCalls(t, p)
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": "out of scope"})
		wantCode(t, send(t, p, env), env["id"].(string), surface.CodeCapabilityNotExposed)
		if got := executorCalls(t, p); got != calls {
			t.Errorf("executor ran for an out-of-scope capability")
		}
	})

	t.Run("revoked", func(t *testing.T) {
		grant(t, "30")
		describe(t, p, nil)
		clickTestID(t, p, "delegation-revoke")
		waitPage(t, p, `window.__demo.sessionState() === "revoked"`)
		calls := executorCalls(t, p)
		for _, env := range []map[string]any{
			describeEnv(t, nil),
			invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": "after revocation"}),
		} {
			wantCode(t, send(t, p, env), env["id"].(string), surface.CodeSessionRevoked)
		}
		if got := executorCalls(t, p); got != calls {
			t.Errorf("executor ran after revocation")
		}
		// A fresh grant works again, on the same page.
		grant(t, "30")
		describe(t, p, nil)
	})

	t.Run("expired", func(t *testing.T) {
		grant(t, "0.1") // six seconds, the panel's shortest
		describe(t, p, nil)
		waitPage(t, p, `window.__demo.sessionState() === "expired"`)
		calls := executorCalls(t, p)
		for _, env := range []map[string]any{
			describeEnv(t, nil),
			invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": "after expiry"}),
		} {
			wantCode(t, send(t, p, env), env["id"].(string), surface.CodeSessionExpired)
		}
		if got := executorCalls(t, p); got != calls {
			t.Errorf("executor ran after expiry")
		}
	})
}
