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
func importJS(t *testing.T, rel string) js.Value {
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
	ctx.Set("api", mod.Call("fromRuntime", runtime))

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
