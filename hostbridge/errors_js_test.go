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

// TestReplyThatFailsIsAnnounced: when the host's reply throws (as the
// glue's call of it does before it starts, when it cannot fill the array
// of arguments), the bridge calls the host's unanswered() with no
// arguments and the token in host.unansweredToken, once per failed reply,
// so that the host can still answer its caller.
func TestReplyThatFailsIsAnnounced(t *testing.T) {
	h := host(t, `__t.host({
		failed: [], announced: [],
		reply(token) { this.failed.push(token); throw new TypeError("the arguments could not be passed"); },
		unanswered(...args) { this.announced.push([this.unansweredToken, args.length]); },
	})`)
	inst := create(t, h, Config{})
	ignore := js.FuncOf(func(js.Value, []js.Value) any { return nil })
	defer ignore.Release()
	inst.Call("handle", `{"protocol":"pling.surface/9","id":"r-1","method":"describe"}`, js.Undefined(), ignore)
	inst.Call("describe", js.Undefined(), ignore)
	// Shared mode: the capability list goes beside the reply (replyShared).
	inst.Call("handle", `{"protocol":"pling.surface/0.1","id":"r-3","method":"describe"}`, js.Undefined(), ignore, true)
	failed := js.Global().Get("JSON").Call("stringify", h.Get("failed")).String()
	announced := js.Global().Get("JSON").Call("stringify", h.Get("announced")).String()
	if failed != "[1,2,3]" || announced != "[[1,0],[2,0],[3,0]]" {
		t.Errorf("replies that threw %s, announced %s; want [1,2,3] and [[1,0],[2,0],[3,0]]", failed, announced)
	}
}
