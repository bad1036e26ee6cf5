//go:build !js

package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// codeSizes reads a wasm module built without -s (so it keeps its name
// section) and returns the code bytes of each function by name, and the
// size of the data section (Go's read-only data: type descriptors, strings,
// the pc tables).
func codeSizes(path string) (map[string]int, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, 0, fmt.Errorf("%s is not a wasm module", path)
	}
	r := &wasmReader{b: b, off: 8}
	imported := 0
	var bodies []int
	names := map[int]string{}
	data := 0
	for r.off < len(r.b) {
		id := r.byte()
		size := r.uleb()
		end := r.off + size
		if r.err != nil || end > len(r.b) {
			return nil, 0, fmt.Errorf("%s: truncated section", path)
		}
		switch id {
		case 2: // imports: functions among them take the first indices
			for n := r.uleb(); n > 0 && r.err == nil; n-- {
				r.skip(r.uleb()) // module
				r.skip(r.uleb()) // name
				switch kind := r.byte(); kind {
				case 0:
					r.uleb()
					imported++
				case 1:
					r.byte()
					r.limits()
				case 2:
					r.limits()
				case 3:
					r.byte()
					r.byte()
				default:
					r.err = fmt.Errorf("import kind %d", kind)
				}
			}
		case 10: // code
			for n := r.uleb(); n > 0 && r.err == nil; n-- {
				sz := r.uleb()
				bodies = append(bodies, sz)
				r.skip(sz)
			}
		case 11:
			data = size
		case 0:
			name := string(r.bytes(r.uleb()))
			if name != "name" {
				break
			}
			for r.off < end && r.err == nil {
				sub := r.byte()
				subEnd := r.off + r.uleb()
				if sub == 1 {
					for n := r.uleb(); n > 0 && r.err == nil; n-- {
						idx := r.uleb()
						names[idx] = string(r.bytes(r.uleb()))
					}
				}
				r.off = subEnd
			}
		}
		if r.err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, r.err)
		}
		r.off = end
	}
	if len(names) == 0 {
		return nil, 0, errors.New(path + " has no function names: build it without -s")
	}
	sizes := map[string]int{}
	for i, sz := range bodies {
		name, ok := names[imported+i]
		if !ok {
			name = fmt.Sprintf("(function %d)", imported+i)
		}
		sizes[name] += sz
	}
	return sizes, data, nil
}

// wasmReader reads the few encodings the size breakdown needs, keeping the
// first error.
type wasmReader struct {
	b   []byte
	off int
	err error
}

func (r *wasmReader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *wasmReader) uleb() int {
	var v, shift int
	for {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
		shift += 7
		if shift > 35 {
			r.err = errors.New("LEB128 too long")
			return 0
		}
	}
}

func (r *wasmReader) limits() {
	if r.byte()&1 == 1 {
		r.uleb()
	}
	r.uleb()
}

func (r *wasmReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		r.fail()
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *wasmReader) skip(n int) { r.bytes(n) }

func (r *wasmReader) fail() {
	if r.err == nil {
		r.err = errors.New("unexpected end of module")
	}
}

// goPackage returns the package part of a Go function name as the wasm
// linker writes it ('/' and other punctuation of the path become '_'):
// "encoding_json.Marshal" -> "encoding_json", "pling.dev_agent_surface.New"
// -> "pling.dev_agent_surface". A module path whose first element is a
// domain keeps the domain's dot.
func goPackage(name string) string {
	first, rest, ok := strings.Cut(name, ".")
	if !ok {
		return name
	}
	if !strings.Contains(first, "_") {
		if second, _, ok := strings.Cut(rest, "."); ok {
			if tld, _, ok := strings.Cut(second, "_"); ok && topLevelDomains[tld] {
				return first + "." + second
			}
		}
	}
	return first
}

// topLevelDomains are those of the module paths a Go program commonly links.
var topLevelDomains = map[string]bool{"com": true, "org": true, "net": true, "dev": true, "io": true, "in": true}

// sizeBreakdown renders the code size of the largest packages.
func sizeBreakdown(path string, top int) (string, error) {
	fns, data, err := codeSizes(path)
	if err != nil {
		return "", err
	}
	byPkg := map[string]int{}
	code := 0
	for name, sz := range fns {
		byPkg[goPackage(name)] += sz
		code += sz
	}
	type pkg struct {
		name string
		size int
	}
	pkgs := make([]pkg, 0, len(byPkg))
	for k, v := range byPkg {
		pkgs = append(pkgs, pkg{k, v})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].size > pkgs[j].size })
	var b strings.Builder
	fmt.Fprintf(&b, "Code section: %d bytes in %d functions; data section: %d bytes (read-only data, type descriptors, pc tables).\n\n", code, len(fns), data)
	b.WriteString("| package (as the linker names it) | code bytes | share of code |\n|---|---:|---:|\n")
	for i, p := range pkgs {
		if i == top {
			break
		}
		fmt.Fprintf(&b, "| `%s` | %d | %.1f%% |\n", p.name, p.size, 100*float64(p.size)/float64(code))
	}
	return b.String(), nil
}
