//go:build js && wasm

package hostbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"syscall/js"
	"time"

	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/surface"
)

// Every answer of the host, given at once by a host function or later
// through pling_answer, is one number, read by answerFor: the length of a
// text (in io for a host function, in entryIO for pling_answer), or one of
// these codes. Only texts cross as bytes; no JS object is read by property
// and no Promise reaches Go.
const (
	codeFailed   = -1 // failed, threw, or no answer of the ask's kind
	codeNone     = -2 // session: no session (null)
	codeTimedOut = -3 // execute: the time limit passed
	codeHeld     = -4 // a text too long for the buffers: host.held() answers it
	// codeParked: the host function answered with a Promise, which the host
	// keeps for the wait that follows at once.
	codeParked = -5
	// codeSame: session, from host.session() only: the session of the text
	// it answered last.
	codeSame = -6
)

// A limiter's answer is 0 (allowed) or a positive retryAfterMs (denied);
// a guard's is codeClaimed or codeReplayed. Anything else fails closed.
const (
	codeClaimed  = 1
	codeReplayed = 2
)

// askOps name the host operation of each ask kind in errors.
var askOps = [...]string{surface.AskSession: "session", surface.AskLimit: "limit", surface.AskView: "view",
	surface.AskClaim: "claim", surface.AskExecute: "execute", surface.AskAudit: "audit"}

// errHostFailed answers an ask the host failed (codeFailed, or a code that
// is no answer of the ask's kind).
var errHostFailed = newError("host", "the host failed the ask")

// ask answers a through the host's function for it; parked: the host kept
// a Promise, and the answer comes through pling_answer.
func (f *flight) ask(a surface.Ask) (ans surface.Answer, parked bool) {
	s, l := f.s, f.s.lane
	var fn js.Value
	var args []any
	var put [][]byte
	scratch := laneBuffer()
	defer putScratch(scratch)
	switch a.Kind {
	case surface.AskSession:
		fn = s.sessionFn
		if f.perCall {
			fn, args = s.sessionForFn, []any{f.token}
		}
	case surface.AskView:
		var err error
		if f.acts, f.gen, err = s.reg.current(); err != nil {
			return surface.Answer{Kind: a.Kind, Step: a.Step, Err: err}, false
		}
		f.haveActs = true
		qb, _ := surface.AppendJSON((*scratch)[:0], a.Query)
		*scratch = qb
		fn = s.reg.view
		args, put = l.textParams(qb)
	case surface.AskLimit:
		fn, args = s.allowFn, []any{a.Key, float64(a.Now.UnixMilli())}
	case surface.AskClaim:
		fn, args = s.claimFn, []any{a.Replay.SessionID, a.Replay.RequestID, float64(a.Window.Milliseconds())}
	case surface.AskExecute:
		cb, _ := surface.AppendJSON((*scratch)[:0], a.Call.Context) // ids only: it cannot fail
		*scratch = cb
		fn = s.execFn
		args, put = l.textParams([]byte(a.Call.Action), a.Call.Input, cb)
	}
	if fn.Type() != js.TypeFunction {
		// No host function for it: the in-process limiter or guard, or the
		// audit sink (see auditor), answers through the kernel.
		return s.main.AnswerAsk(context.Background(), a), false
	}
	code, err := l.call(askOps[a.Kind], fn, args, put)
	switch {
	case err != nil:
		return surface.Answer{Kind: a.Kind, Step: a.Step, Err: err}, false
	case code == codeParked:
		return surface.Answer{}, true
	}
	return f.answerFor(a, code, l.io), false
}

// wait hands the Promise the host kept for a to host.wait under a new
// ticket, whose answer pling_answer takes once.
func (f *flight) wait(a surface.Ask) {
	f.haveActs = false // the actions in force are read again when it settles
	t := freeNumber(func(n int32) bool { return tickets[n] != nil })
	tickets[t] = f
	limit := f.s.hostTimeout
	if a.Kind == surface.AskExecute {
		limit = a.Timeout
	}
	ms := math.Max(1, float64(limit.Milliseconds()))
	if err := catch("wait", func() { f.s.waitFn.Invoke(float64(t), int(a.Kind), ms) }); err != nil {
		// Nothing will settle it: fail the ask now.
		delete(tickets, t)
		if _, aerr := f.x.Answer(surface.Answer{Kind: a.Kind, Step: a.Step, Err: err}); aerr != nil {
			panic(aerr)
		}
		f.run()
	}
}

// answerFor decodes the host's answer code to the ask a; a text's length
// counts in buf.
func (f *flight) answerFor(a surface.Ask, code float64, buf js.Value) surface.Answer {
	ans := surface.Answer{Kind: a.Kind, Step: a.Step}
	p := laneBuffer()
	defer putScratch(p)
	text, isText := f.s.lane.read(code, buf, (*p)[:0])
	if isText {
		*p = text
	}
	switch a.Kind {
	case surface.AskSession:
		switch {
		case isText:
			ans.Session, ans.Err = f.s.sessionFrom(f.perCall, text)
		case code == codeNone:
		case code == codeSame && !f.perCall && f.s.lastHost.last() != nil:
			c := *f.s.lastHost.last()
			ans.Session = &c
		default:
			ans.Err = errHostFailed
		}
	case surface.AskView:
		if !isText {
			ans.Err = errHostFailed
			break
		}
		if !f.haveActs {
			var err error
			if f.acts, f.gen, err = f.s.reg.current(); err != nil {
				ans.Err = err
				break
			}
		}
		f.haveActs = false
		ans.View, ans.Err = f.s.reg.viewOf(text, f.acts, f.gen)
	case surface.AskLimit:
		// 0: allowed; > 0: denied, retry after that many milliseconds;
		// anything else leaves the zero Decision, which is illegal.
		switch {
		case code == 0:
			ans.Decision = surface.Decision{Verdict: surface.Allow}
		case code > 0 && !math.IsInf(code, 0):
			ans.Decision = surface.Decision{Verdict: surface.Deny, RetryAfter: durationFromMillis(code)}
		}
	case surface.AskClaim:
		switch code {
		case codeClaimed:
			ans.Replay = surface.Claimed
		case codeReplayed:
			ans.Replay = surface.Replayed
		}
	case surface.AskExecute:
		switch {
		case isText:
			ans.Result = bytes.Clone(text)
		case code == codeTimedOut:
			ans.Err = surface.ErrExecuteTimeout
		default:
			ans.Err = errHostFailed
		}
	default:
		ans.Err = errHostFailed
	}
	return ans
}

// sessionFrom reads a session's text, or takes it from the last one parsed
// for its kind of getter when the text is the same, and answers a copy the
// kernel may keep. host.session() may answer codeSame for the text it
// answered last, which must never pick up a per-call getter's session.
func (s *Surface) sessionFrom(perCall bool, text []byte) (*surface.Session, error) {
	last := &s.lastHost
	if perCall {
		last = &s.lastCall
	}
	v, ok := last.getBytes(text)
	if !ok {
		var err error
		if v, err = parseSession(text); err != nil {
			last.put("", nil) // codeSame cannot mean this text
			return nil, err
		}
		last.put(string(text), v)
	}
	c := *v
	return &c, nil
}

// parseSession decodes a session's text, whose times are milliseconds
// since the epoch, as JavaScript keeps them. Text that is not a session is
// an error, which the kernel answers with SESSION_INVALID: it never means
// "no session".
func parseSession(data []byte) (*surface.Session, error) {
	if jsonread.HasLoneSurrogate(string(data)) {
		return nil, newError("session", "session holds a lone surrogate")
	}
	s := new(surface.Session)
	var expires, revoked *json.Number
	if err := decodeSession(data, s, &expires, &revoked); err != nil {
		return nil, newError("session", "session is not valid: "+err.Error())
	}
	var err error
	// A missing expiresAt leaves the zero time, which the kernel reports
	// as a malformed session.
	if expires != nil {
		if s.ExpiresAt, err = msTime(*expires); err != nil {
			return nil, err
		}
	}
	if revoked != nil {
		if s.RevokedAt, err = msTime(*revoked); err != nil {
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
		return time.Time{}, newError("session", "session times must be milliseconds since the epoch")
	}
	sec := math.Floor(ms / 1000)
	nsec := (ms - sec*1000) * 1e6
	return time.Unix(int64(sec), int64(nsec)), nil
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
	audit, auditError js.Value
	lane              lane
}

func (a auditor) onAudit(_ context.Context, ev surface.AuditEvent) error {
	scratch := laneBuffer()
	defer putScratch(scratch)
	b, err := surface.AppendJSON((*scratch)[:0], ev)
	*scratch = b
	if err != nil {
		return err
	}
	params, put := a.lane.textParams(b)
	_, err = a.lane.call("audit", a.audit, params, put)
	return err
}

func (a auditor) onAuditError(_ context.Context, err error, ev surface.AuditEvent) {
	b, merr := surface.AppendJSON(nil, ev)
	if merr != nil || a.auditError.Type() != js.TypeFunction {
		return
	}
	msg := err.Error()
	_ = catch("auditError", func() { a.auditError.Invoke(reason(err), msg, string(b)) })
}
