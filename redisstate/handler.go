package redisstate

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"pling.dev/agent/surface"
)

// HandlerOptions configure Handler.
type HandlerOptions struct {
	// Session returns the id of the session the backend verified for this
	// request (from its own cookie or token), or ok false to refuse it with
	// 401 (an empty id, or one beginning with a NUL byte, is refused the
	// same way). Required. The body never names the session: a page could name
	// any.
	Session func(r *http.Request) (sessionID string, ok bool)
	// Limiter answers {"op":"allow"}; nil refuses it with 404.
	Limiter surface.Limiter
	// Guard answers {"op":"claim","requestId":...}; nil refuses it with 404.
	Guard surface.ReplayGuard
	// ReplayWindow is how long a claim holds. The server decides it, not
	// the page. Default surface.DefaultReplayWindow.
	ReplayWindow time.Duration
	// OnAudit receives one HandlerEvent for every request the handler
	// answers, admitted or refused, before the answer is written: the
	// kernel's own audit never sees an allow or a claim posted here
	// directly. A panic in it is contained and changes no answer. Default
	// nil: no audit.
	OnAudit func(ctx context.Context, ev HandlerEvent)
}

// HandlerEvent is the metadata of one request Handler answered. It holds
// no request id: a claim is named by ClaimKey, the hash its Redis key ends
// in (Guard.Key), so an id sent by whoever holds the login, up to 256
// bytes of their choosing, never reaches the log, while a claim can still
// be found in Redis.
type HandlerEvent struct {
	// Op is "allow" or "claim"; empty when the request was refused before
	// its op was read.
	Op string `json:"op,omitempty"`
	// SessionID is the session HandlerOptions.Session named; empty when
	// the request was refused before it was asked, or it named none.
	SessionID string `json:"sessionId,omitempty"`
	// ClaimKey is, for a claim, the hex SHA-256 of its session and request
	// id (testdata/claimkeys).
	ClaimKey string         `json:"claimKey,omitempty"`
	Outcome  HandlerOutcome `json:"outcome"`
	// Reason is, for OutcomeRefused, the word of the answer's error:
	// "method", "content-type", "session", "request" or "op".
	Reason string `json:"reason,omitempty"`
	// Status is the HTTP status answered.
	Status int       `json:"status"`
	Time   time.Time `json:"time"`
}

// HandlerOutcome says how Handler answered a request.
type HandlerOutcome string

const (
	OutcomeAllowed     HandlerOutcome = "allowed"      // an allow admitted
	OutcomeRateLimited HandlerOutcome = "rate_limited" // an allow over the session's rate limit
	OutcomeClaimed     HandlerOutcome = "claimed"      // a request id claimed
	OutcomeReplayed    HandlerOutcome = "replayed"     // a request id claimed before, inside the window
	// OutcomeClaimsLimited: a claim over the session's claim budget (429),
	// as a flood of fresh ids posted without allows meets it.
	OutcomeClaimsLimited HandlerOutcome = "claims_limited"
	OutcomeUnavailable   HandlerOutcome = "unavailable" // the store failed or answered something illegal (503)
	OutcomeRefused       HandlerOutcome = "refused"     // the request itself was refused; Reason says why
)

// claimKey puts a session's claim budget beside its rate budget in the
// Limiter; a session id beginning with a NUL byte is refused, so no session
// names another's claim budget.
const claimKey = "\x00claim:"

// maxBody bounds a request body: a request id the kernel accepts is far
// shorter.
const maxBody = 8 << 10

type handlerRequest struct {
	Op        string
	RequestID string
}

// Handler serves a page's limiter and guard (js/pling-shared.js httpAdapter)
// from l and g. It answers POST only, with Content-Type application/json
// (else 415: a cross-site form or text/plain POST needs no preflight and
// must not spend a budget or claim an id) and a JSON body
//
//	{"op":"allow"}                      -> {"allowed":true} | {"allowed":false,"retryAfterMs":n}
//	{"op":"claim","requestId":"r-1"}    -> {"claim":"claimed"} | {"claim":"replayed"}
//
// and 503 {"error":"unavailable"} when the store fails, which the page's
// adapter turns into RATE_LIMIT_UNAVAILABLE or REPLAY_GUARD_UNAVAILABLE.
// A body with any other member (a session id above all), a member named
// in another case or twice, a string that is not UTF-8 or holds a lone
// surrogate, or a request id longer than surface.MaxIDBytes is refused with
// 400: the handler keeps the ids the kernel would keep, and no two of them
// share a key. With a Limiter, claims are also limited per session to the
// Limiter's rate (429 {"error":"rate"} beyond it), since each one is kept
// for the replay window; without one, mount the handler behind a rate
// limit of your own. Every answer, an admission or a refusal, is one
// HandlerEvent for HandlerOptions.OnAudit. Mount it behind the backend's
// authentication and its CSRF defence, as any other state-changing endpoint.
func Handler(o HandlerOptions) (http.Handler, error) {
	if o.Session == nil {
		return nil, errors.New("redisstate: HandlerOptions.Session is required")
	}
	if o.Limiter == nil && o.Guard == nil {
		return nil, errors.New("redisstate: Handler needs a Limiter, a Guard or both")
	}
	if o.ReplayWindow < 0 {
		return nil, errors.New("redisstate: HandlerOptions.ReplayWindow must not be negative")
	}
	if o.ReplayWindow == 0 {
		o.ReplayWindow = surface.DefaultReplayWindow
	}
	return http.HandlerFunc(o.serve), nil
}

func (o HandlerOptions) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ev := HandlerEvent{Time: time.Now()}
	// reply audits the answer, then writes it.
	reply := func(status int, body string, outcome HandlerOutcome) {
		ev.Status, ev.Outcome = status, outcome
		if outcome == OutcomeRefused {
			ev.Reason = refusalReason(body)
		}
		o.audit(r.Context(), ev)
		answer(w, status, body)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		reply(http.StatusMethodNotAllowed, `{"error":"method"}`, OutcomeRefused)
		return
	}
	// A cross-site page can send a form or text/plain without a CORS
	// preflight, with the user's cookies; application/json it cannot.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		reply(http.StatusUnsupportedMediaType, `{"error":"content-type"}`, OutcomeRefused)
		return
	}
	sid, ok := o.Session(r)
	// An empty id names no session (all such callers would share one); one
	// beginning with NUL could name another session's claim budget.
	if !ok || sid == "" || sid[0] == 0 {
		reply(http.StatusUnauthorized, `{"error":"session"}`, OutcomeRefused)
		return
	}
	ev.SessionID = sid
	req, ok := readRequest(r)
	if !ok {
		reply(http.StatusBadRequest, `{"error":"request"}`, OutcomeRefused)
		return
	}
	ctx := r.Context()
	switch {
	case req.Op == "allow" && req.RequestID == "" && o.Limiter != nil:
		ev.Op = "allow"
		d, err := o.Limiter.Allow(ctx, sid, time.Now())
		switch {
		case err != nil:
			reply(http.StatusServiceUnavailable, `{"error":"unavailable"}`, OutcomeUnavailable)
		case d.Verdict == surface.Allow && d.RetryAfter == 0:
			reply(http.StatusOK, `{"allowed":true}`, OutcomeAllowed)
		case d.Verdict == surface.Deny && d.RetryAfter > 0:
			ms := (d.RetryAfter + time.Millisecond - 1) / time.Millisecond
			reply(http.StatusOK, `{"allowed":false,"retryAfterMs":`+strconv.FormatInt(int64(ms), 10)+`}`, OutcomeRateLimited)
		default: // an illegal decision lets nothing through
			reply(http.StatusServiceUnavailable, `{"error":"unavailable"}`, OutcomeUnavailable)
		}
	case req.Op == "claim" && req.RequestID != "" && o.Guard != nil:
		key := surface.ReplayKey{SessionID: sid, RequestID: req.RequestID}
		ev.Op, ev.ClaimKey = "claim", claimHash(key)
		if o.Limiter != nil {
			// Every claim is a key kept for the replay window, and this op
			// is reachable without the allow the kernel makes before each
			// claim: claims are paid from a budget of their own, as large
			// as the session's rate limit, which the kernel never exceeds.
			d, err := o.Limiter.Allow(ctx, claimKey+sid, time.Now())
			switch {
			case err != nil || !(d.Verdict == surface.Allow && d.RetryAfter == 0 || d.Verdict == surface.Deny && d.RetryAfter > 0):
				reply(http.StatusServiceUnavailable, `{"error":"unavailable"}`, OutcomeUnavailable)
				return
			case d.Verdict == surface.Deny:
				reply(http.StatusTooManyRequests, `{"error":"rate"}`, OutcomeClaimsLimited)
				return
			}
		}
		d, err := o.Guard.Claim(ctx, key, time.Now(), o.ReplayWindow)
		switch {
		case err != nil:
			reply(http.StatusServiceUnavailable, `{"error":"unavailable"}`, OutcomeUnavailable)
		case d == surface.Claimed:
			reply(http.StatusOK, `{"claim":"claimed"}`, OutcomeClaimed)
		case d == surface.Replayed:
			reply(http.StatusOK, `{"claim":"replayed"}`, OutcomeReplayed)
		default:
			reply(http.StatusServiceUnavailable, `{"error":"unavailable"}`, OutcomeUnavailable)
		}
	case (req.Op == "allow" && o.Limiter == nil) || (req.Op == "claim" && o.Guard == nil):
		reply(http.StatusNotFound, `{"error":"op"}`, OutcomeRefused)
	default:
		reply(http.StatusBadRequest, `{"error":"request"}`, OutcomeRefused)
	}
}

// refusalReason is the error word of a refusal's body, {"error":"<word>"}.
func refusalReason(body string) string {
	const pre, post = `{"error":"`, `"}`
	if len(body) > len(pre)+len(post) && body[:len(pre)] == pre && body[len(body)-len(post):] == post {
		return body[len(pre) : len(body)-len(post)]
	}
	return ""
}

// audit hands ev to OnAudit; a panic there is contained.
func (o HandlerOptions) audit(ctx context.Context, ev HandlerEvent) {
	if o.OnAudit == nil {
		return
	}
	defer func() { _ = recover() }()
	o.OnAudit(ctx, ev)
}

// readRequest reads one JSON object whose members are op and requestId,
// each a string, each at most once, named exactly so. It reads them as the
// kernel reads a request: a string with a byte that is not UTF-8 or a lone
// surrogate is refused, not rewritten (encoding/json makes both U+FFFD, so
// two different ids would claim one key and the second would be refused
// as a replay of a call that never ran), and so is an id longer than the
// kernel accepts.
func readRequest(r *http.Request) (handlerRequest, bool) {
	var req handlerRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		return req, false
	}
	p := bodyReader{b: body}
	p.space()
	if !p.next('{') {
		return req, false
	}
	var seenOp, seenID bool
	p.space()
	for first := true; !p.next('}'); first = false {
		if !first && !p.next(',') {
			return req, false
		}
		p.space()
		name, ok := p.str()
		p.space()
		if !ok || !p.next(':') {
			return req, false
		}
		p.space()
		value, ok := p.str()
		p.space()
		switch {
		case !ok:
			return req, false
		case name == "op" && !seenOp:
			req.Op, seenOp = value, true
		case name == "requestId" && !seenID:
			req.RequestID, seenID = value, true
		default: // another member, or one named twice
			return req, false
		}
	}
	p.space()
	return req, p.i == len(p.b) && len(req.RequestID) <= surface.MaxIDBytes
}

// bodyReader reads the handler's small JSON grammar from b.
type bodyReader struct {
	b []byte
	i int
}

func (p *bodyReader) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

// next consumes c if it comes next.
func (p *bodyReader) next(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a JSON string; ok is false for anything else, and for a string
// holding a byte that is not UTF-8 or a surrogate escape that is not half
// of a pair.
func (p *bodyReader) str() (s string, ok bool) {
	if !p.next('"') {
		return "", false
	}
	var out []byte
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			r, ok := p.escape()
			if !ok {
				return "", false
			}
			out = utf8.AppendRune(out, r)
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			out = append(out, p.b[p.i:p.i+n]...)
			p.i += n
		}
	}
	return "", false
}

// escape reads the escape at p.i, a surrogate pair as one rune.
func (p *bodyReader) escape() (rune, bool) {
	if p.i+1 >= len(p.b) {
		return 0, false
	}
	c := p.b[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
	default:
		return 0, false
	}
	r, ok := p.hex4()
	switch {
	case !ok || utf16.IsSurrogate(r) && r >= 0xdc00: // a low half first
		return 0, false
	case !utf16.IsSurrogate(r):
		return r, true
	}
	if !p.next('\\') || !p.next('u') {
		return 0, false
	}
	lo, ok := p.hex4()
	r = utf16.DecodeRune(r, lo)
	return r, ok && r != utf8.RuneError
}

func (p *bodyReader) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

func answer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
