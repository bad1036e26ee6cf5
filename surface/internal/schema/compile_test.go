package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestCompileRefuses: every construct outside the subset, and every
// malformed keyword, fails Compile; a *CompileError names the location.
func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		name, schema string
		loc          string // want CompileError.Location; "" for a decode error
	}{
		// not JSON, or not a schema
		{"not JSON", `{"type":`, ""},
		{"duplicate key", `{"type":"string","type":"number"}`, ""},
		{"case-variant keys", `{"properties":{"id":{},"ID":{}}}`, ""},
		{"a string", `"object"`, "#"},
		{"a number", `1`, "#"},
		{"subschema not a schema", `{"properties":{"a":5}}`, "#/properties/a"},
		{"items null", `{"items":null}`, "#/items"},

		// refused keywords
		{"$dynamicRef", `{"$dynamicRef":"#meta"}`, "#/$dynamicRef"},
		{"$dynamicAnchor", `{"$dynamicAnchor":"meta"}`, "#/$dynamicAnchor"},
		{"$recursiveRef", `{"$recursiveRef":"#"}`, "#/$recursiveRef"},
		{"$recursiveAnchor", `{"$recursiveAnchor":true}`, "#/$recursiveAnchor"},
		{"unevaluatedProperties", `{"unevaluatedProperties":false}`, "#/unevaluatedProperties"},
		{"unevaluatedItems", `{"unevaluatedItems":false}`, "#/unevaluatedItems"},
		{"$anchor", `{"$defs":{"a":{"$anchor":"x"}}}`, "#/$defs/a/$anchor"},
		{"$vocabulary", `{"$vocabulary":{}}`, "#/$vocabulary"},
		{"dependencies", `{"dependencies":{"a":["b"]}}`, "#/dependencies"},
		{"refused deep inside", `{"properties":{"a":{"items":{"unevaluatedItems":false}}}}`, "#/properties/a/items/unevaluatedItems"},
		{"refused in an unreferenced definition", `{"$defs":{"x":{"$dynamicRef":"#"}}}`, "#/$defs/x/$dynamicRef"},
		{"$id below the root", `{"properties":{"a":{"$id":"a.json"}}}`, "#/properties/a/$id"},
		{"$id not a string", `{"$id":5}`, "#/$id"},
		{"$id with a fragment", `{"$id":"https://example.com/s#frag"}`, "#/$id"},
		{"$schema below the root", `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, "#/properties/a/$schema"},
		{"$schema draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#"}`, "#/$schema"},
		{"$schema custom", `{"$schema":"https://example.com/meta"}`, "#/$schema"},
		{"$schema not a string", `{"$schema":7}`, "#/$schema"},
		{"draft-07 contentSchema next to contentMediaType", `{"$schema":"http://json-schema.org/draft-07/schema#","contentMediaType":"application/json","contentSchema":{}}`, "#/contentSchema"},
		{"draft-07 contentSchema deep inside", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"contentMediaType":"text/plain","contentSchema":true}}}`, "#/properties/a/contentSchema"},
		{"items array form", `{"items":[{"type":"string"}]}`, "#/items"},
		{"items array form 2019", `{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{}]}`, "#/items"},

		// references
		{"remote ref", `{"$ref":"https://schemas.example.com/note.json"}`, "#/$ref"},
		{"file ref", `{"$ref":"file:///etc/passwd"}`, "#/$ref"},
		{"relative ref", `{"$ref":"other.json#/a"}`, "#/$ref"},
		{"empty ref", `{"$ref":""}`, "#/$ref"},
		{"anchor ref", `{"$ref":"#node"}`, "#/$ref"},
		{"ambiguous #/", `{"$ref":"#/"}`, "#/$ref"},
		{"missing target", `{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, "#/properties/a/$ref"},
		{"target past a leaf", `{"$defs":{"a":{}},"$ref":"#/$defs/a/b/c"}`, "#/$ref"},
		{"index out of range", `{"allOf":[{}],"$ref":"#/allOf/1"}`, "#/$ref"},
		{"index with leading zero", `{"allOf":[{}],"$ref":"#/allOf/00"}`, "#/$ref"},
		{"bad ~ escape", `{"$defs":{"a":{}},"$ref":"#/$defs/~2"}`, "#/$ref"},
		{"bad percent escape", `{"$defs":{"a":{}},"$ref":"#/$defs/%zz"}`, "#/$ref"},
		{"percent-encoded slash", `{"$defs":{"a/b":{}},"$ref":"#/$defs/a%2Fb"}`, "#/$ref"},
		{"ref not a string", `{"$ref":1}`, "#/$ref"},
		{"ref to a non-schema", `{"required":["a"],"$ref":"#/required"}`, "#/required"},

		// reference cycles that never consume input
		{"root refers to itself", `{"$ref":"#"}`, "#"},
		{"definitions refer to each other", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "#/$defs/a"},
		{"cycle through allOf", `{"allOf":[{"$ref":"#"}]}`, "#"},
		{"cycle through not", `{"$defs":{"a":{"not":{"$ref":"#/$defs/a"}}}}`, "#/$defs/a"},
		{"cycle through anyOf and if", `{"anyOf":[{"if":{"$ref":"#"}}]}`, "#"},
		{"cycle through dependentSchemas", `{"dependentSchemas":{"a":{"$ref":"#"}}}`, "#"},

		// malformed keyword values
		{"type unknown", `{"type":"nope"}`, "#/type"},
		{"type a number", `{"type":12}`, "#/type"},
		{"type empty array", `{"type":[]}`, "#/type"},
		{"type repeated", `{"type":["string","string"]}`, "#/type"},
		{"type array with non-string", `{"type":["string",1]}`, "#/type"},
		{"minLength negative", `{"minLength":-1}`, "#/minLength"},
		{"minLength fraction", `{"minLength":1.5}`, "#/minLength"},
		{"maxLength string", `{"maxLength":"3"}`, "#/maxLength"},
		{"minItems negative", `{"minItems":-2}`, "#/minItems"},
		{"maxItems fraction", `{"maxItems":0.5}`, "#/maxItems"},
		{"minProperties bool", `{"minProperties":true}`, "#/minProperties"},
		{"maxProperties negative", `{"maxProperties":-1}`, "#/maxProperties"},
		{"minContains negative", `{"contains":{},"minContains":-1}`, "#/minContains"},
		{"maxContains fraction", `{"contains":{},"maxContains":1.1}`, "#/maxContains"},
		{"pattern does not compile", `{"pattern":"("}`, "#/pattern"},
		{"pattern not a string", `{"pattern":5}`, "#/pattern"},
		{"patternProperties key does not compile", `{"patternProperties":{"(":{}}}`, "#/patternProperties/("},
		{"required not an array", `{"required":"note"}`, "#/required"},
		{"required non-string", `{"required":[1]}`, "#/required"},
		{"required repeated", `{"required":["a","a"]}`, "#/required"},
		{"dependentRequired not an object", `{"dependentRequired":[]}`, "#/dependentRequired"},
		{"dependentRequired repeated", `{"dependentRequired":{"a":["b","b"]}}`, "#/dependentRequired/a"},
		{"enum not an array", `{"enum":"a"}`, "#/enum"},
		{"enum empty", `{"enum":[]}`, "#/enum"},
		{"uniqueItems not a boolean", `{"uniqueItems":1}`, "#/uniqueItems"},
		{"minimum a string", `{"minimum":"1"}`, "#/minimum"},
		{"exclusiveMinimum boolean", `{"minimum":1,"exclusiveMinimum":true}`, "#/exclusiveMinimum"},
		{"multipleOf zero", `{"multipleOf":0}`, "#/multipleOf"},
		{"multipleOf negative", `{"multipleOf":-2}`, "#/multipleOf"},
		{"allOf empty", `{"allOf":[]}`, "#/allOf"},
		{"anyOf not an array", `{"anyOf":{}}`, "#/anyOf"},
		{"oneOf element not a schema", `{"oneOf":[1]}`, "#/oneOf/0"},
		{"prefixItems empty", `{"prefixItems":[]}`, "#/prefixItems"},
		{"properties not an object", `{"properties":[]}`, "#/properties"},
		{"$defs not an object", `{"$defs":[]}`, "#/$defs"},
		{"definitions entry not a schema", `{"definitions":{"a":"x"}}`, "#/definitions/a"},
		{"title a number", `{"title":5}`, "#/title"},
		{"description an object", `{"description":{}}`, "#/description"},
		{"format a number", `{"format":1}`, "#/format"},
		{"readOnly a string", `{"readOnly":"yes"}`, "#/readOnly"},
		{"examples an object", `{"examples":{}}`, "#/examples"},
		{"contentSchema not a schema", `{"contentSchema":1}`, "#/contentSchema"},
		{"then not a schema", `{"if":{},"then":"x"}`, "#/then"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err == nil {
				t.Fatalf("Compile accepted %s", tc.schema)
			}
			if s != nil {
				t.Error("a schema came back with the error")
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				if tc.loc != "" {
					t.Fatalf("error %v is not a *CompileError", err)
				}
				return
			}
			if ce.Location != tc.loc {
				t.Errorf("location = %q, want %q (%v)", ce.Location, tc.loc, err)
			}
			if !strings.Contains(err.Error(), tc.loc) {
				t.Errorf("message %q does not name the location", err)
			}
		})
	}
}

// TestCompileAccepts: the edges of what is allowed compile.
func TestCompileAccepts(t *testing.T) {
	for _, src := range []string{
		`true`, `false`, `{}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema"}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema#"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`,
		`{"$id":"https://example.com/s"}`,
		`{"$id":"https://example.com/s#"}`,
		`{"properties":{"self":{"$ref":"#"}}}`,
		`{"minLength":1.0,"maxLength":1e2}`,
		`{"maxLength":1e400}`,
		`{"type":["integer","string"]}`,
		`{"minContains":2}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"string"}},"$ref":"#/definitions/a","description":"d"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","format":"email","contentEncoding":"base64","contentMediaType":"application/json"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","contentSchema":{"type":"number"}}`,
		`{"contentMediaType":"application/json","contentSchema":{"type":"number"}}`,
		`{"format":"no-such-format"}`,
		`{"x-extension":{"$ref":"https://example.com"}}`,
		`{"enum":[1,1]}`,
		`{"const":{"$dynamicRef":"#x"}}`,
		`{"default":{"$ref":"nowhere"}}`,
	} {
		if _, err := Compile([]byte(src)); err != nil {
			t.Errorf("Compile(%s): %v", src, err)
		}
	}
}

// TestRefCyclesTerminate: references that consume input on every turn
// compile and validate deep inputs without running away.
func TestRefCyclesTerminate(t *testing.T) {
	tree := mustCompile(t, `{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["kids"]}},"$ref":"#/$defs/node"}`)
	inst := map[string]any{"kids": []any{}}
	for i := 0; i < 20; i++ {
		inst = map[string]any{"kids": []any{inst, map[string]any{"kids": []any{}}}}
	}
	if vs := checkBothModes(t, tree, inst); len(vs) != 0 {
		t.Fatalf("valid tree refused: %s", fmtViolations(vs))
	}
	// Mutually recursive definitions through properties.
	mutual := mustCompile(t, `{"$defs":{"a":{"properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"properties":{"a":{"$ref":"#/$defs/a"}},"required":["a"]}},"$ref":"#/$defs/a"}`)
	vs := checkBothModes(t, mutual, mustDecode(t, `{"b":{"a":{"b":{}}}}`))
	if got := leaves(vs); len(got) != 1 || got[0] != "/b/a/b required" {
		t.Fatalf("got %q", got)
	}
}

// TestDepthLimit: validation nested past the bound ends in a violation (never
// a stack overflow), in both modes.
func TestDepthLimit(t *testing.T) {
	s := mustCompile(t, `{"items":{"$ref":"#"}}`)
	var deep any = []any{}
	for i := 0; i < 1000; i++ {
		deep = []any{deep}
	}
	vs := checkBothModes(t, s, deep)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "deeper than") || (vs[0].Keyword != "items" && vs[0].Keyword != "$ref") {
		t.Fatalf("got %s", fmtViolations(vs))
	}
	if !strings.HasPrefix(vs[0].InstancePath, "/0/0/0") {
		t.Errorf("path = %q", vs[0].InstancePath)
	}
	// Shallow enough: fine.
	var ok any = []any{}
	for i := 0; i < 100; i++ {
		ok = []any{ok}
	}
	if vs := checkBothModes(t, s, ok); len(vs) != 0 {
		t.Fatalf("100 levels refused: %s", fmtViolations(vs))
	}
	// A long in-place chain of definitions (300 refs) counts as well.
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"d` + itoa(i) + `":{"$ref":"#/$defs/d` + itoa(i+1) + `"}`)
	}
	b.WriteString(`,"d300":{"type":"string"}},"$ref":"#/$defs/d0"}`)
	chain := mustCompile(t, b.String())
	if vs := checkBothModes(t, chain, "x"); len(vs) != 1 || !strings.Contains(vs[0].Message, "deeper than") {
		t.Fatalf("chain of 300 refs: %s", fmtViolations(vs))
	}
}

// TestWorkLimit: fan-out through shared definitions is bounded. Each level
// tries both anyOf branches (the first always fails), so 40 levels would be
// 2^40 evaluations.
func TestWorkLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	for i := 0; i < 40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		next := `"#/$defs/d` + itoa(i+1) + `"`
		b.WriteString(`"d` + itoa(i) + `":{"anyOf":[{"allOf":[{"$ref":` + next + `},{"type":"null"}]},{"$ref":` + next + `}]}`)
	}
	b.WriteString(`,"d40":{"type":"string"}},"$ref":"#/$defs/d0"}`)
	s := mustCompile(t, b.String())
	vs := checkBothModes(t, s, "x")
	if len(vs) == 0 || !strings.Contains(vs[len(vs)-1].Message, "work limit") {
		t.Fatalf("got %d violations, last %s", len(vs), fmtViolations(vs[max(0, len(vs)-1):]))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestDeepSchemaDocument: a deeply nested document compiles and validates
// without trouble (nesting is bounded by the decoder, not the stack).
func TestDeepSchemaDocument(t *testing.T) {
	const n = 3000
	src := strings.Repeat(`{"not":`, n) + `{}` + strings.Repeat(`}`, n)
	s := mustCompile(t, src)
	vs := checkBothModes(t, s, 1)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "deeper than") {
		t.Fatalf("got %s", fmtViolations(vs))
	}
}
