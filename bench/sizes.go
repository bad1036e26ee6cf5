//go:build !js

package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// wasmSize is the transfer size of one wasm file, in bytes.
type wasmSize struct {
	Raw, Gzip, Brotli int64
}

// measureSizes measures the files side by side: brotli at quality 11 is
// the slow part, and each file keeps one core busy.
func measureSizes(paths ...string) ([]wasmSize, error) {
	out := make([]wasmSize, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = measureSize(p)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// sizeCache remembers the sizes of files already measured, by content:
// compression is deterministic, and brotli at quality 11 takes seconds per
// megabyte, so an unchanged file is not compressed again.
type sizeCache struct {
	path    string
	entries map[string]wasmSize // sha256 of the content and the brotli version -> sizes
}

func loadSizeCache(path string) *sizeCache {
	c := &sizeCache{path: path, entries: map[string]wasmSize{}}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &c.entries)
	}
	return c
}

func (c *sizeCache) save() error {
	b, err := json.MarshalIndent(c.entries, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.path, b, 0o644)
}

// key names a file's content and the compressor that measures it.
func sizeKey(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	v, err := exec.Command("brotli", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("brotli --version: %w (`make bench` installs Debian's brotli)", err)
	}
	return hex.EncodeToString(sum[:]) + " " + strings.TrimSpace(string(v)), nil
}

// measureSizesCached is measureSizes that reuses results for unchanged files.
func measureSizesCached(cachePath string, paths ...string) ([]wasmSize, error) {
	c := loadSizeCache(cachePath)
	out := make([]wasmSize, len(paths))
	keys := make([]string, len(paths))
	var todo []string
	var todoIdx []int
	for i, p := range paths {
		k, err := sizeKey(p)
		if err != nil {
			return nil, err
		}
		keys[i] = k
		if s, ok := c.entries[k]; ok && s.Raw > 0 {
			out[i] = s
			continue
		}
		todo = append(todo, p)
		todoIdx = append(todoIdx, i)
	}
	if len(todo) > 0 {
		got, err := measureSizes(todo...)
		if err != nil {
			return nil, err
		}
		for j, i := range todoIdx {
			out[i] = got[j]
			c.entries[keys[i]] = got[j]
		}
		if err := c.save(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// measureSize compresses path the way a server would before sending it:
// gzip at level 9 (compress/gzip) and brotli at quality 11 with the brotli
// command (Debian's package; `make bench` installs it when missing).
func measureSize(path string) (wasmSize, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return wasmSize{}, err
	}
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return wasmSize{}, err
	}
	if _, err := w.Write(raw); err != nil {
		return wasmSize{}, err
	}
	if err := w.Close(); err != nil {
		return wasmSize{}, err
	}
	brotli, err := exec.LookPath("brotli")
	if err != nil {
		return wasmSize{}, fmt.Errorf("no brotli command to measure the brotli size (`make bench` installs Debian's brotli): %w", err)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(brotli, "--quality=11", "--stdout", "--", path)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return wasmSize{}, fmt.Errorf("brotli %s: %v: %s", path, err, strings.TrimSpace(errOut.String()))
	}
	if out.Len() == 0 {
		return wasmSize{}, fmt.Errorf("brotli %s wrote nothing", path)
	}
	return wasmSize{Raw: int64(len(raw)), Gzip: int64(gz.Len()), Brotli: int64(out.Len())}, nil
}

// mb formats bytes in decimal megabytes, the unit of the size target.
func mb(n int64) string {
	return strconv.FormatFloat(float64(n)/1e6, 'f', 3, 64) + " MB"
}
