package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The helpers must write exactly what fmt writes, or a message changes.
func TestTextMatchesFmt(t *testing.T) {
	nums := []any{
		json.Number("0"), json.Number("-1.50"), json.Number("1e400"), json.Number("12345678901234567890123"),
		0.0, math.Copysign(0, -1), 1.0, -2.5, 0.1, 1e6, 1e20, 1e21, 123456789.0, 1e-5, 1e-4, 1.5e-7, math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 100000.0, 999999.0, 1000000.0,
		float32(0.1), float32(1e6), float32(1e21), float32(-3.25), float32(math.Inf(1)),
		0, -7, math.MaxInt64, int64(math.MinInt64), int32(-5), uint(7), uint64(math.MaxUint64), uint32(9),
	}
	for _, n := range nums {
		if got, want := numText(n), fmt.Sprintf("%v", n); got != want {
			t.Errorf("numText(%T %v) = %q, fmt says %q", n, n, got, want)
		}
	}
	trees := []any{
		nil, "", "a\"b\\c\n\t\x00é\u2028\U0001F600", "\xff", json.Number("5"), json.Number("-0.5e3"), true, false,
		[]any{}, []any{nil, "x", json.Number("1"), true, []any{nil}, map[string]any{}},
		map[string]any{}, map[string]any{"b": nil, "a": []any{"z"}, "": json.Number("0"), "é": map[string]any{"k": false}, "B": "v"},
		[]any(nil), map[string]any(nil), []any{[]any(nil), map[string]any(nil)},
	}
	for _, v := range trees {
		if got, want := goSyntax(v), fmt.Sprintf("%#v", v); got != want {
			t.Errorf("goSyntax(%v) = %q, fmt says %q", v, got, want)
		}
	}
	for _, v := range []any{nil, 1, 1.5, "s", []int{1}, map[string]string{}, struct{ A int }{}, &struct{}{}, json.Number("1")} {
		if got, want := typeName(v), fmt.Sprintf("%T", v); got != want {
			t.Errorf("typeName = %q, fmt says %q", got, want)
		}
	}
}

// The pattern translator's errors, worded without fmt, must read as the
// fmt.Errorf calls they replace did.
func TestPatternErrorsMatchFmt(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want func(pos int) string
	}{
		{`a)`, func(pos int) string { return fmt.Sprintf("at offset %d: unmatched %q", pos, byte(')')) }},
		{`a]`, func(pos int) string { return fmt.Sprintf("at offset %d: lone %q", pos, byte(']')) }},
		{`(?<n>a)(?<n>b)`, func(pos int) string { return fmt.Sprintf("at offset %d: duplicate group name %q", pos, "n") }},
		{`\é`, func(pos int) string { return fmt.Sprintf("at offset %d: invalid escape \\%c", pos, byte(0xc3)) }},
		{`\q`, func(pos int) string { return fmt.Sprintf("at offset %d: invalid escape \\%c", pos, byte('q')) }},
		{`(?=a)`, func(pos int) string {
			return fmt.Errorf("at offset %d: %s is %w", pos, "a lookahead", errUnsupported).Error()
		}},
		{`\p{Nope}`, func(pos int) string {
			return fmt.Errorf("at offset %d: %s is %w", pos, fmt.Sprintf("the property %q", "Nope"), errUnsupported).Error()
		}},
	} {
		_, err := ecmaPattern(tc.src)
		if err == nil {
			t.Errorf("%s: no error", tc.src)
			continue
		}
		var pos int
		if _, serr := fmt.Sscanf(err.Error(), "at offset %d:", &pos); serr != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got, want := err.Error(), tc.want(pos); got != want {
			t.Errorf("%s: %q, fmt says %q", tc.src, got, want)
		}
		if strings.Contains(err.Error(), "not supported") != errors.Is(err, errUnsupported) {
			t.Errorf("%s: errors.Is(err, errUnsupported) = %v", tc.src, errors.Is(err, errUnsupported))
		}
	}
}

// isDate must give time.Parse("2006-01-02")'s verdict.
func TestIsDateIsTimeParse(t *testing.T) {
	var inputs []string
	for _, y := range []string{"0000", "0001", "1900", "2000", "2023", "2024", "2100", "9999"} {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 32; d++ {
				inputs = append(inputs, fmt.Sprintf("%s-%02d-%02d", y, m, d))
			}
		}
	}
	inputs = append(inputs, "", "2024-1-01", "2024-01-1", "24-01-01", "+024-01-01", "-024-01-01", "2024-01-01 ",
		" 2024-01-01", "2024/01/01", "2024-01-01T", "2024-0a-01", "2024-01-0a", "20a4-01-01", "2024--1-01",
		"2024-01-+1", "２０２４-01-01", "2024-01-01\x00", "12024-01-01")
	for _, s := range inputs {
		_, err := time.Parse("2006-01-02", s)
		if got := isDate(s); got != (err == nil) {
			t.Errorf("isDate(%q) = %v, time.Parse error: %v", s, got, err)
		}
	}
}
