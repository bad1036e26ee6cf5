package sitebuild

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PackageFiles are the files of an npm package that are not built: the
// client library and the React binding as written (a page's bundler
// bundles them), by path relative to Config.JS. PackageGlobs adds more.
var PackageFiles = []string{
	"client/pling-client.d.ts",
	"react/index.js",
	"react/index.d.ts",
}

// PackageGlobs name unbuilt files by pattern: the client library is
// pling-client.js and the modules it imports beside it, and each of them
// must ship (its tests and tools end in .mjs, so they stay out).
var PackageGlobs = []string{"client/*.js"}

// Package writes an npm package's directory to c.Out: the runtime as Build
// makes it with c.Package set, PackageFiles, and from template (the
// repository's package/) package.json and README.md. It checks that every
// file package.json's exports, types and sideEffects name is there, and
// that no install script would run.
func Package(c Config, template string) (*Result, error) {
	c.Package = true
	res, err := Build(c)
	if err != nil {
		return nil, err
	}
	copyFile := func(src, name string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(c.Out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		res.Files = append(res.Files, name)
		return os.WriteFile(dst, b, 0o644)
	}
	files := append([]string(nil), PackageFiles...)
	for _, g := range PackageGlobs {
		matches, err := filepath.Glob(filepath.Join(c.JS, filepath.FromSlash(g)))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("package: no file matches %s", g)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(c.JS, m)
			if err != nil {
				return nil, err
			}
			files = append(files, filepath.ToSlash(rel))
		}
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(c.JS, filepath.FromSlash(f)), f); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{"package.json", "README.md"} {
		if err := copyFile(filepath.Join(template, f), f); err != nil {
			return nil, err
		}
	}
	if err := checkManifest(c.Out); err != nil {
		return nil, err
	}
	return res, nil
}

// checkManifest reads dir/package.json: every path it names must exist, and
// it has no scripts (npm runs some on install).
func checkManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	var m struct {
		Version     string          `json:"version"`
		Main        string          `json:"main"`
		Types       string          `json:"types"`
		Exports     map[string]any  `json:"exports"`
		SideEffects []string        `json:"sideEffects"`
		Scripts     json.RawMessage `json:"scripts"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	if m.Version == "" {
		return fmt.Errorf("package.json: no version")
	}
	if len(m.Scripts) > 0 {
		return fmt.Errorf("package.json: scripts are not allowed (npm runs install scripts)")
	}
	var paths []string
	for _, p := range []string{m.Main, m.Types} {
		if p != "" {
			paths = append(paths, p)
		}
	}
	paths = append(paths, m.SideEffects...)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			paths = append(paths, v)
		case map[string]any:
			for _, w := range v {
				walk(w)
			}
		}
	}
	walk(map[string]any(m.Exports))
	for _, p := range paths {
		if !strings.HasPrefix(p, "./") {
			return fmt.Errorf("package.json: %q is not a path inside the package", p)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return fmt.Errorf("package.json names %s: %w", p, err)
		}
	}
	return nil
}
