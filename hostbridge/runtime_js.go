//go:build js && wasm

package hostbridge

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall/js"
	"unsafe"

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
	// FastEntries is the number of calls that came in through the
	// module's exports rather than through js.FuncOf (see step_js.go).
	FastEntries int
}

var openSurfaces atomic.Int64

// ReadStats returns the current counters.
func ReadStats() Stats {
	return Stats{
		LiveFuncs:     int(liveFuncs.Load()),
		PendingAwaits: len(tickets),
		Surfaces:      int(openSurfaces.Load()),
		FastEntries:   int(fastEntries.Load()),
	}
}

// NewRuntime returns the JS object through which pages create surfaces:
//
//	{ protocol, create(host, configJSON) -> instance | {error}, stats() }
//
// An instance is { handle(requestJSON, sessionGetter?, reply?, shared?) ->
// Promise<string> | undefined, describe(inputJSON?, reply?) ->
// Promise<string> | undefined, close(), maxRequestBytes, maxResponseBytes }
// (see export for reply and shared). Only the holder of an instance can
// call it: there is no table of instances to reach by number.
func NewRuntime() js.Value {
	e := theEnv()
	rt := e.object.New()
	rt.Set("protocol", surface.Protocol)
	rt.Set("entryKey", entryKey)
	rt.Set("create", funcOf("create", createInstance, func(err *Error) js.Value {
		return errorObject("internal error while creating the surface")
	}).Value)
	rt.Set("stats", funcOf("stats", func(js.Value, []js.Value) js.Value {
		st := ReadStats()
		o := theEnv().object.New()
		o.Set("liveFuncs", st.LiveFuncs)
		o.Set("pendingAwaits", st.PendingAwaits)
		o.Set("surfaces", st.Surfaces)
		o.Set("fastEntries", st.FastEntries)
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
	cfg, err := parseConfig([]byte(args[1].String()))
	if err != nil {
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

// export builds the instance object. Its methods run the kernel's steps
// inside the callback, as the exports do; a host Promise is waited for by
// the settle callback, and the answer goes out when the last step is done.
//
// handle(requestJSON, sessionGetter?, reply?, shared?) answers through a
// Promise of the response text, or, when reply is a function, by calling
// reply(text) once and returning undefined, which saves the calls that
// make and settle a Promise. With shared === true as well, a description
// whose capability list the kernel shares between answers (see
// surface.SharedCaps) is answered as reply(text, id, listJSON) the first
// time and reply(text, id) after that, text holding [] in place of the
// list: the caller decodes each list once, keeps the last one it was sent,
// and puts it back in. Only a caller that keeps the decoded list to itself
// may ask for this: the list is the same object on every answer.
func (s *Surface) export() js.Value {
	inst := theEnv().object.New()
	var handle, describeFn, closeFn js.Func
	handle = funcOf("handle", func(_ js.Value, args []js.Value) js.Value {
		f := &flight{s: s, a: answerer{s: s}}
		if len(args) > 2 && args[2].Type() == js.TypeFunction {
			f.a.reply = args[2]
			f.a.shared = len(args) > 3 && args[3].Type() == js.TypeBoolean && args[3].Bool()
		}
		var req []byte
		switch {
		case len(args) < 1:
		case args[0].Type() == js.TypeString:
			// Refuse an oversize request before copying it into Go: a
			// string has at least as many UTF-8 bytes as UTF-16 code units.
			if stringLength(args[0]) > s.limits.MaxRequestBytes {
				return f.now(s.failure(surface.CodeInvalidRequest, "request is larger than the size limit"))
			}
			req = []byte(args[0].String())
		default:
			// A length in entryIO (see lane).
			req, _ = s.lane.entryText(args[0])
		}
		ctx := context.Background()
		perCall := len(args) > 1 && args[1].Type() == js.TypeFunction
		if perCall {
			ctx = context.WithValue(ctx, sessionKey{}, args[1])
		}
		result, err := f.answerLater()
		if err != nil {
			return resolvedPromise(internalReply)
		}
		s.startHandle(f, ctx, req, perCall)
		return result
	}, func(*Error) js.Value { return resolvedPromise(internalReply) })

	// describe(inputJSON?, reply?) answers like handle, without shared mode.
	describeFn = funcOf("describe", func(_ js.Value, args []js.Value) js.Value {
		f := &flight{s: s, a: answerer{s: s}, describe: true}
		if len(args) > 1 && args[1].Type() == js.TypeFunction {
			f.a.reply = args[1]
		}
		var input []byte
		if len(args) > 0 && !args[0].IsUndefined() && !args[0].IsNull() {
			if args[0].Type() != js.TypeString {
				return f.now([]byte(`{"ok":false,"error":{"code":"INVALID_REQUEST","message":"describe input must be JSON text"}}`))
			}
			if stringLength(args[0]) > s.limits.MaxRequestBytes {
				return f.now([]byte(`{"ok":false,"error":{"code":"INVALID_REQUEST","message":"describe input is larger than the size limit"}}`))
			}
			input = []byte(args[0].String())
		}
		result, err := f.answerLater()
		if err != nil {
			return resolvedPromise(internalDescribe)
		}
		s.startDescribe(f, input)
		return result
	}, func(*Error) js.Value { return resolvedPromise(internalDescribe) })

	closeFn = funcOf("close", func(js.Value, []js.Value) js.Value {
		if s.closed.Swap(true) {
			return js.Undefined()
		}
		openSurfaces.Add(-1)
		s.closeSlot()
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

	if s.reply.Type() == js.TypeFunction && s.lane.size > 0 {
		inst.Set("slot", s.openSlot())
	}
	inst.Set("handle", handle.Value)
	inst.Set("describe", describeFn.Value)
	inst.Set("close", closeFn.Value)
	inst.Set("maxRequestBytes", s.limits.MaxRequestBytes)
	inst.Set("maxResponseBytes", s.limits.MaxResponseBytes)
	openSurfaces.Add(1)
	return inst
}

// answerer delivers the one answer of a call to a reply function.
type answerer struct {
	s     *Surface
	reply js.Value // the reply function
	// token, when not nil, is passed to reply before the answer: the
	// host's reply function serves every call that came through an
	// export and tells them apart by it.
	token  any
	shared bool // the caller keeps shared capability lists (see export)
}

// replyArgs puts the token, if any, before the reply's parameters.
func (a answerer) replyArgs(params ...any) []any {
	if a.token == nil {
		return params
	}
	return append([]any{a.token}, params...)
}

// send calls the reply function with text, through the lane when there is
// one. A reply function that throws is the caller's problem: the answer was
// given.
func (a answerer) send(text []byte) {
	params, put := a.s.lane.textParams(text)
	_, _ = a.s.lane.call("reply", a.reply, a.replyArgs(params...), put, false)
}

// answerLater readies f to answer later: through its reply function, or
// else through a Promise, which it returns.
func (f *flight) answerLater() (js.Value, error) {
	if f.a.reply.Type() == js.TypeFunction {
		return js.Undefined(), nil
	}
	d, err := newDeferred()
	if err != nil {
		return js.Undefined(), err
	}
	f.promise = d
	return d.promise, nil
}

// now answers an instance call at once.
func (f *flight) now(text []byte) js.Value {
	if f.a.reply.Type() != js.TypeFunction {
		return resolvedPromise(string(text))
	}
	f.a.send(text)
	return js.Undefined()
}

// replyShared answers b without the shared capability list when the caller
// holds it already (the one sent last), and with it, separately, otherwise.
// The text without the list is built after b, in the same buffer, which it
// returns.
func (a answerer) replyShared(b []byte, shared surface.SharedCaps) []byte {
	n := len(b)
	b = append(b, b[:shared.Start]...)
	b = append(b, "[]"...)
	b = append(b, b[shared.End:n]...)
	id := float64(shared.ID)
	l := a.s.lane

	// No lock is held while JS runs: a reply function may call back in.
	s := a.s
	s.sentCapsMu.Lock()
	known := s.sentCaps == shared.ID
	s.sentCaps = 0 // until the caller has taken what is sent now
	s.sentCapsMu.Unlock()
	var err error
	if known {
		params, put := l.textParams(b[n:])
		_, err = l.call("reply", a.reply, a.replyArgs(params[0], id), put, false)
	} else {
		params, put := l.textParams(b[n:], b[shared.Start:shared.End])
		_, err = l.call("reply", a.reply, a.replyArgs(params[0], id, params[1]), put, false)
	}
	if err == nil {
		s.sentCapsMu.Lock()
		s.sentCaps = shared.ID
		s.sentCapsMu.Unlock()
	}
	return b
}

// Answers are built in pooled buffers: a description is kilobytes, and
// under WebAssembly allocating it, and collecting it later, costs about as
// much as encoding it. Buffers that grew past maxPooledBuffer (a huge
// answer) are left to the collector rather than kept.
var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

const maxPooledBuffer = 256 << 10

// putBuffer returns p to the pool holding b, which was appended to *p.
func putBuffer(p *[]byte, b []byte) {
	if cap(b) <= maxPooledBuffer {
		*p = b[:0]
		bufferPool.Put(p)
	}
}

// transient views b as a string without copying it, for a value handed
// straight to JS: syscall/js copies a string argument into a JS string
// while making the call, so b may be reused once the call returned. It
// must not be kept anywhere.
func transient(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringLength returns the UTF-16 length of a JS string without copying it
// into Go (Value.Length only works on objects).
func stringLength(v js.Value) int {
	return theEnv().object.Invoke(v).Get("length").Int()
}
