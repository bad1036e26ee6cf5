package surface

import (
	"encoding/json"
	"errors"
	"time"

	"pling.dev/agent/surface/internal/strictjson"
	"sync"
)

// The kernel is a step machine. An Exchange is one request in progress: it
// never blocks, never starts a goroutine and never calls the host itself.
// Each step takes what the host answered and returns either the reply or one
// request to the host (an Ask): read the session, read the view, ask the
// limiter or the guard, run the executor, deliver the audit event. How the
// host answers (an injected Go interface, a synchronous JS function, a
// Promise that settles much later, a call from another process) is the
// host's business, which is what lets one kernel run behind a native Go
// driver (Handle), behind wasm exports in a page, and under wazero.
//
// Why: under GOOS=js a kernel that blocks on the host must park its
// goroutine while the page answers, and every trip through the Go scheduler
// (a js.FuncOf callback or a resumed goroutine) costs about as much as the
// whole kernel work of a request. A kernel that only ever returns can be
// entered through a plain wasm export and left with the reply.

// AskKind says what an exchange needs from its host.
type AskKind uint8

const (
	// AskDone: the exchange is over; Reply or Response holds the answer.
	AskDone AskKind = iota
	// AskSession: the session in force (nil with no error: no session).
	AskSession
	// AskLimit: a rate-limit decision for Ask.Key at Ask.Now.
	AskLimit
	// AskView: a registry read for Ask.Query.
	AskView
	// AskClaim: a replay claim on Ask.Replay at Ask.Now within Ask.Window.
	AskClaim
	// AskExecute: run Ask.Call through the page's executor, once.
	AskExecute
	// AskAudit: deliver Ask.Event. The reply is decided already; the
	// answer carries only whether the sink failed.
	AskAudit
)

// Ask is one request of an exchange to its host. Only the fields of its
// Kind are set.
type Ask struct {
	Kind AskKind
	// Step numbers the asks of one exchange from 1. An answer must name the
	// step it answers, so a duplicated or late answer is refused instead of
	// being taken for the answer to a later ask of the same kind.
	Step   uint32
	Query  ViewQuery     // AskView
	Key    string        // AskLimit: the session id, "" in open mode
	Now    time.Time     // AskLimit, AskClaim
	Replay ReplayKey     // AskClaim
	Window time.Duration // AskClaim
	Call   Call          // AskExecute
	// Timeout is the executor's time limit (AskExecute): past it, answer
	// with ErrExecuteTimeout.
	Timeout time.Duration
	Event   AuditEvent // AskAudit
}

// Answer is the host's answer to the ask of Step, of the same Kind. Err
// set means the host could not answer (a failing, panicking or
// unreachable service); the kernel then fails closed as the ask's step
// says. Only the field of the Kind is read.
type Answer struct {
	Kind     AskKind
	Step     uint32
	Session  *Session        // AskSession
	View     *View           // AskView
	Decision Decision        // AskLimit
	Replay   ReplayDecision  // AskClaim
	Result   json.RawMessage // AskExecute
	Err      error
}

// errWrongAnswer is what Exchange.Answer returns for an answer that does
// not answer the exchange's current ask: another kind, another step, or an
// exchange that is over. The exchange is left as it was.
var errWrongAnswer = errors.New("surface: answer does not match the exchange's ask")

type exchangeMode uint8

const (
	modeResponse exchangeMode = iota // Handle, handleValue: a *Response
	modeJSON                         // HandleJSON: the encoded response
	modeDescribe                     // Describe: a *Description or an *Error
)

// state is where an exchange waits; each names the answer it waits for.
type state uint8

const (
	stSession state = iota + 1
	stLimit
	stDescribeView
	stInvokeView
	stTargetView
	stClaim
	stExecute
	stAfterView
	stAudit
	stDone
)

// Exchange is one request in progress (see AskKind). It is not safe for
// concurrent use; different exchanges of one Surface are independent.
type Exchange struct {
	s     *Surface
	mode  exchangeMode
	state state
	// session: the exchange asks for the caller's session and holds the
	// request to it; without, it runs in open mode.
	session bool
	ask     Ask
	start   time.Time
	ev      AuditEvent

	req  *request
	id   string
	sess *Session

	// describe
	din     DescribeInput
	dq      ViewQuery
	tracked bool

	// invoke
	capID  string
	input  map[string]any
	q      ViewQuery
	view   *View
	ec     *effectiveCap
	target *Record
	action string
	result json.RawMessage
	biz    bool

	resp   *Response
	desc   *Description
	derr   *Error
	dst    []byte
	out    []byte
	shared SharedCaps
}

// beginResponse starts an exchange on one encoded request whose answer is
// a *Response (Handle).
func (s *Surface) beginResponse(data []byte) *Exchange {
	x := s.newExchange(modeResponse)
	x.decode(data)
	return x
}

// Begin starts an exchange on one encoded request envelope. Its answer
// (Exchange.Reply) is the encoded response, appended to dst and held to
// Limits.MaxResponseBytes, as HandleJSON answers; a transport reuses its
// buffers through dst (a response is often kilobytes, and allocating it is
// a good part of a request's cost under WebAssembly). With session the
// exchange asks for the caller's session (AskSession) and requires one;
// without, it runs in open mode. Handle and the other drivers pass
// whether Options.Session is set; a host whose callers bring sessions of
// their own decides per call.
func (s *Surface) Begin(dst, data []byte, session bool) *Exchange {
	x := s.newExchange(modeJSON)
	x.session = session
	x.dst = dst
	x.decode(data)
	return x
}

// beginValue starts an exchange on a request a transport decoded already
// (handleValue).
func (s *Surface) beginValue(v any) *Exchange {
	x := s.newExchange(modeResponse)
	tree, err := strictjson.CheckValue(v, s.strict)
	if err != nil {
		x.id = refusedID(strictjson.TopStringOf(v, "id"))
		x.ev.RequestID = x.id
		x.finish(x.reject(decodeError(err)))
		return x
	}
	x.run(func() { x.begin(tree) })
	return x
}

// beginDescribe starts a direct in-page describe (Describe).
func (s *Surface) beginDescribe(in DescribeInput, session bool) *Exchange {
	x := s.newExchange(modeDescribe)
	x.session = session
	x.din = in
	x.run(func() {
		if e := in.validate(); e != nil {
			x.failDescribe(e)
			return
		}
		x.askSession()
	})
	return x
}

// BeginDescribe starts a direct in-page describe (see Describe) on its
// input as JSON text, read with the rules and limits of a describe
// request's input; empty text or null is no input. Its answer
// (Exchange.Reply) is the encoded description, or a session failure, a bad
// input or an internal error as an *Error. session is as for Begin.
func (s *Surface) BeginDescribe(input []byte, session bool) *Exchange {
	var in DescribeInput
	if len(input) > 0 {
		raw, err := strictjson.Decode(input, s.strict)
		if err != nil {
			x := s.newExchange(modeDescribe)
			x.failDescribe(decodeErrorOf("describe input", err))
			return x
		}
		var perr *Error
		if in, perr = parseDescribeInput(raw, raw != nil); perr != nil {
			x := s.newExchange(modeDescribe)
			x.failDescribe(perr)
			return x
		}
	}
	return s.beginDescribe(in, session)
}

func (s *Surface) newExchange(mode exchangeMode) *Exchange {
	x := exchanges.Get().(*Exchange)
	*x = Exchange{s: s, mode: mode, start: s.now(), session: s.opts.Session != nil}
	return x
}

// exchanges holds exchanges given back with Release: an exchange is about
// a kilobyte, and under WebAssembly allocating and collecting one per
// request costs more than clearing it.
var exchanges = sync.Pool{New: func() any { return new(Exchange) }}

// Release gives x back for a later request once its caller is done with it
// and with everything it answered (Reply's text, Handle's Response). x
// must not be used after; an exchange not released is collected.
func (x *Exchange) Release() {
	*x = Exchange{}
	exchanges.Put(x)
}

// envelopeWords are the member names and values every request repeats;
// decoding them allocates nothing.
var envelopeWords = strictjson.NewWords(
	"protocol", "id", "method", "capability", "input",
	Protocol, string(methodDescribe), string(methodInvoke),
	"record", "offset", "limit",
)

func (x *Exchange) decode(data []byte) {
	v, err := strictjson.DecodeWords(data, x.s.strict, envelopeWords)
	if err != nil {
		// Read once more, for the id alone: a request refused for a key
		// conflict or a bound still has an id every reader agrees on.
		x.id = refusedID(strictjson.TopString(data, x.s.strict, "id"))
		x.ev.RequestID = x.id
		x.finish(x.reject(decodeError(err)))
		return
	}
	x.run(func() { x.begin(v) })
}

// Ask returns what the exchange waits for; Kind AskDone once it is over.
func (x *Exchange) Ask() Ask { return x.ask }

// Answer gives the exchange the answer to its current ask and returns the
// next one. An answer of another kind or step, or any answer once the
// exchange is over, is refused with errWrongAnswer and changes nothing.
func (x *Exchange) Answer(a Answer) (Ask, error) {
	if x.state == stDone || a.Kind != x.ask.Kind || a.Step != x.ask.Step {
		return x.ask, errWrongAnswer
	}
	x.run(func() { x.step(a) })
	return x.ask, nil
}

// response is the answer of an exchange begun with beginResponse or
// beginValue, nil until it is over.
func (x *Exchange) response() *Response {
	if x.state != stDone {
		return nil
	}
	return x.resp
}

// Reply is the encoded answer, nil until the exchange is over. For Begin
// it is the response, which carries any failure itself, and shared says
// where a shared capability list sits in it. For BeginDescribe it is the
// description, or err is the *Error that failed it.
func (x *Exchange) Reply() (out []byte, shared SharedCaps, err error) {
	if x.state != stDone {
		return nil, SharedCaps{}, nil
	}
	if x.mode == modeDescribe {
		out, err = x.describeJSON()
		return out, SharedCaps{}, err
	}
	return x.out, x.shared, nil
}

// description is the answer of a direct describe: the description, or
// the error (a SESSION_* code, INVALID_REQUEST or INTERNAL_ERROR). Both
// nil until it is over.
func (x *Exchange) description() (*Description, *Error) {
	if x.state != stDone {
		return nil, nil
	}
	return x.desc, x.derr
}

// run does one step, turning a panic into INTERNAL_ERROR: the exchange
// always ends with an answer.
func (x *Exchange) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if x.mode == modeDescribe {
				x.failDescribe(newError(CodeInternalError, "internal error"))
				return
			}
			x.finish(x.reject(newError(CodeInternalError, "internal error")))
		}
	}()
	f()
}

// next records the ask the exchange now waits for.
func (x *Exchange) next(st state, a Ask) {
	a.Step = x.ask.Step + 1
	x.state, x.ask = st, a
}

// begin runs step 1 (object, id, protocol, method) and asks for the session.
func (x *Exchange) begin(v any) {
	req, id, perr := parseEnvelope(v)
	x.ev.RequestID, x.id = id, id
	if req == nil {
		if m, ok := v.(map[string]any); ok {
			if ms, ok := m["method"].(string); ok && (ms == string(methodDescribe) || ms == string(methodInvoke)) {
				x.ev.Method = ms
			}
		}
		x.finish(x.reject(perr))
		return
	}
	x.req = req
	x.ev.Method = string(req.Method)
	x.askSession()
}

// 2. session.
func (x *Exchange) askSession() {
	if !x.session {
		x.afterSession(nil, nil)
		return
	}
	x.next(stSession, Ask{Kind: AskSession})
}

func (x *Exchange) step(a Answer) {
	switch x.state {
	case stSession:
		x.afterSession(a.Session, a.Err)
	case stLimit:
		x.afterLimit(a.Decision, a.Err)
	case stDescribeView:
		x.afterDescribeView(a.View, a.Err)
	case stInvokeView:
		x.afterInvokeView(a.View, a.Err)
	case stTargetView:
		x.afterTargetView(a.View, a.Err)
	case stClaim:
		x.afterClaim(a.Replay, a.Err)
	case stExecute:
		x.afterExecute(a.Result, a.Err)
	case stAfterView:
		x.afterObserve(a.View, a.Err)
	case stAudit:
		x.done()
	}
}

func (x *Exchange) afterSession(sess *Session, err error) {
	var perr *Error
	if x.session {
		if err != nil {
			// A source that cannot answer must not be read as "no session
			// needed" or as an old answer: fail closed.
			sess, perr = nil, newError(CodeSessionInvalid, "session could not be verified")
		} else if perr = checkSession(sess, x.s.now()); perr != nil && perr.Code == CodeSessionRevoked {
			x.s.sigs.forget(sess.SessionID)
		}
	}
	if x.mode == modeDescribe {
		if perr != nil {
			x.failDescribe(perr)
			return
		}
		x.sess = sess
		x.askDescribeView()
		return
	}
	if sess != nil {
		x.sess = sess
		x.ev.SessionID, x.ev.AgentID, x.ev.UserID, x.ev.DelegationID = sess.SessionID, sess.AgentID, sess.UserID, sess.DelegationID
	}
	if perr != nil {
		x.finish(x.reject(perr))
		return
	}
	// 3. rate limit.
	if x.s.opts.RateLimit == nil {
		x.afterLimit(Decision{Verdict: Allow}, nil)
		return
	}
	a := Ask{Kind: AskLimit, Now: x.s.now()}
	if sess != nil {
		a.Key = sess.SessionID
	}
	x.next(stLimit, a)
}

func (x *Exchange) afterLimit(d Decision, err error) {
	if err != nil || !d.legal() {
		x.finish(x.reject(newError(CodeRateLimitUnavailable, "rate limiter is unavailable")))
		return
	}
	if d.Verdict == Deny {
		e := newError(CodeRateLimited, "too many requests for this session")
		e.RetryAfterMs = int64((d.RetryAfter + time.Millisecond - 1) / time.Millisecond)
		x.finish(x.reject(e))
		return
	}
	// 4-7 by method.
	req := x.req
	if req.Method == methodDescribe {
		if perr := checkKnownFields(req.fields, "protocol", "id", "method", "input"); perr != nil {
			x.finish(x.reject(perr))
			return
		}
		raw, present := req.fields["input"]
		in, perr := parseDescribeInput(raw, present)
		if perr != nil {
			x.finish(x.reject(perr))
			return
		}
		x.din, x.tracked = in, true
		x.askDescribeView()
		return
	}
	x.beginInvoke()
}

func (x *Exchange) askDescribeView() {
	x.dq = x.s.describeQuery(x.din)
	x.next(stDescribeView, Ask{Kind: AskView, Query: x.dq})
}

func (x *Exchange) afterDescribeView(v *View, err error) {
	if err != nil || v == nil {
		perr := newError(CodeInternalError, "registry could not be read")
		if x.mode == modeDescribe {
			x.failDescribe(perr)
		} else {
			x.finish(x.reject(perr))
		}
		return
	}
	d := x.s.buildDescription(v, x.sess, x.din, x.dq, x.tracked)
	if x.mode == modeDescribe {
		x.desc = d
		x.state, x.ask = stDone, Ask{Kind: AskDone, Step: x.ask.Step + 1}
		return
	}
	x.ev.Outcome = outcomeOK
	x.finish(&Response{Protocol: Protocol, ID: x.id, OK: true, Result: d})
}

func (x *Exchange) failDescribe(e *Error) {
	x.desc, x.derr = nil, e
	x.state, x.ask = stDone, Ask{Kind: AskDone, Step: x.ask.Step + 1}
}

// beginInvoke runs step 4 of invoke and asks for the view of step 5.
func (x *Exchange) beginInvoke() {
	req := x.req
	if perr := checkKnownFields(req.fields, "protocol", "id", "method", "capability", "input"); perr != nil {
		x.finish(x.reject(perr))
		return
	}
	capID, ok := req.fields["capability"].(string)
	if !ok || capID == "" {
		x.finish(x.reject(newError(CodeInvalidRequest, "capability must be a non-empty string")))
		return
	}
	x.capID, x.ev.Capability = capID, capID
	x.input = map[string]any{}
	if raw, present := req.fields["input"]; present {
		obj, ok := raw.(map[string]any)
		if !ok {
			x.finish(x.reject(newError(CodeInvalidRequest, "invoke input must be an object")))
			return
		}
		x.input = obj
	}
	// 5. capability, record, input, replay.
	if r, ok := x.input["record"].(string); ok && r != "" {
		x.q.IDs = []string{r} // the usual record parameter: read it in the same pass
	}
	x.next(stInvokeView, Ask{Kind: AskView, Query: x.q})
}

func (x *Exchange) afterInvokeView(v *View, err error) {
	if err != nil || v == nil {
		x.finish(x.reject(newError(CodeInternalError, "registry could not be read")))
		return
	}
	x.view = v
	x.ec = x.s.lookup(v, x.sess, x.capID)
	if x.ec == nil {
		x.finish(x.reject(newError(CodeCapabilityNotExposed, "capability is not exposed to this session")))
		return
	}
	x.action = x.capID
	t := x.ec.action.Record
	if t == nil {
		x.checkInput()
		return
	}
	param := t.param()
	recID, ok := x.input[param].(string)
	if !ok || recID == "" {
		x.finish(x.reject(newError(CodeInvalidRequest, "input."+param+" must name a record")))
		return
	}
	x.ev.RecordID = recID
	if len(x.q.IDs) != 1 || x.q.IDs[0] != recID {
		x.next(stTargetView, Ask{Kind: AskView, Query: ViewQuery{IDs: []string{recID}}})
		return
	}
	x.afterTargetView(v, nil)
}

func (x *Exchange) afterTargetView(v *View, err error) {
	if err != nil || v == nil {
		x.finish(x.reject(newError(CodeInternalError, "registry could not be read")))
		return
	}
	x.view = v
	t := x.ec.action.Record
	x.target = findRecord(v.Records, x.ev.RecordID)
	if x.target == nil || (t.Kind != "" && x.target.Kind != "" && x.target.Kind != t.Kind) {
		x.finish(x.reject(newError(CodeInvalidRequest, "record is not referenceable")))
		return
	}
	action, ok := concreteAction(x.target, x.capID)
	if !ok {
		x.finish(x.reject(newError(CodeInvalidRequest, "capability does not apply to this record")))
		return
	}
	x.action = action
	// The record parameter is protocol, not business input. The input is
	// the exchange's own (decoded, or copied by CheckValue), so the member
	// is dropped in place rather than by copying every other one.
	delete(x.input, t.param())
	x.checkInput()
}

func (x *Exchange) checkInput() {
	vs, err := validateInput(x.ec.schema, x.input)
	if err != nil {
		x.finish(x.reject(newError(CodeInternalError, "input could not be validated")))
		return
	}
	if len(vs) > 0 {
		e := newError(CodeInvalidRequest, "input does not match the capability's schema")
		e.Violations = vs
		x.finish(x.reject(e))
		return
	}
	if x.s.opts.Replay == nil {
		x.askExecute()
		return
	}
	key := ReplayKey{RequestID: x.id}
	if x.sess != nil {
		key.SessionID = x.sess.SessionID
	}
	x.next(stClaim, Ask{Kind: AskClaim, Replay: key, Now: x.s.now(), Window: x.s.window})
}

func (x *Exchange) afterClaim(d ReplayDecision, err error) {
	switch {
	case err != nil || (d != Claimed && d != Replayed):
		x.finish(x.reject(newError(CodeReplayGuardUnavailable, "replay guard is unavailable")))
	case d == Replayed:
		x.finish(x.reject(newError(CodeReplayDetected, "request id was already used in this session")))
	default:
		x.askExecute()
	}
}

// 6. the page's executor, exactly once: stExecute is entered only here,
// and only an answer to its step leaves it.
func (x *Exchange) askExecute() {
	args, err := AppendJSON(make([]byte, 0, 128), x.input)
	if err != nil {
		x.finish(x.reject(newError(CodeInternalError, "input could not be encoded")))
		return
	}
	ev := &x.ev
	call := Call{Action: x.action, Input: args, Context: CallContext{
		RequestID: x.id, Capability: x.capID, Record: ev.RecordID,
		SessionID: ev.SessionID, AgentID: ev.AgentID, UserID: ev.UserID, DelegationID: ev.DelegationID,
	}}
	x.next(stExecute, Ask{Kind: AskExecute, Call: call, Timeout: x.s.opts.ExecuteTimeout})
}

func (x *Exchange) afterExecute(raw json.RawMessage, err error) {
	switch {
	case errors.Is(err, ErrExecuteTimeout):
		x.finish(x.reject(newError(CodeInternalError, "executor did not answer in time")))
		return
	case err != nil:
		x.finish(x.reject(newError(CodeInternalError, "executor failed")))
		return
	}
	result, business, approval, serr := sanitizeResult(raw)
	if serr != nil {
		x.finish(x.reject(newError(CodeInternalError, "executor returned a result that is not JSON")))
		return
	}
	x.result, x.biz, x.ev.Approval = result, business, approval
	// 7. bounded after.
	q := ViewQuery{}
	if x.target != nil {
		q.IDs = []string{x.target.ID}
	}
	x.next(stAfterView, Ask{Kind: AskView, Query: q})
}

func (x *Exchange) afterObserve(v *View, err error) {
	var after *Observation
	// The executor has run: a failed observation must not fail the call.
	if err == nil && v != nil {
		after = x.s.observe(x.view, x.target, v)
	}
	x.ev.Outcome = outcomeOK
	if x.biz {
		x.ev.Outcome = outcomeBusinessError
	}
	x.finish(&Response{Protocol: Protocol, ID: x.id, OK: true, Result: x.result, After: after})
}

// reject builds a protocol failure and marks the audit event with its code.
func (x *Exchange) reject(perr *Error) *Response {
	return x.s.reject(&x.ev, x.id, perr)
}

// finish takes the decided response, encodes it in JSON mode (a response
// over the size limit becomes INTERNAL_ERROR, and the audit says so), and
// asks for the audit, when there is a sink.
func (x *Exchange) finish(r *Response) {
	x.resp = r
	if x.mode == modeJSON {
		b, shared, ok := x.s.encode(x.dst, r)
		if !ok {
			x.ev.Outcome, x.ev.Code = outcomeProtocolError, string(CodeInternalError)
		}
		x.out, x.shared = b, shared
	}
	if x.s.opts.OnAudit == nil {
		x.done()
		return
	}
	end := x.s.now()
	x.ev.Time = end
	x.ev.DurationMs = max(0, float64(end.Sub(x.start).Microseconds())/1000)
	x.next(stAudit, Ask{Kind: AskAudit, Event: x.ev})
}

func (x *Exchange) done() {
	if x.mode == modeResponse {
		detachResult(x.resp)
	}
	x.state, x.ask = stDone, Ask{Kind: AskDone, Step: x.ask.Step + 1}
}

// describeJSON is the answer of a direct describe, encoded as AppendJSON
// encodes a description; the error is an *Error.
func (x *Exchange) describeJSON() (b []byte, err error) {
	d, perr := x.description()
	if perr != nil {
		return nil, perr
	}
	if d == nil {
		return nil, newError(CodeInternalError, "internal error")
	}
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, newError(CodeInternalError, "internal error")
		}
	}()
	return AppendJSON(make([]byte, 0, len(d.capsJSON)+2048), d)
}
