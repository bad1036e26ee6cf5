package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// Helpers shared by the control-side tests (session, rate limit, replay,
// invoke, approval, after, audit, benchmarks). Their names start with "c" so
// they cannot collide with helpers of the package's other test files.

// cOrderScope names every capability of surfacetest.Orders.
var cOrderScope = []string{"orders.search", "update_note@order", "approve@order", "orders.fail", "orders.panic", "orders.hang"}

// cSession returns a valid session with id, scoped to every orders
// capability and expiring an hour after surfacetest.Epoch.
func cSession(id string) *surface.Session {
	return &surface.Session{
		AgentID:      "agent-" + id,
		SessionID:    id,
		UserID:       "user-" + id,
		DelegationID: "delegation-" + id,
		ExpiresAt:    surfacetest.Epoch.Add(time.Hour),
		Scope:        append([]string(nil), cOrderScope...),
	}
}

// cFix is a Surface over an in-memory page with a fake clock; it collects
// audit events unless the options bring their own sink.
type cFix struct {
	page  *surfacetest.Page
	clock *surfacetest.Clock
	s     *surface.Surface

	mu     sync.Mutex
	events []surface.AuditEvent
}

// cNewFix builds a fixture. A nil page is surfacetest.Orders(12). Registry,
// Execute and Now are filled in when opts leaves them unset.
func cNewFix(t testing.TB, page *surfacetest.Page, opts surface.Options) *cFix {
	t.Helper()
	if page == nil {
		page = surfacetest.Orders(12)
	}
	f := &cFix{page: page, clock: surfacetest.NewClock()}
	if opts.Registry == nil {
		opts.Registry = page.View
	}
	if opts.Execute == nil {
		opts.Execute = page.Execute
	}
	if opts.Now == nil {
		opts.Now = f.clock.Now
	}
	if opts.OnAudit == nil {
		opts.OnAudit = func(_ context.Context, ev surface.AuditEvent) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.events = append(f.events, ev)
			return nil
		}
	}
	s, err := surface.New(opts)
	if err != nil {
		t.Fatalf("surface.New: %v", err)
	}
	f.s = s
	return f
}

func (f *cFix) handle(req []byte) *surface.Response {
	return f.s.Handle(context.Background(), req)
}

func (f *cFix) handleCtx(ctx context.Context, req []byte) *surface.Response {
	return f.s.Handle(ctx, req)
}

func (f *cFix) auditEvents() []surface.AuditEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]surface.AuditEvent(nil), f.events...)
}

// cRequest encodes a request envelope; a nil input is left out.
func cRequest(id, method, capability string, input any) []byte {
	m := map[string]any{"protocol": surface.Protocol, "id": id, "method": method}
	if capability != "" {
		m["capability"] = capability
	}
	if input != nil {
		m["input"] = input
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func cInvoke(id, capability string, input any) []byte {
	return cRequest(id, "invoke", capability, input)
}

func cDescribe(id string) []byte { return cRequest(id, "describe", "", nil) }

// cCode is the protocol error code of r, or "" when r succeeded.
func cCode(r *surface.Response) surface.Code {
	if r == nil || r.Error == nil {
		return ""
	}
	return r.Error.Code
}

// cCheck fails unless r has the wanted code ("" = success) and a consistent shape.
func cCheck(t testing.TB, r *surface.Response, want surface.Code) {
	t.Helper()
	if r == nil {
		t.Fatalf("nil response")
	}
	if got := cCode(r); got != want {
		t.Fatalf("code = %q, want %q (response %s)", got, want, cMarshal(t, r))
	}
	if want == "" && (!r.OK || r.Result == nil) {
		t.Fatalf("success without ok/result: %s", cMarshal(t, r))
	}
	if want != "" && (r.OK || r.Result != nil || r.After != nil) {
		t.Fatalf("failure with ok/result/after: %s", cMarshal(t, r))
	}
	if r.Protocol != surface.Protocol {
		t.Fatalf("protocol = %q", r.Protocol)
	}
}

func cMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// cResult decodes an invoke result into a generic map.
func cResult(t testing.TB, r *surface.Response) map[string]any {
	t.Helper()
	raw, ok := r.Result.(json.RawMessage)
	if !ok {
		t.Fatalf("result is %T, want json.RawMessage", r.Result)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return m
}

// cCalls is how many times the page's executor ran.
func cCalls(f *cFix) int { return len(f.page.Calls()) }

// cSessKey carries a session in a context, so one Surface can serve several
// sessions in a test (the func(context.Context) (*Session, error) reads it back).
type cSessKey struct{}

func cWithSession(ctx context.Context, s *surface.Session) context.Context {
	return context.WithValue(ctx, cSessKey{}, s)
}

func cCtxSession(ctx context.Context) (*surface.Session, error) {
	s, _ := ctx.Value(cSessKey{}).(*surface.Session)
	return s, nil
}

// cSentinels maps each session code to its errors.Is sentinel.
var cSentinels = map[surface.Code]error{
	surface.CodeSessionRequired: surface.CodeSessionRequired,
	surface.CodeSessionInvalid:  surface.CodeSessionInvalid,
	surface.CodeSessionExpired:  surface.CodeSessionExpired,
	surface.CodeSessionRevoked:  surface.CodeSessionRevoked,
}

// --- session tests ---

// TestSessionSourceEveryCall changes what the source answers between calls
// on one Surface: each call asks the source exactly once and obeys its
// latest answer, so expiry, revocation and a new scope need no rebuild.
func TestSessionSourceEveryCall(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	cur := cSession("s-1")
	src := func(context.Context) (*surface.Session, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if cur == nil {
			return nil, nil
		}
		c := *cur
		return &c, nil
	}
	set := func(s *surface.Session) { mu.Lock(); cur = s; mu.Unlock() }
	count := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	f := cNewFix(t, nil, surface.Options{Session: src})

	expired := cSession("s-1")
	expired.ExpiresAt = surfacetest.Epoch // the clock stands at Epoch
	revoked := cSession("s-1")
	revoked.RevokedAt = surfacetest.Epoch.Add(-time.Second)
	narrowed := cSession("s-1")
	narrowed.Scope = []string{"update_note@order"}

	steps := []struct {
		name     string
		sess     *surface.Session
		want     surface.Code
		caps     int          // capabilities described, when want == ""
		invokeOK surface.Code // code of invoking orders.search, when want == ""
	}{
		{"valid", cSession("s-1"), "", len(cOrderScope), ""},
		{"expired", expired, surface.CodeSessionExpired, 0, ""},
		{"revoked", revoked, surface.CodeSessionRevoked, 0, ""},
		{"valid again", cSession("s-1"), "", len(cOrderScope), ""},
		{"scope narrowed", narrowed, "", 1, surface.CodeCapabilityNotExposed},
		{"absent", nil, surface.CodeSessionRequired, 0, ""},
	}
	n := 0
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			set(st.sess)
			before := count()
			n++
			d := f.handle(cDescribe(fmt.Sprintf("d-%d", n)))
			if got := count(); got != before+1 {
				t.Fatalf("describe asked the source %d times, want 1", got-before)
			}
			cCheck(t, d, st.want)
			if st.want == "" {
				if got := len(d.Result.(*surface.Description).Capabilities); got != st.caps {
					t.Fatalf("described %d capabilities, want %d", got, st.caps)
				}
			}

			before = count()
			i := f.handle(cInvoke(fmt.Sprintf("i-%d", n), "orders.search", map[string]any{"query": "x"}))
			if got := count(); got != before+1 {
				t.Fatalf("invoke asked the source %d times, want 1", got-before)
			}
			wantInvoke := st.want
			if wantInvoke == "" {
				wantInvoke = st.invokeOK
			}
			cCheck(t, i, wantInvoke)

			before = count()
			_, err := f.s.Describe(context.Background(), surface.DescribeInput{})
			if got := count(); got != before+1 {
				t.Fatalf("Describe asked the source %d times, want 1", got-before)
			}
			if st.want == "" && err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if st.want != "" && !errors.Is(err, cSentinels[st.want]) {
				t.Fatalf("Describe error = %v, want %s", err, st.want)
			}
		})
	}
}

// TestSessionExpiresWithClock keeps one static session and moves the clock:
// the session is valid until just before ExpiresAt and expired at it.
func TestSessionExpiresWithClock(t *testing.T) {
	sess := cSession("s-1")
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(sess)})
	tests := []struct {
		name string
		at   time.Time
		want surface.Code
	}{
		{"an hour before", sess.ExpiresAt.Add(-time.Hour), ""},
		{"one nanosecond before", sess.ExpiresAt.Add(-time.Nanosecond), ""},
		{"exactly at ExpiresAt", sess.ExpiresAt, surface.CodeSessionExpired},
		{"after", sess.ExpiresAt.Add(time.Minute), surface.CodeSessionExpired},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.clock.Set(tt.at)
			cCheck(t, f.handle(cDescribe(fmt.Sprintf("d-%d", i))), tt.want)
			cCheck(t, f.handle(cInvoke(fmt.Sprintf("i-%d", i), "orders.search", nil)), tt.want)
		})
	}
	if got, want := cCalls(f), 2; got != want {
		t.Fatalf("executor ran %d times, want %d (only while valid)", got, want)
	}
}

// TestSessionOpenMode: without a session source every exposed capability is
// callable, and calls carry no session ids.
func TestSessionOpenMode(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{})
	d := f.handle(cDescribe("d-1"))
	cCheck(t, d, "")
	if got := len(d.Result.(*surface.Description).Capabilities); got != len(cOrderScope) {
		t.Fatalf("open mode described %d capabilities, want %d", got, len(cOrderScope))
	}
	cCheck(t, f.handle(cInvoke("i-1", "orders.search", map[string]any{"query": "q"})), "")
	calls := f.page.Calls()
	if len(calls) != 1 {
		t.Fatalf("executor ran %d times, want 1", len(calls))
	}
	if c := calls[0].Context; c.SessionID != "" || c.AgentID != "" || c.UserID != "" || c.DelegationID != "" {
		t.Fatalf("open-mode call carries session ids: %+v", c)
	}
	if _, err := f.s.Describe(context.Background(), surface.DescribeInput{}); err != nil {
		t.Fatalf("Describe in open mode: %v", err)
	}
}

// TestSessionEmptyScope: an empty, non-nil scope is a valid session that can
// see and call nothing.
func TestSessionEmptyScope(t *testing.T) {
	sess := cSession("s-1")
	sess.Scope = []string{}
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(sess)})
	d := f.handle(cDescribe("d-1"))
	cCheck(t, d, "")
	if caps := d.Result.(*surface.Description).Capabilities; len(caps) != 0 {
		t.Fatalf("empty scope described %d capabilities", len(caps))
	}
	for _, c := range cOrderScope {
		t.Run(c, func(t *testing.T) {
			cCheck(t, f.handle(cInvoke("i-"+c, c, map[string]any{"record": "SO-1001", "note": "x"})), surface.CodeCapabilityNotExposed)
		})
	}
	if n := cCalls(f); n != 0 {
		t.Fatalf("executor ran %d times", n)
	}
}

// TestSessionFailures covers every way a session can fail, through Handle
// (both methods) and the direct Describe, which must agree on the code.
func TestSessionFailures(t *testing.T) {
	mal := func(edit func(s *surface.Session)) func(context.Context) (*surface.Session, error) {
		s := cSession("s-1")
		edit(s)
		return surface.StaticSession(s)
	}
	now := surfacetest.Epoch

	tests := []struct {
		name string
		src  func(context.Context) (*surface.Session, error)
		want surface.Code
	}{
		{"nil session", surface.StaticSession(nil), surface.CodeSessionRequired},
		{"nil scope", mal(func(s *surface.Session) { s.Scope = nil }), surface.CodeSessionInvalid},
		{"empty agentId", mal(func(s *surface.Session) { s.AgentID = "" }), surface.CodeSessionInvalid},
		{"empty sessionId", mal(func(s *surface.Session) { s.SessionID = "" }), surface.CodeSessionInvalid},
		{"empty userId", mal(func(s *surface.Session) { s.UserID = "" }), surface.CodeSessionInvalid},
		{"zero ExpiresAt", mal(func(s *surface.Session) { s.ExpiresAt = time.Time{} }), surface.CodeSessionInvalid},
		{"empty scope entry", mal(func(s *surface.Session) { s.Scope = []string{"orders.search", ""} }), surface.CodeSessionInvalid},
		{"source error", func(context.Context) (*surface.Session, error) {
			return cSession("s-1"), errors.New("token store down")
		}, surface.CodeSessionInvalid},
		{"source panic", func(context.Context) (*surface.Session, error) { panic("session source broke") }, surface.CodeSessionInvalid},
		{"expired at exactly now", mal(func(s *surface.Session) { s.ExpiresAt = now }), surface.CodeSessionExpired},
		{"expired long ago", mal(func(s *surface.Session) { s.ExpiresAt = now.Add(-24 * time.Hour) }), surface.CodeSessionExpired},
		{"revoked at exactly now", mal(func(s *surface.Session) { s.RevokedAt = now }), surface.CodeSessionRevoked},
		{"revoked earlier", mal(func(s *surface.Session) { s.RevokedAt = now.Add(-time.Minute) }), surface.CodeSessionRevoked},
		{"revoked and expired", mal(func(s *surface.Session) {
			s.RevokedAt = now.Add(-time.Minute)
			s.ExpiresAt = now.Add(-time.Hour)
		}), surface.CodeSessionRevoked},
		{"revocation in the future", mal(func(s *surface.Session) { s.RevokedAt = now.Add(time.Nanosecond) }), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cNewFix(t, nil, surface.Options{Session: tt.src})

			d, err := f.s.Describe(context.Background(), surface.DescribeInput{})
			if tt.want == "" {
				if err != nil || d == nil {
					t.Fatalf("Describe = %v, %v; want a description", d, err)
				}
			} else {
				if d != nil {
					t.Fatalf("Describe returned a description with error %v", err)
				}
				var se *surface.Error
				if !errors.As(err, &se) {
					t.Fatalf("Describe error %T %v is not a *surface.Error", err, err)
				}
				if se.Code != tt.want || !surface.IsSession(se.Code) {
					t.Fatalf("Describe code = %q, want %q", se.Code, tt.want)
				}
				for code, sentinel := range cSentinels {
					if got := errors.Is(err, sentinel); got != (code == tt.want) {
						t.Fatalf("errors.Is(err, %s) = %v", code, got)
					}
				}
			}

			cCheck(t, f.handle(cDescribe("d-1")), tt.want)
			cCheck(t, f.handle(cInvoke("i-1", "orders.search", map[string]any{"query": "x"})), tt.want)
			cCheck(t, f.handle(cInvoke("i-2", "update_note@order", map[string]any{"record": "SO-1001", "note": "x"})), tt.want)
			wantCalls := 0
			if tt.want == "" {
				wantCalls = 2
			}
			if n := cCalls(f); n != wantCalls {
				t.Fatalf("executor ran %d times, want %d", n, wantCalls)
			}
		})
	}
}

// TestSessionRequestCannotSupplySession: a body that carries its own session
// or scope is refused, and the verified session is what the call gets.
func TestSessionRequestCannotSupplySession(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1"))})
	tests := []struct {
		name string
		body string
	}{
		{"session member", `{"protocol":"pling.surface/0.1","id":"a","method":"invoke","capability":"orders.search","session":{"sessionId":"evil"}}`},
		{"scope member", `{"protocol":"pling.surface/0.1","id":"b","method":"describe","scope":["*"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cCheck(t, f.handle([]byte(tt.body)), surface.CodeInvalidRequest)
		})
	}
	cCheck(t, f.handle(cInvoke("c", "orders.search", nil)), "")
	if got := f.page.Calls()[0].Context.SessionID; got != "s-1" {
		t.Fatalf("call ran in session %q, want s-1", got)
	}
}
