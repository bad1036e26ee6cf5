//go:build js && wasm

package hostbridge

import (
	"syscall/js"
	"testing"
)

// TestJSSharedStores runs js/test/shared.test.mjs: asynchronous limiters
// and guards (pling-shared.js and adapters that answer later) through the
// kernel, with the API bound as loadSurface binds it.
func TestJSSharedStores(t *testing.T) {
	fx(t)
	mod := importJS(t, "../js/pling-surface.js")
	suite := importJS(t, "../js/test/shared.test.mjs")
	runtime := theRuntime(t)
	goObj := js.Global().Get("__plingTestGo")
	if goObj.Type() != js.TypeObject {
		t.Fatal("globalThis.__plingTestGo is missing: run these tests with make test-js (hostbridge/testdata/exec_node.js)")
	}
	opts := js.Global().Get("Object").New()
	opts.Set("go", goObj)
	ctx := js.Global().Get("Object").New()
	ctx.Set("api", mod.Call("fromRuntime", runtime, opts))

	before := baseline(t)
	tests := suite.Get("tests")
	if tests.Length() == 0 {
		t.Fatal("no JS tests found")
	}
	for i := 0; i < tests.Length(); i++ {
		tc := tests.Index(i)
		t.Run(tc.Get("name").String(), func(t *testing.T) {
			if v := wait(t, suite.Call("runOne", tc, ctx)); v.Type() == js.TypeString {
				t.Fatal(v.String())
			}
		})
	}
	checkNoLeaks(t, before)
	if st := ReadStats(); st.Surfaces != before.Surfaces {
		t.Fatalf("%d surfaces left open", st.Surfaces-before.Surfaces)
	}
}
