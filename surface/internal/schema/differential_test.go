package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	v5 "github.com/santhosh-tekuri/jsonschema/v5"

	"pling.dev/agent/surface/internal/strictjson"
)

// The reference implementation is github.com/santhosh-tekuri/jsonschema/v5,
// configured the way the kernel used it before this package: Draft2020 by
// default, default settings, no loading. Given a document without $schema,
// v5 then treats every vocabulary as on and asserts format; this package
// asserts format in every dialect it accepts, so the reference gets
// AssertFormat, which does the same for documents that name 2020-12 or
// 2019-09 (draft-07 asserts format anyway).

const refURL = "urn:pling:surface:input-schema"

// refCompile compiles src with the reference implementation; a panic counts
// as a refusal (it panics on some malformed schemas).
//
// The reference reads patterns with Go's regexp syntax, where \s, \S and
// "." mean something else than in the ECMA-262 patterns JSON Schema
// specifies (ecmaregex.go). It is given each pattern already translated the
// way this package translates it, so the two are compared on everything
// else; the translation itself is held to V8 and to the JSON Schema Test
// Suite (ecmaregex_test.go).
func refCompile(src string) (s *v5.Schema, err error) {
	src, _ = refPatterns(src)
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("reference compiler panicked: %v", r)
		}
	}()
	c := v5.NewCompiler()
	c.Draft = v5.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errors.New("no loading") }
	if err := c.AddResource(refURL, strings.NewReader(src)); err != nil {
		return nil, err
	}
	return c.Compile(refURL)
}

// refLeaf is one leaf failure of the reference, in this package's terms.
type refLeaf struct{ path, keyword, message string }

// refValidate validates with the reference; ok is false when it panicked.
func refValidate(s *v5.Schema, inst any) (leaves []refLeaf, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			leaves, ok = nil, false
		}
	}()
	err := s.Validate(inst)
	if err == nil {
		return nil, true
	}
	var ve *v5.ValidationError
	if !errors.As(err, &ve) {
		return nil, false
	}
	var walk func(e *v5.ValidationError)
	walk = func(e *v5.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, refLeaf{refPath(e.InstanceLocation), refKeyword(e.KeywordLocation), e.Message})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return leaves, true
}

// refPath undoes the reference's percent-encoding of pointer tokens: this
// package reports plain RFC 6901 pointers.
func refPath(p string) string {
	if p == "" {
		return ""
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			toks[i] = u
		}
	}
	return "/" + strings.Join(toks, "/")
}

// refKeyword finds the keyword a keyword location ends in, skipping the
// property names and indexes that follow map and list keywords, so a false
// schema under properties/x reads "properties", as this package reports it.
func refKeyword(loc string) string {
	if loc == "" {
		return "false"
	}
	toks := strings.Split(loc[1:], "/")
	last := "false"
	for i := 0; i < len(toks); {
		tok := toks[i]
		last = tok
		switch tok {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
			"allOf", "anyOf", "oneOf", "prefixItems":
			i += 2
		case "dependentRequired":
			i += 3
		default:
			i++
		}
	}
	return last
}

// diffCase is one schema and instance of the differential corpus.
type diffCase struct {
	name, schema, instance string
	// refused: this package must refuse the schema (the reference may or
	// may not accept it).
	refused bool
	// validityOnly: compare valid/invalid but not the leaves (combinators
	// whose leaf reports differ by design).
	validityOnly bool
}

// diffCorpus is every keyword table case plus cases aimed at the reference's
// semantics: numbers, refs, dialects and the keywords refused here.
func diffCorpus() []diffCase {
	var out []diffCase
	for _, k := range keywordCases {
		out = append(out, diffCase{name: "keyword/" + k.name, schema: k.schema, instance: k.instance})
	}
	return append(out, []diffCase{
		{name: "kernel note schema ok", schema: `{"type":"object","properties":{"note":{"type":"string","maxLength":500}},"required":["note"],"additionalProperties":false}`, instance: `{"note":"x"}`},
		// Patterns the reference gets translated (see refCompile).
		{name: "ECMA-262 \\S refuses a no-break space", schema: `{"type":"string","pattern":"^\\S+$"}`, instance: `"a\u00a0b"`},
		{name: "ECMA-262 \\s accepts an em space", schema: `{"type":"string","pattern":"^\\s$"}`, instance: `"\u2003"`},
		{name: "ECMA-262 dot refuses a carriage return", schema: `{"pattern":"^a.b$"}`, instance: `"a\rb"`},
		{name: "ECMA-262 patternProperties with \\s", schema: `{"patternProperties":{"^\\s":{"type":"integer"}}}`, instance: `{"\u3000x":"y"}`},
		{name: "kernel note schema wrong type", schema: `{"type":"object","properties":{"note":{"type":"string","maxLength":500}},"required":["note"],"additionalProperties":false}`, instance: `{"note":42}`},
		{name: "kernel note schema extra and missing", schema: `{"type":"object","properties":{"note":{"type":"string","maxLength":500}},"required":["note"],"additionalProperties":false}`, instance: `{"priority":"high"}`},
		{name: "search schema", schema: `{"type":"object","properties":{"query":{"type":"string"},"page":{"type":"integer","minimum":1,"maximum":6}},"additionalProperties":false}`, instance: `{"query":"x","page":7}`},
		{name: "search schema fractional page", schema: `{"type":"object","properties":{"page":{"type":"integer","minimum":1}}}`, instance: `{"page":1.5}`},
		{name: "amount multipleOf", schema: `{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01,"exclusiveMinimum":0}}}`, instance: `{"amount":10.10}`},
		{name: "amount multipleOf bad", schema: `{"type":"object","properties":{"amount":{"type":"number","multipleOf":0.01}}}`, instance: `{"amount":10.101}`},
		{name: "big integer minimum", schema: `{"minimum":18446744073709551616}`, instance: `18446744073709551615`},
		{name: "tiny exclusiveMinimum", schema: `{"exclusiveMinimum":1e-30}`, instance: `0.000000000000000000000000000001`},
		{name: "enum mixed", schema: `{"enum":["a",1,null,true]}`, instance: `1.000`},
		{name: "enum mixed miss", schema: `{"enum":["a",1,null,true]}`, instance: `"1"`},
		{name: "status enum", schema: `{"properties":{"status":{"enum":["open","closed"]}}}`, instance: `{"status":"pending"}`},
		{name: "nested required", schema: `{"properties":{"addr":{"type":"object","required":["city","zip"]}}}`, instance: `{"addr":{"zip":"1"}}`},
		{name: "array of objects", schema: `{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}`, instance: `[{"id":1},{"id":"2"},{}]`},
		{name: "tuple and rest", schema: `{"prefixItems":[{"const":"cmd"},{"type":"integer"}],"items":{"type":"string"},"minItems":2}`, instance: `["cmd",2,"a",3]`},
		{name: "contains two failing items", schema: `{"contains":{"type":"integer","minimum":10},"minContains":1}`, instance: `[1,"x"]`},
		{name: "maxContains exceeded", schema: `{"contains":{"type":"string"},"maxContains":2}`, instance: `["a","b","c",1]`},
		{name: "anyOf nested objects", schema: `{"anyOf":[{"required":["a"]},{"required":["b"]}]}`, instance: `{"c":1}`},
		{name: "oneOf discriminator", schema: `{"oneOf":[{"properties":{"kind":{"const":"a"}},"required":["kind","x"]},{"properties":{"kind":{"const":"b"}},"required":["kind","y"]}]}`, instance: `{"kind":"a","x":1}`},
		{name: "oneOf discriminator bad", schema: `{"oneOf":[{"properties":{"kind":{"const":"a"}},"required":["kind","x"]},{"properties":{"kind":{"const":"b"}},"required":["kind","y"]}]}`, instance: `{"kind":"c"}`},
		{name: "not required", schema: `{"not":{"required":["secret"]}}`, instance: `{"secret":1}`},
		{name: "if then else numbers", schema: `{"if":{"minimum":10},"then":{"multipleOf":5},"else":{"multipleOf":2}}`, instance: `12`},
		{name: "if then else numbers else", schema: `{"if":{"minimum":10},"then":{"multipleOf":5},"else":{"multipleOf":2}}`, instance: `7`},
		{name: "ref chain", schema: `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/c"},"c":{"type":"boolean"}},"properties":{"f":{"$ref":"#/$defs/a"}}}`, instance: `{"f":"no"}`},
		{name: "recursive list", schema: `{"$defs":{"list":{"type":["object","null"],"properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/list"}}}},"$ref":"#/$defs/list"}`, instance: `{"v":1,"next":{"v":2,"next":{"v":"x","next":null}}}`},
		{name: "ref with percent", schema: `{"$defs":{"a b":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a%20b"}}}`, instance: `{"x":1.5}`},
		{name: "propertyNames pattern", schema: `{"propertyNames":{"pattern":"^[a-z]+$"}}`, instance: `{"ok":1,"Bad":2}`},
		{name: "unicode property name", schema: `{"properties":{"名前":{"type":"string"}}}`, instance: `{"名前":1}`},
		{name: "space in property name", schema: `{"additionalProperties":{"type":"string"}}`, instance: `{"a b":1,"c%d":2}`},
		{name: "string length astral", schema: `{"minLength":3}`, instance: `"😀😀"`},
		{name: "pattern unicode class", schema: `{"pattern":"^\\p{L}+$"}`, instance: `"héllo"`},
		{name: "uniqueItems nested", schema: `{"uniqueItems":true}`, instance: `[[1,{"a":2}],[1.0,{"a":2.00}]]`},
		{name: "uniqueItems many", schema: `{"uniqueItems":true}`, instance: `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,5.0]`},
		{name: "dependentSchemas nested", schema: `{"dependentSchemas":{"card":{"properties":{"cvv":{"type":"string","minLength":3}},"required":["cvv"]}}}`, instance: `{"card":"1","cvv":"12"}`},
		{name: "draft-07 root ref", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/T","definitions":{"T":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false}}}`, instance: `{"n":"x","m":1}`},
		{name: "draft-07 ref siblings ignored", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","maxLength":1}`, instance: `"abc"`},
		{name: "2019-09 prefixItems ignored", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","prefixItems":[{"type":"string"}]}`, instance: `[1]`},
		{name: "2019-09 ref siblings", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1}`, instance: `"abc"`},
		{name: "format email asserted", schema: `{"format":"email"}`, instance: `"not an email"`},
		{name: "format email ok", schema: `{"format":"email"}`, instance: `"a@example.com"`},
		{name: "format unknown name", schema: `{"format":"idn-email"}`, instance: `"not an email"`},
		{name: "format ignores numbers", schema: `{"format":"date"}`, instance: `20260501`},
		{name: "format in properties", schema: `{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"at":{"format":"date-time"}}}`, instance: `{"id":"123","at":"2026-05-01 10:00:00Z"}`},
		{name: "format and minLength", schema: `{"format":"ipv4","minLength":10}`, instance: `"1.2.3"`},
		{name: "format under anyOf", schema: `{"anyOf":[{"format":"ipv4"},{"format":"ipv6"}]}`, instance: `"1.2.3.4.5"`},
		{name: "format 2020-12 asserted", schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","format":"hostname"}`, instance: `"-bad.example"`},
		{name: "format 2019-09 asserted", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","format":"uri"}`, instance: `"relative/path"`},
		{name: "format draft-07 asserted", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, instance: `"x"`},
		{name: "format draft-07 ignored next to $ref", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","format":"email"}`, instance: `"x"`},
		{name: "content is an annotation", schema: `{"contentEncoding":"base64","contentMediaType":"application/json"}`, instance: `"%%%"`},
		{name: "content 2019-09 annotation", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","contentEncoding":"base64"}`, instance: `"%%%"`},
		{name: "content draft-07 bad base64", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentEncoding":"base64","contentMediaType":"application/json"}`, instance: `"%%%"`},
		{name: "content draft-07 base64 not json", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentEncoding":"base64","contentMediaType":"application/json"}`, instance: `"bm90IGpzb24="`},
		{name: "content draft-07 base64 json", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentEncoding":"base64","contentMediaType":"application/json"}`, instance: `"eyJhIjoxfQ=="`},
		{name: "content draft-07 json", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentMediaType":"application/json"}`, instance: `"{\"a\":"`},
		{name: "content draft-07 unknown encoding", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentEncoding":"base32","contentMediaType":"application/json"}`, instance: `"{"`},
		{name: "content draft-07 unknown media type", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentMediaType":"text/plain"}`, instance: `"{"`},
		{name: "root $id", schema: `{"$id":"https://example.com/root.json","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"number"}}}`, instance: `{"a":"x"}`},

		// Refused here. The reference accepts most of them; this package
		// must refuse rather than skip the assertion.
		{name: "refused unevaluatedProperties", schema: `{"properties":{"a":{}},"unevaluatedProperties":false}`, instance: `{"b":1}`, refused: true},
		{name: "refused unevaluatedItems", schema: `{"prefixItems":[{}],"unevaluatedItems":false}`, instance: `[1,2]`, refused: true},
		{name: "refused $dynamicRef", schema: `{"$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"}}}`, instance: `{"c":1}`, refused: true},
		{name: "refused $anchor ref", schema: `{"$defs":{"s":{"$anchor":"str","type":"string"}},"$ref":"#str"}`, instance: `1`, refused: true},
		{name: "refused dependencies", schema: `{"dependencies":{"a":["b"]}}`, instance: `{"a":1}`, refused: true},
		{name: "refused $recursiveRef", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"items":{"$recursiveRef":"#"}}`, instance: `[1]`, refused: true},
		{name: "refused nested $id", schema: `{"$defs":{"a":{"$id":"https://example.com/a","type":"string"}},"$ref":"https://example.com/a"}`, instance: `1`, refused: true},
		{name: "refused items array", schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{"type":"string"}],"additionalItems":false}`, instance: `["a",1]`, refused: true},
		{name: "refused draft-07 contentSchema", schema: `{"$schema":"http://json-schema.org/draft-07/schema#","contentMediaType":"application/json","contentSchema":{"type":"number"}}`, instance: `"\"x\""`, refused: true},
		{name: "refused empty enum", schema: `{"enum":[]}`, instance: `1`, refused: true},
		{name: "refused ref cycle", schema: `{"$ref":"#"}`, instance: `1`, refused: true},
		{name: "refused draft-04", schema: `{"$schema":"http://json-schema.org/draft-04/schema#","maximum":1,"exclusiveMaximum":true}`, instance: `1`, refused: true},
		{name: "refused remote ref", schema: `{"$ref":"https://example.com/s.json"}`, instance: `1`, refused: true},
	}...)
}

// TestDifferential: on the corpus, this package and the reference agree on
// valid vs invalid and on each leaf failure's place, keyword and (for the
// keywords whose reference text is deterministic) message.
func TestDifferential(t *testing.T) {
	corpus := diffCorpus()
	if len(corpus) < 60 {
		t.Fatalf("corpus has %d cases", len(corpus))
	}
	compared := 0
	for _, tc := range corpus {
		t.Run(tc.name, func(t *testing.T) {
			ours, err := Compile([]byte(tc.schema))
			if tc.refused {
				if err == nil {
					t.Fatalf("compiled a schema outside the subset: %s", tc.schema)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			ref, err := refCompile(tc.schema)
			if err != nil {
				t.Fatalf("reference refuses a schema this package accepts: %v", err)
			}
			inst := mustDecode(t, tc.instance)
			got := checkBothModes(t, ours, inst)
			want, ok := refValidate(ref, inst)
			if !ok {
				t.Fatal("reference panicked")
			}
			if (len(got) == 0) != (len(want) == 0) {
				t.Fatalf("valid = %v, reference says %v\nours: %s\nref:  %v", len(got) == 0, len(want) == 0, fmtViolations(got), want)
			}
			compared++
			if tc.validityOnly {
				return
			}
			if g, w := leafSet(got), refLeafSet(want); !slices.Equal(g, w) {
				t.Fatalf("leaves differ\nours: %q\nref:  %q", g, w)
			}
			// Messages: same text, except where the reference lists names
			// in map order.
			msgs := func(ls []string) []string { sort.Strings(ls); return ls }
			var gm, wm []string
			for _, v := range got {
				if v.Keyword != "additionalProperties" || !strings.Contains(v.Message, ", ") {
					gm = append(gm, v.InstancePath+" "+v.Message)
				}
			}
			_, back := refPatterns(tc.schema)
			for _, l := range want {
				if l.keyword != "additionalProperties" || !strings.Contains(l.message, ", ") {
					msg := l.message
					for t, p := range back {
						msg = strings.ReplaceAll(msg, quote(t), quote(p))
					}
					wm = append(wm, l.path+" "+msg)
				}
			}
			if g, w := msgs(gm), msgs(wm); !slices.Equal(g, w) {
				t.Errorf("messages differ\nours: %q\nref:  %q", g, w)
			}
		})
	}
	if !t.Failed() && compared < 60 {
		t.Errorf("only %d cases compared", compared)
	}
}

func leafSet(vs []Violation) []string {
	out := leaves(vs)
	sort.Strings(out)
	return out
}

func refLeafSet(ls []refLeaf) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.path+" "+l.keyword)
	}
	sort.Strings(out)
	return out
}

// TestReferenceIsTestOnly: the reference implementation never reaches
// non-test code of this package (it would bring its dependencies back into
// the wasm build).
func TestReferenceIsTestOnly(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if bytes.Contains(b, []byte("santhosh-tekuri")) {
			t.Errorf("%s names the reference implementation", name)
		}
	}
	if n == 0 {
		t.Fatal("no source files found")
	}
}

// refPatterns rewrites every pattern and patternProperties key of the
// schema document src into its syntax tree printed as RE2, and maps each print
// back to the pattern as written. A document that does not decode, or a
// pattern that does not translate, is left as it is.
func refPatterns(src string) (string, map[string]string) {
	doc, err := strictjson.Decode([]byte(src), strictjson.Limits{})
	if err != nil {
		return src, nil
	}
	back := map[string]string{}
	tr := func(p string) string {
		re, err := ecmaPattern(p)
		if err != nil {
			return p
		}
		t := re.String()
		back[t] = p
		return t
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k, e := range v {
				switch k {
				case "const", "enum", "default", "examples":
					continue // values, not schemas
				case "pattern":
					if p, ok := e.(string); ok {
						v[k] = tr(p)
						continue
					}
				case "patternProperties":
					if m, ok := e.(map[string]any); ok {
						out := make(map[string]any, len(m))
						for p, sub := range m {
							out[tr(p)] = walk(sub)
						}
						v[k] = out
						continue
					}
				}
				v[k] = walk(e)
			}
		}
		return v
	}
	b, err := json.Marshal(walk(doc))
	if err != nil {
		return src, nil
	}
	return string(b), back
}
