package strictjson

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckValue validates an already-decoded Go value tree against the same
// limits and rules as Decode (depth, string length, array length, members,
// case-variant keys) and normalises it into the types Decode returns.
//
// Accepted: map[string]any, []any, string, json.Number, bool, nil, and the
// numeric types float64, float32, int, int8, int16, int32, int64, uint,
// uint8, uint16, uint32, uint64. Numbers become json.Number with the
// shortest text that round-trips, formatted exactly as encoding/json formats
// them (which follows ECMAScript's Number::toString, except that -0 stays
// "-0"). NaN and ±Inf are KindUnsupportedValue. A nil map[string]any or nil
// []any becomes nil, because that is what it encodes to (null). Any other
// type (structs, pointers, funcs, chans, named types, maps with other key or
// value types) is KindUnsupportedValue: the check is a type switch, not
// reflection. Strings and keys that are not valid UTF-8 are KindSyntax, as
// is a json.Number that is not an RFC 8259 number.
//
// MaxBytes is enforced on the size of the compact encoding with minimal
// escaping (what JSON.stringify would produce), counted as the tree is
// walked, so a huge tree is refused as soon as the running size passes the
// bound. That size never exceeds the length of any JSON text decoding to the
// same tree, so CheckValue accepts whatever Decode accepted under the same
// Limits.
//
// Object members are visited in sorted key order, so the error reported for
// a tree with several faults is deterministic. Cyclic values are stopped by
// the depth cap. Values that share subtrees are walked once per reference;
// set MaxBytes to bound that work. Errors have Offset -1. The input is never
// mutated; the result is a new tree.
func CheckValue(v any, lim Limits) (any, error) {
	c := checker{lim: lim, maxDepth: effectiveDepth(lim.MaxDepth)}
	out, err := c.value(v, 0)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seg is one JSON pointer step; indices are kept as ints so large arrays do
// not allocate a path string per element.
type seg struct {
	key   string
	idx   int
	isIdx bool
}

type checker struct {
	lim      Limits
	maxDepth int
	size     int // running size of the compact encoding
	path     []seg
}

func (c *checker) fail(k Kind, msg string) *Error {
	var b strings.Builder
	for _, s := range c.path {
		b.WriteByte('/')
		if s.isIdx {
			b.WriteString(strconv.Itoa(s.idx))
		} else {
			appendPointerToken(&b, s.key)
		}
	}
	return &Error{Kind: k, Offset: -1, Path: b.String(), Msg: msg}
}

func (c *checker) add(n int) *Error {
	c.size += n
	if exceeds(c.size, c.lim.MaxBytes) {
		return c.fail(KindTooLarge, "encoded size exceeds MaxBytes")
	}
	return nil
}

func (c *checker) value(v any, depth int) (any, *Error) {
	switch x := v.(type) {
	case nil:
		return nil, c.add(4)
	case bool:
		if x {
			return true, c.add(4)
		}
		return false, c.add(5)
	case string:
		return x, c.str(x)
	case json.Number:
		if end, bad := scanNumber(string(x), 0); bad >= 0 || end != len(x) {
			return nil, c.fail(KindSyntax, "json.Number is not a JSON number")
		}
		return x, c.add(len(x))
	case float64:
		return c.float(x, 64)
	case float32:
		return c.float(float64(x), 32)
	case int:
		return c.num(strconv.FormatInt(int64(x), 10))
	case int8:
		return c.num(strconv.FormatInt(int64(x), 10))
	case int16:
		return c.num(strconv.FormatInt(int64(x), 10))
	case int32:
		return c.num(strconv.FormatInt(int64(x), 10))
	case int64:
		return c.num(strconv.FormatInt(x, 10))
	case uint:
		return c.num(strconv.FormatUint(uint64(x), 10))
	case uint8:
		return c.num(strconv.FormatUint(uint64(x), 10))
	case uint16:
		return c.num(strconv.FormatUint(uint64(x), 10))
	case uint32:
		return c.num(strconv.FormatUint(uint64(x), 10))
	case uint64:
		return c.num(strconv.FormatUint(x, 10))
	case map[string]any:
		if x == nil {
			return nil, c.add(4)
		}
		return c.object(x, depth+1)
	case []any:
		if x == nil {
			return nil, c.add(4)
		}
		return c.array(x, depth+1)
	default:
		return nil, c.fail(KindUnsupportedValue, "value is not a JSON value")
	}
}

func (c *checker) num(s string) (any, *Error) {
	return json.Number(s), c.add(len(s))
}

// float formats f the way encoding/json does (ES6 number formatting: 'f'
// between 1e-6 and 1e21, 'e' otherwise with a two-digit-free exponent).
func (c *checker) float(f float64, bits int) (any, *Error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, c.fail(KindUnsupportedValue, "NaN or infinite number")
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return c.num(string(b))
}

// str checks a string value (UTF-8, MaxString) and counts its encoded size.
func (c *checker) str(s string) *Error {
	if !utf8.ValidString(s) {
		return c.fail(KindSyntax, "invalid UTF-8 in string")
	}
	if exceeds(len(s), c.lim.MaxString) {
		return c.fail(KindStringTooLong, "string exceeds MaxString")
	}
	return c.add(encodedLen(s))
}

// encodedLen is the length of s as a JSON string with minimal escaping:
// quotes, '"' and '\\' and the short control escapes as two bytes, other
// control characters as \u00XX.
func encodedLen(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

func (c *checker) object(m map[string]any, depth int) (any, *Error) {
	if depth > c.maxDepth {
		return nil, c.fail(KindTooDeep, "nesting exceeds MaxDepth")
	}
	if exceeds(len(m), c.lim.MaxMembers) {
		return nil, c.fail(KindTooManyMembers, "object exceeds MaxMembers")
	}
	// "{}" plus a comma between members; keys and colons are added below.
	if err := c.add(2 + max(len(m)-1, 0)); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return nil, c.fail(KindSyntax, "invalid UTF-8 in key")
		}
		if exceeds(len(k), c.lim.MaxString) {
			return nil, c.fail(KindStringTooLong, "key exceeds MaxString")
		}
	}
	if j := firstCaseVariant(keys); j >= 0 {
		c.path = append(c.path, seg{key: keys[j]})
		return nil, c.fail(KindCaseVariantKey, "key differs from another key only by case")
	}
	out := make(map[string]any, len(m))
	for _, k := range keys {
		if err := c.add(encodedLen(k) + 1); err != nil {
			return nil, err
		}
		c.path = append(c.path, seg{key: k})
		v, err := c.value(m[k], depth)
		if err != nil {
			return nil, err
		}
		c.path = c.path[:len(c.path)-1]
		out[k] = v
	}
	return out, nil
}

func (c *checker) array(a []any, depth int) (any, *Error) {
	if depth > c.maxDepth {
		return nil, c.fail(KindTooDeep, "nesting exceeds MaxDepth")
	}
	if exceeds(len(a), c.lim.MaxArray) {
		return nil, c.fail(KindArrayTooLong, "array exceeds MaxArray")
	}
	if err := c.add(2 + max(len(a)-1, 0)); err != nil {
		return nil, err
	}
	out := make([]any, len(a))
	for i, e := range a {
		c.path = append(c.path, seg{idx: i, isIdx: true})
		v, err := c.value(e, depth)
		if err != nil {
			return nil, err
		}
		c.path = c.path[:len(c.path)-1]
		out[i] = v
	}
	return out, nil
}
