package schema

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"
)

// gen builds random schemas and instances from small pools, so that
// instances often hit the edges the schemas state (equal numbers written
// differently, negative and huge values, names matching patterns, arrays
// past the length where uniqueItems switches strategy).
type gen struct{ r *rand.Rand }

var (
	genNumbers = []string{"0", "-0", "1", "1.0", "-1", "2", "2.5", "-2.5", "3", "10", "1e1", "0.1", "0.30", "7", "-7",
		"100", "1e2", "0.01", "1.5e1", "15", "9007199254740993", "9007199254740992", "1e20", "-1e20", "0.000001"}
	genStrings = []string{"", "a", "b", "ab", "abc", "A", "é", "日本", "😀", "a b", "x-1", "10", "true",
		"a@b.example", "2026-05-01", "2026-05-01T10:00:00Z", "10:00:00Z", "P1D", "1.2.3.4", "::1",
		"http://x.example/a", "/a/b", "0#", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "{a}", "(", "x.example."}
	genFormats = []string{"date-time", "date", "time", "duration", "period", "hostname", "email", "ip-address",
		"ipv4", "ipv6", "uri", "iri", "uri-reference", "uriref", "iri-reference", "uri-template", "regex",
		"json-pointer", "relative-json-pointer", "uuid", "idn-email", "idn-hostname", "x-unknown"}
	genNames    = []string{"a", "b", "c", "a b", "x-1", "é"}
	genPatterns = []string{"^a", "b$", "^[a-c]+$", "\\d", "^x-", "é", ".", "^$"}
	genTypes    = []string{"null", "boolean", "object", "array", "number", "string", "integer"}
)

func (g gen) pick(s []string) string { return s[g.r.Intn(len(s))] }

func (g gen) value(depth int) string {
	n := 6
	if depth > 0 {
		n = 8
	}
	switch g.r.Intn(n) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.r.Intn(2)]
	case 2, 3:
		return g.pick(genNumbers)
	case 4, 5:
		return strconv.Quote(g.pick(genStrings))
	case 6:
		k := g.r.Intn(12)
		if g.r.Intn(3) == 0 {
			k = g.r.Intn(3)
		}
		out := "["
		for i := 0; i < k; i++ {
			if i > 0 {
				out += ","
			}
			if g.r.Intn(3) == 0 {
				out += g.value(depth - 1)
			} else {
				out += g.pick(genNumbers)
			}
		}
		return out + "]"
	default:
		out := "{"
		for i, name := range g.r.Perm(len(genNames))[:g.r.Intn(4)] {
			if i > 0 {
				out += ","
			}
			out += strconv.Quote(genNames[name]) + ":" + g.value(depth-1)
		}
		return out + "}"
	}
}

func (g gen) count() string { return strconv.Itoa(g.r.Intn(4)) }

// schema returns a schema object; defs says whether "#/$defs/d" exists.
func (g gen) schema(depth int, defs bool) string {
	if g.r.Intn(12) == 0 {
		return []string{"true", "false"}[g.r.Intn(2)]
	}
	m := map[string]string{}
	for i := g.r.Intn(4) + 1; i > 0; i-- {
		g.keyword(m, depth, defs)
	}
	out := "{"
	first := true
	for _, k := range sortedStrings(m) {
		if !first {
			out += ","
		}
		first = false
		out += strconv.Quote(k) + ":" + m[k]
	}
	return out + "}"
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (g gen) keyword(m map[string]string, depth int, defs bool) {
	sub := func() string { return g.schema(depth-1, defs) }
	list := func() string {
		out := "["
		for i := g.r.Intn(3) + 1; i > 0; i-- {
			if len(out) > 1 {
				out += ","
			}
			out += sub()
		}
		return out + "]"
	}
	names := func() string {
		out := "["
		for i, n := range g.r.Perm(len(genNames))[:g.r.Intn(3)+1] {
			if i > 0 {
				out += ","
			}
			out += strconv.Quote(genNames[n])
		}
		return out + "]"
	}
	simple := []func(){
		func() {
			if g.r.Intn(2) == 0 {
				m["type"] = strconv.Quote(g.pick(genTypes))
			} else {
				p := g.r.Perm(len(genTypes))[:2]
				m["type"] = `[` + strconv.Quote(genTypes[p[0]]) + `,` + strconv.Quote(genTypes[p[1]]) + `]`
			}
		},
		func() { m["enum"] = "[" + g.value(1) + "," + g.value(1) + "]" },
		func() { m["const"] = g.value(1) },
		func() { m["minimum"] = g.pick(genNumbers) },
		func() { m["maximum"] = g.pick(genNumbers) },
		func() { m["exclusiveMinimum"] = g.pick(genNumbers) },
		func() { m["exclusiveMaximum"] = g.pick(genNumbers) },
		func() {
			for {
				n := g.pick(genNumbers)
				if d, _ := parseDecimal(n); d.sign() > 0 {
					m["multipleOf"] = n
					return
				}
			}
		},
		func() { m["minLength"] = g.count() },
		func() { m["maxLength"] = g.count() },
		func() { m["pattern"] = strconv.Quote(g.pick(genPatterns)) },
		func() { m["format"] = strconv.Quote(g.pick(genFormats)) },
		func() { m["minItems"] = g.count() },
		func() { m["maxItems"] = g.count() },
		func() { m["uniqueItems"] = "true" },
		func() { m["minProperties"] = g.count() },
		func() { m["maxProperties"] = g.count() },
		func() { m["required"] = names() },
		func() { m["dependentRequired"] = `{` + strconv.Quote(g.pick(genNames)) + `:` + names() + `}` },
		func() { m["additionalProperties"] = []string{"false", "true"}[g.r.Intn(2)] },
	}
	nested := []func(){
		func() {
			out := "{"
			for i, n := range g.r.Perm(len(genNames))[:g.r.Intn(3)+1] {
				if i > 0 {
					out += ","
				}
				out += strconv.Quote(genNames[n]) + ":" + sub()
			}
			m["properties"] = out + "}"
		},
		func() { m["patternProperties"] = `{` + strconv.Quote(g.pick(genPatterns)) + `:` + sub() + `}` },
		func() { m["additionalProperties"] = sub() },
		func() { m["propertyNames"] = sub() },
		func() { m["items"] = sub() },
		func() { m["prefixItems"] = list() },
		func() {
			m["contains"] = sub()
			if g.r.Intn(2) == 0 {
				m["minContains"] = g.count()
			}
			if g.r.Intn(2) == 0 {
				m["maxContains"] = g.count()
			}
		},
		func() { m["allOf"] = list() },
		func() { m["anyOf"] = list() },
		func() { m["oneOf"] = list() },
		func() { m["not"] = sub() },
		func() {
			m["if"] = sub()
			m["then"] = sub()
			if g.r.Intn(2) == 0 {
				m["else"] = sub()
			}
		},
		func() { m["dependentSchemas"] = `{` + strconv.Quote(g.pick(genNames)) + `:` + sub() + `}` },
		func() {
			if defs {
				m["$ref"] = `"#/$defs/d"`
			}
		},
	}
	if depth <= 0 || g.r.Intn(2) == 0 {
		simple[g.r.Intn(len(simple))]()
	} else {
		nested[g.r.Intn(len(nested))]()
	}
}

// uniqueValues are small values many of which are equal in other spellings.
var uniqueValues = []string{"1", "-1", "1.0", "-1.0", "1e0", "0", "-0", "2", "-2", "0.5", "-0.5", `"1"`, `"-1"`,
	"[1]", "[-1]", "[1.0]", `{"a":1}`, `{"a":-1}`, `{"a":1.0}`, "null", "true", "false", `""`}

// pair returns a random schema document and instance.
func (g gen) pair() (string, string) {
	if g.r.Intn(8) == 0 {
		// uniqueItems over arrays long enough to take the hashing path.
		out := "["
		for i := g.r.Intn(14); i >= 0; i-- {
			if len(out) > 1 {
				out += ","
			}
			out += g.pick(uniqueValues)
		}
		return `{"uniqueItems":true}`, out + "]"
	}
	if g.r.Intn(4) == 0 {
		// A definition that recurses through items or properties only,
		// so it always consumes input.
		def := `{"type":["array","object","number","string"],"items":{"$ref":"#/$defs/d"},"properties":{"a":{"$ref":"#/$defs/d"}},` +
			`"maximum":` + g.pick(genNumbers) + `,"maxLength":` + g.count() + `}`
		return `{"$defs":{"d":` + def + `},"allOf":[` + g.schema(2, true) + `]}`, g.value(3)
	}
	return g.schema(3, false), g.value(3)
}

// TestDifferentialRandom: thousands of generated schema/instance pairs, fixed
// seed, compared with the reference on validity and leaf failures.
func TestDifferentialRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	g := gen{rand.New(rand.NewSource(20260501))}
	compared := 0
	for i := 0; i < n; i++ {
		schemaSrc, instSrc := g.pair()
		ours, err := Compile([]byte(schemaSrc))
		if err != nil {
			t.Fatalf("generated schema does not compile: %s: %v", schemaSrc, err)
		}
		ref, err := refCompile(schemaSrc)
		if err != nil {
			continue // the reference refuses some generated combinations
		}
		inst := mustDecode(t, instSrc)
		got := checkBothModes(t, ours, inst)
		want, ok := refValidate(ref, inst)
		if !ok {
			continue
		}
		compared++
		if (len(got) == 0) != (len(want) == 0) {
			t.Fatalf("schema %s\ninstance %s\nvalid = %v, reference says %v\nours: %s\nref:  %v",
				schemaSrc, instSrc, len(got) == 0, len(want) == 0, fmtViolations(got), want)
		}
		if g, w := leafSet(got), refLeafSet(want); !slices.Equal(g, w) {
			t.Fatalf("schema %s\ninstance %s\nleaves differ\nours: %q\nref:  %q", schemaSrc, instSrc, g, w)
		}
	}
	if compared < n*9/10 {
		t.Errorf("only %d of %d pairs compared", compared, n)
	}
}

// genSeeds returns generated pairs for the fuzz corpus.
func genSeeds(n int) [][2]string {
	g := gen{rand.New(rand.NewSource(7))}
	out := make([][2]string, n)
	for i := range out {
		s, v := g.pair()
		out[i] = [2]string{s, v}
	}
	return out
}
