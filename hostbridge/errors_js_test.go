//go:build js && wasm

package hostbridge

import (
	"syscall/js"
	"testing"
)

// TestDescribeWhenEveryReadThrows: once a later script puts a getter alone
// on an Array.prototype index, every call from Go into JavaScript with
// arguments throws, Reflect.get's included. describe then answers
// "unreadable value"; describing each failed read through catch, as it
// did, described that failure in turn and recursed until the stack ran
// out. Here Reflect is replaced by one whose get always throws.
func TestDescribeWhenEveryReadThrows(t *testing.T) {
	e := theEnv()
	saved := e.reflect
	defer func() { e.reflect = saved }()
	e.reflect = js.Global().Get("Function").New(`return { get() { throw new TypeError("no call may have arguments"); } };`).Invoke()
	if got := describe(js.Global().Get("Error").New("boom")); got != "unreadable value" {
		t.Errorf("describe = %q, want %q", got, "unreadable value")
	}
	e.reflect = saved
	if got := describe(js.Global().Get("Error").New("boom")); got != "Error: boom" {
		t.Errorf("describe = %q, want %q", got, "Error: boom")
	}
}
