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

// A host call that takes and answers text, the two ways the bridge can
// make it: as JS strings, or copied through a Uint8Array both sides hold
// (hostbridge's lane). boundary.mjs defines the JS halves.
var (
	query            = []byte(`{"ids":["SO-1002"]}`)
	answer           = make([]byte, 4096)
	textFn, laneFn   js.Value
	laneIO           js.Value
	textsInitialized bool
)

func initTexts() {
	if !textsInitialized {
		g := js.Global()
		textFn, laneFn, laneIO = g.Get("boundaryText"), g.Get("boundaryLane"), g.Get("boundaryIO")
		textsInitialized = true
	}
}

//go:wasmexport boundary_text_strings
func textStrings(n int32) int32 {
	initTexts()
	total := 0
	for i := int32(0); i < n; i++ {
		total += len(textFn.Invoke(string(query)).String())
	}
	return int32(total)
}

//go:wasmexport boundary_text_lane
func textLane(n int32) int32 {
	initTexts()
	total := 0
	for i := int32(0); i < n; i++ {
		js.CopyBytesToJS(laneIO, query)
		m := laneFn.Invoke(len(query)).Int()
		total += js.CopyBytesToGo(answer[:m], laneIO)
	}
	return int32(total)
}

// A worker that the next two entries hand a value to without waiting for
// it: the runtime runs it before it pauses again.
var (
	handoff = make(chan int32, 1)
	handled int32
)

// boundary_handoff only queues x for handOffWorker. The JS side then calls
// the Go object's _resume(), the runtime's own event entry, with no event
// pending: the runtime runs the worker and pauses, as after a js.FuncOf
// call, without syscall/js reading the call's this and arguments.
//
//go:wasmexport boundary_handoff
func handOff(x int32) { handoff <- x }

func handOffWorker() {
	for v := range handoff {
		handled += v
	}
}

func worker() {
	for v := range work {
		out <- -1 // parked
		out <- v + <-resume
	}
}

func main() {
	go worker()
	go handOffWorker()
	g := js.Global()
	g.Set("boundaryFuncOf", js.FuncOf(func(js.Value, []js.Value) any { return 1 }))
	g.Set("boundaryFuncOfHandOff", js.FuncOf(func(_ js.Value, args []js.Value) any {
		handoff <- int32(args[0].Int())
		return nil
	}))
	g.Set("boundaryFuncOfCallsJS", js.FuncOf(func(_ js.Value, args []js.Value) any {
		return args[0].Invoke("x")
	}))
	if ready := g.Get("boundaryReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
