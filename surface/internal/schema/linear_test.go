package schema

import (
	"runtime"
	"strings"
	"testing"
)

// TestFormatsOnLongAgentStrings: formats judge the agent's own strings,
// so a long string must not cost work that grows with the square of its
// length. Time is not asserted; allocation is, and it tracks the work
// each of these inputs used to do (a node or a concatenation per unit, a
// frame per open group).
func TestFormatsOnLongAgentStrings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		check  func(string) bool
		input  string
		allocs float64 // at most, per check
	}{
		{"duration of many units", isDuration, "P" + strings.Repeat("0:", 8<<10), 4},
		{"regex of plain text", isGoRegexp, strings.Repeat("a", 16<<10), 64},
	} {
		if n := testing.AllocsPerRun(3, func() { tc.check(tc.input) }); n > tc.allocs {
			t.Errorf("%s: %.0f allocations, want at most %.0f", tc.name, n, tc.allocs)
		}
	}
	// Over 1,000 open capturing groups refuse at once, without a frame
	// for each of the rest.
	s := strings.Repeat("(", 1<<16)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if isGoRegexp(s) {
		t.Fatal("65,536 open groups accepted")
	}
	runtime.ReadMemStats(&after)
	if b := after.TotalAlloc - before.TotalAlloc; b > 1<<20 {
		t.Errorf("65,536 open groups allocated %d bytes, want at most 1 MiB", b)
	}
}
