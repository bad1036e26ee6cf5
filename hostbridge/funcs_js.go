//go:build js && wasm

package hostbridge

import (
	"sync/atomic"
	"syscall/js"
)

// liveFuncs counts js.Funcs made by funcOf and not yet released, so tests
// (and the runtime's stats()) can prove that nothing leaks.
var liveFuncs atomic.Int64

// testHook, when set by a test, runs at the start of every callback and of
// every export's work with the operation's name; a test makes it panic to
// prove that a panicking callback cannot stop the Go program.
var testHook func(op string)

func runHook(op string) {
	if h := testHook; h != nil {
		h(op)
	}
}

// funcOf is js.FuncOf with the guarantee every callback needs: a panic is
// recovered (an unrecovered panic in a callback ends the Go program and
// every later call throws "Go program has already exited"), and the
// callback then answers failed.
func funcOf(op string, fn func(this js.Value, args []js.Value) js.Value, failed js.Value) js.Func {
	f := js.FuncOf(func(this js.Value, args []js.Value) (ret any) {
		defer func() {
			if recover() != nil {
				ret = failed
			}
		}()
		runHook(op)
		return fn(this, args)
	})
	liveFuncs.Add(1)
	return f
}
