package sitebuild

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/andybalholm/brotli"

	"pling.dev/agent/internal/devserver"
)

// Brotli quality and window for the precompressed files. RATIONALE.md has
// the figures that chose them (size and time on surface.wasm): quality 11
// is 12% smaller than 9 for some seconds more, paid once per built wasm
// (Compress keeps what it compressed in its cache); a window above the
// default 4 MB (22) gains nothing on it.
const (
	BrotliQuality = 11
	BrotliLGWin   = 22
)

// Compressed is one file Compress wrote its siblings for.
type Compressed struct {
	Name              string // relative to the root, with slashes
	Raw, Gzip, Brotli int    // sizes in bytes; 0 when that sibling was not written
}

// Compress writes name.br and name.gz beside every file under root that
// devserver negotiates an encoding for (devserver.Negotiable), each only
// when it is smaller than the file. A stale sibling of a file that no
// longer gains from it is removed. Files are compressed in parallel; the
// bytes do not depend on the order. With cache not empty, what was
// compressed is kept there by the SHA-256 of its content, and taken from
// there when the same content comes again (a site rebuilt with the same
// surface.wasm does not spend seconds on it again).
func Compress(root, cache string) ([]Compressed, error) {
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && devserver.Negotiable(p) {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]Compressed, len(names))
	errs := make([]error, len(names))
	m := &memo{done: map[string]*memoEntry{}}
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i], errs[i] = compressFile(m, root, names[i], cache)
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return out, nil
}

func compressFile(m *memo, root, p, cache string) (Compressed, error) {
	raw, err := os.ReadFile(p)
	if err != nil {
		return Compressed{}, err
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return Compressed{}, err
	}
	c := Compressed{Name: filepath.ToSlash(rel), Raw: len(raw)}
	for _, enc := range []struct {
		ext  string
		size *int
		f    func([]byte) ([]byte, error)
	}{{".br", &c.Brotli, Brotli}, {".gz", &c.Gzip, Gzip}} {
		b, err := m.get(cache, raw, enc.ext, enc.f)
		if err != nil {
			return c, err
		}
		if len(b) >= len(raw) {
			if err := os.Remove(p + enc.ext); err != nil && !os.IsNotExist(err) {
				return c, err
			}
			continue
		}
		if err := os.WriteFile(p+enc.ext, b, 0o644); err != nil {
			return c, err
		}
		*enc.size = len(b)
	}
	return c, nil
}

// memo holds, for one Compress, each content's compression being made,
// so that two files with the same bytes (surface.wasm under two names) are
// compressed once.
type memo struct {
	mu   sync.Mutex
	done map[string]*memoEntry
}

type memoEntry struct {
	once sync.Once
	b    []byte
	err  error
}

func (m *memo) get(cache string, raw []byte, ext string, f func([]byte) ([]byte, error)) ([]byte, error) {
	sum := sha256.Sum256(raw)
	key := fmt.Sprintf("%x-q%d-w%d%s", sum, BrotliQuality, BrotliLGWin, ext)
	m.mu.Lock()
	e := m.done[key]
	if e == nil {
		e = &memoEntry{}
		m.done[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.b, e.err = cached(cache, key, raw, f) })
	return e.b, e.err
}

// cached is f(raw), from cache (under key) when it holds it.
func cached(cache, key string, raw []byte, f func([]byte) ([]byte, error)) ([]byte, error) {
	if cache == "" {
		return f(raw)
	}
	key = filepath.Join(cache, key)
	if b, err := os.ReadFile(key); err == nil {
		return b, nil
	}
	b, err := f(raw)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	// Written under another name first: a reader never sees half a file.
	tmp, err := os.CreateTemp(cache, "tmp-*")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return nil, errors.Join(werr, cerr)
	}
	return b, os.Rename(tmp.Name(), key)
}

// Brotli compresses b at BrotliQuality and BrotliLGWin.
func Brotli(b []byte) ([]byte, error) {
	return BrotliAt(b, BrotliQuality, BrotliLGWin)
}

// BrotliAt compresses b at the given quality and window.
func BrotliAt(b []byte, quality, lgwin int) ([]byte, error) {
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Gzip compresses b at the best level, with no name and no time in its
// header, so the same bytes give the same file.
func Gzip(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
