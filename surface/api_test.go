package surface_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// The package's exported names, as go doc -all lists them, are held to
// what its users need: a name only this module's own packages use goes
// to an internal package or stays unexported.
const (
	maxExportedNames = 90
	// maxStepContract bounds what a host learns to step an exchange
	// itself: the exchange and its ask and answer types with their
	// methods, and the Surface methods that begin, drive or answer one.
	// The ask kinds' values count as their type's.
	maxStepContract = 12
)

// stepTypes are the types of the step contract.
var stepTypes = []string{"Exchange", "Ask", "Answer", "AskKind"}

func TestExportedNamesStayFew(t *testing.T) {
	all, contract := exportedNames(t, ".")
	if len(all) > maxExportedNames {
		t.Errorf("%d exported names, want at most %d: %v", len(all), maxExportedNames, all)
	}
	if len(contract) > maxStepContract {
		t.Errorf("the step contract has %d names, want at most %d: %v", len(contract), maxStepContract, contract)
	}
	t.Logf("%d exported names; step contract %d: %v", len(all), len(contract), contract)
}

// exportedNames lists the exported types, functions, methods, constants
// and variables of the package in dir as go doc shows them for this
// platform, and those of the step contract.
func exportedNames(t *testing.T, dir string) (all, contract []string) {
	t.Helper()
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		t.Fatal(err)
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				if ast.IsExported(n) {
					all = append(all, n)
				}
			}
		}
	}
	values(p.Consts)
	values(p.Vars)
	for _, f := range p.Funcs {
		all = append(all, f.Name)
	}
	for _, typ := range p.Types {
		all = append(all, typ.Name)
		values(typ.Consts)
		values(typ.Vars)
		step := slices.Contains(stepTypes, typ.Name)
		if step {
			contract = append(contract, typ.Name)
		}
		for _, f := range typ.Funcs {
			all = append(all, f.Name)
		}
		for _, m := range typ.Methods {
			all = append(all, typ.Name+"."+m.Name)
			if step || (typ.Name == "Surface" && mentionsStepType(m.Decl.Type)) {
				contract = append(contract, typ.Name+"."+m.Name)
			}
		}
	}
	return all, contract
}

// mentionsStepType reports whether a signature takes or returns one of
// the step contract's types.
func mentionsStepType(ft *ast.FuncType) bool {
	found := false
	ast.Inspect(ft, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && slices.Contains(stepTypes, id.Name) {
			found = true
		}
		return !found
	})
	return found
}
