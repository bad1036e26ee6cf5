package redisstate_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

type brokenLimiter struct{ d surface.Decision }

func (b brokenLimiter) Allow(context.Context, string, time.Time) (surface.Decision, error) {
	if b.d.Verdict == 0 && b.d.RetryAfter == 0 {
		return b.d, errors.New("down")
	}
	return b.d, nil
}

type brokenGuard struct{}

func (brokenGuard) Claim(context.Context, surface.ReplayKey, time.Time, time.Duration) (surface.ReplayDecision, error) {
	return 0, errors.New("down")
}

// bySession records which session each call was made for, and keeps its
// limiter on a clock that stands still, so retryAfterMs is exact.
type bySession struct {
	surface.Limiter
	keys []string
}

var stillClock = time.Unix(1_700_000_000, 0)

func (b *bySession) Allow(ctx context.Context, key string, _ time.Time) (surface.Decision, error) {
	b.keys = append(b.keys, key)
	return b.Limiter.Allow(ctx, key, stillClock)
}

func post(t *testing.T, h http.Handler, cookie, body string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/pling/state", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if cookie != "" {
		r.Header.Set("Cookie", "sid="+cookie)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

func cookieSession(r *http.Request) (string, bool) {
	c, err := r.Cookie("sid")
	if err != nil || c.Value == "" {
		return "", false
	}
	return "ses-" + c.Value, true
}

func TestHandler(t *testing.T) {
	lim := &bySession{Limiter: surface.NewSlidingWindow(2, time.Minute)}
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: cookieSession, Limiter: lim, Guard: surface.NewMemoryGuard(100),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cookie, body string
		status             int
		want               string
	}{
		{"allow", "a", `{"op":"allow"}`, 200, `{"allowed":true}`},
		{"allow again", "a", `{"op":"allow"}`, 200, `{"allowed":true}`},
		{"over the limit", "a", `{"op":"allow"}`, 200, `{"allowed":false,"retryAfterMs":60000}`},
		{"another session has its own budget", "b", `{"op":"allow"}`, 200, `{"allowed":true}`},
		{"claim", "a", `{"op":"claim","requestId":"r-1"}`, 200, `{"claim":"claimed"}`},
		{"claim again", "a", `{"op":"claim","requestId":"r-1"}`, 200, `{"claim":"replayed"}`},
		{"same id, other session", "b", `{"op":"claim","requestId":"r-1"}`, 200, `{"claim":"claimed"}`},
		{"no session", "", `{"op":"allow"}`, 401, `{"error":"session"}`},
		// The page must not be able to spend another session's budget.
		{"session in the body", "a", `{"op":"allow","sessionId":"ses-b"}`, 400, `{"error":"request"}`},
		{"key in the body", "a", `{"op":"allow","key":"ses-b"}`, 400, `{"error":"request"}`},
		{"unknown op", "a", `{"op":"reset"}`, 400, `{"error":"request"}`},
		{"claim without id", "a", `{"op":"claim"}`, 400, `{"error":"request"}`},
		{"allow with an id", "a", `{"op":"allow","requestId":"r"}`, 400, `{"error":"request"}`},
		{"two values", "a", `{"op":"allow"}{"op":"allow"}`, 400, `{"error":"request"}`},
		{"not json", "a", `op=allow`, 400, `{"error":"request"}`},
		{"array", "a", `[]`, 400, `{"error":"request"}`},
		{"too large", "a", `{"op":"claim","requestId":"` + strings.Repeat("x", 9000) + `"}`, 400, `{"error":"request"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, h, tc.cookie, tc.body)
			if status != tc.status || body != tc.want {
				t.Fatalf("got %d %s, want %d %s", status, body, tc.status, tc.want)
			}
		})
	}
	for _, k := range lim.keys {
		k = strings.TrimPrefix(k, "\x00claim:") // a session's claim budget
		if k != "ses-a" && k != "ses-b" {
			t.Fatalf("the limiter was asked for %q, not a verified session", k)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/pling/state", nil)
	r.Header.Set("Cookie", "sid=a")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", w.Code)
	}
}

// The handler reads a body as the kernel reads a request: ids it could not
// tell apart, or names in another case or repeated, are refused, never
// rewritten. encoding/json alone turned a lone surrogate or a byte that is
// not UTF-8 into U+FFFD, so two different ids became one and the second
// was refused as a replay of a call that never ran.
func TestHandlerReadsIdsExactly(t *testing.T) {
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: cookieSession, Limiter: surface.NewSlidingWindow(1000, time.Minute), Guard: surface.NewMemoryGuard(100),
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, replayed, refused := `{"claim":"claimed"}`, `{"claim":"replayed"}`, `{"error":"request"}`
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"lone high surrogate", `{"op":"claim","requestId":"\ud800"}`, 400, refused},
		{"lone low surrogate", `{"op":"claim","requestId":"\udc00"}`, 400, refused},
		{"reversed pair", `{"op":"claim","requestId":"a\udc00\ud800"}`, 400, refused},
		{"high surrogate then a letter", `{"op":"claim","requestId":"\ud800\u0041"}`, 400, refused},
		{"byte that is not UTF-8", "{\"op\":\"claim\",\"requestId\":\"\xff\"}", 400, refused},
		{"another such byte", "{\"op\":\"claim\",\"requestId\":\"\xfe\"}", 400, refused},
		{"U+FFFD itself is an id", `{"op":"claim","requestId":"\ufffd"}`, 200, claimed},
		{"and is kept", "{\"op\":\"claim\",\"requestId\":\"\uFFFD\"}", 200, replayed},
		{"escaped pair", `{"op":"claim","requestId":"\ud83d\ude00"}`, 200, claimed},
		{"the same id unescaped", `{"op":"claim","requestId":"😀"}`, 200, replayed},
		{"a backslash before u", `{"op":"claim","requestId":"\\ud800"}`, 200, claimed},
		{"name in another case", `{"op":"claim","RequestId":"r-case"}`, 400, refused},
		{"op in another case", `{"OP":"allow"}`, 400, refused},
		{"repeated name", `{"op":"claim","requestId":"r-a","requestId":"r-b"}`, 400, refused},
		{"repeated op", `{"op":"allow","op":"claim","requestId":"r-c"}`, 400, refused},
		{"id at the kernel's limit", `{"op":"claim","requestId":"` + strings.Repeat("x", surface.MaxIDBytes) + `"}`, 200, claimed},
		{"id past the kernel's limit", `{"op":"claim","requestId":"` + strings.Repeat("y", surface.MaxIDBytes+1) + `"}`, 400, refused},
		{"op that is not a string", `{"op":1}`, 400, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, h, "a", tc.body)
			if status != tc.status || body != tc.want {
				t.Fatalf("got %d %s, want %d %s", status, body, tc.status, tc.want)
			}
		})
	}
}

// A store that fails, or answers what no store may, is a 503: the page's
// adapter refuses the request.
func TestHandlerFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    redisstate.HandlerOptions
		body string
	}{
		{"limiter error", redisstate.HandlerOptions{Limiter: brokenLimiter{}}, `{"op":"allow"}`},
		{"zero decision", redisstate.HandlerOptions{Limiter: brokenLimiter{d: surface.Decision{RetryAfter: 1}}}, `{"op":"allow"}`},
		{"deny without retry", redisstate.HandlerOptions{Limiter: nilDeny{}}, `{"op":"allow"}`},
		{"guard error", redisstate.HandlerOptions{Guard: brokenGuard{}}, `{"op":"claim","requestId":"r"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Session = cookieSession
			h, err := redisstate.Handler(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if status, body := post(t, h, "a", tc.body); status != 503 || body != `{"error":"unavailable"}` {
				t.Fatalf("got %d %s", status, body)
			}
		})
	}
	if _, err := redisstate.Handler(redisstate.HandlerOptions{Limiter: brokenLimiter{}}); err == nil {
		t.Fatal("a handler without a session callback was built")
	}
}

type nilDeny struct{}

func (nilDeny) Allow(context.Context, string, time.Time) (surface.Decision, error) {
	return surface.Decision{Verdict: surface.Deny}, nil
}

// A cross-site page can POST without a preflight only as a form or
// text/plain, and its cookies go along where SameSite lets them: such a
// POST with a JSON body must neither spend the victim's budget nor claim
// the request ids the victim's page will send. The page's adapter always
// sends application/json, which a cross-origin page cannot without CORS.
func TestHandlerRefusesSimpleRequests(t *testing.T) {
	lim := &bySession{Limiter: surface.NewSlidingWindow(100, time.Minute)}
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: cookieSession, Limiter: lim, Guard: surface.NewMemoryGuard(100),
	})
	if err != nil {
		t.Fatal(err)
	}
	send := func(contentType, body string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "/pling/state", strings.NewReader(body))
		r.Header.Set("Cookie", "sid=victim")
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/json, text/plain"} {
		for _, body := range []string{`{"op":"claim","requestId":"r-1"}`, `{"op":"allow"}`} {
			if status, out := send(ct, body); status != http.StatusUnsupportedMediaType || out != `{"error":"content-type"}` {
				t.Fatalf("Content-Type %q, %s: got %d %s", ct, body, status, out)
			}
		}
	}
	if len(lim.keys) != 0 {
		t.Fatalf("the limiter was spent %d times by refused requests", len(lim.keys))
	}
	// A cross-origin page that asks first (a preflight) is given no CORS
	// header, so its browser never sends the JSON POST.
	r := httptest.NewRequest(http.MethodOptions, "/pling/state", nil)
	r.Header.Set("Origin", "https://attacker.example")
	r.Header.Set("Access-Control-Request-Method", "POST")
	r.Header.Set("Access-Control-Request-Headers", "content-type")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	for name := range w.Header() {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Fatalf("a preflight was answered with %s", name)
		}
	}
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("preflight: %d", w.Code)
	}
	// The victim's own page still claims its id first.
	if status, out := send("application/json; charset=utf-8", `{"op":"claim","requestId":"r-1"}`); status != 200 || out != `{"claim":"claimed"}` {
		t.Fatalf("the page's own claim: %d %s", status, out)
	}
}

// A Session callback that answers ok with an empty id (an anonymous
// visitor behind a proxy, say) names no session: if it were served, every
// such visitor would spend one budget and claim in one namespace, one
// visitor's ids refusing another's.
//
// An id beginning with a NUL byte is refused too: the claim budget of
// session s is kept under "\x00claim:" + s beside the rate budgets, so a
// session named "\x00claim:victim" would spend victim's claims.
func TestHandlerRefusesEmptySession(t *testing.T) {
	for _, sid := range []string{"", "\x00claim:victim", "\x00"} {
		lim := &bySession{Limiter: surface.NewSlidingWindow(100, time.Minute)}
		h, err := redisstate.Handler(redisstate.HandlerOptions{
			Session: func(*http.Request) (string, bool) { return sid, true },
			Limiter: lim, Guard: surface.NewMemoryGuard(100),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{`{"op":"allow"}`, `{"op":"claim","requestId":"r-1"}`} {
			if status, out := post(t, h, "a", body); status != 401 || out != `{"error":"session"}` {
				t.Fatalf("session %q, %s: got %d %s", sid, body, status, out)
			}
		}
		if len(lim.keys) != 0 {
			t.Fatalf("session %q: the limiter was asked for %q", sid, lim.keys)
		}
	}
}

// The claim op is reachable without the allow before it that the kernel
// always makes, and every claim is a key kept for the replay window: a
// client of one session posting fresh ids would fill the store. Claims
// are paid from a budget of the session's own as large as its rate limit,
// which the kernel never exceeds (it claims only after an admitted allow).
func TestHandlerBoundsClaims(t *testing.T) {
	const max = 5
	lim := &bySession{Limiter: surface.NewSlidingWindow(max, time.Minute)}
	guard := surface.NewMemoryGuard(1000)
	h, err := redisstate.Handler(redisstate.HandlerOptions{Session: cookieSession, Limiter: lim, Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	// The page's own flow: allow, then claim, up to the limit.
	for i := 0; i < max; i++ {
		if status, out := post(t, h, "a", `{"op":"allow"}`); status != 200 || out != `{"allowed":true}` {
			t.Fatalf("allow %d: %d %s", i, status, out)
		}
		if status, out := post(t, h, "a", fmt.Sprintf(`{"op":"claim","requestId":"r-%d"}`, i)); status != 200 || out != `{"claim":"claimed"}` {
			t.Fatalf("claim %d after its allow: %d %s", i, status, out)
		}
	}
	// A flood of fresh ids from session b, without allows.
	claimed := 0
	for i := 0; i < 200; i++ {
		status, out := post(t, h, "b", fmt.Sprintf(`{"op":"claim","requestId":"junk-%d"}`, i))
		switch {
		case status == 200 && out == `{"claim":"claimed"}`:
			claimed++
		case status == http.StatusTooManyRequests && out == `{"error":"rate"}`:
		default:
			t.Fatalf("flood claim %d: %d %s", i, status, out)
		}
	}
	if claimed > max {
		t.Fatalf("%d fresh ids claimed in one window by one session, max %d", claimed, max)
	}
	// The flood spent b's claims, not its rate budget nor a's.
	if status, out := post(t, h, "b", `{"op":"allow"}`); status != 200 || out != `{"allowed":true}` {
		t.Fatalf("b's allow after the flood: %d %s", status, out)
	}
}

// The handler is reachable without the kernel in front of it: a script of
// the page, or anything holding the login's cookie, can post claims and
// allows directly. Each one it answers, admitted or refused, is an audit
// event: metadata, the session the backend named, a claim's key hash, and
// never the request id it was sent.
func TestHandlerAuditsClaimsAndRefusals(t *testing.T) {
	const max = 3
	var events []redisstate.HandlerEvent
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: cookieSession,
		Limiter: &bySession{Limiter: surface.NewSlidingWindow(max, time.Minute)},
		Guard:   surface.NewMemoryGuard(1000),
		OnAudit: func(_ context.Context, ev redisstate.HandlerEvent) { events = append(events, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	hash := func(sid, rid string) string {
		h := sha256.New()
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(sid)))
		h.Write(n[:])
		h.Write([]byte(sid))
		h.Write([]byte(rid))
		return hex.EncodeToString(h.Sum(nil))
	}
	type want struct {
		op, session, claimKey, outcome, reason string
		status                                 int
	}
	var wants []want
	expect := func(w want, status int) {
		t.Helper()
		if status != w.status {
			t.Fatalf("%+v: answered %d", w, status)
		}
		wants = append(wants, w)
	}
	// The page's own flow, then the same id again.
	s, _ := post(t, h, "a", `{"op":"allow"}`)
	expect(want{"allow", "ses-a", "", "allowed", "", 200}, s)
	s, _ = post(t, h, "a", `{"op":"claim","requestId":"r-1"}`)
	expect(want{"claim", "ses-a", hash("ses-a", "r-1"), "claimed", "", 200}, s)
	s, _ = post(t, h, "a", `{"op":"claim","requestId":"r-1"}`)
	expect(want{"claim", "ses-a", hash("ses-a", "r-1"), "replayed", "", 200}, s)
	// Session b pre-claims ids and floods fresh ones, without allows.
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("junk-%d", i)
		s, _ := post(t, h, "b", `{"op":"claim","requestId":"`+id+`"}`)
		if i < max {
			expect(want{"claim", "ses-b", hash("ses-b", id), "claimed", "", 200}, s)
		} else {
			expect(want{"claim", "ses-b", hash("ses-b", id), "claims_limited", "", http.StatusTooManyRequests}, s)
		}
	}
	// Allows past the budget.
	for i := 0; i < max; i++ {
		s, _ := post(t, h, "b", `{"op":"allow"}`)
		expect(want{"allow", "ses-b", "", "allowed", "", 200}, s)
	}
	s, _ = post(t, h, "b", `{"op":"allow"}`)
	expect(want{"allow", "ses-b", "", "rate_limited", "", 200}, s)
	// Refusals: no login, a bad body, an unknown op, a form, a GET.
	s, _ = post(t, h, "", `{"op":"claim","requestId":"junk-x"}`)
	expect(want{"", "", "", "refused", "session", http.StatusUnauthorized}, s)
	s, _ = post(t, h, "b", `{"op":"claim","requestId":"junk-y","sessionId":"ses-a"}`)
	expect(want{"", "ses-b", "", "refused", "request", http.StatusBadRequest}, s)
	s, _ = post(t, h, "b", `{"op":"junk-op"}`)
	expect(want{"", "ses-b", "", "refused", "request", http.StatusBadRequest}, s)
	r := httptest.NewRequest(http.MethodPost, "/pling/state", strings.NewReader(`{"op":"claim","requestId":"junk-z"}`))
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("Cookie", "sid=b")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	expect(want{"", "", "", "refused", "content-type", http.StatusUnsupportedMediaType}, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/pling/state", nil))
	expect(want{"", "", "", "refused", "method", http.StatusMethodNotAllowed}, w.Code)

	if len(events) != len(wants) {
		t.Fatalf("%d audit events for %d answers", len(events), len(wants))
	}
	for i, ev := range events {
		got := want{ev.Op, ev.SessionID, ev.ClaimKey, string(ev.Outcome), ev.Reason, ev.Status}
		if got != wants[i] {
			t.Errorf("event %d: %+v, want %+v", i, got, wants[i])
		}
		if ev.Time.IsZero() {
			t.Errorf("event %d has no time", i)
		}
		text, _ := json.Marshal(ev)
		if strings.Contains(string(text), "junk-") || strings.Contains(string(text), "r-1") {
			t.Errorf("event %d holds a request id in clear: %s", i, text)
		}
	}
}

// A sink that panics changes no answer and reaches no caller.
func TestHandlerAuditSinkPanics(t *testing.T) {
	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Session: cookieSession,
		Guard:   surface.NewMemoryGuard(10),
		OnAudit: func(context.Context, redisstate.HandlerEvent) { panic("sink down") },
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"claim":"claimed"}`, `{"claim":"replayed"}`} {
		if s, out := post(t, h, "a", `{"op":"claim","requestId":"p-1"}`); s != 200 || out != want {
			t.Fatalf("claim %d: %d %s, want %s", i, s, out, want)
		}
	}
}
