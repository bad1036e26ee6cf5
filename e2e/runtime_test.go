package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"pling.dev/agent/surface"
)

// openTestPage opens testdata/surface.html, which builds its surface from
// the site's runtime with options each test chooses.
func openTestPage(t *testing.T) *tab {
	t.Helper()
	p := openTab(t, siteURL+"/e2e/surface.html")
	waitPage(t, p, `window.__e2e && window.__e2e.ready`)
	p.startAgent(t)
	return p
}

// setup replaces the test page's surface (no reload) with one built from config.
func setup(t testing.TB, p *tab, config map[string]any) {
	t.Helper()
	evalPage[bool](t, p, `window.__e2e.setup(`+js(config)+`)`)
}

func pageCalls(t testing.TB, p *tab) int {
	t.Helper()
	return evalPage[int](t, p, `window.__e2e.calls()`)
}

func pageNote(t testing.TB, p *tab, id string) string {
	t.Helper()
	return evalPage[string](t, p, `window.__e2e.note(`+js(id)+`)`)
}

// internalDetails are texts the test page's failing services put in their
// errors; a reply must not pass them on.
var internalDetails = []string{"the executor broke", "the shared store is down", "the session store is down"}

func noInternalDetail(t testing.TB, r reply) {
	t.Helper()
	s := r.String()
	for _, d := range internalDetails {
		if strings.Contains(s, d) {
			t.Errorf("the reply passes on an internal error: %s", s)
		}
	}
}

// TestRuntimeFailures reaches the failures that need a page's own services
// to break: the executor, a shared rate limiter, a shared replay guard and
// the session getter. Each is answered with its protocol code, runs nothing
// it should not, and leaves the page working.
func TestRuntimeFailures(t *testing.T) {
	p := openTestPage(t)

	t.Run("open mode works", func(t *testing.T) {
		setup(t, p, map[string]any{"session": "open"})
		describe(t, p, nil)
		if res := invoke(t, p, "update_note@order", map[string]any{"record": "T-1", "note": "open"}).result(t); res["error"] != nil {
			t.Fatalf("invoke: %v", res)
		}
		if got := pageNote(t, p, "T-1"); got != "open" {
			t.Errorf("T-1 shows %q", got)
		}
	})

	t.Run("oversize message", func(t *testing.T) {
		setup(t, p, map[string]any{})
		if res := invoke(t, p, "orders.import", map[string]any{"data": "small"}).result(t); res["imported"] != 5.0 {
			t.Fatalf("a small import: %v", res)
		}
		calls := pageCalls(t, p)
		env := invokeEnv(t, "orders.import", map[string]any{"data": strings.Repeat("x", 1<<20)})
		r := evalAgent[reply](t, p, `agent.request(`+js(env)+`, {acceptEmptyId: true})`)
		if r.Envelope.OK || r.code() != string(surface.CodeInvalidRequest) {
			t.Fatalf("reply = %s, want INVALID_REQUEST", r)
		}
		if got := pageCalls(t, p); got != calls {
			t.Errorf("the executor ran for a 1 MiB message")
		}
	})

	t.Run("executor timeout", func(t *testing.T) {
		setup(t, p, map[string]any{"execute": "hang", "executeTimeoutMs": 300, "replay": true})
		calls := pageCalls(t, p)
		note := pageNote(t, p, "T-2")
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-2", "note": "never"})
		r := send(t, p, env)
		wantCode(t, r, env["id"].(string), surface.CodeInternalError)
		noInternalDetail(t, r)
		if got := pageCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one", calls, got)
		}
		// The page still answers, and the timed-out id stays claimed: its
		// effect is unknown, so a retry with it must not run again.
		if d := describe(t, p, nil); len(d.Context.Records) != 3 {
			t.Errorf("describe after the timeout: %d records", len(d.Context.Records))
		}
		wantCode(t, send(t, p, env), env["id"].(string), surface.CodeReplayDetected)
		if got := pageCalls(t, p); got != calls+1 {
			t.Errorf("the retry ran the executor again")
		}
		if got := pageNote(t, p, "T-2"); got != note {
			t.Errorf("T-2 shows %q, was %q", got, note)
		}
		if !evalPage[bool](t, p, `new Promise((resolve) => setTimeout(() => resolve(true), 0))`) {
			t.Error("the page's event loop does not run")
		}
	})

	t.Run("executor throws", func(t *testing.T) {
		setup(t, p, map[string]any{"execute": "throw"})
		calls := pageCalls(t, p)
		env := invokeEnv(t, "orders.search", map[string]any{"query": "T"})
		r := send(t, p, env)
		wantCode(t, r, env["id"].(string), surface.CodeInternalError)
		noInternalDetail(t, r)
		if got := pageCalls(t, p); got != calls+1 {
			t.Errorf("executor calls %d -> %d, want one", calls, got)
		}
		describe(t, p, nil)
	})

	for _, how := range []string{"throw", "reject", "invalid"} {
		t.Run("rate limiter "+how, func(t *testing.T) {
			setup(t, p, map[string]any{"limiter": how})
			calls := pageCalls(t, p)
			for _, env := range []map[string]any{
				describeEnv(t, nil),
				invokeEnv(t, "update_note@order", map[string]any{"record": "T-3", "note": "unlimited"}),
			} {
				r := send(t, p, env)
				wantCode(t, r, env["id"].(string), surface.CodeRateLimitUnavailable)
				noInternalDetail(t, r)
			}
			if got := pageCalls(t, p); got != calls {
				t.Errorf("the executor ran without a rate decision")
			}
		})
		t.Run("replay guard "+how, func(t *testing.T) {
			setup(t, p, map[string]any{"guard": how})
			calls := pageCalls(t, p)
			env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-3", "note": "unguarded"})
			r := send(t, p, env)
			wantCode(t, r, env["id"].(string), surface.CodeReplayGuardUnavailable)
			noInternalDetail(t, r)
			if got := pageCalls(t, p); got != calls {
				t.Errorf("the executor ran without a replay claim")
			}
			describe(t, p, nil) // describe does not claim ids
		})
	}

	for _, tc := range []struct {
		session string
		code    surface.Code
	}{
		{"none", surface.CodeSessionRequired},
		{"malformed", surface.CodeSessionInvalid},
		{"throws", surface.CodeSessionInvalid},
	} {
		t.Run("session "+tc.session, func(t *testing.T) {
			setup(t, p, map[string]any{"session": tc.session})
			calls := pageCalls(t, p)
			for _, env := range []map[string]any{
				describeEnv(t, nil),
				invokeEnv(t, "update_note@order", map[string]any{"record": "T-3", "note": "no session"}),
			} {
				r := send(t, p, env)
				wantCode(t, r, env["id"].(string), tc.code)
				noInternalDetail(t, r)
			}
			if got := pageCalls(t, p); got != calls {
				t.Errorf("the executor ran without a session")
			}
		})
	}
}

// TestPrivateChannel connects over a MessagePort with a credential that the
// page checks itself. A wrong credential is refused and the port serves
// nothing; the right one gets a working channel; the credential never shows
// up in a reply or in an audit event.
func TestPrivateChannel(t *testing.T) {
	p := openTestPage(t)
	secret := randomHex(t, 16)
	wrong := randomHex(t, 16)
	setup(t, p, map[string]any{"credential": "cred-" + secret})

	type answer struct {
		Handle string `json:"handle"`
		Answer struct {
			Channel string `json:"channel"`
			Kind    string `json:"kind"`
			App     string `json:"app"`
		} `json:"answer"`
	}

	t.Run("wrong credential", func(t *testing.T) {
		a := evalAgent[answer](t, p, `agent.connect(`+js("cred-"+wrong)+`)`)
		if a.Answer.Channel != "pling.surface" || a.Answer.Kind != "refused" {
			t.Fatalf("answer %+v, want refused", a.Answer)
		}
		calls := pageCalls(t, p)
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "refused port"})
		evalAgent[bool](t, p, `(agent.portRequest(`+js(a.Handle)+`, `+js(env)+`, {timeoutMs: 60000}).catch(() => {}), true)`)
		p.sleep(t, settle)
		if n := evalAgent[int](t, p, `agent.portMessages(`+js(a.Handle)+`)`); n != 1 {
			t.Errorf("a refused port carried %d messages, want only the refusal", n)
		}
		if got := pageCalls(t, p); got != calls {
			t.Errorf("a refused port ran the executor")
		}
		if got := evalPage[[]string](t, p, `window.__e2e.authenticated()`); len(got) != 0 {
			t.Errorf("authenticated %v", got)
		}
	})

	t.Run("right credential", func(t *testing.T) {
		a := evalAgent[answer](t, p, `agent.connect(`+js("cred-"+secret)+`, {app: "orders"})`)
		if a.Answer.Channel != "pling.surface" || a.Answer.Kind != "connected" || a.Answer.App != "orders" {
			t.Fatalf("answer %+v, want connected to orders", a.Answer)
		}
		if got := evalPage[[]string](t, p, `window.__e2e.authenticated()`); len(got) != 1 || got[0] != siteURL {
			t.Errorf("the page authenticated %v, want [%s]", got, siteURL)
		}
		n := responseCount(t, p)
		d := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(describeEnv(t, nil))+`)`).description(t)
		if len(d.Capabilities) != 3 || len(d.Context.Records) != 3 {
			t.Errorf("describe over the port: %d capabilities, %d records", len(d.Capabilities), len(d.Context.Records))
		}
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "T-1", "note": "over the port"})
		r := evalAgent[reply](t, p, `agent.portRequest(`+js(a.Handle)+`, `+js(env)+`)`)
		if res := r.result(t); res["error"] != nil || r.Envelope.ID != env["id"] {
			t.Fatalf("invoke over the port: %s", r)
		}
		if got := pageNote(t, p, "T-1"); got != "over the port" {
			t.Errorf("T-1 shows %q", got)
		}
		if got := responseCount(t, p); got != n {
			t.Errorf("port replies also went to the window (%d -> %d)", n, got)
		}
	})

	t.Run("credential never echoed", func(t *testing.T) {
		transcript := evalAgent[string](t, p, `agent.transcript()`)
		audit := evalPage[[]map[string]any](t, p, `window.__e2e.audit()`)
		if len(audit) < 2 {
			t.Fatalf("only %d audit events", len(audit))
		}
		auditText := js(audit)
		for _, s := range []string{secret, wrong} {
			if strings.Contains(transcript, s) {
				t.Errorf("a reply carries the credential: %s", brief(transcript))
			}
			if strings.Contains(auditText, s) {
				t.Errorf("an audit event carries the credential: %s", brief(auditText))
			}
		}
		var sessions []string
		for _, ev := range audit {
			sessions = append(sessions, fmt.Sprint(ev["sessionId"]))
		}
		if !strings.Contains(strings.Join(sessions, ","), "ses_e2e") {
			t.Errorf("audit events %s do not name the port's session", brief(auditText))
		}
	})
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
