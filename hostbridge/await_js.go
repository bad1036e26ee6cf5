//go:build js && wasm

package hostbridge

import (
	"context"
	"sync"
	"syscall/js"
)

// jsenv holds the JS built-ins the bridge uses, looked up once on first use
// (not at init, so that loading the program stays cheap).
type jsenv struct {
	promise       js.Value // Promise
	withResolvers bool     // Promise.withResolvers exists
	object        js.Value // Object
	reflect       js.Value // Reflect
	bind          js.Value // Function.prototype.bind
	// setTimeout and clearTimeout bound the wait for a host Promise when
	// the host keeps no time limit itself (see waitHere).
	setTimeout, clearTimeout js.Value

	// settle is the one callback every host Promise the bridge waits for
	// itself reports to, through bound copies settle.bind(null, ticket,
	// fulfilled), and its time limit through settle.bind(null, ticket,
	// false, undefined, true). It lives as long as the program: whatever
	// comes for a ticket already answered is ignored.
	settle js.Func
	// capture is the executor for new Promise(...) where
	// Promise.withResolvers is missing; see newDeferred.
	capture js.Func
}

var (
	envOnce sync.Once
	env     *jsenv

	captureMu       sync.Mutex
	capturedResolve js.Value
)

func theEnv() *jsenv {
	envOnce.Do(newEnv)
	return env
}

func newEnv() {
	g := js.Global()
	e := &jsenv{promise: g.Get("Promise"), object: g.Get("Object"), reflect: g.Get("Reflect"),
		bind: g.Get("Function").Get("prototype").Get("bind")}
	env = e
	wr, err := reflectGet(e.reflect, e.promise, "withResolvers")
	e.withResolvers = err == nil && wr.Type() == js.TypeFunction
	e.setTimeout, e.clearTimeout = g.Get("setTimeout"), g.Get("clearTimeout")
	e.settle = funcOf("settle", onSettle, nil)
	e.capture = funcOf("capture", func(_ js.Value, args []js.Value) js.Value {
		// Runs synchronously inside Promise.New while newDeferred holds
		// captureMu, so it must not lock it.
		if len(args) >= 1 {
			capturedResolve = args[0]
		}
		return js.Undefined()
	}, nil)
}

func onSettle(_ js.Value, args []js.Value) js.Value {
	if len(args) < 2 || args[0].Type() != js.TypeNumber {
		return js.Undefined()
	}
	ok := args[1].Truthy()
	v := js.Undefined()
	if len(args) > 2 {
		v = args[2]
	}
	timedOut := !ok && len(args) > 3 && args[3].Truthy()
	settled(int32(args[0].Int()), ok, v, timedOut)
	return js.Undefined()
}

// isThenable reports whether v must be awaited: an object or function with
// a callable then. Strings, numbers, null and the like are answers already.
func isThenable(v js.Value) bool {
	then, err := getProp(v, "then")
	return err == nil && then.Type() == js.TypeFunction
}

// getProp reads obj[key] through Reflect.get called with Value.Call. It is
// the only safe way to read a property of an object the page controls:
// Value.Get runs the property lookup outside wasm_exec.js's try/catch, so a
// getter that throws unwinds through the Go program's frames and corrupts
// it ("unexpected return pc"), whereas Value.Call catches the exception and
// it comes back as a recoverable panic. Primitives have no properties here.
func getProp(obj js.Value, key string) (js.Value, error) {
	return reflectGet(theEnv().reflect, obj, key)
}

func reflectGet(reflect, obj js.Value, key string) (v js.Value, err error) {
	if t := obj.Type(); t != js.TypeObject && t != js.TypeFunction {
		return js.Undefined(), nil
	}
	err = catch("get "+key, func() { v = reflect.Call("get", obj, key) })
	return v, err
}

// settleValue answers v when it is no thenable. A thenable is parked for
// the step in ctx (see pend), which then waits for it; nothing is ever
// awaited on a goroutine.
func settleValue(ctx context.Context, op string, v js.Value) (js.Value, error) {
	if !isThenable(v) {
		return v, nil
	}
	if pend(ctx, v) {
		return js.Undefined(), errPending
	}
	return js.Undefined(), newError(op, KindBadValue, "a Promise outside a step")
}

// deferred is a Promise created in Go together with its resolve function.
type deferred struct {
	promise, resolve js.Value
}

// newDeferred creates a Promise that Go settles later. It uses
// Promise.withResolvers where it exists (one call) and new Promise(capture)
// elsewhere (Node 20, older browsers).
func newDeferred() (d deferred, err error) {
	e := theEnv()
	if e.withResolvers {
		var r js.Value
		if err = catch("promise", func() { r = e.promise.Call("withResolvers") }); err != nil {
			return d, err
		}
		if d.promise, err = getProp(r, "promise"); err != nil {
			return d, err
		}
		d.resolve, err = getProp(r, "resolve")
		if err == nil && d.resolve.Type() != js.TypeFunction {
			err = newError("promise", KindBadValue, "Promise.withResolvers gave no resolve function")
		}
		return d, err
	}
	captureMu.Lock()
	defer captureMu.Unlock()
	err = catch("promise", func() {
		p := e.promise.New(e.capture.Value)
		d = deferred{promise: p, resolve: capturedResolve}
	})
	capturedResolve = js.Undefined()
	if err == nil && d.resolve.Type() != js.TypeFunction {
		err = newError("promise", KindBadValue, "Promise executor was not called")
	}
	return d, err
}

// resolvedPromise returns Promise.resolve(s), for answers known at once.
func resolvedPromise(s string) js.Value {
	var p js.Value
	if err := catch("promise", func() { p = theEnv().promise.Call("resolve", s) }); err != nil {
		return js.Undefined()
	}
	return p
}
