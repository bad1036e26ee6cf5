package sitebuild

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A package build leaves every name plain and every reference literal, so
// that a page's bundler can find, copy and fingerprint each file: the
// kernel by new URL("./surface.wasm", import.meta.url), each module loaded
// later by import("./<name>") (whatever the table holds, but for the
// kernel's host, which is in the first script), and each of those modules
// imports the first script as ./pling-surface.js.
func TestPackageNamesEveryFileLiterally(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "surface.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pkg")
	js := filepath.Join("..", "..", "js")
	res, err := Package(Config{JS: js, Wasm: wasm, Out: out}, filepath.Join("..", "..", "package"))
	if err != nil {
		t.Fatal(err)
	}
	hashed := regexp.MustCompile(`\.[0-9a-f]{12}\.`)
	for _, f := range res.Files {
		if hashed.MatchString(f) {
			t.Errorf("%s: a package names no file by its hash (the page's bundler does)", f)
		}
	}
	first := read(t, out, "pling-surface.js")
	if !strings.Contains(first, `new URL("./surface.wasm",import.meta.url)`) {
		t.Error(`the first script does not name the kernel as new URL("./surface.wasm", import.meta.url)`)
	}
	for _, g := range []string{AssetsGlobal, PackageGlobal, "import.meta.resolve"} {
		if strings.Contains(first, g) {
			t.Errorf("the package's first script holds %s", g)
		}
	}
	for _, b := range Runtime {
		if b.First || b.Kind != Module {
			continue
		}
		if b.Static != "" {
			// Held in the first script: no chunk of the page's bundler
			// brings it, and no file of the package is it.
			if strings.Contains(first, `import("./`+b.Out+`")`) {
				t.Errorf("the package's first script imports %s when first needed: a bundler's chunk loader would bring it", b.Out)
			}
			if !strings.Contains(first, "runtime.wasmExit") {
				t.Error("the package's first script does not hold the glue")
			}
			if _, err := os.Stat(filepath.Join(out, b.Out)); err == nil {
				t.Errorf("the package holds %s beside the first script that holds it", b.Out)
			}
			continue
		}
		if !strings.Contains(first, `import("./`+b.Out+`")`) {
			t.Errorf(`the first script does not load %s by a literal import("./%s")`, b.Out, b.Out)
		}
		if b.Redirect && !strings.Contains(read(t, out, b.Out), `from"./pling-surface.js"`) {
			t.Errorf("%s does not import ./pling-surface.js", b.Out)
		}
	}
	for _, f := range append([]string{"package.json", "README.md", WasmName}, PackageFiles...) {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Error(err)
		}
	}
}

// The client library's entry imports its parts from beside it: the package
// holds each module that any of its modules imports.
func TestPackageHoldsTheClientsModules(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "surface.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pkg")
	if _, err := Package(Config{JS: filepath.Join("..", "..", "js"), Wasm: wasm, Out: out}, filepath.Join("..", "..", "package")); err != nil {
		t.Fatal(err)
	}
	imports := regexp.MustCompile(`(?m)^import\s*\{[^}]*\}\s*from\s*"\./([^"]+)";`)
	seen := map[string]bool{"pling-client.js": false}
	todo := []string{"pling-client.js"}
	for len(todo) > 0 {
		f := todo[0]
		todo = todo[1:]
		src := read(t, filepath.Join(out, "client"), f)
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			if _, ok := seen[m[1]]; !ok {
				seen[m[1]] = true
				todo = append(todo, m[1])
			}
		}
	}
	if len(seen) < 2 {
		t.Errorf("pling-client.js imports no module: the walk read nothing (%v)", seen)
	}
}

// The manifest check refuses what would break an install or run code on it.
func TestPackageManifestChecked(t *testing.T) {
	for name, manifest := range map[string]string{
		"install script": `{"version":"1.0.0","main":"./a.js","scripts":{"postinstall":"node x"}}`,
		"missing export": `{"version":"1.0.0","main":"./a.js","exports":{".":{"default":"./b.js"}}}`,
		"no version":     `{"main":"./a.js"}`,
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.js"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(manifest), 0o644)
		if err := checkManifest(dir); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.js"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"version":"1.0.0","main":"./a.js","exports":{".":{"default":"./a.js"}}}`), 0o644)
	if err := checkManifest(dir); err != nil {
		t.Errorf("a sound manifest: %v", err)
	}
}
