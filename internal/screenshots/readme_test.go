//go:build !(js || wasip1)

package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// maxPictureBytes keeps each committed picture small: every clone pays for
// every version of it.
const maxPictureBytes = 300 << 10

// TestREADMEPictures holds the README's pictures to what `make screenshots`
// promises: every picture the README shows exists and is a PNG of a real
// window size, small enough to commit, and docs/img holds no picture the
// README no longer shows (one nobody would keep current).
func TestREADMEPictures(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, m := range regexp.MustCompile(`(?:\]\(|src=")(docs/img/[^)"\s]+)`).FindAllSubmatch(readme, -1) {
		shown = append(shown, string(m[1]))
	}
	for _, want := range []string{"docs/img/demo.png", "docs/img/extension-panel.png"} {
		if !slices.Contains(shown, want) {
			t.Errorf("README does not show %s", want)
		}
	}
	for _, path := range shown {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("README shows %s: %v", path, err)
			continue
		}
		if len(b) > maxPictureBytes {
			t.Errorf("%s is %d KB, over %d KB", path, len(b)>>10, maxPictureBytes>>10)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if cfg.Width < panelWidth || cfg.Height < 400 {
			t.Errorf("%s is %d×%d: not a window's picture", path, cfg.Width, cfg.Height)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "img", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if !slices.Contains(shown, filepath.ToSlash(rel)) {
			t.Errorf("%s is not shown in the README", rel)
		}
	}
}
