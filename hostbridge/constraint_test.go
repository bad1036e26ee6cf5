//go:build !js

package hostbridge

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
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

// TestCallArgsBound holds the bound that js/pling-surface.js relies on when
// it looks for index setters on Object.prototype (prototypesTampered): no
// call from Go into JavaScript in the program passes more than maxCallArgs
// arguments, because wasm_exec.js writes them into a new array by index.
// It reads every call of a js.Value's Invoke, Call and New in this package,
// in wasm/, and in the standard library's syscall/js users that the program
// links, and checks that the bridge's constant and the module's agree.
func TestCallArgsBound(t *testing.T) {
	bound := constInt(t, "lane_js.go", "maxCallArgs")
	js, err := os.ReadFile("../js/pling-surface.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const GLUE_ARGS = (\d+);`).FindSubmatch(js)
	if m == nil {
		t.Fatal("js/pling-surface.js declares no GLUE_ARGS")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != bound {
		t.Fatalf("GLUE_ARGS is %d in js/pling-surface.js, maxCallArgs %d here", n, bound)
	}

	ours, err := filepath.Glob("*_js.go")
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := filepath.Glob("../wasm/*.go")
	if err != nil {
		t.Fatal(err)
	}
	std := []string{
		filepath.Join(runtime.GOROOT(), "src", "syscall", "fs_js.go"),
		filepath.Join(runtime.GOROOT(), "src", "time", "zoneinfo_js.go"),
	}
	calls := 0
	for _, name := range append(append(ours, wasm...), std...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		for _, c := range jsCalls(t, name) {
			calls++
			switch {
			case c.spread && c.fn == "callInto":
				// Counts at run time (maxCallArgs).
			case c.spread && c.fn == "fsCall":
				// syscall's fsCall(name, args...) adds its callback: counted
				// at its callers below.
			case c.spread:
				t.Errorf("%s: %s passes a slice (args...) whose length nothing bounds", c.pos, c.fn)
			case c.args > bound:
				t.Errorf("%s: a call with %d arguments, more than maxCallArgs (%d)", c.pos, c.args, bound)
			}
		}
		for _, c := range fsCalls(t, name) {
			if c.args+1 > bound { // the callback fsCall appends
				t.Errorf("%s: fsCall with %d arguments and its callback, more than %d", c.pos, c.args, bound)
			}
		}
	}
	if calls < 10 {
		t.Fatalf("found only %d calls into JavaScript; is the test reading the right files?", calls)
	}
}

type jsCall struct {
	pos    token.Position
	fn     string // the enclosing function
	args   int    // arguments the JS function receives
	spread bool   // a slice passed with ...
}

// jsCalls lists the calls of methods named Invoke, Call or New in a file,
// except those on a package (errors.New, jsonread.New).
func jsCalls(t *testing.T, name string) []jsCall {
	fset, f := parseFile(t, name)
	pkgs := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		pkgs[local] = true
	}
	var out []jsCall
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && pkgs[id.Name] {
				return true
			}
			args := len(call.Args)
			switch sel.Sel.Name {
			case "Invoke", "New":
			case "Call":
				args-- // the method's name
			default:
				return true
			}
			out = append(out, jsCall{pos: fset.Position(call.Pos()), fn: fd.Name.Name, args: args, spread: call.Ellipsis.IsValid()})
			return true
		})
	}
	return out
}

// fsCalls lists syscall's fsCall("name", args...) calls with their argument
// counts (the name not counted).
func fsCalls(t *testing.T, name string) []jsCall {
	fset, f := parseFile(t, name)
	var out []jsCall
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "fsCall" && len(call.Args) > 0 {
			out = append(out, jsCall{pos: fset.Position(call.Pos()), fn: "fsCall", args: len(call.Args) - 1, spread: call.Ellipsis.IsValid()})
		}
		return true
	})
	return out
}

func parseFile(t *testing.T, name string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fset, f
}

// constInt reads an integer constant declared in a file of this package.
func constInt(t *testing.T, file, name string) int {
	_, f := parseFile(t, file)
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name != name || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s in %s is not a literal", name, file)
				}
				n, err := strconv.Atoi(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	t.Fatalf("%s declares no constant %s", file, name)
	return 0
}
