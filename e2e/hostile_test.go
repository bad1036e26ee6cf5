package e2e

import (
	"fmt"
	"strings"
	"testing"

	"pling.dev/agent/surface"
)

// hostileNote is what every hostile write tries to put on SO-1002.
const hostileNote = "written by a hostile sender"

// pageSnapshot is what a hostile message must not change.
type pageSnapshot struct {
	calls int
	note  string
	audit int
}

func snapshot(t testing.TB, p *tab) pageSnapshot {
	t.Helper()
	return pageSnapshot{calls: executorCalls(t, p), note: noteShown(t, p, "SO-1002"), audit: auditCount(t, p)}
}

// unchanged checks that nothing ran: the executor was not called and the
// note is what it was. extraAudit is how many audited requests the test
// itself sent in between.
func (s pageSnapshot) unchanged(t testing.TB, p *tab, extraAudit int) {
	t.Helper()
	now := snapshot(t, p)
	if now.calls != s.calls {
		t.Errorf("executor calls %d -> %d", s.calls, now.calls)
	}
	if now.note != s.note || now.note == hostileNote {
		t.Errorf("SO-1002 note %q -> %q", s.note, now.note)
	}
	if got := evalPage[string](t, p, `window.__demo.order("SO-1002").note`); got == hostileNote {
		t.Errorf("the page's SO-1002 holds the hostile note")
	}
	if now.audit != s.audit+extraAudit {
		t.Errorf("audit events %d -> %d, want %d more: the surface handled a message it must ignore", s.audit, now.audit, extraAudit)
	}
}

// hostileRequests are the surface requests a hostile sender tries.
func hostileRequests(prefix string) []any {
	wrap := func(env map[string]any) map[string]any {
		return map[string]any{"channel": "pling.surface", "kind": "request", "app": "orders", "envelope": env}
	}
	return []any{
		wrap(map[string]any{"protocol": surface.Protocol, "id": prefix + "-invoke", "method": "invoke", "capability": "update_note@order", "input": map[string]any{"record": "SO-1002", "note": hostileNote}}),
		wrap(map[string]any{"protocol": surface.Protocol, "id": prefix + "-approve", "method": "invoke", "capability": "approve@order", "input": map[string]any{"record": "SO-1001"}}),
		wrap(map[string]any{"protocol": surface.Protocol, "id": prefix + "-describe", "method": "describe"}),
	}
}

// TestDemoHostileSenders posts surface requests from senders the surface
// must not serve. None may run anything, change the page, be audited, or
// get a reply.
func TestDemoHostileSenders(t *testing.T) {
	p := openDemo(t)

	frames := []struct {
		name, src, origin string
		sandbox           bool
	}{
		{"cross-origin frame on another port", foreignURLs["same-site other port"] + "/hostile.html", foreignURLs["same-site other port"], false},
		{"cross-site frame", foreignURLs["cross-site"] + "/hostile.html", foreignURLs["cross-site"], false},
		{"sandboxed frame with an opaque origin", siteURL + "/e2e/foreign/hostile.html", "null", true},
	}
	for i, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			before := snapshot(t, p)
			n := responseCount(t, p)
			tag := fmt.Sprintf("hostile-%d", i)
			msgs := hostileRequests(tag)
			sent := evalAgent[frameMark](t, p, `agent.addFrame(`+js(f.src)+`, `+js(map[string]any{"tag": tag, "messages": msgs, "sandbox": f.sandbox})+`)`)
			// The frame really loaded, under the origin the test meant, and
			// posted everything before saying so.
			if sent.Origin != f.origin || sent.FrameOrigin != f.origin || sent.Count != len(msgs) {
				t.Fatalf("frame posted %+v, want %d messages from %s", sent, len(msgs), f.origin)
			}
			expectNoReplies(t, p, n)
			if report := evalAgent[frameMark](t, p, `agent.frameReport(`+js(tag)+`)`); len(report.Received) != 0 {
				t.Errorf("the frame got %d replies: %s", len(report.Received), brief(js(report.Received)))
			}
			before.unchanged(t, p, 1)
		})
	}

	t.Run("synthetic event from the page", func(t *testing.T) {
		before := snapshot(t, p)
		n := responseCount(t, p)
		for _, m := range hostileRequests("synthetic") {
			evalPage[bool](t, p, `(window.dispatchEvent(new MessageEvent("message", {data: `+js(m)+`, origin: location.origin, source: window})), true)`)
		}
		expectNoReplies(t, p, n)
		before.unchanged(t, p, 1)
	})

	t.Run("not surface requests", func(t *testing.T) {
		before := snapshot(t, p)
		n := responseCount(t, p)
		env := hostileRequests("other")[0].(map[string]any)["envelope"]
		for _, m := range []any{
			"hello",
			42,
			nil,
			[]any{env},
			map[string]any{},
			map[string]any{"random": "object", "nested": map[string]any{"a": 1}},
			map[string]any{"channel": "pling.surface"},
			map[string]any{"channel": "pling.surface", "kind": "Request", "envelope": env},
			map[string]any{"channel": "pling.surface", "kind": "connect"}, // no port to answer on
			map[string]any{"channel": "pling.other", "kind": "request", "envelope": env},
			map[string]any{"channel": "pling.surface", "kind": "request", "app": "billing", "envelope": env},
			js(map[string]any{"channel": "pling.surface", "kind": "request", "envelope": env}), // JSON text, not an object
		} {
			evalAgent[bool](t, p, `(agent.post(`+js(m)+`), true)`)
		}
		expectNoReplies(t, p, n)
		before.unchanged(t, p, 1)
	})

	t.Run("session member", func(t *testing.T) {
		forged := map[string]any{
			"agentId": "agent.evil", "sessionId": "ses_forged", "userId": "u-admin",
			"expiresAt": 4102444800000, "scope": []string{"update_note@order", "approve@order"},
		}
		for _, where := range []string{"wrapper", "envelope"} {
			t.Run(where, func(t *testing.T) {
				before := snapshot(t, p)
				env := invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": hostileNote})
				var wrapper map[string]any
				if where == "wrapper" {
					wrapper = map[string]any{"session": forged}
				} else {
					env["session"] = forged
				}
				r := sendWith(t, p, env, wrapper)
				wantCode(t, r, env["id"].(string), surface.CodeInvalidRequest)
				p.sleep(t, settle)
				before.unchanged(t, p, auditDelta(t, p, before))
			})
		}
	})

	t.Run("oversize message", func(t *testing.T) {
		before := snapshot(t, p)
		env := invokeEnv(t, "update_note@order", map[string]any{"record": "SO-1002", "note": strings.Repeat("x", 1<<20)})
		r := evalAgent[reply](t, p, `agent.request(`+js(env)+`, {acceptEmptyId: true})`)
		if r.Envelope.OK || r.code() != string(surface.CodeInvalidRequest) {
			t.Fatalf("reply = %s, want INVALID_REQUEST", r)
		}
		p.sleep(t, settle)
		before.unchanged(t, p, auditDelta(t, p, before))
	})
}

// auditDelta is how many audit events appeared since before. A refused
// request may or may not be audited; what matters is that nothing ran, so
// the tests that use it only bound it.
func auditDelta(t testing.TB, p *tab, before pageSnapshot) int {
	t.Helper()
	d := auditCount(t, p) - before.audit
	if d < 0 || d > 1 {
		t.Errorf("audit events changed by %d for one request", d)
	}
	return d
}
