package schema

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"pling.dev/agent/surface/internal/strictjson"
)

// FuzzValidate: Compile and Validate never panic, the decide-only and the
// explaining pass agree, and whenever this package and the reference both
// compile a schema they agree on valid vs invalid. Formats are asserted on
// both sides (see refCompile), and every format check also meets the
// reference's own check on the raw instance bytes and, when the instance
// is a JSON string, on its value: the fuzzer mutates those bytes far more
// often than it assembles a format schema. Format needs no exception.
//
// Cases left out of the comparison, each for a reason that is not a
// difference in meaning:
//   - a validation this package stopped at its depth or work bound;
//   - numbers with exponents beyond ±300 anywhere (the reference expands
//     them with math/big, which can take unbounded time and memory; here
//     they saturate past ±10^18);
//   - count keywords (minLength, maxItems, ...) of 10^15 or more, which the
//     reference converts through float64 to int and which overflow there;
//   - multipleOf with more than 18 significant digits, where this package
//     divides in float64 (see the package documentation);
//   - anything the reference panics on.
//
// pattern and patternProperties need no exception: both sides use Go's
// regexp, unanchored.
func FuzzValidate(f *testing.F) {
	for _, c := range diffCorpus() {
		f.Add([]byte(c.schema), []byte(c.instance))
	}
	for _, p := range genSeeds(100) {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	for i, fc := range formatCases {
		schema := []byte(`{"type":"string","format":` + strconv.Quote(fc.format) + `}`)
		for _, list := range [][]string{fc.valid, fc.invalid} {
			for j, s := range list {
				if (i+j)%3 == 0 { // a sample: the table test has them all
					inst, _ := json.Marshal(s)
					f.Add(schema, inst)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, schemaSrc, instSrc []byte) {
		if len(schemaSrc) > 4096 || len(instSrc) > 4096 {
			return // bigger inputs only slow the search down
		}
		compareFormats(t, string(instSrc))
		inst, err := strictjson.Decode(instSrc, strictjson.Limits{})
		if err != nil {
			return
		}
		if s, ok := inst.(string); ok {
			compareFormats(t, s)
		}
		ours, err := Compile(schemaSrc)
		if err != nil {
			return
		}
		got := checkBothModes(t, ours, inst)
		for _, v := range got {
			if strings.Contains(v.Message, "deeper than") || strings.Contains(v.Message, "work limit") {
				return
			}
		}
		doc, _ := strictjson.Decode(schemaSrc, strictjson.Limits{})
		if !comparable(doc, "") || !comparable(inst, "") {
			return
		}
		ref, err := refCompile(string(schemaSrc))
		if err != nil {
			return
		}
		want, ok := refValidate(ref, inst)
		if !ok {
			return
		}
		if (len(got) == 0) != (len(want) == 0) {
			t.Fatalf("schema %s\ninstance %s\nvalid = %v, reference says %v\nours: %s\nref:  %v",
				schemaSrc, instSrc, len(got) == 0, len(want) == 0, fmtViolations(got), want)
		}
	})
}

var countKeywords = map[string]bool{
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true, "minContains": true, "maxContains": true,
}

// comparable reports whether v is inside what the reference can judge the
// same way (see FuzzValidate); key is the member name v sits under.
func comparable(v any, key string) bool {
	switch v := v.(type) {
	case json.Number:
		d, ok := parseDecimal(string(v))
		if !ok || d.exp > 300 || d.exp < -300 {
			return false
		}
		if countKeywords[key] && int64(len(d.digits))+d.exp > 15 {
			return false
		}
		if key == "multipleOf" && len(d.digits) > 18 {
			return false
		}
	case []any:
		for _, e := range v {
			if !comparable(e, "") {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if !comparable(e, k) {
				return false
			}
		}
	}
	return true
}
