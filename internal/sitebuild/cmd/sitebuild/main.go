// Command sitebuild assembles a site's runtime directory, precompresses the
// site, or both (see package sitebuild):
//
//	go run ./internal/sitebuild/cmd/sitebuild -js js -wasm build/surface.wasm -out build/site/pling -compress build/site
//	go run ./internal/sitebuild/cmd/sitebuild -compress build/bench/site   # compression only
//	go run ./internal/sitebuild/cmd/sitebuild -package package -js js -wasm build/surface.wasm -out build/package/pling-surface
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"pling.dev/agent/internal/sitebuild"
)

func main() {
	var c sitebuild.Config
	var root, cache, template string
	var quiet bool
	flag.StringVar(&c.JS, "js", "js", "the runtime's sources")
	flag.StringVar(&c.Wasm, "wasm", "", "the built surface.wasm (with -out)")
	flag.StringVar(&c.Out, "out", "", "the runtime directory to write, e.g. build/site/pling; empty: no build")
	flag.StringVar(&root, "compress", "", "then write .br and .gz beside every negotiable file under this directory (the site root); empty: none")
	flag.StringVar(&cache, "cache", "", "keep compressed files here by content, and reuse them; empty: no cache")
	flag.BoolVar(&quiet, "q", false, "print nothing but errors")
	flag.StringVar(&template, "package", "", "build an npm package's directory instead, from this template (package.json, README.md): plain names, literal URLs and imports for the page's bundler")
	flag.Parse()
	if (c.Out == "") != (c.Wasm == "") || (c.Out == "" && root == "") || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(c, root, cache, template, quiet); err != nil {
		fmt.Fprintln(os.Stderr, "sitebuild:", err)
		os.Exit(1)
	}
}

func run(c sitebuild.Config, root, cache, template string, quiet bool) error {
	t0 := time.Now()
	var res sitebuild.Result
	if c.Out != "" {
		build := sitebuild.Build
		if template != "" {
			build = func(c sitebuild.Config) (*sitebuild.Result, error) { return sitebuild.Package(c, template) }
		}
		r, err := build(c)
		if err != nil {
			return err
		}
		res = *r
	}
	t1 := time.Now()
	var sizes []sitebuild.Compressed
	if root != "" {
		var err error
		if sizes, err = sitebuild.Compress(root, cache); err != nil {
			return err
		}
	}
	t2 := time.Now()
	if quiet {
		return nil
	}
	for _, p := range res.Plain {
		fmt.Printf("sitebuild: %s also written by its plain name: the first script does not name its hashed name\n", p)
	}
	fmt.Printf("%-44s %10s %10s %10s\n", "file", "raw", "gzip", "brotli")
	for _, s := range sizes {
		fmt.Printf("%-44s %10d %10d %10d\n", s.Name, s.Raw, s.Gzip, s.Brotli)
	}
	fmt.Printf("sitebuild: bundles %v, compression %v\n", t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond))
	return nil
}
