package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// keywordCase is one schema and instance; want lists the leaf violations
// as "path keyword" (nil: valid), msg the first violation's message when set.
type keywordCase struct {
	name     string
	schema   string
	instance string
	want     []string
	msg      string
}

var keywordCases = []keywordCase{
	// type
	{"type string ok", `{"type":"string"}`, `"a"`, nil, ""},
	{"type string bad", `{"type":"string"}`, `1`, []string{" type"}, "expected string, but got number"},
	{"type integer accepts 1.0", `{"type":"integer"}`, `1.0`, nil, ""},
	{"type integer accepts 1e2", `{"type":"integer"}`, `1e2`, nil, ""},
	{"type integer accepts 1.5e1", `{"type":"integer"}`, `1.5e1`, nil, ""},
	{"type integer refuses 1.5", `{"type":"integer"}`, `1.5`, []string{" type"}, "expected integer, but got number"},
	{"type integer refuses 1e-1", `{"type":"integer"}`, `1e-1`, []string{" type"}, ""},
	{"type integer huge", `{"type":"integer"}`, `123456789012345678901234567890`, nil, ""},
	{"type number takes integers", `{"type":"number"}`, `3`, nil, ""},
	{"type array of names", `{"type":["string","null"]}`, `null`, nil, ""},
	{"type array of names bad", `{"type":["string","null"]}`, `true`, []string{" type"}, "expected string or null, but got boolean"},
	{"type object", `{"type":"object"}`, `[]`, []string{" type"}, "expected object, but got array"},
	{"type array", `{"type":"array"}`, `{}`, []string{" type"}, "expected array, but got object"},
	{"type boolean", `{"type":"boolean"}`, `false`, nil, ""},
	{"type null", `{"type":"null"}`, `0`, []string{" type"}, "expected null, but got number"},
	{"wrong type hides other keywords", `{"type":"string","minLength":3,"enum":["abc"]}`, `7`, []string{" type"}, ""},

	// enum and const
	{"enum hit", `{"enum":["a","b"]}`, `"b"`, nil, ""},
	{"enum miss", `{"enum":["a","b"]}`, `"c"`, []string{" enum"}, `value must be one of "a", "b"`},
	{"enum one value", `{"enum":["a"]}`, `"c"`, []string{" enum"}, `value must be "a"`},
	{"enum numbers compare by value", `{"enum":[1,2]}`, `1.0`, nil, ""},
	{"enum exponent form", `{"enum":[100]}`, `1e2`, nil, ""},
	{"enum structured", `{"enum":[{"a":[1,2]}]}`, `{"a":[1,2.0]}`, nil, ""},
	{"enum structured miss", `{"enum":[{"a":[1,2]}]}`, `{"a":[2,1]}`, []string{" enum"}, "enum failed"},
	{"enum null", `{"enum":[null]}`, `null`, nil, ""},
	{"enum distinguishes false and 0", `{"enum":[false]}`, `0`, []string{" enum"}, ""},
	{"const hit", `{"const":"x"}`, `"x"`, nil, ""},
	{"const miss", `{"const":"x"}`, `"y"`, []string{" const"}, `value must be "x"`},
	{"const number", `{"const":10}`, `1e1`, nil, ""},
	{"const number miss", `{"const":10}`, `10.000001`, []string{" const"}, `value must be "10"`},
	{"const object", `{"const":{"a":1}}`, `{"a":1.0}`, nil, ""},
	{"const object miss", `{"const":{"a":1}}`, `{"a":1,"b":2}`, []string{" const"}, "const failed"},
	{"const null", `{"const":null}`, `false`, []string{" const"}, "value must be <nil>"},

	// objects
	{"properties ok", `{"properties":{"a":{"type":"string"}}}`, `{"a":"x","b":1}`, nil, ""},
	{"properties bad", `{"properties":{"a":{"type":"string"}}}`, `{"a":1}`, []string{"/a type"}, ""},
	{"properties ignore non-objects", `{"properties":{"a":{"type":"string"}}}`, `[1]`, nil, ""},
	{"properties escaped path", `{"properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`, []string{"/a~1b~0c type"}, ""},
	{"properties key with space", `{"properties":{"a b":false}}`, `{"a b":1}`, []string{"/a b properties"}, "not allowed"},
	{"required ok", `{"required":["a"]}`, `{"a":null}`, nil, ""},
	{"required one missing", `{"required":["note"]}`, `{}`, []string{" required"}, "missing properties: 'note'"},
	{"required two missing", `{"required":["a","b","c"]}`, `{"b":1}`, []string{" required"}, "missing properties: 'a', 'c'"},
	{"required ignores non-objects", `{"required":["a"]}`, `"a"`, nil, ""},
	{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"x":2}`, []string{" additionalProperties"}, "additionalProperties 'x' not allowed"},
	{"additionalProperties false several", `{"additionalProperties":false}`, `{"b":1,"a":2}`, []string{" additionalProperties"}, "additionalProperties 'a', 'b' not allowed"},
	{"additionalProperties false with patterns", `{"patternProperties":{"^x-":{}},"additionalProperties":false}`, `{"x-a":1}`, nil, ""},
	{"additionalProperties schema", `{"properties":{"a":{}},"additionalProperties":{"type":"number"}}`, `{"a":"s","b":"t"}`, []string{"/b type"}, ""},
	{"additionalProperties true", `{"additionalProperties":true}`, `{"a":1}`, nil, ""},
	{"patternProperties", `{"patternProperties":{"^n":{"type":"number"}}}`, `{"n1":1,"n2":"x","s":"y"}`, []string{"/n2 type"}, ""},
	{"patternProperties unanchored", `{"patternProperties":{"id":{"type":"string"}}}`, `{"user_id_x":1}`, []string{"/user_id_x type"}, ""},
	{"propertyNames", `{"propertyNames":{"maxLength":3}}`, `{"abcd":1,"ab":2}`, []string{"/abcd maxLength"}, "length must be <= 3, but got 4"},
	{"minProperties", `{"minProperties":2}`, `{"a":1}`, []string{" minProperties"}, "minimum 2 properties allowed, but found 1 properties"},
	{"maxProperties", `{"maxProperties":1}`, `{"a":1,"b":2}`, []string{" maxProperties"}, "maximum 1 properties allowed, but found 2 properties"},
	{"dependentRequired ok", `{"dependentRequired":{"a":["b"]}}`, `{"a":1,"b":2}`, nil, ""},
	{"dependentRequired absent trigger", `{"dependentRequired":{"a":["b"]}}`, `{"c":1}`, nil, ""},
	{"dependentRequired bad", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, []string{" dependentRequired"}, "property 'b' is required, if 'a' property exists"},
	{"dependentSchemas bad", `{"dependentSchemas":{"a":{"required":["b"]}}}`, `{"a":1}`, []string{" required"}, ""},
	{"dependentSchemas ok", `{"dependentSchemas":{"a":{"required":["b"]}}}`, `{"c":1}`, nil, ""},

	// arrays
	{"items", `{"items":{"type":"string"}}`, `["a",1,"b",2]`, []string{"/1 type", "/3 type"}, ""},
	{"prefixItems", `{"prefixItems":[{"type":"string"},{"type":"number"}]}`, `["a","b",true]`, []string{"/1 type"}, ""},
	{"prefixItems then items", `{"prefixItems":[{"type":"string"}],"items":false}`, `["a",1]`, []string{"/1 items"}, "not allowed"},
	{"prefixItems shorter array", `{"prefixItems":[{"type":"string"},{"type":"number"}]}`, `["a"]`, nil, ""},
	{"contains ok", `{"contains":{"type":"number"}}`, `["a",1]`, nil, ""},
	{"contains none", `{"contains":{"type":"number"}}`, `["a","b"]`, []string{"/0 type", "/1 type"}, ""},
	{"contains empty array", `{"contains":{"type":"number"}}`, `[]`, []string{" minContains"}, "valid must be >= 1, but got 0"},
	{"minContains", `{"contains":{"const":1},"minContains":2}`, `[1,2]`, []string{"/1 const"}, ""},
	{"maxContains", `{"contains":{"const":1},"maxContains":1}`, `[1,1]`, []string{" maxContains"}, "valid must be <= 1, but got 2"},
	{"minContains 0", `{"contains":{"const":1},"minContains":0}`, `[]`, nil, ""},
	{"minContains without contains", `{"minContains":3}`, `[]`, nil, ""},
	{"minItems", `{"minItems":2}`, `[1]`, []string{" minItems"}, "minimum 2 items required, but found 1 items"},
	{"maxItems", `{"maxItems":1}`, `[1,2]`, []string{" maxItems"}, "maximum 1 items required, but found 2 items"},
	{"uniqueItems ok", `{"uniqueItems":true}`, `[1,"1",[1],{"a":1},null,true]`, nil, ""},
	{"uniqueItems numbers", `{"uniqueItems":true}`, `[1,2,1.0]`, []string{" uniqueItems"}, "items at index 0 and 2 are equal"},
	{"uniqueItems objects", `{"uniqueItems":true}`, `[{"a":1,"b":2},{"b":2,"a":1}]`, []string{" uniqueItems"}, "items at index 0 and 1 are equal"},
	{"uniqueItems long", `{"uniqueItems":true}`, `[0,1,2,3,4,5,6,7,8,9,10,11,[1,2],{"x":[1]},"s",12,{"x":[1.0]}]`, []string{" uniqueItems"}, "items at index 13 and 16 are equal"},
	{"uniqueItems long distinct", `{"uniqueItems":true}`, `[0,1,2,3,4,5,6,7,8,9,10,"10",[10],{"10":10},true,false,null]`, nil, ""},
	{"uniqueItems false", `{"uniqueItems":false}`, `[1,1]`, nil, ""},

	// strings
	{"minLength counts code points", `{"minLength":2}`, `"é"`, []string{" minLength"}, "length must be >= 2, but got 1"},
	{"maxLength counts code points", `{"maxLength":2}`, `"日本"`, nil, ""},
	{"maxLength astral", `{"maxLength":1}`, `"😀"`, nil, ""},
	{"maxLength bad", `{"maxLength":2}`, `"abc"`, []string{" maxLength"}, "length must be <= 2, but got 3"},
	{"minLength 1.0", `{"minLength":1.0}`, `""`, []string{" minLength"}, ""},
	{"pattern unanchored", `{"pattern":"b+"}`, `"abbc"`, nil, ""},
	{"pattern bad", `{"pattern":"^[a-z]+$"}`, `"ab1"`, []string{" pattern"}, "does not match pattern '^[a-z]+$'"},
	{"pattern ignores numbers", `{"pattern":"^a"}`, `1`, nil, ""},

	// numbers
	{"minimum ok", `{"minimum":1}`, `1`, nil, ""},
	{"minimum bad", `{"minimum":1}`, `0.999`, []string{" minimum"}, "must be >= 1 but found 0.999"},
	{"exclusiveMinimum bad", `{"exclusiveMinimum":0}`, `0`, []string{" exclusiveMinimum"}, "must be > 0 but found 0"},
	{"exclusiveMinimum -0", `{"exclusiveMinimum":0}`, `-0`, []string{" exclusiveMinimum"}, ""},
	{"maximum bad", `{"maximum":6}`, `7`, []string{" maximum"}, "must be <= 6 but found 7"},
	{"exclusiveMaximum bad", `{"exclusiveMaximum":1.5}`, `1.50`, []string{" exclusiveMaximum"}, "must be < 1.5 but found 1.50"},
	{"minimum exact beyond float64", `{"minimum":9007199254740993}`, `9007199254740992`, []string{" minimum"}, ""},
	{"maximum exact decimals", `{"maximum":0.3}`, `0.30000000000000001`, []string{" maximum"}, ""},
	{"minimum huge exponent", `{"minimum":1e400}`, `1e399`, []string{" minimum"}, ""},
	{"minimum negative", `{"minimum":-5}`, `-5.5`, []string{" minimum"}, ""},
	{"multipleOf decimal", `{"multipleOf":0.01}`, `1.50`, nil, ""},
	{"multipleOf decimal bad", `{"multipleOf":0.01}`, `1.505`, []string{" multipleOf"}, "1.505 not multipleOf 0.01"},
	{"multipleOf integer", `{"multipleOf":3}`, `1e3`, []string{" multipleOf"}, ""},
	{"multipleOf big instance", `{"multipleOf":7}`, `700000000000000000000000000000000000007`, nil, ""},
	{"multipleOf huge exponent", `{"multipleOf":0.25}`, `1e400`, nil, ""},
	{"multipleOf zero instance", `{"multipleOf":0.3}`, `0`, nil, ""},
	{"multipleOf negative instance", `{"multipleOf":2}`, `-4`, nil, ""},
	{"multipleOf long divisor", `{"multipleOf":1.0000000000000000001}`, `2.0000000000000000002`, nil, ""},

	// combinators
	{"allOf", `{"allOf":[{"type":"string"},{"maxLength":1}]}`, `"ab"`, []string{" maxLength"}, ""},
	{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `1`, nil, ""},
	{"anyOf bad reports every branch", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `true`, []string{" type", " type"}, ""},
	{"oneOf ok", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, `1`, nil, ""},
	{"oneOf two match", `{"oneOf":[{"type":"number"},{"minimum":0}]}`, `1`, []string{" oneOf"}, "valid against schemas at indexes 0 and 1"},
	{"oneOf none", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, `1`, []string{" type", " type"}, ""},
	{"not", `{"not":{"type":"string"}}`, `"a"`, []string{" not"}, "not failed"},
	{"not ok", `{"not":{"type":"string"}}`, `1`, nil, ""},
	{"if then", `{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`, `{"k":"a"}`, []string{" required"}, "missing properties: 'x'"},
	{"if else", `{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`, `{"k":"b"}`, []string{" required"}, "missing properties: 'y'"},
	{"if alone asserts nothing", `{"if":false}`, `1`, nil, ""},
	{"then without if is ignored", `{"then":false}`, `1`, nil, ""},

	// references and booleans
	{"ref to defs", `{"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, `{"a":1}`, []string{"/a type"}, ""},
	{"ref to definitions", `{"definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s"}`, `1`, []string{" type"}, ""},
	{"ref with siblings", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1}`, `"ab"`, []string{" maxLength"}, ""},
	{"ref into properties", `{"properties":{"a":{"type":"number"},"b":{"$ref":"#/properties/a"}}}`, `{"b":"x"}`, []string{"/b type"}, ""},
	{"ref percent-encoded", `{"$defs":{"a b":{"type":"number"}},"$ref":"#/$defs/a%20b"}`, `"x"`, []string{" type"}, ""},
	{"ref pointer escapes", `{"$defs":{"a/b":{"type":"number"}},"$ref":"#/$defs/a~1b"}`, `"x"`, []string{" type"}, ""},
	{"ref into array", `{"allOf":[{"type":"number"}],"properties":{"a":{"$ref":"#/allOf/0"}}}`, `{"a":"x"}`, []string{"/a type", " type"}, ""},
	{"recursive ref through properties", `{"type":"object","properties":{"child":{"$ref":"#"}},"additionalProperties":false}`, `{"child":{"child":{"x":1}}}`, []string{"/child/child additionalProperties"}, ""},
	{"recursive ref through items", `{"type":["array","number"],"items":{"$ref":"#"}}`, `[1,[2,["x"]]]`, []string{"/1/1/0 type"}, ""},
	{"true schema", `true`, `{"a":1}`, nil, ""},
	{"false schema", `false`, `null`, []string{" false"}, "not allowed"},
	{"empty schema", `{}`, `[1,{"a":null}]`, nil, ""},
	{"false via ref", `{"$defs":{"no":false},"$ref":"#/$defs/no"}`, `1`, []string{" $ref"}, "not allowed"},

	// annotations
	{"annotations ignored", `{"title":"t","description":"d","default":5,"examples":[1],"deprecated":true,"readOnly":true,"writeOnly":false,"$comment":"c","format":"x-unknown","contentEncoding":"base64","contentMediaType":"application/json","contentSchema":{"type":"number"}}`, `"%%%"`, nil, ""},

	// format (the checks themselves: format_test.go)
	{"format asserted", `{"format":"email"}`, `"not an email"`, []string{" format"}, "'not an email' is not valid 'email'"},
	{"format passes", `{"format":"email"}`, `"a@example.com"`, nil, ""},
	{"format skips non-strings", `{"format":"email"}`, `{"a":1}`, nil, ""},
	{"format unknown name is an annotation", `{"format":"idn-hostname"}`, `"-"`, nil, ""},
	{"format before minLength", `{"minLength":9,"format":"uuid"}`, `"x"`, []string{" format", " minLength"}, ""},
	{"format message quoting", `{"format":"ipv4"}`, `"it's \"1\"\t"`, []string{" format"}, `'it\'s "1"\t' is not valid 'ipv4'`},
	{"unknown keyword ignored", `{"x-widget":"slider","minimun":5}`, `1`, nil, ""},
	{"root $id ignored", `{"$id":"https://example.com/s","$defs":{"n":{"type":"number"}},"$ref":"#/$defs/n"}`, `"x"`, []string{" type"}, ""},

	// nesting and ordering
	{"nested paths", `{"properties":{"a":{"items":{"properties":{"b":{"type":"string"}}}}}}`, `{"a":[{"b":"x"},{"b":2}]}`, []string{"/a/1/b type"}, ""},
	{"several keywords one value", `{"required":["note"],"additionalProperties":false,"properties":{"note":{}}}`, `{"priority":"high"}`, []string{" required", " additionalProperties"}, ""},
	{"order follows keywords", `{"minLength":5,"pattern":"^x"}`, `"ab"`, []string{" minLength", " pattern"}, ""},
}

func TestKeywords(t *testing.T) {
	for _, tc := range keywordCases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			vs := checkBothModes(t, s, mustDecode(t, tc.instance))
			if got := leaves(vs); !slices.Equal(got, tc.want) {
				t.Fatalf("violations = %q, want %q (%s)", got, tc.want, fmtViolations(vs))
			}
			if tc.msg != "" && vs[0].Message != tc.msg {
				t.Errorf("message = %q, want %q", vs[0].Message, tc.msg)
			}
		})
	}
}

// TestDialects: an older $schema removes the keywords that dialect lacks,
// and draft-07 ignores what sits next to $ref.
func TestDialects(t *testing.T) {
	tests := []struct {
		name, schema, instance string
		valid                  bool
	}{
		{"2020 prefixItems", `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"string"}]}`, `[1]`, false},
		{"2019 has no prefixItems", `{"$schema":"https://json-schema.org/draft/2019-09/schema","prefixItems":[{"type":"string"}]}`, `[1]`, true},
		{"2019 dependentRequired", `{"$schema":"https://json-schema.org/draft/2019-09/schema","dependentRequired":{"a":["b"]}}`, `{"a":1}`, false},
		{"draft-07 has no dependentRequired", `{"$schema":"http://json-schema.org/draft-07/schema#","dependentRequired":{"a":["b"]}}`, `{"a":1}`, true},
		{"draft-07 has no minContains", `{"$schema":"http://json-schema.org/draft-07/schema#","contains":{"const":1},"minContains":2}`, `[1]`, true},
		{"draft-07 contains", `{"$schema":"http://json-schema.org/draft-07/schema#","contains":{"const":1}}`, `[2]`, false},
		{"draft-07 ignores ref siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","maxLength":1}`, `"abc"`, true},
		{"draft-07 applies the ref", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s"}`, `1`, false},
		{"2020 applies ref siblings", `{"definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","maxLength":1}`, `"abc"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			vs := checkBothModes(t, s, mustDecode(t, tc.instance))
			if got := len(vs) == 0; got != tc.valid {
				t.Fatalf("valid = %v, want %v (%s)", got, tc.valid, fmtViolations(vs))
			}
		})
	}
}

// TestGoInstances: instances built in Go (float64, ints) validate like their
// JSON text, and values that are not JSON are violations, not panics.
func TestGoInstances(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		instance any
		want     []string
	}{
		{"float64 integer", `{"type":"integer"}`, 3.0, nil},
		{"float64 fraction", `{"type":"integer"}`, 3.5, []string{" type"}},
		{"float64 decimal is its shortest text", `{"multipleOf":0.1}`, 0.3, nil},
		{"float64 maximum", `{"maximum":0.3}`, sum(0.1, 0.2), []string{" maximum"}},
		{"int", `{"minimum":5}`, 4, []string{" minimum"}},
		{"int64", `{"const":7}`, int64(7), nil},
		{"uint64 enum", `{"enum":[18446744073709551615]}`, uint64(18446744073709551615), nil},
		{"nested Go values", `{"properties":{"a":{"items":{"type":"number"}}}}`, map[string]any{"a": []any{1, 2.5, "x"}}, []string{"/a/2 type"}},
		{"NaN", `{"minimum":0}`, nan(), []string{" type"}},
		{"unsupported type", `{"type":"object"}`, struct{}{}, []string{" type"}},
		{"unsupported nested", `{"items":{}}`, []any{[]string{"a"}}, []string{"/0 type"}},
		{"unsupported under true", `true`, struct{}{}, nil},
		{"malformed json.Number", `{"maximum":1}`, json.Number("x1"), []string{" type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			vs := checkBothModes(t, s, tc.instance)
			if got := leaves(vs); !slices.Equal(got, tc.want) {
				t.Fatalf("violations = %q, want %q (%s)", got, tc.want, fmtViolations(vs))
			}
		})
	}
}

// sum adds at run time: a constant 0.1 + 0.2 would be exactly 0.3.
func sum(a, b float64) float64 { return a + b }

func nan() float64 {
	zero := 0.0
	return zero / zero
}

// TestNilSchema: a nil schema accepts everything.
func TestNilSchema(t *testing.T) {
	var s *Schema
	if vs := s.Validate(map[string]any{"a": 1}); vs != nil {
		t.Fatalf("nil schema: %v", vs)
	}
}

// TestMessageQuoting: names in messages are quoted the same way however
// odd they are.
func TestMessageQuoting(t *testing.T) {
	s := mustCompile(t, `{"required":["it's","say \"hi\"","tab\there"]}`)
	vs := s.Validate(map[string]any{})
	want := `missing properties: 'it\'s', 'say "hi"', 'tab\there'`
	if len(vs) != 1 || vs[0].Message != want {
		t.Fatalf("got %s, want %s", fmtViolations(vs), want)
	}
	if strings.Contains(vs[0].Message, "\t") {
		t.Error("control character not escaped")
	}
}
