package schema

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds on one validation. Both end it with a violation instead of running
// on: a hostile or accidental schema must not hang the page or overflow the
// stack. Neither is reached by any sensible schema and instance (the kernel
// caps request nesting at 32 by default).
const (
	// maxDepth is the deepest chain of nested subschema applications,
	// in place ($ref, allOf, ...) or descending into the instance.
	maxDepth = 256
	// maxSteps is how many schema objects one pass may evaluate, which
	// bounds the work of anyOf/oneOf fan-out through shared definitions.
	maxSteps = 1 << 20
)

// Validate checks instance against s and returns its leaf failures, nil when
// it is valid. A nil Schema accepts everything.
//
// The instance is a decoded JSON value: nil, bool, string, json.Number,
// float64 (or another Go integer or float type), []any and map[string]any.
// Any other Go type is a violation.
func (s *Schema) Validate(instance any) []Violation {
	if s == nil {
		return nil
	}
	// Valid input is the common case: decide it without building messages
	// and stop at the first failure; explain only what fails.
	if s.valid(instance) {
		return nil
	}
	v := &validator{}
	var out []Violation
	ok := v.eval(s.root, instance, "", &out)
	if v.stopped != nil {
		out = append(out, *v.stopped)
	} else if ok || len(out) == 0 {
		// Unreachable while both passes agree; never answer "valid" here.
		out = append(out, Violation{Keyword: "false", Message: "not allowed"})
	}
	return out
}

// valid answers only valid or invalid, stopping at the first failure.
func (s *Schema) valid(instance any) bool {
	if s == nil {
		return true
	}
	v := &validator{}
	return v.eval(s.root, instance, "", nil) && v.stopped == nil
}

type validator struct {
	path    []pathToken
	depth   int
	steps   int
	stopped *Violation // set when a bound ends the validation
}

type pathToken struct {
	key   string
	index int
	isKey bool
}

func (v *validator) pointer() string {
	if len(v.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range v.path {
		b.WriteByte('/')
		if t.isKey {
			b.WriteString(escapeToken(t.key))
		} else {
			b.WriteString(strconv.Itoa(t.index))
		}
	}
	return b.String()
}

func (v *validator) report(out *[]Violation, keyword, msg string) {
	*out = append(*out, Violation{InstancePath: v.pointer(), Keyword: keyword, Message: msg})
}

func (v *validator) stop(keyword, msg string) {
	if v.stopped == nil {
		v.stopped = &Violation{InstancePath: v.pointer(), Keyword: keyword, Message: msg}
	}
}

// eval applies n to inst. via is the keyword that applied n, named when n is
// a false schema. With out nil it only decides validity and returns at the
// first failure; otherwise it appends every leaf failure to out. Either
// way the result is true exactly when nothing failed.
func (v *validator) eval(n *node, inst any, via string, out *[]Violation) bool {
	if v.stopped != nil {
		return false
	}
	if n.isBool {
		if !n.allow && out != nil {
			if via == "" {
				via = "false"
			}
			v.report(out, via, "not allowed")
		}
		return n.allow
	}
	v.steps++
	if v.steps > maxSteps {
		v.stop(via, "schema evaluation exceeds its work limit")
		return false
	}
	if v.depth >= maxDepth {
		v.stop(via, "schema evaluation nests deeper than "+strconv.Itoa(maxDepth)+" levels")
		return false
	}
	v.depth++
	ok := v.evalObject(n, inst, out)
	v.depth--
	return ok
}

func (v *validator) child(n *node, inst any, via string, key string, index int, isKey bool, out *[]Violation) bool {
	v.path = append(v.path, pathToken{key: key, index: index, isKey: isKey})
	ok := v.eval(n, inst, via, out)
	v.path = v.path[:len(v.path)-1]
	return ok
}

// evalObject applies the keywords of a schema object, in the order the
// common validators report them.
func (v *validator) evalObject(n *node, inst any, out *[]Violation) bool {
	k := kindOf(inst)
	if k == kInvalid {
		if out != nil {
			v.report(out, "type", "unsupported value of Go type "+typeName(inst))
		}
		return false
	}
	var num decimal
	numState := 0 // 0 unread, 1 read, 2 not a valid number
	readNum := func() bool {
		if numState == 0 {
			numState = 2
			if d, ok := toDecimal(inst); ok {
				num, numState = d, 1
			}
		}
		return numState == 1
	}

	if n.typeMask != 0 {
		match := n.typeMask&(1<<k) != 0
		if !match && k == kNumber && n.typeMask&typeInteger != 0 {
			match = readNum() && num.isInt()
		}
		if !match {
			// Like the common validators, a value of the wrong type gets
			// this one message and no other keyword is checked.
			if out != nil {
				v.report(out, "type", "expected "+strings.Join(n.types, " or ")+", but got "+k.String())
			}
			return false
		}
	}

	valid := true
	// fail records one failure; in decide-only mode the caller returns
	// false at once.
	fail := func(keyword string, msg func() string) {
		valid = false
		if out != nil {
			v.report(out, keyword, msg())
		}
	}

	if n.hasConst && !equal(inst, n.constV) {
		if out == nil {
			return false
		}
		fail("const", func() string { return n.constMsg })
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if equal(inst, e) {
				found = true
				break
			}
		}
		if !found {
			if out == nil {
				return false
			}
			fail("enum", func() string { return n.enumMsg })
		}
	}

	switch k {
	case kObject:
		if !v.object(n, inst.(map[string]any), out) {
			if out == nil {
				return false
			}
			valid = false
		}
	case kArray:
		if !v.array(n, inst.([]any), out) {
			if out == nil {
				return false
			}
			valid = false
		}
	case kString:
		s := inst.(string)
		if n.format != nil && !n.format(s) {
			if out == nil {
				return false
			}
			fail("format", func() string { return quote(s) + " is not valid " + quote(n.formatName) })
		}
		if n.minLen >= 0 || n.maxLen >= 0 {
			// Code points, not bytes or UTF-16 units, as JSON Schema says.
			length := utf8.RuneCountInString(s)
			if n.minLen >= 0 && length < n.minLen {
				if out == nil {
					return false
				}
				fail("minLength", func() string {
					return "length must be >= " + strconv.Itoa(n.minLen) + ", but got " + strconv.Itoa(length)
				})
			}
			if n.maxLen >= 0 && length > n.maxLen {
				if out == nil {
					return false
				}
				fail("maxLength", func() string {
					return "length must be <= " + strconv.Itoa(n.maxLen) + ", but got " + strconv.Itoa(length)
				})
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(s) {
			if out == nil {
				return false
			}
			fail("pattern", func() string { return "does not match pattern " + quote(n.patternSrc) })
		}
		if n.content != nil {
			if kw, msg := n.content.check(s); kw != "" {
				if out == nil {
					return false
				}
				fail(kw, func() string { return msg })
			}
		}
	case kNumber:
		if n.minimum != nil || n.maximum != nil || n.exclMin != nil || n.exclMax != nil || n.multipleOf != nil {
			if !readNum() {
				if out != nil {
					v.report(out, "type", numText(inst)+" is not a valid number")
				}
				return false
			}
			checks := [...]struct {
				b       *bound
				keyword string
				bad     func(c int) bool
				op      string
			}{
				{n.minimum, "minimum", func(c int) bool { return c < 0 }, ">="},
				{n.exclMin, "exclusiveMinimum", func(c int) bool { return c <= 0 }, ">"},
				{n.maximum, "maximum", func(c int) bool { return c > 0 }, "<="},
				{n.exclMax, "exclusiveMaximum", func(c int) bool { return c >= 0 }, "<"},
			}
			for _, c := range checks {
				if c.b != nil && c.bad(cmpDecimal(num, c.b.d)) {
					if out == nil {
						return false
					}
					fail(c.keyword, func() string { return "must be " + c.op + " " + floatV(c.b.f, 64) + " but found " + numText(inst) })
				}
			}
			if n.multipleOf != nil && !isMultiple(num, n.multipleOf.d) {
				if out == nil {
					return false
				}
				fail("multipleOf", func() string { return numText(inst) + " not multipleOf " + floatV(n.multipleOf.f, 64) })
			}
		}
	}

	// In-place applicators: the same value against further schemas.
	if n.ref != nil && !v.eval(n.ref, inst, "$ref", out) {
		if out == nil {
			return false
		}
		valid = false
	}
	if n.not != nil && v.eval(n.not, inst, "not", nil) {
		if out == nil {
			return false
		}
		fail("not", func() string { return "not failed" })
	}
	for _, s := range n.allOf {
		if !v.eval(s, inst, "allOf", out) {
			if out == nil {
				return false
			}
			valid = false
		}
	}
	if len(n.anyOf) > 0 && !v.anyOf(n, inst, out) {
		if out == nil {
			return false
		}
		valid = false
	}
	if len(n.oneOf) > 0 && !v.oneOf(n, inst, out) {
		if out == nil {
			return false
		}
		valid = false
	}
	if n.ifN != nil && (n.thenN != nil || n.elseN != nil) {
		branch, via := n.thenN, "then"
		if !v.eval(n.ifN, inst, "if", nil) {
			branch, via = n.elseN, "else"
		}
		if branch != nil && !v.eval(branch, inst, via, out) {
			if out == nil {
				return false
			}
			valid = false
		}
	}
	return valid && v.stopped == nil
}

func (v *validator) anyOf(n *node, inst any, out *[]Violation) bool {
	if out == nil {
		for _, s := range n.anyOf {
			if v.eval(s, inst, "anyOf", nil) {
				return true
			}
		}
		return false
	}
	// Every branch failed: all their failures are the explanation.
	var causes []Violation
	for _, s := range n.anyOf {
		mark := len(causes)
		if v.eval(s, inst, "anyOf", &causes) {
			causes = causes[:mark]
			return true
		}
	}
	v.appendCauses(out, causes, "anyOf", "anyOf failed")
	return false
}

func (v *validator) oneOf(n *node, inst any, out *[]Violation) bool {
	matched := -1
	var causes []Violation
	for i, s := range n.oneOf {
		var ok bool
		if out == nil {
			ok = v.eval(s, inst, "oneOf", nil)
		} else {
			mark := len(causes)
			if ok = v.eval(s, inst, "oneOf", &causes); ok {
				causes = causes[:mark]
			}
		}
		if !ok {
			continue
		}
		if matched >= 0 {
			if out != nil {
				v.report(out, "oneOf", "valid against schemas at indexes "+strconv.Itoa(matched)+" and "+strconv.Itoa(i))
			}
			return false
		}
		matched = i
	}
	if matched >= 0 {
		return true
	}
	if out != nil {
		v.appendCauses(out, causes, "oneOf", "oneOf failed")
	}
	return false
}

// appendCauses reports the failures of sub-evaluations, or a failure of the
// keyword itself when they left none (a bound stopped them).
func (v *validator) appendCauses(out *[]Violation, causes []Violation, keyword, msg string) {
	if len(causes) == 0 {
		v.report(out, keyword, msg)
		return
	}
	*out = append(*out, causes...)
}

func (v *validator) object(n *node, obj map[string]any, out *[]Violation) bool {
	valid := true
	if n.minProps >= 0 && len(obj) < n.minProps {
		if out == nil {
			return false
		}
		valid = false
		v.report(out, "minProperties", "minimum "+strconv.Itoa(n.minProps)+" properties allowed, but found "+strconv.Itoa(len(obj))+" properties")
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		if out == nil {
			return false
		}
		valid = false
		v.report(out, "maxProperties", "maximum "+strconv.Itoa(n.maxProps)+" properties allowed, but found "+strconv.Itoa(len(obj))+" properties")
	}
	if len(n.required) > 0 {
		var missing []string
		for _, name := range n.required {
			if _, ok := obj[name]; !ok {
				if out == nil {
					return false
				}
				missing = append(missing, quote(name))
			}
		}
		if len(missing) > 0 {
			valid = false
			v.report(out, "required", "missing properties: "+strings.Join(missing, ", "))
		}
	}
	for _, name := range n.propOrder {
		if val, ok := obj[name]; ok && !v.child(n.props[name], val, "properties", name, 0, true, out) {
			if out == nil {
				return false
			}
			valid = false
		}
	}

	var keys []string
	if n.propertyNames != nil || len(n.patterns) > 0 || n.addl != nil || n.addlFalse {
		// Sorted so reports come out in the same order every time.
		keys = make([]string, 0, len(obj))
		for name := range obj {
			keys = append(keys, name)
		}
		sort.Strings(keys)
	}
	if n.propertyNames != nil {
		for _, name := range keys {
			if !v.child(n.propertyNames, name, "propertyNames", name, 0, true, out) {
				if out == nil {
					return false
				}
				valid = false
			}
		}
	}
	for _, p := range n.patterns {
		for _, name := range keys {
			if p.re.MatchString(name) && !v.child(p.node, obj[name], "patternProperties", name, 0, true, out) {
				if out == nil {
					return false
				}
				valid = false
			}
		}
	}
	if n.addl != nil || n.addlFalse {
		var extra []string
		for _, name := range keys {
			if !n.isAdditional(name) {
				continue
			}
			if n.addlFalse {
				if out == nil {
					return false
				}
				extra = append(extra, quote(name))
			} else if !v.child(n.addl, obj[name], "additionalProperties", name, 0, true, out) {
				if out == nil {
					return false
				}
				valid = false
			}
		}
		if len(extra) > 0 {
			valid = false
			v.report(out, "additionalProperties", "additionalProperties "+strings.Join(extra, ", ")+" not allowed")
		}
	}
	for _, d := range n.depRequired {
		if _, ok := obj[d.name]; !ok {
			continue
		}
		for _, name := range d.required {
			if _, ok := obj[name]; !ok {
				if out == nil {
					return false
				}
				valid = false
				v.report(out, "dependentRequired", "property "+quote(name)+" is required, if "+quote(d.name)+" property exists")
			}
		}
	}
	for _, d := range n.depSchemas {
		if _, ok := obj[d.name]; ok && !v.eval(d.node, obj, "dependentSchemas", out) {
			if out == nil {
				return false
			}
			valid = false
		}
	}
	return valid
}

// isAdditional reports whether name is covered by neither properties nor
// patternProperties.
func (n *node) isAdditional(name string) bool {
	if _, ok := n.props[name]; ok {
		return false
	}
	for _, p := range n.patterns {
		if p.re.MatchString(name) {
			return false
		}
	}
	return true
}

func (v *validator) array(n *node, arr []any, out *[]Violation) bool {
	valid := true
	if n.minItems >= 0 && len(arr) < n.minItems {
		if out == nil {
			return false
		}
		valid = false
		v.report(out, "minItems", "minimum "+strconv.Itoa(n.minItems)+" items required, but found "+strconv.Itoa(len(arr))+" items")
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		if out == nil {
			return false
		}
		valid = false
		v.report(out, "maxItems", "maximum "+strconv.Itoa(n.maxItems)+" items required, but found "+strconv.Itoa(len(arr))+" items")
	}
	if n.unique {
		if j, i, dup := duplicate(arr); dup {
			if out == nil {
				return false
			}
			valid = false
			v.report(out, "uniqueItems", "items at index "+strconv.Itoa(j)+" and "+strconv.Itoa(i)+" are equal")
		}
	}
	for i, item := range arr {
		s, via := n.items, "items"
		if i < len(n.prefix) {
			s, via = n.prefix[i], "prefixItems"
		}
		if s == nil {
			break
		}
		if !v.child(s, item, via, "", i, false, out) {
			if out == nil {
				return false
			}
			valid = false
		}
	}
	if n.contains != nil {
		matched := 0
		var causes []Violation
		for i, item := range arr {
			var sink *[]Violation
			if out != nil {
				sink = &causes
			}
			if v.child(n.contains, item, "contains", "", i, false, sink) {
				matched++
				if out == nil && n.maxContains < 0 && matched >= n.minContains {
					break // decided: nothing further can fail contains
				}
			}
		}
		if matched < n.minContains {
			if out == nil {
				return false
			}
			valid = false
			// Like the common validators: the items' own failures explain
			// a shortfall, the count only when there are none.
			if len(causes) > 0 {
				*out = append(*out, causes...)
			} else {
				v.report(out, "minContains", "valid must be >= "+strconv.Itoa(n.minContains)+", but got "+strconv.Itoa(matched))
			}
		}
		if n.maxContains >= 0 && matched > n.maxContains {
			if out == nil {
				return false
			}
			valid = false
			v.report(out, "maxContains", "valid must be <= "+strconv.Itoa(n.maxContains)+", but got "+strconv.Itoa(matched))
		}
	}
	return valid
}

// duplicate finds the first item equal to an earlier one: (earlier, later).
func duplicate(arr []any) (int, int, bool) {
	if len(arr) < 2 {
		return 0, 0, false
	}
	if len(arr) <= 8 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if equal(arr[i], arr[j]) {
					return j, i, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(arr))
	var buf []byte
	for i, item := range arr {
		var ok bool
		buf, ok = appendKey(buf[:0], item, 0)
		if !ok {
			continue // not a JSON value: equal to nothing
		}
		if j, dup := seen[string(buf)]; dup {
			return j, i, true
		}
		seen[string(buf)] = i
	}
	return 0, 0, false
}
