package surface

import (
	"context"
	"errors"
	"time"

	"pling.dev/agent/internal/jsonwrite"
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
// (no clock, a negative bound, a rate limit with only one of its bounds).
func New(opts Options) (*Surface, error) {
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
	if opts.Limits.MaxResponseBytes < minResponseBytes {
		return nil, errors.New("surface: Limits.MaxResponseBytes must be at least minResponseBytes")
	}
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
		switch {
		case rl.Limiter != nil:
			s.limiter = rl.Limiter
		case rl.MaxRequests == 0 && rl.Window == 0:
			// The host answers the limit asks (see RateLimitOptions.Limiter).
		case rl.MaxRequests <= 0 || rl.Window <= 0:
			return nil, errors.New("surface: RateLimit needs positive MaxRequests and Window")
		default:
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
			s.guard = NewMemoryGuard(0)
		}
	}
	return s, nil
}

// Handle answers one encoded request. It never panics and never returns
// anything but a structured response: malformed input, a failing registry,
// session source, limiter, guard, executor or audit sink all end in a
// protocol failure or a contained notification.
func (s *Surface) Handle(ctx context.Context, data []byte) *Response {
	x := s.beginResponse(data)
	s.Drive(ctx, x)
	return x.response()
}

// detachResult gives the caller a description of its own (see detach).
func detachResult(r *Response) {
	if d, ok := r.Result.(*Description); ok && d != nil {
		d.detach()
	}
}

// handleValue answers a request that a transport has already decoded (for
// example a structured-clone message). The value is held to the same bounds
// and rules as encoded input: map[string]any, []any, string, bool, nil and
// numbers only, no case-variant keys, within Limits.
func (s *Surface) handleValue(ctx context.Context, v any) *Response {
	x := s.beginValue(v)
	s.Drive(ctx, x)
	return x.response()
}

// HandleJSON is Handle with the response encoded and held to
// Limits.MaxResponseBytes. A response over the limit is replaced by
// INTERNAL_ERROR, and the audit event says so: the request was handled
// once, but the caller never saw its result.
func (s *Surface) HandleJSON(ctx context.Context, data []byte) []byte {
	x := s.Begin(nil, data, s.opts.Session != nil)
	s.Drive(ctx, x)
	out, _, _ := x.Reply()
	return out
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
	w := wire{Writer: jsonwrite.Writer{B: dst}}
	w.value(r)
	b, shared, err := w.B, w.shared, w.err
	if err == nil && w.Slow {
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
	id := r.ID
	if !validID(id) { // a Response built by hand: keep the failure within the floor
		id = ""
	}
	b, _ = AppendJSON(dst, &Response{Protocol: Protocol, ID: id, OK: false, Error: newError(CodeInternalError, msg)})
	return b, SharedCaps{}, false
}

// Describe returns the description for the current session, as a direct
// in-page call: no rate limit, no audit, and no part in capabilities:
// "changed" (it always lists in full and leaves the session's remembered
// signature to the agents that use the protocol). A session failure is returned as
// an *Error with a SESSION_* code (see Code.isSession); a bad input as
// INVALID_REQUEST.
func (s *Surface) Describe(ctx context.Context, in DescribeInput) (*Description, error) {
	x := s.beginDescribe(in, s.opts.Session != nil)
	s.Drive(ctx, x)
	d, perr := x.description()
	if perr != nil {
		return nil, perr
	}
	d.detach()
	return d, nil
}

func (in DescribeInput) validate() *Error {
	if in.Records != nil {
		if in.Offset != nil || in.Limit != nil {
			return newError(CodeInvalidRequest, "record cannot be combined with offset or limit")
		}
		if len(in.Records) == 0 || len(in.Records) > maxRecordSelection {
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

// reject builds a protocol failure and marks ev with its code.
func (s *Surface) reject(ev *AuditEvent, id string, perr *Error) *Response {
	ev.Outcome, ev.Code = outcomeProtocolError, string(perr.Code)
	return &Response{Protocol: Protocol, ID: id, OK: false, Error: perr}
}
