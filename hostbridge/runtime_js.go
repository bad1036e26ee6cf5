//go:build js && wasm

package hostbridge

import (
	"sync"
	"syscall/js"

	"pling.dev/agent/surface"
)

// Stats counts what the bridge holds, so that tests (and a page, through
// the runtime's stats()) can check that nothing leaks.
type Stats struct {
	// LiveFuncs is the number of js.Funcs made and not released: the
	// runtime's own (create and stats), none per surface.
	LiveFuncs int
	// PendingAwaits is the number of host Promises being waited for.
	PendingAwaits int
	// Surfaces is the number of surfaces created and not closed.
	Surfaces int
	// FastEntries is the number of calls that came in through the
	// module's exports (see exports_js.go).
	FastEntries int
}

// ReadStats returns the current counters.
func ReadStats() Stats {
	return Stats{
		LiveFuncs:     int(liveFuncs.Load()),
		PendingAwaits: len(tickets),
		Surfaces:      len(slots),
		FastEntries:   fastEntries,
	}
}

// NewRuntime returns the JS object through which pages create surfaces:
//
//	{ protocol, create(host, configJSON) -> instance | {error}, stats() }
//
// An instance is { slot, maxRequestBytes, maxResponseBytes }: it is called
// through the module's exports under its slot (see exports_js.go), which only
// the holder of the module's Go object can reach.
func NewRuntime() js.Value {
	e := theEnv()
	rt := bareObject()
	rt.Set("protocol", surface.Protocol)
	rt.Set("entryKey", entryKey)
	failed := errorObject("internal error while creating the surface")
	e.object.Call("freeze", failed)
	rt.Set("create", funcOf("create", createInstance, failed).Value)
	rt.Set("stats", funcOf("stats", func(js.Value, []js.Value) js.Value {
		st := ReadStats()
		o := bareObject()
		o.Set("liveFuncs", st.LiveFuncs)
		o.Set("pendingAwaits", st.PendingAwaits)
		o.Set("surfaces", st.Surfaces)
		o.Set("fastEntries", st.FastEntries)
		return o
	}, js.Undefined()).Value)
	// Frozen before the page can see it: a later script that replaced
	// create would be handed each surface's host, to swap its session
	// getter or read its buffers.
	e.object.Call("freeze", rt)
	return rt
}

func errorObject(msg string) js.Value {
	o := bareObject()
	o.Set("error", msg)
	return o
}

// bareObject makes an object without a prototype for Go to fill with Set:
// a member set on an ordinary object goes through any setter a later script
// put on Object.prototype, which would keep it (a surface's slot) and answer
// every read of it with a getter of its own.
func bareObject() js.Value {
	return theEnv().object.Call("create", js.Null())
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

// export builds the instance object, { slot, maxRequestBytes,
// maxResponseBytes }: the page calls the surface through the module's
// exports under slot (see exports_js.go), and nothing else.
func (s *Surface) export() js.Value {
	inst := bareObject()
	s.slot = freeNumber(func(n int32) bool { return slots[n] != nil })
	slots[s.slot] = s
	inst.Set("slot", s.slot)
	inst.Set("maxRequestBytes", s.limits.MaxRequestBytes)
	inst.Set("maxResponseBytes", s.limits.MaxResponseBytes)
	return inst
}

// close marks s closed and forgets its slot: later calls under the slot
// are refused. Calls already waiting finish with INTERNAL_ERROR.
func (s *Surface) close() bool {
	if s.closed {
		return false
	}
	s.closed = true
	delete(slots, s.slot)
	return true
}

// answerer delivers the one answer of a call to the host's reply function.
type answerer struct {
	s *Surface
	// token is passed to reply before the answer: the host's reply
	// function serves every call and tells them apart by it.
	token  float64
	shared bool // the caller keeps shared capability lists (see replyShared)
}

// send calls the host's reply with text, through the lane when it fits.
func (a answerer) send(text []byte) {
	params, put := a.s.lane.textParams(text)
	if _, err := a.s.lane.call("reply", a.s.reply, []any{a.token, params[0]}, put); err != nil {
		a.unanswered()
	}
}

// unanswered tells the host that a reply call failed, so that it fails the
// call itself if it was not answered. Usually the reply ran and threw
// after answering, and this finds nothing to do; but a call that fails
// before the reply runs would leave the caller with no answer at all. So
// this call has no arguments, the fewest that can fail: the token goes as
// a property of the host, which has no prototype.
func (a answerer) unanswered() {
	s := a.s
	if s.unansweredFn.Type() != js.TypeFunction {
		return
	}
	_ = catch("unanswered", func() {
		s.host.Set("unansweredToken", a.token)
		s.unansweredFn.Invoke()
	})
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

	s := a.s
	known := s.sentCaps == shared.ID
	s.sentCaps = 0 // until the caller has taken what is sent now
	var err error
	if known {
		params, put := l.textParams(b[n:])
		_, err = l.call("reply", s.reply, []any{a.token, params[0], id}, put)
	} else {
		params, put := l.textParams(b[n:], b[shared.Start:shared.End])
		_, err = l.call("reply", s.reply, []any{a.token, params[0], id, params[1]}, put)
	}
	if err == nil {
		s.sentCaps = shared.ID
	} else {
		a.unanswered()
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
