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
func TestJSRuntime(t *testing.T) { runJSSuite(t, "../js/test/surface.test.mjs") }

// runJSSuite runs the tests a module of js/test exports, one subtest each,
// with ctx.mod (js/pling-surface.js), ctx.kernel (js/pling-kernel.js, with
// fromRuntime), ctx.runtime (this binary's), ctx.go
// (the Go object running it) and ctx.api (the API as loadSurface binds it:
// entering through the module's exports). Afterwards every surface the
// tests made is closed and nothing waits.
func runJSSuite(t *testing.T, suitePath string) {
	fx(t)
	mod := importJS(t, "../js/pling-surface.js")
	kernel := importJS(t, "../js/pling-kernel.js")
	suite := importJS(t, suitePath)
	runtime := theRuntime(t)
	opts := goOpts(t) // exec_node.js (make test-js) publishes the Go object
	ctx := js.Global().Get("Object").New()
	ctx.Set("mod", mod)
	ctx.Set("kernel", kernel)
	ctx.Set("runtime", runtime)
	ctx.Set("go", opts.Get("go"))
	ctx.Set("secret", opts.Get("secret"))
	js.Global().Set("__plingTestSecret", opts.Get("secret"))
	ctx.Set("api", kernel.Call("fromRuntime", runtime, opts))

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
