package redisstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

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
}

// claimKey puts a session's claim budget beside its rate budget in the
// Limiter; a session id beginning with a NUL byte is refused, so no session
// names another's claim budget.
const claimKey = "\x00claim:"

// maxBody bounds a request body: a request id the kernel accepts is far
// shorter.
const maxBody = 8 << 10

type handlerRequest struct {
	Op        string `json:"op"`
	RequestID string `json:"requestId"`
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
// A body with any other member (a session id above all) is refused with
// 400. With a Limiter, claims are also limited per session to the
// Limiter's rate (429 {"error":"rate"} beyond it), since each one is kept
// for the replay window; without one, mount the handler behind a rate
// limit of your own. Mount it behind the backend's authentication and its CSRF defence,
// as any other state-changing endpoint.
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
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		answer(w, http.StatusMethodNotAllowed, `{"error":"method"}`)
		return
	}
	// A cross-site page can send a form or text/plain without a CORS
	// preflight, with the user's cookies; application/json it cannot.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		answer(w, http.StatusUnsupportedMediaType, `{"error":"content-type"}`)
		return
	}
	sid, ok := o.Session(r)
	// An empty id names no session (all such callers would share one); one
	// beginning with NUL could name another session's claim budget.
	if !ok || sid == "" || sid[0] == 0 {
		answer(w, http.StatusUnauthorized, `{"error":"session"}`)
		return
	}
	req, ok := readRequest(r)
	if !ok {
		answer(w, http.StatusBadRequest, `{"error":"request"}`)
		return
	}
	ctx := r.Context()
	switch {
	case req.Op == "allow" && req.RequestID == "" && o.Limiter != nil:
		d, err := o.Limiter.Allow(ctx, sid, time.Now())
		switch {
		case err != nil:
			answer(w, http.StatusServiceUnavailable, `{"error":"unavailable"}`)
		case d.Verdict == surface.Allow && d.RetryAfter == 0:
			answer(w, http.StatusOK, `{"allowed":true}`)
		case d.Verdict == surface.Deny && d.RetryAfter > 0:
			ms := (d.RetryAfter + time.Millisecond - 1) / time.Millisecond
			answer(w, http.StatusOK, `{"allowed":false,"retryAfterMs":`+strconv.FormatInt(int64(ms), 10)+`}`)
		default: // an illegal decision lets nothing through
			answer(w, http.StatusServiceUnavailable, `{"error":"unavailable"}`)
		}
	case req.Op == "claim" && req.RequestID != "" && o.Guard != nil:
		if o.Limiter != nil {
			// Every claim is a key kept for the replay window, and this op
			// is reachable without the allow the kernel makes before each
			// claim: claims are paid from a budget of their own, as large
			// as the session's rate limit, which the kernel never exceeds.
			d, err := o.Limiter.Allow(ctx, claimKey+sid, time.Now())
			switch {
			case err != nil || !(d.Verdict == surface.Allow && d.RetryAfter == 0 || d.Verdict == surface.Deny && d.RetryAfter > 0):
				answer(w, http.StatusServiceUnavailable, `{"error":"unavailable"}`)
				return
			case d.Verdict == surface.Deny:
				answer(w, http.StatusTooManyRequests, `{"error":"rate"}`)
				return
			}
		}
		d, err := o.Guard.Claim(ctx, surface.ReplayKey{SessionID: sid, RequestID: req.RequestID}, time.Now(), o.ReplayWindow)
		switch {
		case err != nil:
			answer(w, http.StatusServiceUnavailable, `{"error":"unavailable"}`)
		case d == surface.Claimed:
			answer(w, http.StatusOK, `{"claim":"claimed"}`)
		case d == surface.Replayed:
			answer(w, http.StatusOK, `{"claim":"replayed"}`)
		default:
			answer(w, http.StatusServiceUnavailable, `{"error":"unavailable"}`)
		}
	case (req.Op == "allow" && o.Limiter == nil) || (req.Op == "claim" && o.Guard == nil):
		answer(w, http.StatusNotFound, `{"error":"op"}`)
	default:
		answer(w, http.StatusBadRequest, `{"error":"request"}`)
	}
}

// readRequest reads one JSON object with known members only.
func readRequest(r *http.Request) (handlerRequest, bool) {
	var req handlerRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		return req, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return req, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, false
	}
	return req, true
}

func answer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
