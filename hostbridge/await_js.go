//go:build js && wasm

package hostbridge

import (
	"context"
	"errors"
	"sync"
	"syscall/js"
	"time"
)

// jsenv holds the JS built-ins the bridge uses, looked up once on first use
// (not at init, so that loading the program stays cheap).
type jsenv struct {
	promise       js.Value // Promise
	withResolvers bool     // Promise.withResolvers exists
	object        js.Value // Object
	reflect       js.Value // Reflect
	bind          js.Value // Function.prototype.bind

	// settle is the one callback every awaited Promise reports to, through
	// bound copies settle.bind(null, id, fulfilled). It lives as long as
	// the program: a Promise that settles after its waiter gave up calls it
	// with an id nobody waits for, which is simply ignored.
	settle js.Func
	// capture is the executor for new Promise(...) where
	// Promise.withResolvers is missing; see newDeferred.
	capture js.Func
}

var (
	envOnce sync.Once
	env     *jsenv

	pendingMu sync.Mutex
	pending   = map[uint64]waiter{}
	nextID    uint64

	captureMu       sync.Mutex
	capturedResolve js.Value
)

type settlement struct {
	ok bool
	v  js.Value
	// text is the value when the settler wrote it to the waiter's lane
	// (inEntry); v is then undefined.
	text    []byte
	inEntry bool
	// timedOut: the settler gave up waiting for the page (a host that
	// keeps the time limit itself; see timedExecutor).
	timedOut bool
}

// waiter is one expected settlement. Its lane, when it has one, reads a
// fulfilment given as a length in entryIO.
type waiter struct {
	ch   chan settlement
	lane lane
}

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
	id := uint64(args[0].Float())
	s := settlement{ok: args[1].Truthy(), v: js.Undefined()}
	if len(args) > 2 {
		s.v = args[2]
	}
	s.timedOut = !s.ok && len(args) > 3 && args[3].Truthy()
	w, found := take(id)
	if !found {
		return js.Undefined()
	}
	if s.ok && w.lane.size > 0 && s.v.Type() == js.TypeNumber {
		// Read at once: entryIO is only stable until this call returns.
		text, ok := w.lane.entryText(s.v)
		if !ok {
			s = settlement{ok: true, v: js.Undefined()} // not text: a bad answer
		} else {
			s.text, s.inEntry, s.v = text, true, js.Undefined()
		}
	}
	w.ch <- s // buffered; the only send, since the entry is gone
	return js.Undefined()
}

// take removes the waiter expected under id and returns it: whoever takes
// it is the one settlement it gets.
func take(id uint64) (waiter, bool) {
	pendingMu.Lock()
	w, found := pending[id]
	delete(pending, id)
	pendingMu.Unlock()
	return w, found
}

// pendingCount reports how many awaits are waiting for a settlement.
func pendingCount() int {
	pendingMu.Lock()
	defer pendingMu.Unlock()
	return len(pending)
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

// await waits for v (a Promise, a thenable or a plain value) without ever
// blocking the JS event loop: it must run on its own goroutine, never inside
// a js.FuncOf callback. It returns when v settles, when ctx ends or after
// timeout (0: no timeout of its own); in the last two cases the waiter is
// removed, so a late settlement finds nobody and is dropped.
func await(ctx context.Context, op string, v js.Value, timeout time.Duration) (js.Value, error) {
	e := theEnv()
	var p js.Value
	if err := catch(op, func() { p = e.promise.Call("resolve", v) }); err != nil {
		return js.Undefined(), err
	}
	id, ch := expect(lane{})
	err := catch(op, func() {
		ok := e.settle.Call("bind", js.Null(), float64(id), true)
		fail := e.settle.Call("bind", js.Null(), float64(id), false)
		p.Call("then", ok, fail)
	})
	if err != nil {
		forget(id)
		return js.Undefined(), err
	}
	st, err := waitSettled(ctx, op, id, ch, timeout)
	return st.v, err
}

// expect registers a waiter for one settlement, reported to the settle
// callback under the returned id. l, when it is a lane, reads a text the
// settler wrote to entryIO.
func expect(l lane) (uint64, chan settlement) {
	ch := make(chan settlement, 1)
	pendingMu.Lock()
	nextID++
	id := nextID
	pending[id] = waiter{ch: ch, lane: l}
	pendingMu.Unlock()
	return id, ch
}

// forget removes a waiter, so that a late settlement finds nobody.
func forget(id uint64) {
	pendingMu.Lock()
	delete(pending, id)
	pendingMu.Unlock()
}

// waitSettled waits for the settlement expected under id, the end of ctx
// or timeout (0: none of its own), whichever comes first.
func waitSettled(ctx context.Context, op string, id uint64, ch chan settlement, timeout time.Duration) (settlement, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case s := <-ch:
		if s.ok {
			return s, nil
		}
		if s.timedOut {
			return settlement{v: js.Undefined()}, newError(op, KindTimeout, "the host's time limit passed")
		}
		return settlement{v: js.Undefined()}, &Error{Op: op, Kind: KindRejected, Msg: describe(s.v), Reason: s.v}
	case <-ctx.Done():
		forget(id)
		none := settlement{v: js.Undefined()}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return none, newError(op, KindTimeout, "did not settle before the deadline")
		}
		return none, newError(op, KindCancelled, ctx.Err().Error())
	case <-expired:
		forget(id)
		return settlement{v: js.Undefined()}, newError(op, KindTimeout, "did not settle in "+timeout.String())
	}
}

// settleValue awaits v only when it is a thenable; a plain answer costs no
// trip through the event loop.
//
// Inside a step (see step_js.go) nothing is awaited: a thenable is parked
// for the export to hand to the host, and the answer is errPending.
func settleValue(ctx context.Context, op string, v js.Value, timeout time.Duration) (js.Value, error) {
	if !isThenable(v) {
		return v, nil
	}
	if pend(ctx, v) {
		return js.Undefined(), errPending
	}
	return await(ctx, op, v, timeout)
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
