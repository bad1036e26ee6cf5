package schema

import (
	"fmt"
	"strings"
	"testing"

	"pling.dev/agent/surface/internal/strictjson"
)

func mustCompile(t testing.TB, src string) *Schema {
	t.Helper()
	s, err := Compile([]byte(src))
	if err != nil {
		t.Fatalf("Compile(%s): %v", src, err)
	}
	return s
}

func mustDecode(t testing.TB, src string) any {
	t.Helper()
	v, err := strictjson.Decode([]byte(src), strictjson.Limits{})
	if err != nil {
		t.Fatalf("decode %s: %v", src, err)
	}
	return v
}

// leaves renders violations as "path keyword" lines, the shape the tables
// compare.
func leaves(vs []Violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.InstancePath+" "+v.Keyword)
	}
	return out
}

// checkBothModes validates in both modes and fails when they disagree: the
// decide-only pass and the explaining pass must always agree.
func checkBothModes(t testing.TB, s *Schema, inst any) []Violation {
	t.Helper()
	vs := s.Validate(inst)
	if ok := s.valid(inst); ok != (len(vs) == 0) {
		t.Fatalf("valid() = %v but Validate = %s", ok, fmtViolations(vs))
	}
	for _, v := range vs {
		if v.Keyword == "" || v.Message == "" {
			t.Errorf("violation without keyword or message: %+v", v)
		}
	}
	return vs
}

func fmtViolations(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "[%q %s: %s] ", v.InstancePath, v.Keyword, v.Message)
	}
	return b.String()
}
