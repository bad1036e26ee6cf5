package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// pEchoPage is the orders page plus two schema-less actions that echo
// nothing back: "p.echo" and the folded "p.echo@order". Without a schema the
// executor sees the input exactly as the kernel forwards it.
func pEchoPage(n int) *surfacetest.Page {
	p := surfacetest.Orders(n)
	p.Actions = append(p.Actions,
		surface.Action{ID: "p.echo", Effect: "read"},
		surface.Action{ID: "p.echo@order", Effect: "read", Record: &surface.RecordTemplate{Kind: "order"}},
	)
	echo := func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"echoed":true}`), nil
	}
	p.Handlers["p.echo"] = echo
	p.Handlers["p.echo@order"] = echo
	return p
}

// pGuard is a replay guard that counts claims and can be made to fail.
type pGuard struct {
	mu     sync.Mutex
	inner  surface.ReplayGuard
	claims int
	err    error
}

func (g *pGuard) Claim(ctx context.Context, key surface.ReplayKey, now time.Time, window time.Duration) (surface.ReplayDecision, error) {
	g.mu.Lock()
	g.claims++
	err := g.err
	g.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return g.inner.Claim(ctx, key, now, window)
}

func (g *pGuard) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.claims
}

// pEnv is a surface with every injected service observable: a session
// source, a limiter and a replay guard.
type pEnv struct {
	page  *surfacetest.Page
	sess  *pSessions
	lim   *pLimiter
	guard *pGuard
	s     *surface.Surface
}

func pNewEnv(t testing.TB) *pEnv {
	e := &pEnv{
		page:  pEchoPage(5),
		sess:  &pSessions{},
		lim:   &pLimiter{},
		guard: &pGuard{inner: surface.NewMemoryGuard(100)},
	}
	e.sess.set(pSession("s1", "orders.search", "update_note@order", "p.echo", "p.echo@order"), nil)
	e.s = pNewSurface(t, e.page, func(o *surface.Options) {
		o.Session = e.sess.source
		o.RateLimit = &surface.RateLimitOptions{Limiter: e.lim}
		o.Replay = &surface.ReplayOptions{Guard: e.guard}
	})
	return e
}

func pExpired(id string, scope ...string) *surface.Session {
	s := pSession(id, scope...)
	s.ExpiresAt = surfacetest.Epoch.Add(-time.Second)
	return s
}

func TestProcessingOrder(t *testing.T) {
	const (
		descBadInput = `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","input":{"bogus":1}}`
		descExtra    = `{"protocol":"pling.surface/0.1","id":"r1","method":"describe","extra":1}`
		validNote    = `{"protocol":"pling.surface/0.1","id":"dup","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":"n"}}`
	)
	tests := []struct {
		name  string
		setup func(e *pEnv)
		// before are requests sent first (to claim an id, say).
		before []string
		req    string
		code   string
		// violations is whether the failure must carry schema violations.
		violations bool
		// execCalls is the executor calls after everything (before included).
		execCalls int
		// -1 means "not checked".
		sessionCalls, limiterCalls, claims int
	}{
		{name: "bad id beats bad protocol", req: `{"protocol":"x","id":7,"method":"describe"}`,
			code: "INVALID_REQUEST", sessionCalls: 0, limiterCalls: 0, claims: 0},
		{name: "bad protocol beats unknown method", req: `{"protocol":"pling.surface/9","id":"r","method":"attach"}`,
			code: "PROTOCOL_VERSION_UNSUPPORTED", sessionCalls: 0, limiterCalls: 0, claims: 0},
		{name: "bad protocol beats missing session", setup: func(e *pEnv) { e.sess.set(nil, nil) },
			req: `{"protocol":"pling.surface/0.2","id":"r","method":"describe"}`, code: "PROTOCOL_VERSION_UNSUPPORTED",
			sessionCalls: 0, limiterCalls: 0, claims: 0},
		{name: "unknown method beats missing session", setup: func(e *pEnv) { e.sess.set(nil, nil) },
			req: `{"protocol":"pling.surface/0.1","id":"r","method":"attach"}`, code: "METHOD_NOT_SUPPORTED",
			sessionCalls: 0, limiterCalls: 0, claims: 0},
		{name: "expired session beats bad describe field", setup: func(e *pEnv) { e.sess.set(pExpired("s1", "p.echo"), nil) },
			req: descBadInput, code: "SESSION_EXPIRED", sessionCalls: 1, limiterCalls: 0, claims: 0},
		{name: "expired session beats unknown top-level field", setup: func(e *pEnv) { e.sess.set(pExpired("s1", "p.echo"), nil) },
			req: descExtra, code: "SESSION_EXPIRED", sessionCalls: 1, limiterCalls: 0, claims: 0},
		{name: "missing session beats unexposed capability", setup: func(e *pEnv) { e.sess.set(nil, nil) },
			req: `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"nope"}`, code: "SESSION_REQUIRED",
			sessionCalls: 1, limiterCalls: 0, claims: 0},
		{name: "session beats rate limit", setup: func(e *pEnv) { e.sess.set(pExpired("s1"), nil); e.lim.setDeny(true) },
			req: `{"protocol":"pling.surface/0.1","id":"r","method":"describe"}`, code: "SESSION_EXPIRED",
			sessionCalls: 1, limiterCalls: 0, claims: 0},
		{name: "rate limit beats bad describe input", setup: func(e *pEnv) { e.lim.setDeny(true) },
			req: descBadInput, code: "RATE_LIMITED", sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "rate limit beats unknown top-level field", setup: func(e *pEnv) { e.lim.setDeny(true) },
			req: descExtra, code: "RATE_LIMITED", sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "rate limit beats missing capability", setup: func(e *pEnv) { e.lim.setDeny(true) },
			req: `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","input":5}`, code: "RATE_LIMITED",
			sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "rate limit beats unexposed capability", setup: func(e *pEnv) { e.lim.setDeny(true) },
			req: `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"nope"}`, code: "RATE_LIMITED",
			sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "method fields beat unexposed capability",
			req:  `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"nope","input":[]}`,
			code: "INVALID_REQUEST", sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "describe input beats registry failure", setup: func(e *pEnv) { e.page.Lock(func(p *surfacetest.Page) { p.ViewErr = errors.New("down") }) },
			req: descBadInput, code: "INVALID_REQUEST", sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "capability beats missing record",
			req:  `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"approve@order","input":{"record":"SO-9999"}}`,
			code: "CAPABILITY_NOT_EXPOSED", sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "record beats schema",
			req:  `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"update_note@order","input":{"record":"SO-9999","note":5}}`,
			code: "INVALID_REQUEST", violations: false, sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "capability beats replay", before: []string{validNote},
			req:  `{"protocol":"pling.surface/0.1","id":"dup","method":"invoke","capability":"approve@order","input":{"record":"SO-1002"}}`,
			code: "CAPABILITY_NOT_EXPOSED", execCalls: 1, sessionCalls: 2, limiterCalls: 2, claims: 1},
		{name: "record beats replay", before: []string{validNote},
			req:  `{"protocol":"pling.surface/0.1","id":"dup","method":"invoke","capability":"update_note@order","input":{"record":"SO-9999","note":"n"}}`,
			code: "INVALID_REQUEST", execCalls: 1, sessionCalls: 2, limiterCalls: 2, claims: 1},
		{name: "schema beats replay", before: []string{validNote},
			req:  `{"protocol":"pling.surface/0.1","id":"dup","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002","note":5}}`,
			code: "INVALID_REQUEST", violations: true, execCalls: 1, sessionCalls: 2, limiterCalls: 2, claims: 1},
		{name: "schema beats replay guard failure", setup: func(e *pEnv) { e.guard.err = errors.New("down") },
			req:  `{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"update_note@order","input":{"record":"SO-1002"}}`,
			code: "INVALID_REQUEST", violations: true, sessionCalls: 1, limiterCalls: 1, claims: 0},
		{name: "replay beats executor", before: []string{validNote}, req: validNote,
			code: "REPLAY_DETECTED", execCalls: 1, sessionCalls: 2, limiterCalls: 2, claims: 2},
		{name: "guard failure beats executor", setup: func(e *pEnv) { e.guard.err = errors.New("down") }, req: validNote,
			code: "REPLAY_GUARD_UNAVAILABLE", sessionCalls: 1, limiterCalls: 1, claims: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := pNewEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			for _, b := range tc.before {
				if m := pDo(t, e.s, b); m["ok"] != true {
					t.Fatalf("setup request failed: %v", m)
				}
			}
			m := pDo(t, e.s, tc.req)
			if got := pCode(m); got != tc.code {
				t.Fatalf("code = %q, want %q (%v)", got, tc.code, m["error"])
			}
			_, hasViolations := m["error"].(map[string]any)["violations"]
			if hasViolations != tc.violations {
				t.Errorf("violations present = %v, want %v", hasViolations, tc.violations)
			}
			if n := len(e.page.Calls()); n != tc.execCalls {
				t.Errorf("executor calls = %d, want %d", n, tc.execCalls)
			}
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"session source calls", e.sess.count(), tc.sessionCalls},
				{"limiter calls", e.lim.count(), tc.limiterCalls},
				{"replay claims", e.guard.count(), tc.claims},
			} {
				if c.want >= 0 && c.got != c.want {
					t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestEnvelopeStepOne(t *testing.T) {
	page := pEchoPage(3)
	sess := &pSessions{}
	sess.set(pSession("s1", "p.echo"), nil)
	s := pNewSurface(t, page, func(o *surface.Options) { o.Session = sess.source })
	tests := []struct {
		name, req, code, id string
	}{
		{"string", `"describe"`, "INVALID_REQUEST", ""},
		{"number", `1`, "INVALID_REQUEST", ""},
		{"boolean", `true`, "INVALID_REQUEST", ""},
		{"null", `null`, "INVALID_REQUEST", ""},
		{"empty array", `[]`, "INVALID_REQUEST", ""},
		{"array of a valid request", `[{"protocol":"pling.surface/0.1","id":"a","method":"describe"}]`, "INVALID_REQUEST", ""},
		{"missing id", `{"protocol":"pling.surface/0.1","method":"describe"}`, "INVALID_REQUEST", ""},
		{"empty id", `{"protocol":"pling.surface/0.1","id":"","method":"describe"}`, "INVALID_REQUEST", ""},
		{"numeric id", `{"protocol":"pling.surface/0.1","id":1,"method":"describe"}`, "INVALID_REQUEST", ""},
		{"null id", `{"protocol":"pling.surface/0.1","id":null,"method":"describe"}`, "INVALID_REQUEST", ""},
		{"array id", `{"protocol":"pling.surface/0.1","id":["a"],"method":"describe"}`, "INVALID_REQUEST", ""},
		{"object id", `{"protocol":"pling.surface/0.1","id":{"a":1},"method":"describe"}`, "INVALID_REQUEST", ""},
		{"missing protocol", `{"id":"a","method":"describe"}`, "INVALID_REQUEST", "a"},
		{"numeric protocol", `{"protocol":0.1,"id":"a","method":"describe"}`, "INVALID_REQUEST", "a"},
		{"null protocol", `{"protocol":null,"id":"a","method":"describe"}`, "INVALID_REQUEST", "a"},
		{"array protocol", `{"protocol":["pling.surface/0.1"],"id":"a","method":"describe"}`, "INVALID_REQUEST", "a"},
		{"other version", `{"protocol":"pling.surface/0.2","id":"a","method":"describe"}`, "PROTOCOL_VERSION_UNSUPPORTED", "a"},
		{"older version", `{"protocol":"pling.surface/0.0","id":"a","method":"describe"}`, "PROTOCOL_VERSION_UNSUPPORTED", "a"},
		{"version in other case", `{"protocol":"PLING.SURFACE/0.1","id":"a","method":"describe"}`, "PROTOCOL_VERSION_UNSUPPORTED", "a"},
		{"version with space", `{"protocol":"pling.surface/0.1 ","id":"a","method":"describe"}`, "PROTOCOL_VERSION_UNSUPPORTED", "a"},
		{"empty version", `{"protocol":"","id":"a","method":"describe"}`, "PROTOCOL_VERSION_UNSUPPORTED", "a"},
		{"missing method", `{"protocol":"pling.surface/0.1","id":"a"}`, "INVALID_REQUEST", "a"},
		{"numeric method", `{"protocol":"pling.surface/0.1","id":"a","method":1}`, "INVALID_REQUEST", "a"},
		{"null method", `{"protocol":"pling.surface/0.1","id":"a","method":null}`, "INVALID_REQUEST", "a"},
		{"unknown method", `{"protocol":"pling.surface/0.1","id":"a","method":"attach"}`, "METHOD_NOT_SUPPORTED", "a"},
		{"method in other case", `{"protocol":"pling.surface/0.1","id":"a","method":"Describe"}`, "METHOD_NOT_SUPPORTED", "a"},
		{"empty method", `{"protocol":"pling.surface/0.1","id":"a","method":""}`, "METHOD_NOT_SUPPORTED", "a"},
		{"future method", `{"protocol":"pling.surface/0.1","id":"a","method":"observe"}`, "METHOD_NOT_SUPPORTED", "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := sess.count()
			m := pDo(t, s, tc.req)
			if got := pCode(m); got != tc.code {
				t.Errorf("code = %q, want %q", got, tc.code)
			}
			if m["id"] != tc.id {
				t.Errorf("id = %q, want %q", m["id"], tc.id)
			}
			if sess.count() != before {
				t.Error("a step-1 failure asked the session source")
			}
		})
	}
	if n := len(page.Calls()); n != 0 {
		t.Errorf("executor called %d times", n)
	}
}

// pPad inserts spaces before the final byte of req until it is n bytes long.
func pPad(t testing.TB, req string, n int) string {
	t.Helper()
	if len(req) > n {
		t.Fatalf("request is %d bytes already, want %d", len(req), n)
	}
	return req[:len(req)-1] + strings.Repeat(" ", n-len(req)) + req[len(req)-1:]
}

// pInvoke is an invoke of capability with the given input JSON.
func pInvoke(id, capability, input string) string {
	return `{"protocol":"pling.surface/0.1","id":"` + id + `","method":"invoke","capability":"` + capability + `","input":` + input + `}`
}

func TestEnvelopeBounds(t *testing.T) {
	limits := surface.Limits{MaxRequestBytes: 512, MaxDepth: 5, MaxStringBytes: 40, MaxArrayLen: 3, MaxMembers: 6}
	echo := func(input string) string { return pInvoke("b", "p.echo", input) }
	tests := []struct {
		name string
		req  string
		ok   bool
	}{
		{"size at limit", pPad(t, echo(`{}`), 512), true},
		{"size over limit", pPad(t, echo(`{}`), 513), false},
		{"depth at limit", echo(`{"a":{"b":{"c":{}}}}`), true},
		{"depth over limit", echo(`{"a":{"b":{"c":{"d":{}}}}}`), false},
		{"depth at limit in arrays", echo(`{"a":[[[1]]]}`), true},
		{"depth over limit in arrays", echo(`{"a":[[[[1]]]]}`), false},
		{"string at limit", echo(`{"s":"` + strings.Repeat("x", 40) + `"}`), true},
		{"string over limit", echo(`{"s":"` + strings.Repeat("x", 41) + `"}`), false},
		{"string limit counts bytes", echo(`{"s":"` + strings.Repeat("é", 21) + `"}`), false},
		{"escaped string counts decoded bytes", echo(`{"s":"` + strings.Repeat(`\u0078`, 40) + `"}`), true},
		{"key over limit", echo(`{"` + strings.Repeat("k", 41) + `":1}`), false},
		{"id over limit", strings.Replace(echo(`{}`), `"id":"b"`, `"id":"`+strings.Repeat("i", 41)+`"`, 1), false},
		{"array at limit", echo(`{"a":[1,2,3]}`), true},
		{"array over limit", echo(`{"a":[1,2,3,4]}`), false},
		{"members at limit", echo(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`), true},
		{"members over limit", echo(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(2)
			s := pNewSurface(t, page, func(o *surface.Options) { o.Limits = limits })
			m := pDo(t, s, tc.req)
			if tc.ok {
				if m["ok"] != true {
					t.Fatalf("rejected within bounds: %v", m["error"])
				}
				if n := len(page.Calls()); n != 1 {
					t.Errorf("executor calls = %d, want 1", n)
				}
				return
			}
			if got := pCode(m); got != "INVALID_REQUEST" {
				t.Errorf("code = %q, want INVALID_REQUEST", got)
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}
		})
	}

	t.Run("default size limit", func(t *testing.T) {
		s := pNewSurface(t, surfacetest.Orders(1), nil)
		req := `{"protocol":"pling.surface/0.1","id":"d","method":"describe"}`
		if m := pDo(t, s, pPad(t, req, surface.DefaultLimits.MaxRequestBytes)); m["ok"] != true {
			t.Errorf("request of exactly MaxRequestBytes rejected: %v", m["error"])
		}
		m := pDo(t, s, pPad(t, req, surface.DefaultLimits.MaxRequestBytes+1))
		if pCode(m) != "INVALID_REQUEST" {
			t.Errorf("request of MaxRequestBytes+1: code %q, want INVALID_REQUEST", pCode(m))
		}
	})
}

func TestEnvelopeStrictKeys(t *testing.T) {
	tests := []struct {
		name, req string
	}{
		{"duplicate id", `{"protocol":"pling.surface/0.1","id":"a","id":"b","method":"describe"}`},
		{"duplicate method", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","method":"invoke","capability":"p.echo"}`},
		{"duplicate capability", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","input":{},"capability":"p.echo"}`},
		{"duplicate in describe input", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"limit":1,"limit":2}}`},
		{"duplicate in invoke input", pInvoke("a", "p.echo", `{"note":"a","note":"b"}`)},
		{"duplicate deep in input", pInvoke("a", "p.echo", `{"x":{"y":[{"a":1,"a":2}]}}`)},
		{"case variant id", `{"protocol":"pling.surface/0.1","id":"a","ID":"b","method":"describe"}`},
		{"case variant method", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","Method":"invoke"}`},
		{"case variant protocol", `{"protocol":"pling.surface/0.1","PROTOCOL":"x","id":"a","method":"describe"}`},
		{"case variant in describe input", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"limit":1,"Limit":2}}`},
		{"case variant in invoke input", pInvoke("a", "p.echo", `{"note":"a","NOTE":"b"}`)},
		{"case variant deep in input", pInvoke("a", "p.echo", `{"x":{"y":[{"a":1,"A":2}]}}`)},
		{"case variant of a folded record parameter", pInvoke("a", "p.echo@order", `{"record":"SO-1001","Record":"SO-1002"}`)},
		{"unicode case folding", pInvoke("a", "p.echo", `{"k":1,"\u212a":2}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(3)
			s := pNewSurface(t, page, nil)
			m := pDo(t, s, tc.req)
			if pCode(m) != "INVALID_REQUEST" {
				t.Errorf("code = %q, want INVALID_REQUEST", pCode(m))
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}
		})
	}
}

func TestEnvelopeUnknownFields(t *testing.T) {
	tests := []struct {
		name, req string
	}{
		{"session on describe", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","session":{"scope":["p.echo"]}}`},
		{"session on invoke", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"p.echo","session":{"sessionId":"s2","scope":["p.echo"]}}`},
		{"null session on invoke", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","session":null}`},
		{"scope on invoke", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","scope":["p.echo"]}`},
		{"capability on describe", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","capability":"orders.search"}`},
		{"record at top level", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"update_note@order","record":"SO-1001","input":{"note":"x"}}`},
		{"input spelled in another case", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","Input":{}}`},
		{"params", `{"protocol":"pling.surface/0.1","id":"a","method":"describe","params":{}}`},
		{"jsonrpc", `{"jsonrpc":"2.0","protocol":"pling.surface/0.1","id":"a","method":"describe"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(3)
			// The session allows orders.search only: a body naming another
			// scope must not widen it, and must not even be read.
			s := pNewSurface(t, page, func(o *surface.Options) {
				o.Session = surface.StaticSession(pSession("s1", "orders.search", "update_note@order"))
			})
			m := pDo(t, s, tc.req)
			if pCode(m) != "INVALID_REQUEST" {
				t.Errorf("code = %q, want INVALID_REQUEST", pCode(m))
			}
			if m["id"] != "a" {
				t.Errorf("id = %v, want a", m["id"])
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}
		})
	}
}

func TestEnvelopeExactNumbers(t *testing.T) {
	tests := []struct {
		name, capability, input, want string
	}{
		{"big integer and trailing zero", "p.echo",
			`{"big":123456789012345678901234567890,"price":1.50}`,
			`{"big":123456789012345678901234567890,"price":1.50}`},
		{"exponents and negative zero", "p.echo",
			`{"a":1E+2,"b":-0,"c":1e-400,"d":1e400,"e":0.1000}`,
			`{"a":1E+2,"b":-0,"c":1e-400,"d":1e400,"e":0.1000}`},
		{"nested", "p.echo",
			`{"x":[9007199254740993,{"y":2.00}]}`,
			`{"x":[9007199254740993,{"y":2.00}]}`},
		{"folded template", "p.echo@order",
			`{"record":"SO-1001","amount":10.10,"n":18446744073709551617}`,
			`{"amount":10.10,"n":18446744073709551617}`},
		{"through a schema", "p.num",
			`{"amount":1.50}`,
			`{"amount":1.50}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(2)
			page.Actions = append(page.Actions, surface.Action{ID: "p.num",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01}}}`)})
			page.Handlers["p.num"] = page.Handlers["p.echo"]
			s := pNewSurface(t, page, nil)
			m := pDo(t, s, pInvoke("n", tc.capability, tc.input))
			if m["ok"] != true {
				t.Fatalf("rejected: %v", m["error"])
			}
			calls := page.Calls()
			if len(calls) != 1 {
				t.Fatalf("executor calls = %d, want 1", len(calls))
			}
			if got := string(calls[0].Input); got != tc.want {
				t.Errorf("executor input = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestEnvelopeSurrogates(t *testing.T) {
	tests := []struct {
		name, req string
		ok        bool
		input     string // executor input when ok
	}{
		{"lone high surrogate in id", `{"protocol":"pling.surface/0.1","id":"\ud800","method":"describe"}`, false, ""},
		{"lone low surrogate in input", pInvoke("a", "p.echo", `{"note":"\udc00"}`), false, ""},
		{"lone surrogate in key", pInvoke("a", "p.echo", `{"\ud800":1}`), false, ""},
		{"high surrogate then letter", pInvoke("a", "p.echo", `{"note":"\ud800\u0041"}`), false, ""},
		{"reversed pair", pInvoke("a", "p.echo", `{"note":"\ude00\ud83d"}`), false, ""},
		{"lone surrogate in capability", pInvoke("a", `p.echo\ud800`, `{}`), false, ""},
		{"invalid UTF-8 byte", pInvoke("a", "p.echo", "{\"note\":\"\xff\"}"), false, ""},
		{"valid pair", pInvoke("a", "p.echo", `{"note":"\ud83d\ude00"}`), true, `{"note":"😀"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(2)
			s := pNewSurface(t, page, nil)
			m := pDo(t, s, tc.req)
			calls := page.Calls()
			if !tc.ok {
				if pCode(m) != "INVALID_REQUEST" {
					t.Errorf("code = %q, want INVALID_REQUEST", pCode(m))
				}
				if len(calls) != 0 {
					t.Errorf("executor calls = %d, want 0", len(calls))
				}
				return
			}
			if m["ok"] != true || len(calls) != 1 {
				t.Fatalf("ok = %v, calls = %d: %v", m["ok"], len(calls), m["error"])
			}
			if got := string(calls[0].Input); got != tc.input {
				t.Errorf("executor input = %s, want %s", got, tc.input)
			}
		})
	}
}

type pStruct struct{ Protocol, ID, Method string }

func TestHandleValue(t *testing.T) {
	env := func(extra map[string]any) map[string]any {
		m := map[string]any{"protocol": surface.Protocol, "id": "v", "method": "describe"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	invoke := func(input any) map[string]any {
		return map[string]any{"protocol": surface.Protocol, "id": "v", "method": "invoke", "capability": "p.echo", "input": input}
	}
	cyclic := map[string]any{"protocol": surface.Protocol, "id": "v", "method": "describe"}
	cyclic["input"] = cyclic
	deep := map[string]any{}
	for range 40 {
		deep = map[string]any{"a": deep}
	}
	big := make([]any, 6)
	for i := range big {
		big[i] = strings.Repeat("x", 15<<10)
	}

	tests := []struct {
		name    string
		v       any
		ok      bool
		records int    // describe: records returned (when ok)
		input   string // invoke: executor input (when ok)
	}{
		{name: "plain describe", v: env(nil), ok: true, records: 8},
		{name: "float64 limit", v: env(map[string]any{"input": map[string]any{"limit": 3.0}}), ok: true, records: 3},
		{name: "int limit", v: env(map[string]any{"input": map[string]any{"limit": 2}}), ok: true, records: 2},
		{name: "json.Number limit", v: env(map[string]any{"input": map[string]any{"limit": json.Number("1")}}), ok: true, records: 1},
		{name: "fractional limit", v: env(map[string]any{"input": map[string]any{"limit": 1.5}})},
		{name: "negative limit", v: env(map[string]any{"input": map[string]any{"limit": -1}})},
		{name: "NaN limit", v: env(map[string]any{"input": map[string]any{"limit": math.NaN()}})},
		{name: "infinite offset", v: env(map[string]any{"input": map[string]any{"offset": math.Inf(1)}})},
		{name: "bad json.Number", v: env(map[string]any{"input": map[string]any{"limit": json.Number("01")}})},
		{name: "case variant keys", v: env(map[string]any{"ID": "w"})},
		{name: "case variant keys in input", v: invoke(map[string]any{"note": "a", "Note": "b"})},
		{name: "unknown field session", v: env(map[string]any{"session": map[string]any{"scope": []any{"p.echo"}}})},
		{name: "func value", v: invoke(map[string]any{"f": func() {}})},
		{name: "struct value", v: invoke(pStruct{})},
		{name: "struct request", v: pStruct{Protocol: surface.Protocol, ID: "v", Method: "describe"}},
		{name: "pointer to request", v: func() any { m := env(nil); return &m }()},
		{name: "typed string map", v: map[string]string{"protocol": surface.Protocol, "id": "v", "method": "describe"}},
		{name: "typed string map input", v: invoke(map[string]string{"note": "x"})},
		{name: "typed slice in input", v: invoke(map[string]any{"tags": []string{"a"}})},
		{name: "channel", v: invoke(map[string]any{"c": make(chan int)})},
		{name: "nil", v: nil},
		{name: "array", v: []any{env(nil)}},
		{name: "string", v: "describe"},
		{name: "numeric id", v: map[string]any{"protocol": surface.Protocol, "id": 1, "method": "describe"}},
		{name: "invalid UTF-8", v: invoke(map[string]any{"note": "\xff"})},
		{name: "cyclic", v: cyclic},
		{name: "too deep", v: invoke(deep)},
		{name: "string too long", v: invoke(map[string]any{"s": strings.Repeat("x", surface.DefaultLimits.MaxStringBytes+1)})},
		{name: "encoded size over limit", v: invoke(map[string]any{"parts": big})},
		{name: "numbers reach the executor exactly", ok: true,
			v:     invoke(map[string]any{"big": json.Number("123456789012345678901234567890"), "price": json.Number("1.50"), "f": 1.5, "i": int64(-7)}),
			input: `{"big":123456789012345678901234567890,"f":1.5,"i":-7,"price":1.50}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(20)
			s := pNewSurface(t, page, nil)
			r := s.HandleValue(context.Background(), tc.v)
			m, ok := pDecode(t, s.Encode(r)).(map[string]any)
			if !ok {
				t.Fatal("response is not an object")
			}
			if err := pShapeError(m); err != nil {
				t.Fatal(err)
			}
			calls := page.Calls()
			if !tc.ok {
				if r.OK || r.Error == nil || r.Error.Code != surface.CodeInvalidRequest {
					t.Errorf("response = %+v, want INVALID_REQUEST", r)
				}
				if len(calls) != 0 {
					t.Errorf("executor calls = %d, want 0", len(calls))
				}
				return
			}
			if !r.OK {
				t.Fatalf("rejected: %v", r.Error)
			}
			if tc.input != "" {
				if len(calls) != 1 || string(calls[0].Input) != tc.input {
					t.Errorf("executor calls = %v, want one with input %s", calls, tc.input)
				}
				return
			}
			d, ok := r.Result.(*surface.Description)
			if !ok {
				t.Fatalf("result is %T, want *surface.Description", r.Result)
			}
			if len(d.Context.Records) != tc.records {
				t.Errorf("records = %d, want %d", len(d.Context.Records), tc.records)
			}
		})
	}
}

func TestHandleNeverPanics(t *testing.T) {
	deepArrays := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepObjects := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	inputs := map[string][]byte{
		"nil":                nil,
		"empty":              {},
		"space":              []byte(" "),
		"NUL":                {0},
		"invalid UTF-8":      {0xff, 0xfe, 0xfd},
		"BOM then request":   append([]byte("\xef\xbb\xbf"), `{"protocol":"pling.surface/0.1","id":"a","method":"describe"}`...),
		"open brace":         []byte("{"),
		"close brace":        []byte("}"),
		"truncated":          []byte(`{"protocol":"pling.surface/0.1","id":"a","method":`),
		"truncated string":   []byte(`{"protocol":"pling.surface/0.1","id":"a`),
		"deep arrays":        []byte(deepArrays),
		"deep objects":       []byte(deepObjects),
		"huge":               []byte(`"` + strings.Repeat("x", 1<<20) + `"`),
		"huge exponent":      []byte(`1e999999999`),
		"NaN":                []byte(`NaN`),
		"comment":            []byte(`/* */{"protocol":"pling.surface/0.1","id":"a","method":"describe"}`),
		"trailing comma":     []byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe",}`),
		"two documents":      []byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe"}{}`),
		"single quotes":      []byte(`{'protocol':'pling.surface/0.1'}`),
		"lone surrogate":     []byte(`"\ud800"`),
		"control character":  []byte("{\"protocol\":\"pling.surface/0.1\",\"id\":\"a\x01\",\"method\":\"describe\"}"),
		"leading zero":       []byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe","input":{"limit":01}}`),
		"executor panics":    []byte(pInvoke("a", "orders.panic", `{}`)),
		"executor fails":     []byte(pInvoke("a", "orders.fail", `{}`)),
		"describe":           []byte(`{"protocol":"pling.surface/0.1","id":"a","method":"describe"}`),
		"invoke":             []byte(pInvoke("a", "orders.search", `{"query":"x"}`)),
		"invoke input array": []byte(pInvoke("a", "orders.search", `[]`)),
		"many members":       []byte(`{` + strings.Repeat(`"k":1,`, 300) + `"z":1}`),
	}
	pages := map[string]func() *surfacetest.Page{
		"healthy page": func() *surfacetest.Page { return surfacetest.Orders(3) },
		"registry panics": func() *surfacetest.Page {
			p := surfacetest.Orders(3)
			p.ViewPanic = true
			return p
		},
		"registry fails": func() *surfacetest.Page {
			p := surfacetest.Orders(3)
			p.ViewErr = errors.New("secret=hunter2")
			return p
		},
	}
	for pname, mk := range pages {
		for iname, in := range inputs {
			t.Run(pname+"/"+iname, func(t *testing.T) {
				s := pNewSurface(t, mk(), nil)
				var r *surface.Response
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("Handle panicked: %v", p)
						}
					}()
					r = s.Handle(context.Background(), in)
				}()
				if r == nil {
					t.Fatal("nil response")
				}
				if r.Protocol != surface.Protocol || (r.Result == nil) == (r.Error == nil) || r.OK != (r.Error == nil) {
					t.Errorf("malformed response %+v", r)
				}
				m, ok := pDecode(t, s.HandleJSON(context.Background(), in)).(map[string]any)
				if !ok {
					t.Fatal("encoded response is not an object")
				}
				if err := pShapeError(m); err != nil {
					t.Error(err)
				}
				pNoDetail(t, m)
			})
		}
	}
}

// TestDescribeJSONMessages: the in-page describe names what is wrong with
// its input, and with several wrong fields always the same one.
func TestDescribeJSONMessages(t *testing.T) {
	s := pNewSurface(t, surfacetest.Orders(3), func(o *surface.Options) { o.Limits.MaxRequestBytes = 64 })
	for _, tc := range []struct{ input, want string }{
		{`{"limit":"` + strings.Repeat("x", 64) + `"}`, "describe input is larger than the size limit"},
		{`{"limit":1,"Limit":2}`, "describe input has keys that differ only in case at /Limit"},
		{`{"record":"\udc00"}`, "describe input is not valid JSON at /record"},
		{`{"limit":`, "describe input is not valid JSON at /limit"},
		{`[1]`, "describe input must be an object"},
		{`{"zz":1,"offset":-1,"aa":1}`, `unknown describe input field "aa"`},
		{`{"record":"SO-1","limit":1}`, "record cannot be combined with offset or limit"},
	} {
		for range 10 { // map order must not pick the message
			x := s.BeginDescribe([]byte(tc.input), false)
			s.Drive(context.Background(), x)
			_, _, err := x.Reply()
			var perr *surface.Error
			if !errors.As(err, &perr) || perr.Code != surface.CodeInvalidRequest || perr.Message != tc.want {
				t.Fatalf("BeginDescribe(%s) = %v, want INVALID_REQUEST %q", tc.input, perr, tc.want)
			}
			x.Release()
		}
	}
}

func TestDescribeInputRules(t *testing.T) {
	ids := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"SO-%d"`, 1001+i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	tests := []struct {
		name, input string
		ok          bool
		records     int
	}{
		{"absent", "", true, 8},
		{"empty object", `{}`, true, 8},
		{"record string", `{"record":"SO-1002"}`, true, 1},
		{"record array of one", `{"record":["SO-1002"]}`, true, 1},
		{"record array of twenty", `{"record":` + ids(20) + `}`, true, 20},
		{"record array of twenty-one", `{"record":` + ids(21) + `}`, false, 0},
		{"record empty array", `{"record":[]}`, false, 0},
		{"record empty string", `{"record":""}`, false, 0},
		{"record empty string in array", `{"record":["SO-1001",""]}`, false, 0},
		{"record number", `{"record":1001}`, false, 0},
		{"record number in array", `{"record":["SO-1001",1002]}`, false, 0},
		{"record null", `{"record":null}`, false, 0},
		{"record object", `{"record":{"id":"SO-1001"}}`, false, 0},
		{"record nested array", `{"record":[["SO-1001"]]}`, false, 0},
		{"record with offset", `{"record":"SO-1001","offset":0}`, false, 0},
		{"record with limit", `{"record":["SO-1001"],"limit":1}`, false, 0},
		{"offset zero", `{"offset":0}`, true, 8},
		{"limit zero", `{"limit":0}`, true, 0},
		{"limit three", `{"limit":3}`, true, 3},
		{"limit three point zero", `{"limit":3.0}`, true, 3},
		{"limit as exponent", `{"limit":3e0}`, true, 3},
		{"limit negative zero", `{"limit":-0}`, true, 0},
		{"offset and limit", `{"offset":28,"limit":5}`, true, 2},
		{"largest safe offset", `{"offset":9007199254740991}`, true, 0},
		{"limit fractional", `{"limit":1.5}`, false, 0},
		{"limit string", `{"limit":"3"}`, false, 0},
		{"limit negative", `{"limit":-1}`, false, 0},
		{"limit overflows float", `{"limit":1e400}`, false, 0},
		{"limit null", `{"limit":null}`, false, 0},
		{"limit boolean", `{"limit":true}`, false, 0},
		{"offset fractional", `{"offset":0.5}`, false, 0},
		{"offset string", `{"offset":"3"}`, false, 0},
		{"offset negative", `{"offset":-1}`, false, 0},
		{"offset overflows float", `{"offset":1e400}`, false, 0},
		{"capabilities full", `{"capabilities":"full"}`, true, 8},
		{"capabilities changed", `{"capabilities":"changed"}`, true, 8},
		{"capabilities other case", `{"capabilities":"FULL"}`, false, 0},
		{"capabilities empty", `{"capabilities":""}`, false, 0},
		{"capabilities other value", `{"capabilities":"none"}`, false, 0},
		{"capabilities boolean", `{"capabilities":true}`, false, 0},
		{"capabilities null", `{"capabilities":null}`, false, 0},
		{"unknown field", `{"fields":["note"]}`, false, 0},
		{"field in other case", `{"Limit":3}`, false, 0},
		{"input null", `null`, false, 0},
		{"input array", `[]`, false, 0},
		{"input string", `"full"`, false, 0},
		{"input number", `8`, false, 0},
		{"input boolean", `false`, false, 0},
		{"duplicate field", `{"limit":1,"limit":2}`, false, 0},
		{"fields differing in case", `{"limit":1,"Limit":2}`, false, 0},
		{"lone surrogate in a field name", `{"\ud800":1}`, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := pNewSurface(t, surfacetest.Orders(30), nil)
			// The in-page describe reads its input as JSON text by the
			// same rules (null there is no input, like none).
			x := s.BeginDescribe([]byte(tc.input), false)
			s.Drive(context.Background(), x)
			out, _, err := x.Reply()
			var perr *surface.Error
			errors.As(err, &perr)
			var d surface.Description
			if err == nil {
				if jerr := json.Unmarshal(out, &d); jerr != nil {
					t.Fatalf("BeginDescribe's reply %s: %v", out, jerr)
				}
			}
			ok, records := tc.ok, tc.records
			if tc.input == "null" {
				ok, records = true, 8
			}
			switch {
			case !ok && (perr == nil || perr.Code != surface.CodeInvalidRequest):
				t.Errorf("BeginDescribe: %v, want INVALID_REQUEST", err)
			case ok && perr != nil:
				t.Errorf("BeginDescribe refused: %v", err)
			case ok && len(d.Context.Records) != records:
				t.Errorf("BeginDescribe: records = %d, want %d", len(d.Context.Records), records)
			}
			x.Release()

			req := `{"protocol":"pling.surface/0.1","id":"d","method":"describe"}`
			if tc.input != "" {
				req = `{"protocol":"pling.surface/0.1","id":"d","method":"describe","input":` + tc.input + `}`
			}
			m := pDo(t, s, req)
			if !tc.ok {
				if pCode(m) != "INVALID_REQUEST" {
					t.Errorf("code = %q, want INVALID_REQUEST", pCode(m))
				}
				return
			}
			if m["ok"] != true {
				t.Fatalf("rejected: %v", m["error"])
			}
			recs, _ := pResult(t, m)["context"].(map[string]any)["records"].([]any)
			if len(recs) != tc.records {
				t.Errorf("records = %d, want %d", len(recs), tc.records)
			}
		})
	}
}

func TestDescribeSessionErrors(t *testing.T) {
	revoked := pSession("s1", "orders.search")
	revoked.RevokedAt = surfacetest.Epoch.Add(-time.Minute)
	malformed := pSession("s1", "orders.search")
	malformed.Scope = nil
	tests := []struct {
		name     string
		sess     *surface.Session
		err      error
		sentinel surface.Code
	}{
		{"no session", nil, nil, surface.CodeSessionRequired},
		{"source fails", nil, errors.New("token store down: secret=hunter2"), surface.CodeSessionInvalid},
		{"malformed", malformed, nil, surface.CodeSessionInvalid},
		{"expired", pExpired("s1", "orders.search"), nil, surface.CodeSessionExpired},
		{"revoked", revoked, nil, surface.CodeSessionRevoked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &pSessions{}
			src.set(tc.sess, tc.err)
			s := pNewSurface(t, surfacetest.Orders(3), func(o *surface.Options) { o.Session = src.source })

			d, err := s.Describe(context.Background(), surface.DescribeInput{})
			if d != nil {
				t.Error("Describe returned a description with a session failure")
			}
			var se *surface.Error
			if !errors.As(err, &se) {
				t.Fatalf("Describe error = %v (%T), want *surface.Error", err, err)
			}
			if se.Code != tc.sentinel || !surface.IsSession(se.Code) {
				t.Errorf("code = %s, want %s", se.Code, tc.sentinel)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("errors.Is(err, %s) = false", tc.sentinel)
			}
			for _, other := range []surface.Code{surface.CodeSessionRequired, surface.CodeSessionInvalid,
				surface.CodeSessionExpired, surface.CodeSessionRevoked, surface.CodeInternalError} {
				if other != tc.sentinel && errors.Is(err, other) {
					t.Errorf("errors.Is(err, %s) = true", other)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks the source's failure: %v", err)
			}

			m := pDo(t, s, `{"protocol":"pling.surface/0.1","id":"h","method":"describe"}`)
			if m["ok"] != false || pCode(m) != string(tc.sentinel) {
				t.Errorf("Handle = %v, want ok:false with %s", m, tc.sentinel)
			}
			pNoDetail(t, m)
		})
	}

	t.Run("invalid direct input", func(t *testing.T) {
		s := pNewSurface(t, surfacetest.Orders(3), nil)
		neg := -1
		one := 1
		for name, in := range map[string]surface.DescribeInput{
			"twenty-one records":  {Records: slices.Repeat([]string{"SO-1001"}, 21)},
			"empty record list":   {Records: []string{}},
			"empty record id":     {Records: []string{""}},
			"records with limit":  {Records: []string{"SO-1001"}, Limit: &one},
			"records with offset": {Records: []string{"SO-1001"}, Offset: &one},
			"negative limit":      {Limit: &neg},
			"negative offset":     {Offset: &neg},
		} {
			if _, err := s.Describe(context.Background(), in); !errors.Is(err, surface.CodeInvalidRequest) {
				t.Errorf("%s: err = %v, want INVALID_REQUEST", name, err)
			}
		}
	})
}

func TestEnvelopeInvokeInputOmitted(t *testing.T) {
	// An omitted invoke input is the empty object: the executor gets {} and
	// the capability's schema judges {}.
	tests := []struct {
		name, capability, code, input string
	}{
		{"schema-less action", "p.echo", "", `{}`},
		{"schema without required members", "orders.search", "", `{}`},
		{"schema with a required member", "update_note@order", "INVALID_REQUEST", ""},
		{"empty object given", "p.echo", "", `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pEchoPage(2)
			s := pNewSurface(t, page, nil)
			req := `{"protocol":"pling.surface/0.1","id":"o","method":"invoke","capability":"` + tc.capability + `"}`
			if tc.name == "empty object given" {
				req = pInvoke("o", tc.capability, `{}`)
			}
			m := pDo(t, s, req)
			calls := page.Calls()
			if tc.code != "" {
				if pCode(m) != tc.code || len(calls) != 0 {
					t.Errorf("code = %q, calls = %d; want %s and none", pCode(m), len(calls), tc.code)
				}
				return
			}
			if m["ok"] != true || len(calls) != 1 || string(calls[0].Input) != tc.input {
				t.Errorf("ok = %v, calls = %v; want one call with %s (%v)", m["ok"], calls, tc.input, m["error"])
			}
		})
	}
}
