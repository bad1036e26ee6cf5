package schema

import (
	"strings"
	"sync"
	"testing"
)

// TestPatternOnHostileInput: patterns that make a backtracking engine
// take exponential time answer a long input here in one pass.
func TestPatternOnHostileInput(t *testing.T) {
	long := strings.Repeat("a", 100_000)
	for _, tc := range []struct {
		pattern string
		input   string
		want    bool
	}{
		{`^(a+)+$`, long + "!", false},
		{`^(a|a)*$`, long + "!", false},
		{`^(a|aa)+$`, long, true},
		{`(x+x+)+y`, strings.Repeat("x", 50_000), false},
	} {
		p, err := compilePattern(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MatchString(tc.input); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

// TestPatternConcurrent: a compiled schema is shared by every request, so
// one pattern matches from many goroutines at once (run with -race).
func TestPatternConcurrent(t *testing.T) {
	p, err := compilePattern(`^SO-\d{4}(-[a-z]+)?$`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				in, want := "SO-1002-x", true
				if (g+i)%3 == 0 {
					in, want = "SO-10021", false
				}
				if p.MatchString(in) != want {
					t.Errorf("%q: %v", in, !want)
					return
				}
			}
		})
	}
	wg.Wait()
}
