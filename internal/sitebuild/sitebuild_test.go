package sitebuild

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// fixture is a small runtime with the shapes of the real one: a first
// script that imports a helper module and loads a lazy module, which
// imports both back; a module that re-exports from the first script; a
// classic script.
var fixture = map[string]string{
	"first.js": `import { helper, SHARED_SENTINEL } from "./shared.js";
export { helper, SHARED_SENTINEL };
export const SENTINEL = "first-script-sentinel";
export const instance = {};
const assets = typeof __PLING_ASSETS__ === "object" ? __PLING_ASSETS__ : { wasm: "surface.wasm", lazy: "lazy.js" };
export const wasmURL = new URL(assets.wasm, import.meta.url).href;
export function loadLazy() { return import("./lazy.js"); }
`,
	"shared.js": `export const SHARED_SENTINEL = "shared-module-sentinel";
export function helper() { return SHARED_SENTINEL; }
`,
	"lazy.js": `import { instance, SENTINEL } from "./first.js";
import { helper } from "./shared.js";
export function parts() { return { instance, text: SENTINEL + " " + helper() }; }
`,
	"reexport.js": `export { helper } from "./first.js";
`,
	"classic.js": `(function () { var longName = 1; window.classicValue = longName; })();
`,
	"first.d.ts": `export declare const SENTINEL: string;
`,
}

var fixtureTable = []Bundle{
	{Entry: "first.js", Out: "pling-surface.js", Kind: Module, First: true},
	{Entry: "lazy.js", Out: "lazy.js", Kind: Module, Hashed: true, Asset: "lazy", Redirect: true},
	{Entry: "reexport.js", Out: "reexport.js", Kind: Module, Redirect: true},
	{Entry: "classic.js", Out: "classic.global.js", Kind: Classic},
}

// writeFixture writes the fixture with the given files replaced, and a
// surface.wasm of the given bytes.
func writeFixture(t *testing.T, wasm string, replace map[string]string) (js, wasmPath string) {
	t.Helper()
	dir := t.TempDir()
	js = filepath.Join(dir, "js")
	if err := os.MkdirAll(js, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range fixture {
		if r, ok := replace[name]; ok {
			body = r
		}
		if err := os.WriteFile(filepath.Join(js, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wasmPath = filepath.Join(dir, "surface.wasm")
	if err := os.WriteFile(wasmPath, []byte(wasm), 0o644); err != nil {
		t.Fatal(err)
	}
	return js, wasmPath
}

func build(t *testing.T, js, wasm string, table []Bundle) (string, *Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pling")
	res, err := Build(Config{JS: js, Wasm: wasm, Out: out, Bundles: table})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot is every file of dir by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var hashedName = regexp.MustCompile(`^(surface|lazy)\.[0-9a-f]{12}\.(wasm|js)$`)

func TestBuildIsDeterministic(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", nil)
	a, resA := build(t, js, wasm, fixtureTable)
	b, _ := build(t, js, wasm, fixtureTable)
	for _, d := range []string{a, b} {
		if _, err := Compress(d, ""); err != nil {
			t.Fatal(err)
		}
	}
	sa, sb := snapshot(t, a), snapshot(t, b)
	if len(sa) == 0 || len(sa) != len(sb) {
		t.Fatalf("%d files, then %d", len(sa), len(sb))
	}
	for name, body := range sa {
		if sb[name] != body {
			t.Errorf("%s differs between two builds of the same input", name)
		}
	}
	for _, key := range []string{"wasm", "lazy"} {
		if !hashedName.MatchString(resA.Assets[key]) {
			t.Errorf("asset %s named %q, want a content-hashed name", key, resA.Assets[key])
		}
	}
	want := []string{"classic.global.js", "first.d.ts", "lazy.", "pling-surface.js", "reexport.js", "surface."}
	if len(resA.Files) != len(want) {
		t.Fatalf("files %v, want %d like %v", resA.Files, len(want), want)
	}
	for i, f := range resA.Files {
		if !strings.HasPrefix(f, want[i]) {
			t.Errorf("file %d is %q, want %q…", i, f, want[i])
		}
	}
}

// TestHashFollowsContent: a change of the wasm or of a lazy module renames
// it, and the first script (which names it) changes with it; an unchanged
// file keeps its name.
func TestHashFollowsContent(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", nil)
	_, base := build(t, js, wasm, fixtureTable)

	js2, wasm2 := writeFixture(t, "\x00asm-two", nil)
	_, otherWasm := build(t, js2, wasm2, fixtureTable)
	if otherWasm.Assets["wasm"] == base.Assets["wasm"] {
		t.Error("another surface.wasm kept the same name")
	}
	if otherWasm.Assets["lazy"] != base.Assets["lazy"] {
		t.Error("the lazy module was renamed though it did not change")
	}

	js3, wasm3 := writeFixture(t, "\x00asm-one", map[string]string{"lazy.js": fixture["lazy.js"] + "export const more = 1;\n"})
	out3, otherLazy := build(t, js3, wasm3, fixtureTable)
	if otherLazy.Assets["lazy"] == base.Assets["lazy"] {
		t.Error("a changed lazy module kept its name")
	}
	if otherLazy.Assets["wasm"] != base.Assets["wasm"] {
		t.Error("surface.wasm was renamed though it did not change")
	}
	if !strings.Contains(read(t, out3, "pling-surface.js"), otherLazy.Assets["lazy"]) {
		t.Error("the first script does not name the lazy module's new name")
	}
}

// TestFirstScriptNamesItsAssets: __PLING_ASSETS__ is replaced by the
// hashed names, and the first script's import of the lazy module loads it
// by its hashed name, beside itself.
func TestFirstScriptNamesItsAssets(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", nil)
	out, res := build(t, js, wasm, fixtureTable)
	first := read(t, out, "pling-surface.js")
	if strings.Contains(first, AssetsGlobal) {
		t.Errorf("%s is left in the first script", AssetsGlobal)
	}
	for _, name := range res.Assets {
		if !strings.Contains(first, name) {
			t.Errorf("the first script does not name %s", name)
		}
	}
	if !strings.Contains(first, `import("./`+res.Assets["lazy"]+`")`) {
		t.Errorf("the first script does not import ./%s", res.Assets["lazy"])
	}
	if strings.Contains(first, "parts") {
		t.Error("the first script holds a copy of the lazy module")
	}
	if len(res.Plain) != 0 {
		t.Errorf("written by plain names too: %v, though the first script names every asset", res.Plain)
	}
}

// TestLazyBundleUsesTheFirstScript: a lazy bundle holds no copy of any
// module of the first script and imports them from ./pling-surface.js, so
// a page that loaded the first script evaluates each module once; Node
// loads the two and sees one instance.
func TestLazyBundleUsesTheFirstScript(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", nil)
	out, res := build(t, js, wasm, fixtureTable)
	for _, name := range []string{res.Assets["lazy"], "reexport.js"} {
		b := read(t, out, name)
		for _, sentinel := range []string{"first-script-sentinel", "shared-module-sentinel"} {
			if strings.Contains(b, sentinel) {
				t.Errorf("%s holds a copy of a module of the first script (%s)", name, sentinel)
			}
		}
		if !strings.Contains(b, `from"./pling-surface.js"`) {
			t.Errorf("%s does not import ./pling-surface.js: %s", name, b)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to load the bundles")
	}
	script := `const first = await import(process.argv[1]);
const lazy = await first.loadLazy();
const p = lazy.parts();
if (p.instance !== first.instance) throw new Error("the lazy module has a first script of its own");
console.log(p.text);`
	cmd := exec.Command(node, "--input-type=module", "-e", script, filepath.Join(out, "pling-surface.js"))
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, got)
	}
	if strings.TrimSpace(string(got)) != "first-script-sentinel shared-module-sentinel" {
		t.Fatalf("node printed %q", got)
	}
}

// TestRedirectNeedsTheExport: a lazy module that imports, from a module
// of the first script, a name the first script does not export would fail
// only in a browser; Build refuses it.
func TestRedirectNeedsTheExport(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", map[string]string{
		"first.js": strings.Replace(fixture["first.js"], "export { helper, SHARED_SENTINEL };", "export { SHARED_SENTINEL };", 1),
	})
	// The lazy module alone imports helper (reexport.js is left out).
	_, err := Build(Config{JS: js, Wasm: wasm, Out: t.TempDir(), Bundles: fixtureTable[:2]})
	if err == nil || !strings.Contains(err.Error(), "does not link") {
		t.Fatalf("Build: %v, want a link error for helper", err)
	}
}

// TestPlainNamesWhileUnnamed: a first script that asks for surface.wasm
// by its plain name still finds it.
func TestPlainNamesWhileUnnamed(t *testing.T) {
	js, wasm := writeFixture(t, "\x00asm-one", map[string]string{
		"first.js": strings.Replace(fixture["first.js"], "assets.wasm", `"surface.wasm"`, 1),
	})
	out, res := build(t, js, wasm, fixtureTable)
	if !slices.Equal(res.Plain, []string{"surface.wasm"}) {
		t.Fatalf("plain names %v, want [surface.wasm]", res.Plain)
	}
	if read(t, out, "surface.wasm") != "\x00asm-one" {
		t.Fatal("surface.wasm is not the wasm")
	}
}

// TestRuntimeTable builds the real js/: the WebMCP bundle imports the first
// script and holds no copy of it or of the glue, and every redirected
// import links.
func TestRuntimeTable(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "surface.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, res := build(t, filepath.Join("..", "..", "js"), wasm, nil)
	webmcp := read(t, out, res.Assets["webmcp"])
	if !strings.Contains(webmcp, `from"./pling-surface.js"`) {
		t.Error("the WebMCP bundle does not import ./pling-surface.js")
	}
	first := read(t, out, "pling-surface.js")
	kernel := read(t, out, res.Assets["kernel"])
	if !strings.Contains(kernel, `from"./pling-surface.js"`) {
		t.Error("the kernel's host does not import ./pling-surface.js")
	}
	// Strings only the first script's modules hold.
	for _, s := range []string{"loadSurface options must be an object", "no XMLHttpRequest to fetch the kernel with"} {
		if !strings.Contains(first, s) {
			t.Fatalf("the sentinel %q is not in the first script: choose another", s)
		}
		if strings.Contains(webmcp, s) || strings.Contains(kernel, s) {
			t.Errorf("a bundle loaded later holds a copy of the first script (%q)", s)
		}
	}
	// And strings only the kernel's host (the glue, the entries) holds: the
	// first script, which every visitor pays for, holds neither.
	for _, s := range []string{"runtime.wasmExit", "the surface runtime refused its entries"} {
		if !strings.Contains(kernel, s) {
			t.Fatalf("the sentinel %q is not in the kernel's host: choose another", s)
		}
		if strings.Contains(first, s) || strings.Contains(webmcp, s) {
			t.Errorf("the glue or the host is bundled beside the kernel's host (%q)", s)
		}
	}
	for _, key := range []string{"webmcp", "kernel", "wasm"} {
		if !strings.Contains(first, `"`+res.Assets[key]+`"`) {
			t.Errorf("the first script is not told the hashed name of %s (%s)", key, res.Assets[key])
		}
	}
	if !strings.Contains(read(t, out, "pling-shared.js"), `from"./pling-surface.js"`) {
		t.Error("pling-shared.js does not import ./pling-surface.js")
	}
}

func TestCompressRoundTrips(t *testing.T) {
	root := t.TempDir()
	var big strings.Builder
	for i := 0; big.Len() < 200_000; i++ {
		big.WriteString("export const value")
		big.WriteString(strings.Repeat("x", i%17))
		big.WriteString(" = 1;\n")
	}
	files := map[string]string{
		"pling/big.js":    big.String(),
		"index.html":      strings.Repeat("<p>hello</p>\n", 50),
		"tiny.json":       "{}",                                 // no encoding makes it smaller
		"photo.png":       strings.Repeat("not negotiable", 50), // not a negotiable type
		"pling/a.d.ts":    strings.Repeat("export declare const a: number;\n", 20),
		"pling/s.wasm":    strings.Repeat("\x00asm", 1000),
		"pling/old.js.br": "stale",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A sibling from an earlier build of a file that no longer gains.
	if err := os.WriteFile(filepath.Join(root, "tiny.json.br"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	got, err := Compress(root, cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := []string{"index.html", "pling/a.d.ts", "pling/big.js", "pling/s.wasm", "tiny.json"}; !slices.Equal(names, want) {
		t.Fatalf("compressed %v, want %v", names, want)
	}
	for _, name := range []string{"index.html", "pling/a.d.ts", "pling/big.js", "pling/s.wasm"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		br, err := os.ReadFile(p + ".br")
		if err != nil {
			t.Fatal(err)
		}
		dec, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
		if err != nil || string(dec) != files[name] {
			t.Errorf("%s.br does not decompress to the file (%v)", name, err)
		}
		gz, err := os.ReadFile(p + ".gz")
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		dec, err = io.ReadAll(zr)
		if err != nil || string(dec) != files[name] {
			t.Errorf("%s.gz does not decompress to the file (%v)", name, err)
		}
		if len(br) >= len(files[name]) || len(gz) >= len(files[name]) {
			t.Errorf("%s: brotli %d, gzip %d bytes, the file %d", name, len(br), len(gz), len(files[name]))
		}
	}
	for _, name := range []string{"tiny.json.br", "tiny.json.gz", "photo.png.br", "photo.png.gz"} {
		if _, err := os.Stat(filepath.Join(root, name)); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v): it gains nothing or is not negotiable", name, err)
		}
	}
	// The same again, from the cache: the same bytes.
	before := snapshot(t, root)
	if _, err := Compress(root, cache); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, root)
	for name, body := range before {
		if after[name] != body {
			t.Errorf("%s changed when compressed again", name)
		}
	}
}
