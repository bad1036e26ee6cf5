package schema

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// kind is the JSON type of an instance value.
type kind uint8

const (
	kInvalid kind = iota // not a JSON value (an unsupported Go type)
	kNull
	kBoolean
	kNumber
	kString
	kArray
	kObject
)

var kindNames = [...]string{
	kInvalid: "invalid",
	kNull:    "null",
	kBoolean: "boolean",
	kNumber:  "number",
	kString:  "string",
	kArray:   "array",
	kObject:  "object",
}

func (k kind) String() string { return kindNames[k] }

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kNull
	case bool:
		return kBoolean
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return kNumber
	case string:
		return kString
	case []any:
		return kArray
	case map[string]any:
		return kObject
	}
	return kInvalid
}

// maxEqualDepth stops equality and key building on values nested deeper
// than any decoded document can be, so a cyclic Go value cannot recurse
// without end; such values compare unequal.
const maxEqualDepth = 10000

// equal is JSON equality: numbers by exact value (1 == 1.0 == 1e0), objects
// regardless of member order.
func equal(a, b any) bool { return equalDepth(a, b, 0) }

func equalDepth(a, b any, depth int) bool {
	if depth > maxEqualDepth {
		return false
	}
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return false
	}
	switch ka {
	case kNull:
		return true
	case kBoolean:
		return a.(bool) == b.(bool)
	case kString:
		return a.(string) == b.(string)
	case kNumber:
		da, ok1 := toDecimal(a)
		db, ok2 := toDecimal(b)
		return ok1 && ok2 && da == db
	case kArray:
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalDepth(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case kObject:
		x, y := a.(map[string]any), b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalDepth(xv, yv, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// appendKey appends a canonical encoding of v: two values get the same
// encoding exactly when they are equal. uniqueItems uses it to find
// duplicates in one pass instead of comparing every pair. It reports false
// for a value that has no encoding (not JSON, or nested too deep).
func appendKey(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxEqualDepth {
		return b, false
	}
	switch kindOf(v) {
	case kNull:
		return append(b, 'n'), true
	case kBoolean:
		if v.(bool) {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case kNumber:
		d, ok := toDecimal(v)
		if !ok {
			return b, false
		}
		b = append(b, 'd')
		return append(append(b, d.text()...), ';'), true
	case kString:
		return appendKeyString(b, v.(string)), true
	case kArray:
		b = append(b, '[')
		for _, e := range v.([]any) {
			var ok bool
			if b, ok = appendKey(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case kObject:
		m := v.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = appendKeyString(b, k)
			var ok bool
			if b, ok = appendKey(b, m[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendKeyString is length-prefixed so no string content can imitate the
// encoding's structure.
func appendKeyString(b []byte, s string) []byte {
	b = append(b, 's')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// quote renders a name the way the reference messages do: Go-quoted, but in
// single quotes and with double quotes left bare ('a"b', 'it\'s').
func quote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// escapeToken renders one RFC 6901 reference token.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}
