//go:build !js

package hostbridge

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryFileIsConstrainedToJSWasm keeps the package out of every build
// but GOOS=js GOARCH=wasm: it imports syscall/js, which exists nowhere else.
// A "_wasm.go" suffix alone is not enough (it also builds for wasip1), so a
// file must be named "_js.go" or carry a build line that is false for
// wasip1/wasm and for a native target, and true for js/wasm.
func TestEveryFileIsConstrainedToJSWasm(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v; is the test running in the package directory?", files)
	}
	const self = "constraint_test.go"
	for _, name := range files {
		if name == self {
			continue
		}
		t.Run(name, func(t *testing.T) {
			expr, err := buildLine(name)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(strings.TrimSuffix(name, "_test.go")+".go", "_js.go") {
				if expr != nil && !expr.Eval(tags("js", "wasm")) {
					t.Fatalf("%s is named _js.go but its build line excludes js/wasm", name)
				}
				return
			}
			if expr == nil {
				t.Fatalf("%s has no //go:build line and is not named _js.go", name)
			}
			for _, target := range [][2]string{{"js", "wasm"}, {"wasip1", "wasm"}, {"linux", "amd64"}, {"darwin", "arm64"}} {
				want := target == [2]string{"js", "wasm"}
				if got := expr.Eval(tags(target[0], target[1])); got != want {
					t.Errorf("%s: //go:build %s builds for %s/%s = %v, want %v", name, expr, target[0], target[1], got, want)
				}
			}
		})
	}
}

// buildLine returns the file's //go:build expression, or nil.
func buildLine(name string) (constraint.Expr, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	for _, group := range f.Comments {
		if group.Pos() > f.Package {
			break
		}
		for _, c := range group.List {
			if constraint.IsGoBuild(c.Text) {
				return constraint.Parse(c.Text)
			}
		}
	}
	return nil, nil
}

func tags(goos, goarch string) func(string) bool {
	return func(tag string) bool { return tag == goos || tag == goarch || tag == "gc" }
}
