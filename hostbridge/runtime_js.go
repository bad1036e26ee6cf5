//go:build js && wasm

package hostbridge

import (
	"syscall/js"

	"pling.dev/agent/surface"
)

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
	// stats() counts what the bridge holds, so that tests and a page can
	// check that nothing leaks: js.Funcs made and not released (the
	// runtime's own two), host Promises waited for, open surfaces, and
	// calls taken through the exports.
	rt.Set("stats", funcOf("stats", func(js.Value, []js.Value) js.Value {
		o := bareObject()
		o.Set("liveFuncs", liveFuncs.Load())
		o.Set("pendingAwaits", len(tickets))
		o.Set("surfaces", len(slots))
		o.Set("fastEntries", fastEntries)
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
