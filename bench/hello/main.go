//go:build js && wasm

// Command hello is the baseline of the startup and size benchmarks: the
// smallest Go wasm program that links encoding/json, as any Go program that
// speaks JSON in a page must. It encodes one value and hands it to the
// page's ready callback, which is all the page waits for.
package main

import (
	"encoding/json"
	"syscall/js"
)

func main() {
	b, err := json.Marshal(map[string]bool{"ready": true})
	if err != nil {
		panic(err)
	}
	if ready := js.Global().Get("__benchHelloReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(string(b))
	}
	select {}
}
