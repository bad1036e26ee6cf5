//go:build js && wasm

package hostbridge

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall/js"
	"testing"
)

// importJS imports an ES module of this repository by file URL.
func importJS(t testing.TB, rel string) js.Value {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(wd, rel)
	return wait(t, js.Global().Call("eval", "import("+strconv.Quote(url)+")"))
}

// TestJSRuntime runs the tests of js/pling-surface.js (js/test/*.mjs)
// against the kernel running in this test binary, one subtest each.
func TestJSRuntime(t *testing.T) {
	fx(t)
	mod := importJS(t, "../js/pling-surface.js")
	suite := importJS(t, "../js/test/surface.test.mjs")
	runtime := theRuntime(t)
	ctx := js.Global().Get("Object").New()
	ctx.Set("mod", mod)
	ctx.Set("runtime", runtime)
	// The API as loadSurface binds it: entering through the module's
	// exports. exec_node.js (make test-js) publishes the Go object.
	goObj := js.Global().Get("__plingTestGo")
	if goObj.Type() != js.TypeObject {
		t.Fatal("globalThis.__plingTestGo is missing: run these tests with make test-js (hostbridge/testdata/exec_node.js)")
	}
	opts := js.Global().Get("Object").New()
	opts.Set("go", goObj)
	ctx.Set("go", goObj)
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
	// Every surface the JS tests made was closed, and nothing waits.
	checkNoLeaks(t, before)
	if st := ReadStats(); st.Surfaces != before.Surfaces {
		t.Fatalf("%d surfaces left open", st.Surfaces-before.Surfaces)
	}
}
