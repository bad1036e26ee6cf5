//go:build !js

package hostbridge

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"pling.dev/agent/surface"
)

// TestPageRuntimeKeepsTheKernelsIDRule: the page runtime refuses some
// requests before the kernel and echoes their id under the kernel's rule,
// so its copy of the id bound must be the kernel's.
func TestPageRuntimeKeepsTheKernelsIDRule(t *testing.T) {
	src, err := os.ReadFile("../js/pling-surface.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const MAX_ID_BYTES = (\d+);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("js/pling-surface.js has no MAX_ID_BYTES")
	}
	if got, want := string(m[1]), strconv.Itoa(surface.MaxIDBytes); got != want {
		t.Errorf("js/pling-surface.js MAX_ID_BYTES = %s, surface.MaxIDBytes = %s", got, want)
	}
}
