package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// cWithIDs fills in the ids of cSession("s-1").
func cWithIDs(ev surface.AuditEvent) surface.AuditEvent {
	ev.SessionID, ev.AgentID, ev.UserID, ev.DelegationID = "s-1", "agent-s-1", "user-s-1", "delegation-s-1"
	return ev
}

// TestAuditOneEventPerRequest drives every outcome the kernel can reach and
// checks that each handled request yields exactly one event describing it.
func TestAuditOneEventPerRequest(t *testing.T) {
	valid := surface.StaticSession(cSession("s-1"))
	edited := func(edit func(*surface.Session)) func(context.Context) (*surface.Session, error) {
		s := cSession("s-1")
		edit(s)
		return surface.StaticSession(s)
	}
	failingLimiter := cLimiterFunc(func(context.Context, string, time.Time) (surface.Decision, error) {
		return surface.Decision{}, errors.New("down")
	})
	failingGuard := cGuardFunc(func(context.Context, surface.ReplayKey, time.Time, time.Duration) (surface.ReplayDecision, error) {
		return 0, errors.New("down")
	})
	raw := func(s string) []byte { return []byte(s) }
	const (
		pe = surface.OutcomeProtocolError
	)
	note := func(rec, n string) map[string]any { return map[string]any{"record": rec, "note": n} }

	tests := []struct {
		name   string
		page   func(p *surfacetest.Page)
		opts   surface.Options
		before [][]byte
		req    []byte
		want   surface.AuditEvent
	}{
		{name: "not JSON", req: raw(`{"protocol":`),
			want: surface.AuditEvent{Outcome: pe, Code: "INVALID_REQUEST"}},
		{name: "over the size limit", opts: surface.Options{Limits: surface.Limits{MaxRequestBytes: 64}},
			req:  cInvoke("big", "orders.search", map[string]any{"query": strings.Repeat("q", 100)}),
			want: surface.AuditEvent{Outcome: pe, Code: "INVALID_REQUEST"}},
		{name: "not an object", req: raw(`["describe"]`),
			want: surface.AuditEvent{Outcome: pe, Code: "INVALID_REQUEST"}},
		{name: "no id", req: raw(`{"protocol":"pling.surface/0.1","method":"describe"}`),
			want: surface.AuditEvent{Method: "describe", Outcome: pe, Code: "INVALID_REQUEST"}},
		{name: "unsupported protocol", req: raw(`{"protocol":"pling.surface/1.0","id":"r","method":"invoke"}`),
			want: surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "PROTOCOL_VERSION_UNSUPPORTED"}},
		{name: "unknown method", req: raw(`{"protocol":"pling.surface/0.1","id":"r","method":"ping"}`),
			want: surface.AuditEvent{RequestID: "r", Outcome: pe, Code: "METHOD_NOT_SUPPORTED"}},
		{name: "session required", opts: surface.Options{Session: surface.StaticSession(nil)}, req: cDescribe("r"),
			want: surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: pe, Code: "SESSION_REQUIRED"}},
		{name: "session malformed", opts: surface.Options{Session: edited(func(s *surface.Session) { s.Scope = nil })},
			req:  cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "SESSION_INVALID"})},
		{name: "session source fails", opts: surface.Options{Session: func(context.Context) (*surface.Session, error) {
			return nil, errors.New("down")
		}}, req: cInvoke("r", "orders.search", nil),
			want: surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "SESSION_INVALID"}},
		{name: "session expired", opts: surface.Options{Session: edited(func(s *surface.Session) { s.ExpiresAt = surfacetest.Epoch })},
			req:  cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "SESSION_EXPIRED"})},
		{name: "session revoked", opts: surface.Options{Session: edited(func(s *surface.Session) { s.RevokedAt = surfacetest.Epoch })},
			req:  cDescribe("r"),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: pe, Code: "SESSION_REVOKED"})},
		{name: "rate limited", opts: surface.Options{Session: valid, RateLimit: &surface.RateLimitOptions{MaxRequests: 1, Window: time.Minute}},
			before: [][]byte{cDescribe("first")}, req: cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "RATE_LIMITED"})},
		{name: "rate limit unavailable", opts: surface.Options{Session: valid, RateLimit: &surface.RateLimitOptions{Limiter: failingLimiter}},
			req:  cDescribe("r"),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: pe, Code: "RATE_LIMIT_UNAVAILABLE"})},
		{name: "unknown invoke field", opts: surface.Options{Session: valid},
			req:  raw(`{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"orders.search","session":"x"}`),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "bad describe input", opts: surface.Options{Session: valid},
			req:  raw(`{"protocol":"pling.surface/0.1","id":"r","method":"describe","input":{"limit":-1}}`),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "input not an object", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "orders.search", "q"),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.search", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "capability not exposed", opts: surface.Options{Session: valid, Expose: surface.ExposeIDs("orders.search")},
			req:  cInvoke("r", "orders.fail", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.fail", Outcome: pe, Code: "CAPABILITY_NOT_EXPOSED"})},
		{name: "missing record", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "update_note@order", map[string]any{"note": "n"}),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "unknown record", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "update_note@order", note("SO-9999", "n")),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", RecordID: "SO-9999", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "schema violation", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "update_note@order", map[string]any{"record": "SO-1001", "note": 5}),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", RecordID: "SO-1001", Outcome: pe, Code: "INVALID_REQUEST"})},
		{name: "replay detected", opts: surface.Options{Session: valid, Replay: &surface.ReplayOptions{}},
			before: [][]byte{cInvoke("r", "orders.search", nil)}, req: cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.search", Outcome: pe, Code: "REPLAY_DETECTED"})},
		{name: "replay guard unavailable", opts: surface.Options{Session: valid, Replay: &surface.ReplayOptions{Guard: failingGuard}},
			req:  cInvoke("r", "update_note@order", note("SO-1002", "n")),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", RecordID: "SO-1002", Outcome: pe, Code: "REPLAY_GUARD_UNAVAILABLE"})},
		{name: "executor error", opts: surface.Options{Session: valid}, req: cInvoke("r", "orders.fail", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.fail", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "executor panic", opts: surface.Options{Session: valid}, req: cInvoke("r", "orders.panic", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.panic", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "executor timeout", opts: surface.Options{Session: valid, ExecuteTimeout: 10 * time.Millisecond}, req: cInvoke("r", "orders.hang", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.hang", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "result not JSON", opts: surface.Options{Session: valid},
			page: func(p *surfacetest.Page) {
				p.Handlers["orders.search"] = cAnswer(`{"title":`)
			},
			req:  cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.search", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "registry fails", opts: surface.Options{Session: valid},
			page: func(p *surfacetest.Page) { p.ViewErr = errors.New("down") },
			req:  cDescribe("r"),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "registry panics", opts: surface.Options{Session: valid},
			page: func(p *surfacetest.Page) { p.ViewPanic = true },
			req:  cInvoke("r", "orders.search", nil),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.search", Outcome: pe, Code: "INTERNAL_ERROR"})},
		{name: "business error", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "update_note@order", note("SO-1003", "n")),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", RecordID: "SO-1003", Outcome: surface.OutcomeBusinessError})},
		{name: "ok invoke", opts: surface.Options{Session: valid},
			req:  cInvoke("r", "update_note@order", note("SO-1002", "n")),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "update_note@order", RecordID: "SO-1002", Outcome: surface.OutcomeOK})},
		{name: "ok describe", opts: surface.Options{Session: valid}, req: cDescribe("r"),
			want: cWithIDs(surface.AuditEvent{RequestID: "r", Method: "describe", Outcome: surface.OutcomeOK})},
		{name: "ok in open mode", req: cInvoke("r", "orders.search", nil),
			want: surface.AuditEvent{RequestID: "r", Method: "invoke", Capability: "orders.search", Outcome: surface.OutcomeOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			f := cNewFix(t, page, tt.opts)
			for _, b := range tt.before {
				f.handle(b)
			}
			if tt.page != nil {
				page.Lock(tt.page)
			}
			r := f.handle(tt.req)
			evs := f.auditEvents()
			if len(evs) != len(tt.before)+1 {
				t.Fatalf("%d events for %d requests", len(evs), len(tt.before)+1)
			}
			ev := evs[len(evs)-1]
			if !ev.Time.Equal(f.clock.Now()) {
				t.Errorf("event time %v, clock %v", ev.Time, f.clock.Now())
			}
			if ev.DurationMs != 0 {
				t.Errorf("durationMs = %v on a clock that stood still", ev.DurationMs)
			}
			ev.Time, ev.DurationMs = time.Time{}, 0
			if ev != tt.want {
				t.Fatalf("event = %+v\nwant    %+v", ev, tt.want)
			}
			// The event agrees with the response.
			if string(cCode(r)) != ev.Code || r.OK != (ev.Outcome != surface.OutcomeProtocolError) || r.ID != ev.RequestID {
				t.Fatalf("event %+v disagrees with response %s", ev, cMarshal(t, r))
			}
		})
	}
}

// TestAuditHandleValue: requests handed over already decoded are audited too.
func TestAuditHandleValue(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{})
	f.s.HandleValue(context.Background(), map[string]any{"protocol": surface.Protocol, "id": "v", "method": "describe"})
	f.s.HandleValue(context.Background(), map[string]any{"id": func() {}})
	evs := f.auditEvents()
	if len(evs) != 2 || evs[0].Outcome != surface.OutcomeOK || evs[1].Code != "INVALID_REQUEST" {
		t.Fatalf("events = %+v", evs)
	}
}

// TestAuditDuration: durationMs and time come from the injected clock.
func TestAuditDuration(t *testing.T) {
	tests := []struct {
		name    string
		advance time.Duration
		where   string // "session" or "executor"
		want    float64
	}{
		{"executor takes 1.5ms", 1500 * time.Microsecond, "executor", 1.5},
		{"executor takes 2s", 2 * time.Second, "executor", 2000},
		{"session source takes 7ms", 7 * time.Millisecond, "session", 7},
		{"clock steps back", -time.Second, "session", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(2)
			var f *cFix
			opts := surface.Options{}
			if tt.where == "session" {
				opts.Session = func(context.Context) (*surface.Session, error) {
					f.clock.Advance(tt.advance)
					return nil, nil
				}
			} else {
				page.Handlers["orders.search"] = func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
					f.clock.Advance(tt.advance)
					return json.RawMessage(`{}`), nil
				}
			}
			f = cNewFix(t, page, opts)
			start := f.clock.Now()
			f.handle(cInvoke("r", "orders.search", nil))
			evs := f.auditEvents()
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			if evs[0].DurationMs != tt.want {
				t.Fatalf("durationMs = %v, want %v", evs[0].DurationMs, tt.want)
			}
			if !evs[0].Time.Equal(start.Add(tt.advance)) {
				t.Fatalf("time = %v, want %v", evs[0].Time, start.Add(tt.advance))
			}
		})
	}
}

// TestAuditCarriesNoContent places canaries in input, results, business
// errors, field names and session fields that are not ids, and checks that
// no event carries any of them.
func TestAuditCarriesNoContent(t *testing.T) {
	canaries := []string{
		"CANARY-INPUT-a1", "CANARY-RESULT-b2", "CANARY-BUSINESS-c3", "CANARY-FIELD-d4",
		"CANARY-SCOPE-e5", "CANARY-QUERY-f6", "CANARY-TOKEN-7f3a", "CANARY-VIOLATION-g7",
	}
	sess := cSession("s-1")
	sess.Scope = append(sess.Scope, "CANARY-SCOPE-e5", "orders.leaky", "orders.sour")
	page := surfacetest.Orders(4)
	cAddAction(page, surface.Action{ID: "orders.leaky"}, cAnswer(
		`{"title":"CANARY-RESULT-b2","approval":{"status":"granted","token":"CANARY-TOKEN-7f3a"}}`))
	cAddAction(page, surface.Action{ID: "orders.sour"}, cAnswer(
		`{"error":{"code":"NOPE","message":"CANARY-BUSINESS-c3"}}`))
	f := cNewFix(t, page, surface.Options{Session: surface.StaticSession(sess), Replay: &surface.ReplayOptions{}})
	reqs := [][]byte{
		cInvoke("1", "update_note@order", map[string]any{"record": "SO-1002", "note": "CANARY-INPUT-a1"}),
		cInvoke("2", "orders.leaky", nil),
		cInvoke("3", "orders.sour", nil),
		cInvoke("4", "orders.search", map[string]any{"query": "CANARY-QUERY-f6"}),
		cInvoke("4", "orders.search", map[string]any{"query": "CANARY-QUERY-f6"}), // replay
		cInvoke("5", "update_note@order", map[string]any{"record": "SO-1002", "note": 1, "CANARY-VIOLATION-g7": true}),
		[]byte(`{"protocol":"pling.surface/0.1","id":"6","method":"invoke","capability":"orders.search","CANARY-FIELD-d4":1}`),
		[]byte(`{"protocol":"pling.surface/0.1","id":"7","method":"describe","input":{"CANARY-FIELD-d4":1}}`),
		cDescribe("8"),
	}
	for _, r := range reqs {
		f.handle(r)
	}
	evs := f.auditEvents()
	if len(evs) != len(reqs) {
		t.Fatalf("%d events for %d requests", len(evs), len(reqs))
	}
	for i, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("event %d carries %q: %s", i, c, b)
			}
		}
		// The wire form has exactly the metadata members.
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			switch k {
			case "requestId", "method", "capability", "recordId", "sessionId", "agentId", "userId", "delegationId", "outcome", "code", "durationMs", "time":
			case "approval":
				// A status from the kernel's own list, never the page's object.
				if m[k] != surface.ApprovalGranted || i != 1 {
					t.Errorf("event %d has approval %v, want %q on event 1 only", i, m[k], surface.ApprovalGranted)
				}
			default:
				t.Errorf("event %d has member %q", i, k)
			}
		}
	}
}

// TestAuditSinkFailureIsContained: a sink that errors or panics is reported
// to OnAuditError, and the response is the one a Surface without audit
// gives. A panicking OnAuditError is contained as well.
func TestAuditSinkFailureIsContained(t *testing.T) {
	type sinkCase struct {
		name       string
		sink       func(context.Context, surface.AuditEvent) error
		onErrPanic bool
		noOnErr    bool
	}
	sinks := []sinkCase{
		{name: "sink errors", sink: func(context.Context, surface.AuditEvent) error { return errors.New("disk full") }},
		{name: "sink panics", sink: func(context.Context, surface.AuditEvent) error { panic("sink broke") }},
		{name: "sink errors, OnAuditError panics", sink: func(context.Context, surface.AuditEvent) error { return errors.New("disk full") }, onErrPanic: true},
		{name: "sink panics, OnAuditError panics", sink: func(context.Context, surface.AuditEvent) error { panic("sink broke") }, onErrPanic: true},
		{name: "sink errors, no OnAuditError", sink: func(context.Context, surface.AuditEvent) error { return errors.New("disk full") }, noOnErr: true},
	}
	reqs := []struct {
		name string
		req  []byte
	}{
		{"ok invoke", cInvoke("r", "update_note@order", map[string]any{"record": "SO-1002", "note": "n"})},
		{"business error", cInvoke("r", "update_note@order", map[string]any{"record": "SO-1003", "note": "n"})},
		{"protocol error", cInvoke("r", "orders.nope", nil)},
		{"executor error", cInvoke("r", "orders.fail", nil)},
		{"describe", cDescribe("r")},
		{"not JSON", []byte(`nope`)},
	}
	build := func(t *testing.T, sc *sinkCase, reported *[]error, mu *sync.Mutex) (*surface.Surface, *surfacetest.Page) {
		page := surfacetest.Orders(4)
		clock := surfacetest.NewClock()
		opts := surface.Options{Registry: page.View, Execute: page.Execute, Now: clock.Now, Session: surface.StaticSession(cSession("s-1"))}
		if sc != nil {
			opts.OnAudit = sc.sink
			if !sc.noOnErr {
				opts.OnAuditError = func(_ context.Context, err error, ev surface.AuditEvent) {
					mu.Lock()
					*reported = append(*reported, err)
					mu.Unlock()
					if ev.RequestID == "" && ev.Code != "INVALID_REQUEST" {
						t.Errorf("OnAuditError got an event without its request: %+v", ev)
					}
					if sc.onErrPanic {
						panic("audit error handler broke")
					}
				}
			}
		}
		s, err := surface.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		return s, page
	}
	for _, sc := range sinks {
		for _, rq := range reqs {
			t.Run(sc.name+"/"+rq.name, func(t *testing.T) {
				var mu sync.Mutex
				var reported []error
				plain, plainPage := build(t, nil, nil, nil)
				audited, auditedPage := build(t, &sc, &reported, &mu)
				want := plain.HandleJSON(context.Background(), rq.req)
				got := audited.HandleJSON(context.Background(), rq.req)
				if !bytes.Equal(got, want) {
					t.Fatalf("response with a failing sink:\n%s\nwithout audit:\n%s", got, want)
				}
				if len(plainPage.Calls()) != len(auditedPage.Calls()) {
					t.Fatalf("executor calls differ: %d vs %d", len(auditedPage.Calls()), len(plainPage.Calls()))
				}
				mu.Lock()
				defer mu.Unlock()
				wantReports := 1
				if sc.noOnErr {
					wantReports = 0
				}
				if len(reported) != wantReports {
					t.Fatalf("OnAuditError called %d times, want %d", len(reported), wantReports)
				}
				if wantReports == 1 && reported[0] == nil {
					t.Fatal("OnAuditError got a nil error")
				}
			})
		}
	}
}

// TestAuditNotForDirectDescribe: the in-page Describe is not a handled
// request and produces no event, whether it succeeds or fails.
func TestAuditNotForDirectDescribe(t *testing.T) {
	tests := []struct {
		name string
		src  func(context.Context) (*surface.Session, error)
		ok   bool
	}{
		{"valid session", surface.StaticSession(cSession("s-1")), true},
		{"no session", surface.StaticSession(nil), false},
		{"open mode", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cNewFix(t, nil, surface.Options{Session: tt.src})
			_, err := f.s.Describe(context.Background(), surface.DescribeInput{})
			if (err == nil) != tt.ok {
				t.Fatalf("Describe error = %v", err)
			}
			_, err = f.s.Describe(context.Background(), surface.DescribeInput{Records: []string{""}})
			if !errors.Is(err, surface.CodeInvalidRequest) {
				t.Fatalf("bad input: %v", err)
			}
			if evs := f.auditEvents(); len(evs) != 0 {
				t.Fatalf("direct Describe produced %d events", len(evs))
			}
		})
	}
}
