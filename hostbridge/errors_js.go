//go:build js && wasm

package hostbridge

import (
	"errors"
	"syscall/js"

	"pling.dev/agent/internal/sprint"
)

// hostError is a failure at the JS boundary. The kernel turns it into a
// protocol code (INTERNAL_ERROR, SESSION_INVALID, RATE_LIMIT_UNAVAILABLE,
// ...); its text never reaches a reply.
type hostError struct {
	op, msg string // the host operation (e.g. "execute"), and what went wrong
	// reason is the thrown value, when there is one, so that it can be
	// handed back to page code (onAuditError) unchanged.
	reason js.Value
}

func (e *hostError) Error() string { return "hostbridge: " + e.op + ": " + e.msg }

// reason returns the JS value behind err, or undefined.
func reason(err error) js.Value {
	var e *hostError
	if errors.As(err, &e) {
		return e.reason
	}
	return js.Undefined()
}

func newError(op, msg string) *hostError {
	return &hostError{op: op, msg: msg, reason: js.Undefined()}
}

// catch runs fn and turns a JS exception or any panic into a *hostError. It is
// the one place where syscall/js panics are contained; every call into JS
// goes through it.
func catch(op string, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError(op, r)
		}
	}()
	fn()
	return nil
}

// panicError words a recovered panic value.
func panicError(op string, r any) *hostError {
	switch v := r.(type) {
	case *hostError:
		return v
	case js.Error:
		return &hostError{op: op, msg: "threw: " + describe(v.Value), reason: v.Value}
	case error:
		return newError(op, v.Error())
	default:
		return newError(op, sprint.Sprint(r))
	}
}

// describe renders a thrown or rejected JS value for an error message
// without letting a second failure escape: it runs inside recover handlers.
// It reads name and message of an object (page-owned values), never calls
// toString, and caps the length. It reads them through Reflect.get, as
// getProp does, but not through catch: a read that throws makes it
// "unreadable value" here, where describing that throw in turn would
// recurse without end when every call throws (wasm_exec.js cannot pass
// arguments once a later script has put a getter for an index on
// Array.prototype).
func describe(v js.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "unreadable value"
		}
	}()
	switch v.Type() {
	case js.TypeString:
		s = v.String()
	case js.TypeObject, js.TypeFunction:
		reflect := theEnv().reflect
		name := reflect.Call("get", v, "name")
		msg := reflect.Call("get", v, "message")
		if name.Type() == js.TypeString {
			s = name.String()
		}
		if msg.Type() == js.TypeString {
			if s != "" {
				s += ": "
			}
			s += msg.String()
		}
		if s == "" {
			s = "object"
		}
	default:
		s = v.Type().String()
	}
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
