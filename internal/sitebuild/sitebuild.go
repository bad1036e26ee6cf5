// Package sitebuild assembles the runtime directory of a site (what a page
// loads under /pling/) from the sources in js/ and a built surface.wasm:
// the first script as one bundle under its own name, the files loaded later
// under content-hashed names, and every text and wasm file of the site
// precompressed beside itself as .br and .gz. The same inputs give the same
// bytes and the same names. With Config.Package it writes the same bundles
// for an npm package instead (Package adds the rest of the package).
package sitebuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// AssetsGlobal is the name the first script reads its assets' names from:
// esbuild defines it as an object literal, {"wasm": "surface.<hash>.wasm", ...}.
const AssetsGlobal = "__PLING_ASSETS__"

// FirstScriptURL is the specifier every other bundle imports the first
// script by, so that a page that loaded it holds one instance of it.
const FirstScriptURL = "./pling-surface.js"

// Kind says how a Bundle is made.
type Kind int

const (
	// Module is an ES module bundled and minified by esbuild.
	Module Kind = iota
	// Classic is a classic script, minified but not bundled.
	Classic
)

// Bundle is one output of the runtime directory.
type Bundle struct {
	Entry string // source file, relative to Config.JS
	Out   string // output name; with Hashed, "a.js" is written as "a.<hash>.js"
	Kind  Kind
	// First marks the first script: the bundle pages load by name, which
	// holds the captured built-ins. Exactly one bundle is First.
	First bool
	// Hashed gives the output a content-hashed name, listed in the first
	// script's AssetsGlobal under Asset. Only for files the first script
	// loads itself.
	Hashed bool
	Asset  string
	// Redirect makes every import that resolves to a module of the first
	// script an external import of FirstScriptURL: a bundle evaluated
	// after page scripts ran must use the first script's instance (and the
	// built-ins it captured), never evaluate a copy of its own.
	Redirect bool
	// InPackage, for a bundle the first script imports when first needed,
	// names the module of the first script that imports it (Loader) and
	// the one that replaces it in a package build (Static), where the
	// bundle is part of the first script. A page's bundler loads a split
	// chunk through a runtime of its own, which waits on Promises a script
	// that ran later can answer with a module of its making: the kernel's
	// host must not arrive that way.
	Loader, Static string
}

// inPackage is whether a package build holds b in the first script.
func (b *Bundle) inPackage(c Config) bool { return c.Package && b.Static != "" }

// Runtime is the table of the runtime directory.
var Runtime = []Bundle{
	{Entry: "pling-surface.js", Out: "pling-surface.js", Kind: Module, First: true},
	{Entry: "pling-kernel.js", Out: "pling-kernel.js", Kind: Module, Hashed: true, Asset: "kernel", Redirect: true,
		Loader: "kernel-host.js", Static: "kernel-host-static.js"},
	{Entry: "pling-webmcp.js", Out: "pling-webmcp.js", Kind: Module, Hashed: true, Asset: "webmcp", Redirect: true},
	{Entry: "pling-shared.js", Out: "pling-shared.js", Kind: Module, Redirect: true},
	{Entry: "pling-surface.global.js", Out: "pling-surface.global.js", Kind: Classic},
}

// WasmAsset is the key of surface.wasm in AssetsGlobal; WasmName its
// name before hashing.
const (
	WasmAsset = "wasm"
	WasmName  = "surface.wasm"
)

// Config is one run of Build.
type Config struct {
	JS      string   // the runtime's sources (js/)
	Wasm    string   // the built surface.wasm
	Out     string   // the runtime directory to write (build/site/pling)
	Bundles []Bundle // nil means Runtime
	// Package builds the runtime for an npm package instead of a site:
	// every file under its plain name, the kernel named by a literal
	// new URL("./surface.wasm", import.meta.url) and each lazy bundle by a
	// literal import("./<name>"), so that the page's bundler copies,
	// splits and fingerprints them. PackageGlobal is defined, and
	// AssetsGlobal is null.
	Package bool
}

// PackageGlobal is defined as true in a package build.
const PackageGlobal = "__PLING_PACKAGE__"

// Result names what Build wrote, by path relative to Config.Out.
type Result struct {
	Assets map[string]string // AssetsGlobal's value: asset key → file name
	Files  []string          // every file written, sorted
	// Plain lists the hashed files also written under their plain names,
	// because the first script does not name them by their hashed names.
	Plain []string
}

// Build writes the runtime directory: surface.wasm under its hash, then the
// hashed bundles (which name no hash of another file), then the first
// script with their names defined, then the rest and the .d.ts files.
func Build(c Config) (*Result, error) {
	bundles := c.Bundles
	if bundles == nil {
		bundles = Runtime
	}
	js, err := filepath.Abs(c.JS)
	if err != nil {
		return nil, err
	}
	var first *Bundle
	for i := range bundles {
		if bundles[i].First {
			if first != nil {
				return nil, errors.New("sitebuild: more than one first script")
			}
			first = &bundles[i]
		}
	}
	if first == nil || first.Kind != Module || first.Hashed {
		return nil, errors.New("sitebuild: the table needs one first script, an unhashed module")
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	res := &Result{Assets: map[string]string{}}
	written := map[string][]byte{}
	write := func(name string, b []byte) error {
		if _, dup := written[name]; dup {
			return fmt.Errorf("sitebuild: %s written twice", name)
		}
		written[name] = b
		return os.WriteFile(filepath.Join(c.Out, name), b, 0o644)
	}

	wasm, err := os.ReadFile(c.Wasm)
	if err != nil {
		return nil, err
	}
	res.Assets[WasmAsset] = HashedName(WasmName, wasm)
	if c.Package {
		res.Assets[WasmAsset] = WasmName
	}
	if err := write(res.Assets[WasmAsset], wasm); err != nil {
		return nil, err
	}

	// The other modules the first script imports stay out of it: each is
	// an entry of its own, which the first script names by its output.
	lazy := map[string]*Bundle{} // absolute entry path → bundle
	alias := map[string]string{} // absolute path → the one bundled in its place
	for i := range bundles {
		b := &bundles[i]
		if b.inPackage(c) {
			alias[filepath.Join(js, b.Loader)] = filepath.Join(js, b.Static)
			continue
		}
		if !b.First && b.Kind == Module {
			lazy[filepath.Join(js, b.Entry)] = b
		}
	}
	// Which modules the first script holds: those a redirecting bundle
	// must import from it.
	firstEntry := filepath.Join(js, first.Entry)
	inputs, err := moduleInputs(js, firstEntry, lazy, alias)
	if err != nil {
		return nil, err
	}

	lazyOut := map[string]string{} // absolute entry path → output name
	for p, b := range lazy {
		lazyOut[p] = b.Out
	}
	for i := range bundles {
		b := &bundles[i]
		if !b.Hashed || b.inPackage(c) {
			continue
		}
		if b.Kind != Module || b.Asset == "" {
			return nil, fmt.Errorf("sitebuild: %s: a hashed bundle is a module with an asset key", b.Entry)
		}
		out, err := bundle(js, filepath.Join(js, b.Entry), b.Redirect, inputs, nil, nil, nil)
		if err != nil {
			return nil, err
		}
		name := HashedName(b.Out, out)
		if c.Package {
			name = b.Out
		}
		lazyOut[filepath.Join(js, b.Entry)] = name
		res.Assets[b.Asset] = name
		if err := write(name, out); err != nil {
			return nil, err
		}
	}

	define, err := json.Marshal(res.Assets) // map keys sorted: deterministic
	if err != nil {
		return nil, err
	}
	defines := map[string]string{AssetsGlobal: string(define)}
	if c.Package {
		defines = map[string]string{AssetsGlobal: "null", PackageGlobal: "true"}
	}
	firstOut, err := bundle(js, firstEntry, false, nil, lazyOut, alias, defines)
	if err != nil {
		return nil, err
	}
	if err := write(first.Out, firstOut); err != nil {
		return nil, err
	}

	for i := range bundles {
		b := &bundles[i]
		if b.First || b.Hashed || b.inPackage(c) {
			continue
		}
		var out []byte
		switch b.Kind {
		case Module:
			out, err = bundle(js, filepath.Join(js, b.Entry), b.Redirect, inputs, nil, nil, nil)
		case Classic:
			out, err = classic(filepath.Join(js, b.Entry))
		}
		if err != nil {
			return nil, err
		}
		if err := write(b.Out, out); err != nil {
			return nil, err
		}
	}
	// A redirecting bundle imports names the first script must export;
	// esbuild checks them when it links the two (once all are written:
	// the first script imports the others).
	for p, b := range lazy {
		if b.Redirect {
			if err := checkLinks(c.Out, lazyOut[p], first.Out); err != nil {
				return nil, err
			}
		}
	}

	decls, err := filepath.Glob(filepath.Join(js, "*.d.ts"))
	if err != nil {
		return nil, err
	}
	for _, d := range decls {
		b, err := os.ReadFile(d)
		if err != nil {
			return nil, err
		}
		if err := write(filepath.Base(d), b); err != nil {
			return nil, err
		}
	}

	// Until the first script reads AssetsGlobal, it asks for some files by
	// their plain names: those are written under both.
	plain := map[string]string{WasmAsset: WasmName}
	if c.Package {
		clear(res.Assets) // nothing names a hashed file
	}
	for i := range bundles {
		if bundles[i].Hashed && !bundles[i].inPackage(c) {
			plain[bundles[i].Asset] = bundles[i].Out
		}
	}
	for _, key := range slices.Sorted(mapKeys(res.Assets)) {
		name := res.Assets[key]
		if bytes.Contains(firstOut, []byte(name)) {
			continue
		}
		if err := write(plain[key], written[name]); err != nil {
			return nil, err
		}
		res.Plain = append(res.Plain, plain[key])
	}

	res.Files = slices.Sorted(mapKeys(written))
	return res, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// HashedName is name with the first 12 hex digits of the SHA-256 of content
// before its extension: surface.wasm → surface.1a2b3c4d5e6f.wasm.
func HashedName(name string, content []byte) string {
	sum := sha256.Sum256(content)
	ext := filepath.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:])[:12] + ext
}

// options are what every module bundle shares: ESM for browsers the
// runtime supports, minified, no source map, and paths in the output (there
// are none when minified) relative to js/.
func options(js, entry string) api.BuildOptions {
	return api.BuildOptions{
		EntryPoints:       []string{entry},
		AbsWorkingDir:     js,
		Bundle:            true,
		Format:            api.FormatESModule,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		LogLevel:          api.LogLevelSilent,
		Write:             false,
		Outdir:            js, // with Write false nothing goes there; it names the output
	}
}

// bundle builds one module. With redirect, an import of a module in inputs
// becomes an external import of FirstScriptURL; an import of a key of
// external becomes an external import of "./" + its value; one of a key of
// alias is bundled as the module its value names.
func bundle(js, entry string, redirect bool, inputs map[string]bool, external, alias, define map[string]string) ([]byte, error) {
	o := options(js, entry)
	o.Define = define
	o.Plugins = []api.Plugin{redirectPlugin(entry, redirect, inputs, external, alias)}
	r := api.Build(o)
	if err := buildErr(entry, r); err != nil {
		return nil, err
	}
	if len(r.OutputFiles) != 1 {
		return nil, fmt.Errorf("sitebuild: %s: %d outputs, want one", entry, len(r.OutputFiles))
	}
	return r.OutputFiles[0].Contents, nil
}

// redirectPlugin resolves each relative import itself, so that what a
// module of the first script is, is decided by its resolved path, whatever
// specifier reached it.
func redirectPlugin(entry string, redirect bool, inputs map[string]bool, external, alias map[string]string) api.Plugin {
	return api.Plugin{
		Name: "pling-redirect",
		Setup: func(pb api.PluginBuild) {
			pb.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if a.Kind == api.ResolveEntryPoint {
					return api.OnResolveResult{}, nil
				}
				if !strings.HasPrefix(a.Path, "./") && !strings.HasPrefix(a.Path, "../") {
					return api.OnResolveResult{}, fmt.Errorf("%s imports %q: the runtime imports only files beside it", a.Importer, a.Path)
				}
				p := filepath.Join(a.ResolveDir, filepath.FromSlash(a.Path))
				if q, ok := alias[p]; ok {
					p = q
				}
				if _, err := os.Stat(p); err != nil {
					return api.OnResolveResult{}, err
				}
				if redirect && inputs[p] && p != entry {
					return api.OnResolveResult{Path: FirstScriptURL, External: true}, nil
				}
				if name, ok := external[p]; ok {
					return api.OnResolveResult{Path: "./" + name, External: true}, nil
				}
				return api.OnResolveResult{Path: p}, nil
			})
		},
	}
}

// moduleInputs lists the absolute paths of the modules the first script's
// bundle holds (the hashed bundles kept out).
func moduleInputs(js, entry string, lazy map[string]*Bundle, alias map[string]string) (map[string]bool, error) {
	external := map[string]string{}
	for p, b := range lazy {
		external[p] = b.Out
	}
	o := options(js, entry)
	o.Metafile = true
	o.MinifyIdentifiers, o.MinifySyntax, o.MinifyWhitespace = false, false, false
	o.Plugins = []api.Plugin{redirectPlugin(entry, false, nil, external, alias)}
	r := api.Build(o)
	if err := buildErr(entry, r); err != nil {
		return nil, err
	}
	var meta struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(r.Metafile), &meta); err != nil {
		return nil, err
	}
	inputs := map[string]bool{}
	for p := range meta.Inputs {
		inputs[filepath.Join(js, filepath.FromSlash(p))] = true
	}
	return inputs, nil
}

// checkLinks bundles out (in dir) with its imports of FirstScriptURL
// resolved to first: esbuild refuses an import of a name first does not
// export, which in a browser would fail only when the bundle loads.
func checkLinks(dir, out, first string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	r := api.Build(api.BuildOptions{
		EntryPoints:   []string{filepath.Join(abs, out)},
		AbsWorkingDir: abs,
		Bundle:        true,
		Format:        api.FormatESModule,
		Platform:      api.PlatformBrowser,
		LogLevel:      api.LogLevelSilent,
		Outdir:        abs,
		Write:         false,
	})
	if len(r.Errors) > 0 {
		return fmt.Errorf("sitebuild: %s does not link with %s: %s", out, first, formatMessages(r.Errors))
	}
	return nil
}

// classic minifies a classic script on its own.
func classic(src string) ([]byte, error) {
	code, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	r := api.Transform(string(code), api.TransformOptions{
		Loader:            api.LoaderJS,
		Target:            api.ES2022,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		Sourcefile:        filepath.Base(src),
	})
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("sitebuild: %s: %s", src, formatMessages(r.Errors))
	}
	return r.Code, nil
}

func buildErr(entry string, r api.BuildResult) error {
	if len(r.Errors) > 0 {
		return fmt.Errorf("sitebuild: %s: %s", entry, formatMessages(r.Errors))
	}
	return nil
}

func formatMessages(ms []api.Message) string {
	var parts []string
	for _, m := range ms {
		s := m.Text
		if m.Location != nil {
			s = fmt.Sprintf("%s:%d: %s", m.Location.File, m.Location.Line, m.Text)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
