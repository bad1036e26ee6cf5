package schema

import (
	"regexp"
	"strings"
	"testing"
)

// The kernel's typical input schema and inputs: compile once, validate per
// invoke. The reference implementation runs alongside for scale.
const benchSchema = `{"type":"object","properties":{"note":{"type":"string","maxLength":500},"amount":{"type":"number","multipleOf":0.01,"minimum":0},"tags":{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true}},"required":["note"],"additionalProperties":false}`

var (
	benchValid   = `{"note":"call the customer back","amount":12.50,"tags":["a","c"]}`
	benchInvalid = `{"note":42,"amount":-1,"tags":["a","a"],"extra":true}`
)

func BenchmarkCompile(b *testing.B) {
	b.Run("schema", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Compile([]byte(benchSchema)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := refCompile(benchSchema); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	ours := mustCompile(b, benchSchema)
	ref, err := refCompile(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct{ name, src string }{{"valid", benchValid}, {"invalid", benchInvalid}} {
		inst := mustDecode(b, in.src)
		b.Run(in.name+"/schema", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ours.Validate(inst)
			}
		})
		b.Run(in.name+"/reference", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = ref.Validate(inst)
			}
		})
	}
}

// BenchmarkPattern compares the pattern matcher with the regexp package on
// the same program, for patterns schemas typically carry.
func BenchmarkPattern(b *testing.B) {
	for _, tc := range []struct{ name, pattern, input string }{
		{"anchored", `^SO-[0-9]{4}$`, "SO-1002"},
		{"email-ish", `^[^@\s]+@[^@\s]+\.[a-z]{2,}$`, "someone.long.name@example.org"},
		{"unanchored", `refund`, "please approve the refund for order SO-1002 today"},
		{"miss", `^(a+)+$`, strings.Repeat("a", 64) + "!"},
	} {
		p, err := compilePattern(tc.pattern)
		if err != nil {
			b.Fatal(err)
		}
		tree, _ := ecmaPattern(tc.pattern)
		re := regexp.MustCompile(tree.String())
		if p.MatchString(tc.input) != re.MatchString(tc.input) {
			b.Fatalf("%s: the matchers disagree", tc.name)
		}
		b.Run(tc.name+"/pattern", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.MatchString(tc.input)
			}
		})
		b.Run(tc.name+"/regexp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				re.MatchString(tc.input)
			}
		})
	}
}
