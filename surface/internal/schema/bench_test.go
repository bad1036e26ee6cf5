package schema

import (
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
