//go:build !js

package main

import (
	"strings"
	"testing"
)

func TestStageTable(t *testing.T) {
	// Two calls, 1 ms apart on the page's clock, each with a session read
	// and an audit; a mark before the first span (an untimed call) and one
	// between the spans (the other variant's call) belong to neither.
	spans := []float64{10, 10.4, 20, 20.6}
	marks := []any{
		"audit", 9.9,
		"session", 10.1, "session returned", 10.1, "audit", 10.3,
		"view", 15.0,
		"session", 20.1, "session returned", 20.15, "audit", 20.4,
	}
	got, err := stageTable(spans, marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 of 2 calls took this path.",
		"| request → session |  | 100 | 100 |",
		"| session → session returned | the page's | 25 | 45 |",
		"| session returned → audit |  | 225 | 245 |",
		"| audit → reply |  | 150 | 190 |",
		"| **round trip** | | **500** | **580** |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "view") {
		t.Errorf("a mark outside every span was counted:\n%s", got)
	}
}

func TestStageTableRefusesOddInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []float64
		marks []any
	}{
		{"no calls", nil, nil},
		{"a span without its end", []float64{1}, nil},
		{"a mark without its time", []float64{1, 2}, []any{"audit"}},
		{"a time that is not a number", []float64{1, 2}, []any{"audit", "soon"}},
	} {
		if _, err := stageTable(tc.spans, tc.marks); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestWhose(t *testing.T) {
	for stage, want := range map[string]string{
		"view → view returned":  "the page's",
		"execute → settled":     "the page's",
		"request → session":     "",
		"view returned → audit": "",
		"session → view":        "",
	} {
		if got := whose(stage); got != want {
			t.Errorf("whose(%q) = %q, want %q", stage, got, want)
		}
	}
}
