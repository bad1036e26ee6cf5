//go:build js && wasm

// Command boundary measures the ways JavaScript and a Go wasm program can
// call each other, so that the cost of the surface's bridge can be read
// against the mechanism under it. Run it with `make bench-boundary`
// (Node; boundary.mjs drives it).
package main

import (
	"syscall/js"
	"unsafe"
)

// hostEcho is provided by boundary.mjs under the module name "boundary".
//
//go:wasmimport boundary echo
func hostEcho(p unsafe.Pointer, n int32) int32

var (
	buf = make([]byte, 64)

	// A worker that parks between the two halves of a call, as a request
	// waiting for the page's executor does.
	work   = make(chan int32)
	resume = make(chan int32)
	out    = make(chan int32)
)

//go:wasmexport boundary_export
func export(x int32) int32 { return x + 1 }

//go:wasmexport boundary_export_import
func exportImport(x int32) int32 {
	buf[0] = byte(x)
	return hostEcho(unsafe.Pointer(&buf[0]), int32(len(buf)))
}

// boundary_start hands x to the worker and returns once the worker parks.
//
//go:wasmexport boundary_start
func start(x int32) int32 { work <- x; return <-out }

// boundary_settle wakes the parked worker and returns its answer.
//
//go:wasmexport boundary_settle
func settle(x int32) int32 { resume <- x; return <-out }

func worker() {
	for v := range work {
		out <- -1 // parked
		out <- v + <-resume
	}
}

func main() {
	go worker()
	g := js.Global()
	g.Set("boundaryFuncOf", js.FuncOf(func(js.Value, []js.Value) any { return 1 }))
	g.Set("boundaryFuncOfCallsJS", js.FuncOf(func(_ js.Value, args []js.Value) any {
		return args[0].Invoke("x")
	}))
	if ready := g.Get("boundaryReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
