//go:build js && wasm

// Command wasm is the surface runtime loaded by js/pling-surface.js. It
// registers the runtime object on globalThis, tells the loader it is ready,
// and then waits for calls forever. It does no other work at start-up:
// input schemas are compiled lazily by the kernel, on first use.
package main

import (
	"runtime/debug"
	"syscall/js"

	"pling.dev/agent/hostbridge"
)

// Names shared with js/pling-surface.js.
const (
	runtimeName = "__plingSurfaceRuntime"
	readyName   = "__plingSurfaceReady"
)

// gcPercent is the collector's GOGC. A wasm memory never shrinks, so the
// heap's highest point is what the page keeps for the rest of its life,
// and that point is about (1 + GOGC/100) times the live heap. The live heap
// is small, and most of it is the replay guard's table, which holds no
// pointers, so a collection has little to mark (about 1.3 ms in Node).
// Collecting at 1.5 times the live heap instead of twice it means one
// collection per about 700 requests instead of one per 1,750, about 1 µs a
// request on average.
const gcPercent = 50

func main() {
	debug.SetGCPercent(gcPercent)
	start(js.Global())
	select {}
}

// start publishes the runtime on global and calls the loader's ready
// callback, when it set one, with the runtime.
func start(global js.Value) js.Value {
	rt := hostbridge.NewRuntime()
	global.Set(runtimeName, rt)
	if ready := global.Get(readyName); ready.Type() == js.TypeFunction {
		ready.Invoke(rt)
	}
	return rt
}
