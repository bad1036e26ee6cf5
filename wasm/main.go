//go:build js && wasm

// Command wasm is the surface runtime loaded by js/pling-surface.js. It
// registers the runtime object on globalThis, tells the loader it is ready,
// and then waits for calls forever. It does no other work at start-up:
// input schemas are compiled lazily by the kernel, on first use.
package main

import (
	"syscall/js"

	"pling.dev/agent/hostbridge"
)

// Names shared with js/pling-surface.js.
const (
	runtimeName = "__plingSurfaceRuntime"
	readyName   = "__plingSurfaceReady"
)

func main() {
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
