//go:build js && wasm

package hostbridge

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"syscall/js"
	"time"

	"pling.dev/agent/surface"
)

// noExecutor stands in for the kernel's executor: the steps run the
// executor themselves (see flight.execute), so it is never called.
type noExecutor struct{}

func (noExecutor) Execute(context.Context, surface.Call) (json.RawMessage, error) {
	return nil, errors.New("hostbridge: the executor runs as a step")
}

// wireSession is a session as the JS runtime sends it: times in
// milliseconds since the epoch, as JavaScript keeps them.
type wireSession struct {
	AgentID      string       `json:"agentId"`
	SessionID    string       `json:"sessionId"`
	UserID       string       `json:"userId"`
	ExpiresAt    *json.Number `json:"expiresAt"`
	Scope        []string     `json:"scope"`
	DelegationID string       `json:"delegationId"`
	RevokedAt    *json.Number `json:"revokedAt"`
}

// sessionSource returns the kernel's SessionSource: for a call that brings
// its own getter (a token in ctx), host.sessionFor(token), else the host's
// session(). Any failure (a
// throw, a rejection, a timeout, text that is not a session) is an error,
// which the kernel answers with SESSION_INVALID: it never means "no session".
func sessionSource(host js.Value, l lane, hasHost bool) surface.SessionSource {
	// The last session each kind of getter answered: host.session() may
	// answer true for "the same as my last text", which must never pick up
	// the session of a per-call getter.
	var lastHost, lastCall lastText[surface.Session]
	hostFn := js.Undefined()
	if hasHost {
		hostFn = hostFunc(host, "session")
	}
	forFn := hostFunc(host, "sessionFor")
	return func(ctx context.Context) (*surface.Session, error) {
		fn := hostFn
		var args []any
		token, perCall := ctx.Value(sessionTokenKey{}).(float64)
		fromHost := !perCall
		if perCall {
			fn, args = forFn, []any{token}
		} else if !hasHost {
			return nil, nil
		}
		a, err := l.call("session", fn, args, nil, true)
		if err != nil {
			return nil, err
		}
		last := &lastCall
		if fromHost {
			last = &lastHost
		}
		if a.inIO {
			return sessionFromText(last, a.text)
		}
		v, err := settleValue(ctx, "session", a.v)
		if err != nil {
			return nil, err
		}
		switch v.Type() {
		case js.TypeNull, js.TypeUndefined:
			return nil, nil
		case js.TypeBoolean:
			// true: the same session as the text host.session() answered
			// last (see sessionGetter in js/pling-surface.js).
			if s := last.value(); fromHost && v.Bool() && s != nil {
				c := *s
				return &c, nil
			}
		case js.TypeString:
			return sessionFromText(last, v.String())
		}
		return nil, newError("session", KindBadValue, "session() must answer JSON text or null")
	}
}

// sessionFromText parses a session's text, or takes it from last when the
// text is the one last parsed, and answers a copy the kernel may keep.
func sessionFromText(last *lastText[surface.Session], text string) (*surface.Session, error) {
	s, ok := last.get(text)
	if !ok {
		var err error
		if s, err = parseSession([]byte(text)); err != nil {
			last.put("", nil) // true cannot mean this text
			return nil, err
		}
		last.put(text, s)
	}
	c := *s
	return &c, nil
}

func parseSession(data []byte) (*surface.Session, error) {
	if hasLoneSurrogate(data) {
		return nil, newError("session", KindBadValue, "session holds a lone surrogate")
	}
	var w wireSession
	if err := decodeSession(data, &w); err != nil {
		return nil, newError("session", KindBadValue, "session is not valid: "+err.Error())
	}
	s := &surface.Session{
		AgentID: w.AgentID, SessionID: w.SessionID, UserID: w.UserID,
		Scope: w.Scope, DelegationID: w.DelegationID,
	}
	var err error
	// A missing expiresAt leaves the zero time, which the kernel reports
	// as a malformed session.
	if w.ExpiresAt != nil {
		if s.ExpiresAt, err = msTime(*w.ExpiresAt); err != nil {
			return nil, err
		}
	}
	if w.RevokedAt != nil {
		if s.RevokedAt, err = msTime(*w.RevokedAt); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// maxDateMs is the largest time a JavaScript Date can hold.
const maxDateMs = 8.64e15

func msTime(n json.Number) (time.Time, error) {
	ms, err := n.Float64()
	if err != nil || math.IsNaN(ms) || math.Abs(ms) > maxDateMs {
		return time.Time{}, newError("session", KindBadValue, "session times must be milliseconds since the epoch")
	}
	sec := math.Floor(ms / 1000)
	nsec := (ms - sec*1000) * 1e6
	return time.Unix(int64(sec), int64(nsec)), nil
}

// limiter implements surface.Limiter on host.allow(key, nowMs), which
// answers {allowed: true} or {allowed: false, retryAfterMs > 0}, or a
// Promise of one. Anything else is illegal and the kernel answers
// RATE_LIMIT_UNAVAILABLE: undefined or an exception never lets a request by.
type limiter struct{ host js.Value }

func (l limiter) Allow(ctx context.Context, key string, now time.Time) (surface.Decision, error) {
	var v js.Value
	if err := catch("allow", func() { v = l.host.Call("allow", key, float64(now.UnixMilli())) }); err != nil {
		return surface.Decision{}, err
	}
	v, err := settleValue(ctx, "allow", v)
	if err != nil {
		return surface.Decision{}, err
	}
	return decision(v)
}

// decision reads a limiter's answer; the zero Decision is illegal.
func decision(v js.Value) (surface.Decision, error) {
	if v.Type() != js.TypeObject {
		return surface.Decision{}, nil
	}
	allowed, err := getProp(v, "allowed")
	if err != nil {
		return surface.Decision{}, err
	}
	retry, err := getProp(v, "retryAfterMs")
	if err != nil {
		return surface.Decision{}, err
	}
	if allowed.Type() != js.TypeBoolean {
		return surface.Decision{}, nil
	}
	if allowed.Bool() {
		if retry.IsUndefined() || (retry.Type() == js.TypeNumber && retry.Float() == 0) {
			return surface.Decision{Verdict: surface.Allow}, nil
		}
		return surface.Decision{}, nil
	}
	if retry.Type() != js.TypeNumber {
		return surface.Decision{}, nil
	}
	ms := retry.Float()
	if math.IsNaN(ms) || ms <= 0 || math.IsInf(ms, 0) {
		return surface.Decision{}, nil
	}
	return surface.Decision{Verdict: surface.Deny, RetryAfter: durationFromMillis(ms)}, nil
}

// guard implements surface.ReplayGuard on host.claim(sessionId, requestId,
// windowMs), which answers "claimed" or "replayed", or a Promise of one.
// Anything else is illegal: REPLAY_GUARD_UNAVAILABLE, the executor never runs.
type guard struct{ host js.Value }

func (g guard) Claim(ctx context.Context, key surface.ReplayKey, _ time.Time, window time.Duration) (surface.ReplayDecision, error) {
	var v js.Value
	if err := catch("claim", func() {
		v = g.host.Call("claim", key.SessionID, key.RequestID, float64(window.Milliseconds()))
	}); err != nil {
		return 0, err
	}
	v, err := settleValue(ctx, "claim", v)
	if err != nil {
		return 0, err
	}
	if v.Type() == js.TypeString {
		switch v.String() {
		case "claimed":
			return surface.Claimed, nil
		case "replayed":
			return surface.Replayed, nil
		}
	}
	return 0, nil
}

// auditor delivers audit events to host.audit(eventJSON) and failures to
// host.auditError(reason, message, eventJSON). The event is metadata only
// (the kernel never puts input, results or credentials in it).
//
// The response does not wait for an asynchronous sink: audit() is called
// before the response is given, and whatever it answers is ignored. A
// sink's Promise is the host's to watch (the JS runtime bounds it and
// reports its failure to onAuditError), so a slow log store cannot slow
// the agent down.
type auditor struct {
	host     js.Value
	audit    js.Value // host.audit
	lane     lane
	hasError bool
}

func (a auditor) onAudit(_ context.Context, ev surface.AuditEvent) error {
	scratch := laneBuffer(0)
	defer putScratch(scratch)
	b, err := surface.AppendJSON((*scratch)[:0], ev)
	*scratch = b
	if err != nil {
		return err
	}
	params, put := a.lane.textParams(b)
	_, err = a.lane.call("audit", a.audit, params, put, false)
	return err
}

func (a auditor) onAuditError(_ context.Context, err error, ev surface.AuditEvent) {
	b, merr := surface.AppendJSON(nil, ev)
	if merr != nil {
		return
	}
	a.report(err, b)
}

func (a auditor) report(err error, event []byte) {
	if !a.hasError {
		return
	}
	msg := err.Error()
	_ = catch("auditError", func() { a.host.Call("auditError", reason(err), msg, string(event)) })
}
