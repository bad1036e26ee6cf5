//go:build js && wasm

package hostbridge

import (
	"context"
	"sync/atomic"
	"syscall/js"

	"pling.dev/agent/surface"
)

// Stats counts what the bridge holds, so that tests (and a page, through
// the runtime's stats()) can check that nothing leaks.
type Stats struct {
	// LiveFuncs is the number of js.Funcs made and not released: the
	// runtime's own, plus three per open surface.
	LiveFuncs int
	// PendingAwaits is the number of host Promises being waited for.
	PendingAwaits int
	// Surfaces is the number of surfaces created and not closed.
	Surfaces int
}

var openSurfaces atomic.Int64

// ReadStats returns the current counters.
func ReadStats() Stats {
	return Stats{
		LiveFuncs:     int(liveFuncs.Load()),
		PendingAwaits: pendingCount(),
		Surfaces:      int(openSurfaces.Load()),
	}
}

// NewRuntime returns the JS object through which pages create surfaces:
//
//	{ protocol, create(host, configJSON) -> instance | {error}, stats() }
//
// An instance is { handle(requestJSON, sessionGetter?) -> Promise<string>,
// describe(inputJSON?) -> Promise<string>, close(), maxRequestBytes,
// maxResponseBytes }. Only the holder of an instance can call it: there is
// no table of instances to reach by number.
func NewRuntime() js.Value {
	e := theEnv()
	rt := e.object.New()
	rt.Set("protocol", surface.Protocol)
	rt.Set("create", funcOf("create", createInstance, func(err *Error) js.Value {
		return errorObject("internal error while creating the surface")
	}).Value)
	rt.Set("stats", funcOf("stats", func(js.Value, []js.Value) js.Value {
		st := ReadStats()
		o := theEnv().object.New()
		o.Set("liveFuncs", st.LiveFuncs)
		o.Set("pendingAwaits", st.PendingAwaits)
		o.Set("surfaces", st.Surfaces)
		return o
	}, nil).Value)
	return rt
}

func errorObject(msg string) js.Value {
	o := theEnv().object.New()
	o.Set("error", msg)
	return o
}

func createInstance(_ js.Value, args []js.Value) js.Value {
	if len(args) < 2 || args[1].Type() != js.TypeString {
		return errorObject("create(host, configJSON) needs the config as JSON text")
	}
	var cfg Config
	if err := decodeExact([]byte(args[1].String()), &cfg, true); err != nil {
		return errorObject("surface config is not valid: " + err.Error())
	}
	s, err := New(args[0], cfg)
	if err != nil {
		return errorObject(err.Error())
	}
	return s.export()
}

// internalReply and internalDescribe answer a call whose handling broke.
const internalReply = `{"protocol":"` + surface.Protocol + `","id":"","ok":false,"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`
const internalDescribe = `{"ok":false,"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`

// export builds the instance object. Each method copies its arguments,
// starts a goroutine and returns a Promise at once: the work may await page
// Promises (executor, session, ...), which must never happen inside a
// callback.
func (s *Surface) export() js.Value {
	inst := theEnv().object.New()
	var handle, describeFn, closeFn js.Func
	handle = funcOf("handle", func(_ js.Value, args []js.Value) js.Value {
		if len(args) < 1 || args[0].Type() != js.TypeString {
			return resolvedPromise(string(s.failure(surface.CodeInvalidRequest, "request must be JSON text")))
		}
		// Refuse an oversize request before copying it into Go: a string
		// has at least as many UTF-8 bytes as UTF-16 code units.
		if stringLength(args[0]) > s.limits.MaxRequestBytes {
			return resolvedPromise(string(s.failure(surface.CodeInvalidRequest, "request is larger than the size limit")))
		}
		req := []byte(args[0].String())
		session := js.Undefined()
		if len(args) > 1 && args[1].Type() == js.TypeFunction {
			session = args[1]
		}
		return s.async("handle.run", internalReply, func() []byte {
			return s.Handle(context.Background(), req, session)
		})
	}, func(*Error) js.Value { return resolvedPromise(internalReply) })

	describeFn = funcOf("describe", func(_ js.Value, args []js.Value) js.Value {
		var input []byte
		if len(args) > 0 && !args[0].IsUndefined() && !args[0].IsNull() {
			if args[0].Type() != js.TypeString {
				return resolvedPromise(`{"ok":false,"error":{"code":"INVALID_REQUEST","message":"describe input must be JSON text"}}`)
			}
			if stringLength(args[0]) > s.limits.MaxRequestBytes {
				return resolvedPromise(`{"ok":false,"error":{"code":"INVALID_REQUEST","message":"describe input is larger than the size limit"}}`)
			}
			input = []byte(args[0].String())
		}
		return s.async("describe.run", internalDescribe, func() []byte {
			return s.Describe(context.Background(), input)
		})
	}, func(*Error) js.Value { return resolvedPromise(internalDescribe) })

	closeFn = funcOf("close", func(js.Value, []js.Value) js.Value {
		if s.closed.Swap(true) {
			return js.Undefined()
		}
		openSurfaces.Add(-1)
		// The methods go away with their funcs: a later call is a plain
		// TypeError in JS, not a call into a released func.
		_ = catch("close", func() {
			inst.Delete("handle")
			inst.Delete("describe")
			inst.Delete("close")
		})
		release(handle)
		release(describeFn)
		release(closeFn)
		return js.Undefined()
	}, nil)

	inst.Set("handle", handle.Value)
	inst.Set("describe", describeFn.Value)
	inst.Set("close", closeFn.Value)
	inst.Set("maxRequestBytes", s.limits.MaxRequestBytes)
	inst.Set("maxResponseBytes", s.limits.MaxResponseBytes)
	openSurfaces.Add(1)
	return inst
}

// async runs work on a goroutine and returns a Promise of its JSON answer.
// A panic in work settles the Promise with fallback, so the caller always
// gets an answer and the Go program keeps running.
func (s *Surface) async(op, fallback string, work func() []byte) js.Value {
	d, err := newDeferred()
	if err != nil {
		return resolvedPromise(fallback)
	}
	settle := func(text string) {
		_ = catch("resolve", func() { d.resolve.Invoke(text) })
	}
	goSafe(op, func() { settle(string(work())) }, func(*Error) { settle(fallback) })
	return d.promise
}

// stringLength returns the UTF-16 length of a JS string without copying it
// into Go (Value.Length only works on objects).
func stringLength(v js.Value) int {
	return theEnv().object.Invoke(v).Get("length").Int()
}
