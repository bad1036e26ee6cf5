package surface

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pling.dev/agent/surface/internal/strictjson"
)

// Surface projects a page's action registry as pling.surface/0.1
// capabilities and answers describe and invoke. It is safe for concurrent use.
type Surface struct {
	opts    Options
	strict  strictjson.Limits
	limiter Limiter
	guard   ReplayGuard
	window  time.Duration // replay window
	schemas *schemaCache
	sigs    *signatureCache
	// capCache holds capability sets per actions version (View.ActionsVersion).
	capCache capCache
}

// New returns a Surface for opts. It fails only on a configuration error
// (a missing required field, a rate limit without a positive bound).
func New(opts Options) (*Surface, error) {
	if opts.Registry == nil {
		return nil, errors.New("surface: Options.Registry is required")
	}
	if opts.Execute == nil {
		return nil, errors.New("surface: Options.Execute is required")
	}
	if opts.Now == nil {
		return nil, errors.New("surface: Options.Now is required")
	}
	if opts.RecordLimit < 0 || opts.MaxRecordLimit < 0 {
		return nil, errors.New("surface: record limits must not be negative")
	}
	opts.RecordLimit = orDefault(opts.RecordLimit, DefaultRecordLimit)
	opts.MaxRecordLimit = orDefault(opts.MaxRecordLimit, MaxRecordLimit)
	if opts.RecordLimit > opts.MaxRecordLimit {
		opts.RecordLimit = opts.MaxRecordLimit
	}
	if opts.ExecuteTimeout <= 0 {
		opts.ExecuteTimeout = 30 * time.Second
	}
	opts.Limits = opts.Limits.withDefaults()
	opts.Context = opts.Context.withDefaults()
	opts.After = opts.After.withDefaults()
	opts.MaxSignatureSessions = orDefault(opts.MaxSignatureSessions, 1024)
	opts.MaxSchemaCache = orDefault(opts.MaxSchemaCache, 1024)

	s := &Surface{
		opts:    opts,
		strict:  opts.Limits.strict(),
		schemas: newSchemaCache(opts.MaxSchemaCache),
		sigs:    newSignatureCache(opts.MaxSignatureSessions),
	}
	if rl := opts.RateLimit; rl != nil {
		rlCopy := *rl
		s.opts.RateLimit = &rlCopy
		if rl.Limiter != nil {
			s.limiter = rl.Limiter
		} else {
			if rl.MaxRequests <= 0 || rl.Window <= 0 {
				return nil, errors.New("surface: RateLimit needs positive MaxRequests and Window")
			}
			s.limiter = NewSlidingWindow(rl.MaxRequests, rl.Window)
		}
	}
	if rp := opts.Replay; rp != nil {
		rpCopy := *rp
		s.opts.Replay = &rpCopy
		s.window = rp.Window
		if s.window <= 0 {
			s.window = DefaultReplayWindow
		}
		s.guard = rp.Guard
		if s.guard == nil {
			s.guard = NewMemoryGuard(DefaultReplayCapacity)
		}
	}
	return s, nil
}

// Handle answers one encoded request. It never panics and never returns
// anything but a structured response: malformed input, a failing registry,
// session source, limiter, guard, executor or audit sink all end in a
// protocol failure or a contained notification.
func (s *Surface) Handle(ctx context.Context, data []byte) *Response {
	start := s.now()
	resp, ev := s.handleBytes(ctx, data)
	s.emit(ctx, start, ev)
	detachResult(resp)
	return resp
}

// detachResult gives the caller a description of its own (see detach).
func detachResult(r *Response) {
	if d, ok := r.Result.(*Description); ok && d != nil {
		d.detach()
	}
}

// HandleValue answers a request that a transport has already decoded (for
// example a structured-clone message). The value is held to the same bounds
// and rules as encoded input: map[string]any, []any, string, bool, nil and
// numbers only, no case-variant keys, within Limits.
func (s *Surface) HandleValue(ctx context.Context, v any) *Response {
	start := s.now()
	var resp *Response
	ev := &AuditEvent{}
	tree, err := strictjson.CheckValue(v, s.strict)
	if err != nil {
		resp = s.reject(ev, "", decodeError(err))
	} else {
		resp, ev = s.handleTree(ctx, tree)
	}
	s.emit(ctx, start, ev)
	detachResult(resp)
	return resp
}

// HandleJSON is Handle with the response encoded and held to
// Limits.MaxResponseBytes. A response over the limit is replaced by
// INTERNAL_ERROR, and the audit event says so: the request was handled
// once, but the caller never saw its result. Transports should prefer it
// to Handle followed by Encode, whose audit cannot know the encoded size.
func (s *Surface) HandleJSON(ctx context.Context, data []byte) []byte {
	b, _ := s.HandleJSONAppend(ctx, nil, data)
	return b
}

// SharedCaps locates, in an encoded response, a capability list that the
// kernel encoded once and splices into every description of the same
// actions version and session scope (see View.ActionsVersion). Equal
// non-zero IDs mean byte-equal lists, so a transport that keeps the decoded
// list of an earlier response can leave those bytes out of the next one and
// reuse what it has.
type SharedCaps struct {
	ID         uint64 // 0: no shared list in this response
	Start, End int    // the list is resp[Start:End]
}

// HandleJSONAppend is HandleJSON that appends the response to dst, so a
// transport can reuse its buffers (a response is often kilobytes, and
// allocating it is a good part of a request's cost under WebAssembly), and
// that also says where a shared capability list sits in it (offsets into
// the returned slice).
func (s *Surface) HandleJSONAppend(ctx context.Context, dst, data []byte) ([]byte, SharedCaps) {
	start := s.now()
	resp, ev := s.handleBytes(ctx, data)
	b, shared, ok := s.encode(dst, resp)
	if !ok {
		ev.Outcome, ev.Code = OutcomeProtocolError, string(CodeInternalError)
	}
	s.emit(ctx, start, ev)
	return b, shared
}

// Encode marshals r within Limits.MaxResponseBytes; a response over it is
// replaced by INTERNAL_ERROR.
func (s *Surface) Encode(r *Response) []byte {
	b, _, _ := s.encode(nil, r)
	return b
}

// encode appends r to dst as AppendJSON does, keeping track of where a
// shared capability list went.
func (s *Surface) encode(dst []byte, r *Response) ([]byte, SharedCaps, bool) {
	if dst == nil {
		size := 512
		if d, ok := r.Result.(*Description); ok && d != nil {
			size += len(d.capsJSON) + 2048
		}
		dst = make([]byte, 0, size)
	}
	w := wire{b: dst}
	w.value(r)
	b, shared, err := w.b, w.shared, w.err
	if err == nil && w.slow {
		b, err = AppendJSON(dst, r)
		shared = SharedCaps{}
	}
	if err == nil && len(b)-len(dst) <= s.opts.Limits.MaxResponseBytes {
		return b, shared, true
	}
	msg := "response could not be encoded"
	if err == nil {
		msg = "response is larger than the size limit"
	}
	b, _ = AppendJSON(dst, &Response{Protocol: Protocol, ID: r.ID, OK: false, Error: newError(CodeInternalError, msg)})
	return b, SharedCaps{}, false
}

func (s *Surface) handleBytes(ctx context.Context, data []byte) (*Response, *AuditEvent) {
	v, err := strictjson.Decode(data, s.strict)
	if err != nil {
		ev := &AuditEvent{}
		return s.reject(ev, "", decodeError(err)), ev
	}
	return s.handleTree(ctx, v)
}

// Describe returns the description for the current session, as a direct
// in-page call: no rate limit, no audit, and no part in capabilities:
// "changed" (it always lists in full and leaves the session's remembered
// signature to the agents that use the protocol). A session failure is returned as
// an *Error with a SESSION_* code (see Code.IsSession); a bad input as
// INVALID_REQUEST.
func (s *Surface) Describe(ctx context.Context, in DescribeInput) (d *Description, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, newError(CodeInternalError, "internal error")
		}
	}()
	if e := in.validate(); e != nil {
		return nil, e
	}
	sess, e := s.session(ctx)
	if e != nil {
		return nil, e
	}
	d, e = s.describe(ctx, sess, in, false)
	if e != nil {
		return nil, e
	}
	d.detach()
	return d, nil
}

// DescribeJSON is Describe with the description encoded, as AppendJSON
// encodes it. It saves the copy Describe makes for its caller and reuses
// the encoded capability list when the registry gives ActionsVersion.
func (s *Surface) DescribeJSON(ctx context.Context, in DescribeInput) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, newError(CodeInternalError, "internal error")
		}
	}()
	if e := in.validate(); e != nil {
		return nil, e
	}
	sess, e := s.session(ctx)
	if e != nil {
		return nil, e
	}
	d, e := s.describe(ctx, sess, in, false)
	if e != nil {
		return nil, e
	}
	return AppendJSON(make([]byte, 0, len(d.capsJSON)+2048), d)
}

func (in DescribeInput) validate() *Error {
	if in.Records != nil {
		if in.Offset != nil || in.Limit != nil {
			return newError(CodeInvalidRequest, "record cannot be combined with offset or limit")
		}
		if len(in.Records) == 0 || len(in.Records) > MaxRecordSelection {
			return newError(CodeInvalidRequest, "record must list 1 to 20 ids")
		}
		for _, id := range in.Records {
			if id == "" {
				return newError(CodeInvalidRequest, "record ids must be non-empty strings")
			}
		}
	}
	if (in.Offset != nil && *in.Offset < 0) || (in.Limit != nil && *in.Limit < 0) {
		return newError(CodeInvalidRequest, "offset and limit must be non-negative integers")
	}
	return nil
}

func (s *Surface) now() time.Time { return s.opts.Now() }

// handleTree runs the processing order on a decoded request.
func (s *Surface) handleTree(ctx context.Context, v any) (resp *Response, evp *AuditEvent) {
	ev := AuditEvent{}
	evp = &ev
	defer func() {
		if r := recover(); r != nil {
			resp = s.reject(&ev, ev.RequestID, newError(CodeInternalError, "internal error"))
		}
	}()

	// 1. object, id, protocol, method.
	req, id, perr := parseEnvelope(v)
	ev.RequestID = id
	if req == nil {
		if m, ok := v.(map[string]any); ok {
			if ms, ok := m["method"].(string); ok && (ms == string(MethodDescribe) || ms == string(MethodInvoke)) {
				ev.Method = ms
			}
		}
		return s.reject(&ev, id, perr), evp
	}
	ev.Method = string(req.Method)

	// 2. session.
	sess, perr := s.session(ctx)
	if sess != nil {
		ev.SessionID, ev.AgentID, ev.UserID, ev.DelegationID = sess.SessionID, sess.AgentID, sess.UserID, sess.DelegationID
	}
	if perr != nil {
		return s.reject(&ev, id, perr), evp
	}

	// 3. rate limit.
	if perr := s.rateLimit(ctx, sess); perr != nil {
		return s.reject(&ev, id, perr), evp
	}

	// 4-7 by method.
	switch req.Method {
	case MethodDescribe:
		if perr := checkKnownFields(req.fields, "protocol", "id", "method", "input"); perr != nil {
			return s.reject(&ev, id, perr), evp
		}
		raw, present := req.fields["input"]
		in, perr := parseDescribeInput(raw, present)
		if perr != nil {
			return s.reject(&ev, id, perr), evp
		}
		d, perr := s.describe(ctx, sess, in, true)
		if perr != nil {
			return s.reject(&ev, id, perr), evp
		}
		ev.Outcome = OutcomeOK
		return &Response{Protocol: Protocol, ID: id, OK: true, Result: d}, evp
	default:
		return s.handleInvoke(ctx, &ev, req, sess), evp
	}
}

// reject builds a protocol failure and marks ev with its code.
func (s *Surface) reject(ev *AuditEvent, id string, perr *Error) *Response {
	ev.Outcome, ev.Code = OutcomeProtocolError, string(perr.Code)
	return &Response{Protocol: Protocol, ID: id, OK: false, Error: perr}
}

// emit completes ev with its timing and delivers it.
func (s *Surface) emit(ctx context.Context, start time.Time, ev *AuditEvent) {
	if s.opts.OnAudit == nil {
		return
	}
	end := s.now()
	ev.Time = end
	ev.DurationMs = max(0, float64(end.Sub(start).Microseconds())/1000)
	s.audit(ctx, *ev)
}

// session runs step 2: nil with no error in open mode.
func (s *Surface) session(ctx context.Context) (*Session, *Error) {
	if s.opts.Session == nil {
		return nil, nil
	}
	sess, err := callSessionSource(ctx, s.opts.Session)
	if err != nil {
		// A source that cannot answer must not be read as "no session
		// needed" or as an old answer: fail closed.
		return nil, newError(CodeSessionInvalid, "session could not be verified")
	}
	if perr := checkSession(sess, s.now()); perr != nil {
		if perr.Code == CodeSessionRevoked {
			s.sigs.forget(sess.SessionID)
		}
		return sess, perr
	}
	return sess, nil
}

func callSessionSource(ctx context.Context, src SessionSource) (sess *Session, err error) {
	defer func() {
		if r := recover(); r != nil {
			sess, err = nil, fmt.Errorf("session source panicked: %v", r)
		}
	}()
	return src(ctx)
}

// rateLimit runs step 3.
func (s *Surface) rateLimit(ctx context.Context, sess *Session) *Error {
	if s.limiter == nil {
		return nil
	}
	key := ""
	if sess != nil {
		key = sess.SessionID
	}
	d, err := callLimiter(ctx, s.limiter, key, s.now())
	if err != nil || !d.legal() {
		return newError(CodeRateLimitUnavailable, "rate limiter is unavailable")
	}
	if d.Verdict == Deny {
		e := newError(CodeRateLimited, "too many requests for this session")
		e.RetryAfterMs = int64((d.RetryAfter + time.Millisecond - 1) / time.Millisecond)
		return e
	}
	return nil
}

func callLimiter(ctx context.Context, l Limiter, key string, now time.Time) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, fmt.Errorf("limiter panicked: %v", r)
		}
	}()
	return l.Allow(ctx, key, now)
}

func callGuard(ctx context.Context, g ReplayGuard, key ReplayKey, now time.Time, window time.Duration) (d ReplayDecision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = 0, fmt.Errorf("replay guard panicked: %v", r)
		}
	}()
	return g.Claim(ctx, key, now, window)
}

// readView reads the registry, containing its failures.
func (s *Surface) readView(ctx context.Context, q ViewQuery) (v *View, perr *Error) {
	defer func() {
		if r := recover(); r != nil {
			v, perr = nil, newError(CodeInternalError, "registry could not be read")
		}
	}()
	v, err := s.opts.Registry.View(ctx, q)
	if err != nil || v == nil {
		return nil, newError(CodeInternalError, "registry could not be read")
	}
	return v, nil
}
