package schema

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"pling.dev/agent/surface/internal/strictjson"
)

// Dialects a document may name in $schema. Every document is read with the
// 2020-12 meaning of each keyword; the older names only change which
// keywords exist (see the package documentation).
const (
	draft7    = 7
	draft2019 = 2019
	draft2020 = 2020
)

var dialects = map[string]int{
	"https://json-schema.org/draft/2020-12/schema": draft2020,
	"https://json-schema.org/draft/2019-09/schema": draft2019,
	"https://json-schema.org/draft-07/schema":      draft7,
}

// refused are keywords whose assertions are not implemented. Ignoring them
// would accept input the author meant to refuse, so a schema that uses
// them does not compile.
var refused = []string{
	"$anchor",
	"$dynamicAnchor",
	"$dynamicRef",
	"$recursiveAnchor",
	"$recursiveRef",
	"$vocabulary",
	"dependencies",
	"unevaluatedItems",
	"unevaluatedProperties",
}

// Compile parses a schema document and compiles it. Any construct outside
// the supported subset makes it fail with a *CompileError (or the decoder's
// error when raw is not acceptable JSON).
func Compile(raw []byte) (*Schema, error) {
	doc, err := strictjson.Decode(raw, strictjson.Limits{})
	if err != nil {
		return nil, err
	}
	c := &compiler{doc: doc, nodes: make(map[string]*node), draft: draft2020}
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m["$schema"]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, c.reject("", "$schema", "must be a string")
			}
			if c.draft, ok = dialects[normaliseDialect(s)]; !ok {
				return nil, c.reject("", "$schema", "names an unsupported dialect "+strconv.Quote(s)+" (2020-12, 2019-09 and draft-07 are supported)")
			}
		}
	}
	root, err := c.compile("", doc)
	if err != nil {
		return nil, err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

// normaliseDialect reads a $schema URI the way common validators do:
// http and https alike, an empty fragment ignored.
func normaliseDialect(s string) string {
	if rest, ok := strings.CutPrefix(s, "http://"); ok {
		s = "https://" + rest
	}
	if i := strings.IndexByte(s, '#'); i >= 0 && (s[i:] == "#" || s[i:] == "#/") {
		s = s[:i]
	}
	return s
}

type compiler struct {
	doc   any
	draft int
	// nodes holds every compiled schema by its JSON pointer, so a schema
	// reached twice (by nesting and by $ref) is compiled once and a $ref
	// cycle ends at the node being compiled.
	nodes map[string]*node
	order []*node // nodes in compile order, for a deterministic cycle check
}

func (c *compiler) reject(ptr, keyword, reason string) *CompileError {
	loc := "#" + ptr
	if keyword != "" {
		loc += "/" + escapeToken(keyword)
	}
	return &CompileError{Location: loc, Reason: keyword + " " + reason}
}

// compile compiles the schema v found at JSON pointer ptr.
func (c *compiler) compile(ptr string, v any) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	n := &node{loc: "#" + ptr}
	c.nodes[ptr] = n
	c.order = append(c.order, n)
	switch v := v.(type) {
	case bool:
		n.isBool, n.allow = true, v
		return n, nil
	case map[string]any:
		n.minProps, n.maxProps, n.minItems, n.maxItems = -1, -1, -1, -1
		n.minLen, n.maxLen, n.minContains, n.maxContains = -1, -1, 1, -1
		if err := c.object(n, ptr, v); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, &CompileError{Location: n.loc, Reason: "a schema must be an object or a boolean"}
}

func (c *compiler) sub(ptr, keyword string, v any) (*node, error) {
	return c.compile(ptr+"/"+escapeToken(keyword), v)
}

func (c *compiler) object(n *node, ptr string, m map[string]any) error {
	for _, k := range refused {
		if _, ok := m[k]; ok {
			return c.reject(ptr, k, "is not supported")
		}
	}
	if v, ok := m["$id"]; ok {
		if ptr != "" {
			return c.reject(ptr, "$id", "is only supported at the document root")
		}
		// A root $id changes nothing for "#..." references, which are all
		// this package resolves, so it is read and ignored.
		s, ok := v.(string)
		if !ok {
			return c.reject(ptr, "$id", "must be a string")
		}
		if i := strings.IndexByte(s, '#'); i >= 0 && i != len(s)-1 {
			return c.reject(ptr, "$id", "must not have a fragment")
		}
	}
	if _, ok := m["$schema"]; ok && ptr != "" {
		return c.reject(ptr, "$schema", "is only supported at the document root")
	}

	// Definitions are compiled whether or not anything refers to them, so
	// a broken one fails now rather than when a reference to it is added.
	for _, kw := range [...]string{"$defs", "definitions"} {
		if v, ok := m[kw]; ok {
			defs, ok := v.(map[string]any)
			if !ok {
				return c.reject(ptr, kw, "must be an object")
			}
			for _, name := range sortedKeys(defs) {
				if _, err := c.sub(ptr+"/"+escapeToken(kw), name, defs[name]); err != nil {
					return err
				}
			}
		}
	}

	if v, ok := m["$ref"]; ok {
		s, ok := v.(string)
		if !ok {
			return c.reject(ptr, "$ref", "must be a string")
		}
		target, err := c.ref(ptr, s)
		if err != nil {
			return err
		}
		n.ref = target
		n.inPlace = append(n.inPlace, target)
		if c.draft == draft7 {
			// draft-07 ignores every keyword next to $ref.
			return nil
		}
	}

	if err := c.annotations(n, ptr, m); err != nil {
		return err
	}
	if err := c.assertions(n, ptr, m); err != nil {
		return err
	}
	return c.applicators(n, ptr, m)
}

// annotations checks the shape of the annotation keywords (a schema whose
// title is a number is malformed) and sets up the format and content
// assertions.
func (c *compiler) annotations(n *node, ptr string, m map[string]any) error {
	for _, kw := range [...]string{"title", "description", "$comment", "format", "contentEncoding", "contentMediaType"} {
		if v, ok := m[kw]; ok {
			if _, ok := v.(string); !ok {
				return c.reject(ptr, kw, "must be a string")
			}
		}
	}
	for _, kw := range [...]string{"deprecated", "readOnly", "writeOnly"} {
		if v, ok := m[kw]; ok {
			if _, ok := v.(bool); !ok {
				return c.reject(ptr, kw, "must be a boolean")
			}
		}
	}
	if v, ok := m["examples"]; ok {
		if _, ok := v.([]any); !ok {
			return c.reject(ptr, "examples", "must be an array")
		}
	}
	if f, ok := m["format"].(string); ok {
		// Asserted in every dialect, as the validator the kernel used
		// before did for documents without $schema; unknown names are
		// annotations.
		n.format, n.formatName = formats[f], f
	}
	if c.draft == draft7 {
		if _, ok := m["contentMediaType"]; ok {
			if _, ok := m["contentSchema"]; ok {
				// The previous validator applied it to the decoded
				// content here, which is not implemented.
				return c.reject(ptr, "contentSchema", "next to contentMediaType is not supported under draft-07")
			}
		}
		n.content = newContentCheck(m)
	}
	if v, ok := m["contentSchema"]; ok {
		// Never applied (content is not decoded), but it must be a schema.
		if _, err := c.sub(ptr, "contentSchema", v); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) assertions(n *node, ptr string, m map[string]any) error {
	if v, ok := m["type"]; ok {
		if err := c.types(n, ptr, v); err != nil {
			return err
		}
	}
	if v, ok := m["enum"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return c.reject(ptr, "enum", "must be an array")
		}
		if len(arr) == 0 {
			// Means "nothing is valid", which validators disagree on; an
			// author meaning that can write false.
			return c.reject(ptr, "enum", "must not be empty")
		}
		n.enum = arr
		n.enumMsg = enumMessage(arr)
	}
	if v, ok := m["const"]; ok {
		n.hasConst, n.constV = true, v
		if k := kindOf(v); k == kObject || k == kArray {
			n.constMsg = "const failed"
		} else {
			n.constMsg = "value must be " + goSyntax(v)
		}
	}

	var err error
	counts := []struct {
		kw  string
		dst *int
	}{
		{"minProperties", &n.minProps}, {"maxProperties", &n.maxProps},
		{"minItems", &n.minItems}, {"maxItems", &n.maxItems},
		{"minLength", &n.minLen}, {"maxLength", &n.maxLen},
		{"minContains", &n.minContains}, {"maxContains", &n.maxContains},
	}
	for _, f := range counts {
		if (f.kw == "minContains" || f.kw == "maxContains") && c.draft == draft7 {
			continue // not a draft-07 keyword
		}
		if v, ok := m[f.kw]; ok {
			if *f.dst, err = c.count(ptr, f.kw, v); err != nil {
				return err
			}
		}
	}

	if v, ok := m["required"]; ok {
		if n.required, err = c.stringSet(ptr, "required", v); err != nil {
			return err
		}
	}
	if v, ok := m["uniqueItems"]; ok {
		b, ok := v.(bool)
		if !ok {
			return c.reject(ptr, "uniqueItems", "must be a boolean")
		}
		n.unique = b
	}
	if v, ok := m["pattern"]; ok {
		n.patternSrc, _ = v.(string)
		if n.pattern, err = c.regexp(ptr, "pattern", v); err != nil {
			return err
		}
	}
	bounds := []struct {
		kw  string
		dst **bound
	}{
		{"minimum", &n.minimum}, {"maximum", &n.maximum},
		{"exclusiveMinimum", &n.exclMin}, {"exclusiveMaximum", &n.exclMax},
		{"multipleOf", &n.multipleOf},
	}
	for _, f := range bounds {
		if v, ok := m[f.kw]; ok {
			if *f.dst, err = c.number(ptr, f.kw, v); err != nil {
				return err
			}
		}
	}
	if n.multipleOf != nil && n.multipleOf.d.sign() <= 0 {
		return c.reject(ptr, "multipleOf", "must be greater than 0")
	}
	if v, ok := m["dependentRequired"]; ok && c.draft != draft7 {
		deps, ok := v.(map[string]any)
		if !ok {
			return c.reject(ptr, "dependentRequired", "must be an object")
		}
		for _, name := range sortedKeys(deps) {
			req, err := c.stringSet(ptr+"/dependentRequired", name, deps[name])
			if err != nil {
				return err
			}
			n.depRequired = append(n.depRequired, depRequired{name: name, required: req})
		}
	}
	return nil
}

func (c *compiler) applicators(n *node, ptr string, m map[string]any) error {
	var err error
	one := func(kw string, dst **node, inPlace bool) error {
		v, ok := m[kw]
		if !ok {
			return nil
		}
		if *dst, err = c.sub(ptr, kw, v); err != nil {
			return err
		}
		if inPlace {
			n.inPlace = append(n.inPlace, *dst)
		}
		return nil
	}
	list := func(kw string, dst *[]*node, inPlace bool) error {
		v, ok := m[kw]
		if !ok {
			return nil
		}
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return c.reject(ptr, kw, "must be a non-empty array of schemas")
		}
		for i, e := range arr {
			s, err := c.compile(ptr+"/"+kw+"/"+strconv.Itoa(i), e)
			if err != nil {
				return err
			}
			*dst = append(*dst, s)
			if inPlace {
				n.inPlace = append(n.inPlace, s)
			}
		}
		return nil
	}
	// The order only decides which error a doubly broken schema reports.
	for _, f := range []func() error{
		func() error { return list("allOf", &n.allOf, true) },
		func() error { return list("anyOf", &n.anyOf, true) },
		func() error { return list("oneOf", &n.oneOf, true) },
		func() error { return one("not", &n.not, true) },
		func() error { return one("if", &n.ifN, true) },
		func() error { return one("then", &n.thenN, true) },
		func() error { return one("else", &n.elseN, true) },
		func() error { return one("propertyNames", &n.propertyNames, false) },
		func() error { return one("contains", &n.contains, false) },
	} {
		if err := f(); err != nil {
			return err
		}
	}

	if v, ok := m["items"]; ok {
		if _, isArr := v.([]any); isArr {
			return c.reject(ptr, "items", "must be a schema (the array form is not supported; use prefixItems)")
		}
		if n.items, err = c.sub(ptr, "items", v); err != nil {
			return err
		}
	}
	if c.draft == draft2020 {
		if err := list("prefixItems", &n.prefix, false); err != nil {
			return err
		}
	}

	if v, ok := m["properties"]; ok {
		props, ok := v.(map[string]any)
		if !ok {
			return c.reject(ptr, "properties", "must be an object")
		}
		n.props = make(map[string]*node, len(props))
		n.propOrder = sortedKeys(props)
		for _, name := range n.propOrder {
			if n.props[name], err = c.sub(ptr+"/properties", name, props[name]); err != nil {
				return err
			}
		}
	}
	if v, ok := m["patternProperties"]; ok {
		pats, ok := v.(map[string]any)
		if !ok {
			return c.reject(ptr, "patternProperties", "must be an object")
		}
		for _, p := range sortedKeys(pats) {
			re, err := c.regexp(ptr+"/patternProperties", p, p)
			if err != nil {
				return err
			}
			s, err := c.sub(ptr+"/patternProperties", p, pats[p])
			if err != nil {
				return err
			}
			n.patterns = append(n.patterns, patternProp{re: re, node: s})
		}
	}
	if v, ok := m["additionalProperties"]; ok {
		if b, ok := v.(bool); ok {
			// false is reported once for all extra names, as the common
			// validators do; true asserts nothing.
			n.addlFalse = !b
			if _, err := c.sub(ptr, "additionalProperties", v); err != nil {
				return err
			}
		} else if n.addl, err = c.sub(ptr, "additionalProperties", v); err != nil {
			return err
		}
	}
	if v, ok := m["dependentSchemas"]; ok && c.draft != draft7 {
		deps, ok := v.(map[string]any)
		if !ok {
			return c.reject(ptr, "dependentSchemas", "must be an object")
		}
		for _, name := range sortedKeys(deps) {
			s, err := c.sub(ptr+"/dependentSchemas", name, deps[name])
			if err != nil {
				return err
			}
			n.depSchemas = append(n.depSchemas, depSchema{name: name, node: s})
			n.inPlace = append(n.inPlace, s)
		}
	}
	return nil
}

var typeNames = map[string]uint8{
	"null":    1 << kNull,
	"boolean": 1 << kBoolean,
	"object":  1 << kObject,
	"array":   1 << kArray,
	"number":  1 << kNumber,
	"string":  1 << kString,
	"integer": typeInteger,
}

func (c *compiler) types(n *node, ptr string, v any) error {
	var names []string
	switch v := v.(type) {
	case string:
		names = []string{v}
	case []any:
		if len(v) == 0 {
			return c.reject(ptr, "type", "must not be an empty array")
		}
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return c.reject(ptr, "type", "must be a type name or an array of type names")
			}
			names = append(names, s)
		}
	default:
		return c.reject(ptr, "type", "must be a type name or an array of type names")
	}
	for _, s := range names {
		bit, ok := typeNames[s]
		if !ok {
			return c.reject(ptr, "type", "names an unknown type "+strconv.Quote(s))
		}
		if n.typeMask&bit != 0 {
			return c.reject(ptr, "type", "names "+strconv.Quote(s)+" twice")
		}
		n.typeMask |= bit
	}
	n.types = names
	return nil
}

// count reads a non-negative integer (1.0 counts as 1, as JSON Schema says).
func (c *compiler) count(ptr, kw string, v any) (int, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, c.reject(ptr, kw, "must be a non-negative integer")
	}
	d, ok := parseDecimal(string(num))
	if !ok || d.neg || !d.isInt() {
		return 0, c.reject(ptr, kw, "must be a non-negative integer")
	}
	return d.toInt(), nil
}

func (c *compiler) number(ptr, kw string, v any) (*bound, error) {
	num, ok := v.(json.Number)
	if !ok {
		return nil, c.reject(ptr, kw, "must be a number")
	}
	d, ok := parseDecimal(string(num))
	if !ok {
		return nil, c.reject(ptr, kw, "must be a number")
	}
	f, _ := strconv.ParseFloat(string(num), 64) // ±Inf past float64's range, as messages show it
	return &bound{d: d, f: f}, nil
}

// stringSet reads an array of distinct strings (required, dependentRequired).
func (c *compiler) stringSet(ptr, kw string, v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, c.reject(ptr, kw, "must be an array of strings")
	}
	out := make([]string, 0, len(arr))
	seen := make(map[string]bool, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, c.reject(ptr, kw, "must be an array of strings")
		}
		if seen[s] {
			return nil, c.reject(ptr, kw, "names "+strconv.Quote(s)+" twice")
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

func (c *compiler) regexp(ptr, kw string, v any) (*pattern, error) {
	s, ok := v.(string)
	if !ok {
		return nil, c.reject(ptr, kw, "must be a string")
	}
	// JSON Schema patterns are ECMA-262 (see ecmaregex.go).
	re, err := compilePattern(s)
	if err != nil {
		return nil, c.reject(ptr, kw, "is not an ECMA-262 pattern this validator can apply: "+err.Error())
	}
	return re, nil
}

// ref resolves a $ref. Only a JSON pointer into this document is accepted:
// the kernel has no network or file system, and anchors and embedded
// resources are not supported.
func (c *compiler) ref(ptr, ref string) (*node, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" is not supported (only \"#\" and \"#/...\" pointers into this document are)")
	}
	if frag == "" {
		return c.compile("", c.doc)
	}
	if frag[0] != '/' {
		return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" is not supported (anchors are not)")
	}
	if frag == "/" {
		// RFC 6901 says the member named "", some validators say the root.
		return nil, c.reject(ptr, "$ref", "\"#/\" is ambiguous; use \"#\" for the root")
	}
	if strings.Contains(strings.ToLower(frag), "%7e") || strings.Contains(strings.ToLower(frag), "%2f") {
		// Validators disagree on whether these decode before or after the
		// pointer's own ~0 and ~1 escapes.
		return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" percent-encodes '~' or '/', which is ambiguous")
	}
	dec, ok := percentDecode(frag)
	if !ok {
		return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" has an invalid percent-encoding")
	}
	cur := c.doc
	var canon strings.Builder
	for _, tok := range strings.Split(dec[1:], "/") {
		tok, ok := unescapeToken(tok)
		if !ok {
			return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" has an invalid ~ escape")
		}
		switch v := cur.(type) {
		case map[string]any:
			cur, ok = v[tok]
		case []any:
			var i int
			i, ok = arrayIndex(tok, len(v))
			if ok {
				cur = v[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, c.reject(ptr, "$ref", strconv.Quote(ref)+" does not point into this document")
		}
		canon.WriteByte('/')
		canon.WriteString(escapeToken(tok))
	}
	return c.compile(canon.String(), cur)
}

func arrayIndex(tok string, n int) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || len(tok) > 9 {
		return 0, false
	}
	i := 0
	for j := 0; j < len(tok); j++ {
		if !isDigit(tok[j]) {
			return 0, false
		}
		i = i*10 + int(tok[j]-'0')
	}
	return i, i < n
}

func unescapeToken(s string) (string, bool) {
	if !strings.Contains(s, "~") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1') {
			return "", false
		}
		if s[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), true
}

func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// checkCycles refuses a cycle of subschemas applied in place ($ref, allOf,
// not, if, dependentSchemas, ...): evaluating it would revisit the same
// value forever. Cycles through properties or items are fine, because each
// turn descends into a smaller part of the instance.
func (c *compiler) checkCycles() error {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[*node]uint8, len(c.order))
	var visit func(n *node) *node
	visit = func(n *node) *node {
		switch state[n] {
		case active:
			return n
		case done:
			return nil
		}
		state[n] = active
		for _, s := range n.inPlace {
			if bad := visit(s); bad != nil {
				return bad
			}
		}
		state[n] = done
		return nil
	}
	for _, n := range c.order {
		if bad := visit(n); bad != nil {
			return &CompileError{Location: bad.loc, Reason: "reference cycle that never descends into the instance"}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func enumMessage(values []any) string {
	for _, v := range values {
		if k := kindOf(v); k == kObject || k == kArray {
			return "enum failed"
		}
	}
	if len(values) == 1 {
		return "value must be " + goSyntax(values[0])
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = goSyntax(v)
	}
	return "value must be one of " + strings.Join(parts, ", ")
}
