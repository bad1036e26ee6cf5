package surface

import (
	"errors"
	"strconv"
)

// Protocol is the only protocol version this package speaks. Requests must
// carry it exactly; anything else is refused rather than guessed at.
const Protocol = "pling.surface/0.1"

// Record window defaults, as in the reference package.
const (
	// DefaultRecordLimit is the record window describe returns when the
	// caller gives no limit.
	DefaultRecordLimit = 8
	// MaxRecordLimit is the largest window a caller may ask for unless
	// Options.MaxRecordLimit says otherwise.
	MaxRecordLimit = 100
	// maxRecordSelection is how many ids one describe may name in input.record.
	maxRecordSelection = 20
)

// MaxIDBytes is the longest request id, in UTF-8 bytes. A longer id is
// refused like a missing one and never echoed, so that a protocol failure
// stays small whatever the request held (see minResponseBytes).
const MaxIDBytes = 256

// minResponseBytes is the smallest Limits.MaxResponseBytes New accepts: room
// for a protocol failure that echoes the longest id with every byte escaped
// (six bytes each) and the longest message the kernel writes.
const minResponseBytes = 4 << 10

// The protocol's methods: version 0.1 has exactly two.
const (
	methodDescribe = "describe"
	methodInvoke   = "invoke"
)

// Code is a stable protocol error code. Clients branch on it, never on the
// message text.
type Code string

// The protocol error codes of pling.surface/0.1. The set is closed: the kernel
// never produces a code outside it.
const (
	CodeInvalidRequest             Code = "INVALID_REQUEST"
	CodeProtocolVersionUnsupported Code = "PROTOCOL_VERSION_UNSUPPORTED"
	CodeMethodNotSupported         Code = "METHOD_NOT_SUPPORTED"
	CodeCapabilityNotExposed       Code = "CAPABILITY_NOT_EXPOSED"
	CodeRateLimited                Code = "RATE_LIMITED"
	CodeRateLimitUnavailable       Code = "RATE_LIMIT_UNAVAILABLE"
	CodeReplayDetected             Code = "REPLAY_DETECTED"
	CodeReplayGuardUnavailable     Code = "REPLAY_GUARD_UNAVAILABLE"
	CodeSessionRequired            Code = "SESSION_REQUIRED"
	CodeSessionInvalid             Code = "SESSION_INVALID"
	CodeSessionExpired             Code = "SESSION_EXPIRED"
	CodeSessionRevoked             Code = "SESSION_REVOKED"
	CodeInternalError              Code = "INTERNAL_ERROR"
)

// Codes lists every protocol error code, in the order of the specification's table.
var Codes = []Code{
	CodeInvalidRequest, CodeProtocolVersionUnsupported, CodeMethodNotSupported,
	CodeCapabilityNotExposed, CodeRateLimited, CodeRateLimitUnavailable,
	CodeReplayDetected, CodeReplayGuardUnavailable, CodeSessionRequired,
	CodeSessionInvalid, CodeSessionExpired, CodeSessionRevoked, CodeInternalError,
}

// Error makes a code an error value that errors.Is matches against any
// *Error carrying it: errors.Is(err, surface.CodeRateLimited).
func (c Code) Error() string { return string(c) }

// isSession reports whether c is one of the four session failure codes.
func (c Code) isSession() bool {
	switch c {
	case CodeSessionRequired, CodeSessionInvalid, CodeSessionExpired, CodeSessionRevoked:
		return true
	}
	return false
}

// Error is the one protocol error type. Its Code is stable and is what
// callers compare; Message is a short diagnostic with no internal detail.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// RetryAfterMs is set with RATE_LIMITED: how long until the session's
	// window admits another request.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// Violations is set when invoke input fails its capability's schema.
	Violations []Violation `json:"violations,omitempty"`
}

// Violation is one JSON Schema failure: where in the input, and which keyword.
type Violation struct {
	InstancePath string `json:"instancePath"`
	Keyword      string `json:"keyword"`
	Message      string `json:"message"`
}

func (e *Error) Error() string {
	s := "surface: " + string(e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfterMs > 0 {
		s += " (retry after " + strconv.FormatInt(e.RetryAfterMs, 10) + "ms)"
	}
	return s
}

// Is makes errors.Is compare codes: the target is a Code, or an *Error
// whose code is compared, so callers write
// errors.Is(err, surface.CodeSessionExpired).
func (e *Error) Is(target error) bool {
	if c, ok := target.(Code); ok {
		return c == e.Code
	}
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

func newError(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }
