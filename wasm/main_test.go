//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"
)

func TestStartPublishesRuntimeAndSignalsReady(t *testing.T) {
	global := js.Global().Get("Object").New()
	var got js.Value
	ready := js.FuncOf(func(_ js.Value, args []js.Value) any {
		got = args[0]
		return nil
	})
	defer ready.Release()
	global.Set(readyName, ready)

	rt := start(global)

	if !global.Get(runtimeName).Equal(rt) {
		t.Fatal("runtime is not published on the global object")
	}
	if !got.Equal(rt) {
		t.Fatal("ready callback did not receive the runtime")
	}
	if p := rt.Get("protocol").String(); p != "pling.surface/0.1" {
		t.Fatalf("protocol = %q", p)
	}
	for _, m := range []string{"create", "stats"} {
		if rt.Get(m).Type() != js.TypeFunction {
			t.Fatalf("runtime.%s is not a function", m)
		}
	}
}

func TestStartWithoutReadyCallback(t *testing.T) {
	global := js.Global().Get("Object").New()
	rt := start(global)
	if !global.Get(runtimeName).Equal(rt) {
		t.Fatal("runtime is not published without a ready callback")
	}
}
