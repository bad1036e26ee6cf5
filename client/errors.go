package client

import (
	"errors"
	"strconv"
	"time"

	"pling.dev/agent/surface"
)

// ProtocolError is a protocol failure: the surface answered ok: false. Code
// is what callers branch on; errors.Is compares codes, so
// errors.Is(err, surface.CodeRateLimited) works. The executor did not run
// for this request (INTERNAL_ERROR excepted: the kernel also uses it for an
// executor that failed or did not answer in time).
type ProtocolError struct {
	// ID is the request id the failure answers.
	ID      string
	Code    surface.Code
	Message string
	// RetryAfter is set with RATE_LIMITED: how long until the session's
	// window admits another request.
	RetryAfter time.Duration
	// Violations is set when invoke input failed the capability's schema.
	Violations []surface.Violation
}

func (e *ProtocolError) Error() string {
	s := "client: protocol failure " + string(e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	return s
}

// Is matches a *surface.Error or a *ProtocolError with the same code.
func (e *ProtocolError) Is(target error) bool {
	switch t := target.(type) {
	case surface.Code:
		return t == e.Code
	case *surface.Error:
		return t.Code == e.Code
	case *ProtocolError:
		return t.Code == e.Code
	}
	return false
}

// Reasons a reply is refused. A ReplyError wraps exactly one of them.
var (
	// ErrBadReply: the reply is not a response this client can read (not
	// JSON, a duplicate key, ok missing, both a result and an error, an
	// approval status outside the known set, ...).
	ErrBadReply = errors.New("client: unreadable reply")
	// ErrIDMismatch: the reply answers another request id.
	ErrIDMismatch = errors.New("client: reply answers another request")
	// ErrProtocolMismatch: the reply speaks another protocol version.
	ErrProtocolMismatch = errors.New("client: reply speaks another protocol")
	// ErrAppMismatch: the reply comes from another application than
	// Options.App.
	ErrAppMismatch = errors.New("client: reply comes from another app")
)

// ReplyError reports a reply that cannot be trusted to mean anything. It is
// never a success, a business failure or an approval.
type ReplyError struct {
	// Err is ErrBadReply, ErrIDMismatch, ErrProtocolMismatch or ErrAppMismatch.
	Err error
	// Detail says what was wrong, without echoing the reply.
	Detail string
}

func (e *ReplyError) Error() string {
	if e.Detail == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Detail
}

func (e *ReplyError) Unwrap() error { return e.Err }

func badReply(detail string) *ReplyError { return &ReplyError{Err: ErrBadReply, Detail: detail} }

// Errors found before anything is sent.
var (
	// ErrInvalidInput: the input is not a JSON object, the capability name
	// is empty, or a record parameter conflicts with the record id given.
	ErrInvalidInput = errors.New("client: invalid input")
	// ErrNotTemplate: InvokeRecord named a capability that the last
	// description does not list as a folded per-record template.
	ErrNotTemplate = errors.New("client: not a folded record template")
	// ErrUnknownRecord: InvokeRecord named a record id the surface never
	// offered as referenceable.
	ErrUnknownRecord = errors.New("client: record is not referenceable")
	// ErrRecordLimit ends a Records iteration that read Options.MaxRecords
	// records short of the total the page reported.
	ErrRecordLimit = errors.New("client: records: more than Options.MaxRecords")
)

// ErrOutcomeUnknown is matched by every *OutcomeUnknownError.
var ErrOutcomeUnknown = errors.New("client: outcome unknown")

// OutcomeUnknownError is what an invoke returns when the client cannot tell
// whether the page ran it: a request was handed to the transport and no
// readable answer came back for it (a timeout, a lost reply, a transport or
// navigation failure, an unreadable reply), or a retry of it was refused.
//
// The usual case is a retry refused with REPLAY_DETECTED: the first attempt
// reached the surface's replay guard, so it may have run and its reply was
// lost. Err is that last failure; errors.Is and errors.As see through to it
// (errors.Is(err, surface.CodeReplayDetected), errors.Is(err,
// context.DeadlineExceeded), errors.Is(err, ErrClosed)). Never retry such an
// invoke with a new id without first checking the page (a describe of the
// record, say): that is how an action runs twice.
type OutcomeUnknownError struct {
	ID         string // the request id every attempt carried
	Capability string
	Attempts   int // how many times the request was handed to the transport
	Err        error
}

func (e *OutcomeUnknownError) Error() string {
	return "client: invoke " + strconv.Quote(e.Capability) + " (id " + strconv.Quote(e.ID) +
		"): outcome unknown after " + strconv.Itoa(e.Attempts) + " attempt(s): " + e.Err.Error()
}

func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Is reports target == ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }
