//go:build js && wasm

package hostbridge

import (
	"syscall/js"
)

// jsenv holds the JS built-ins the bridge uses, looked up once on first use
// (not at init, so that loading the program stays cheap).
type jsenv struct {
	object  js.Value // Object
	reflect js.Value // Reflect
	bind    js.Value // Function.prototype.bind
}

var env *jsenv

func theEnv() *jsenv {
	if env == nil {
		g := js.Global()
		env = &jsenv{object: g.Get("Object"), reflect: g.Get("Reflect"),
			bind: g.Get("Function").Get("prototype").Get("bind")}
	}
	return env
}

// getProp reads obj[key] through Reflect.get called with Value.Call. It is
// the only safe way to read a property of an object the page controls:
// Value.Get runs the property lookup outside wasm_exec.js's try/catch, so a
// getter that throws unwinds through the Go program's frames and corrupts
// it ("unexpected return pc"), whereas Value.Call catches the exception and
// it comes back as a recoverable panic. Primitives have no properties here.
func getProp(obj js.Value, key string) (v js.Value, err error) {
	if t := obj.Type(); t != js.TypeObject && t != js.TypeFunction {
		return js.Undefined(), nil
	}
	err = catch("get "+key, func() { v = theEnv().reflect.Call("get", obj, key) })
	return v, err
}
