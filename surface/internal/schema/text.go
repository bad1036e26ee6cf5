package schema

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
)

// The validator's and the compiler's messages were worded with fmt. fmt
// works by reflection, and linked into the js/wasm build it costs about
// 60 KB of the compressed binary; these helpers write the same text for
// the values that occur (text_test.go compares them with fmt).

// numText is fmt's %v of a number the validator reads: json.Number's text,
// a float as strconv's shortest 'g' form, an integer in decimal.
func numText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case float64:
		return floatV(x, 64)
	case float32:
		return floatV(float64(x), 32)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	}
	return typeName(v) // not reached: the validator reads only these
}

// floatV is fmt's %v of a float: %g with the shortest precision (+Inf
// with its sign, as strconv writes it).
func floatV(f float64, bits int) string {
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// typeName is fmt's %T.
func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return reflect.TypeOf(v).String()
}

// goSyntax is fmt's %#v of a JSON value as the compiler holds one: a tree
// of map[string]any, []any, string, json.Number, bool and nil.
func goSyntax(v any) string { return string(appendGoSyntax(nil, v, true)) }

func appendGoSyntax(b []byte, v any, top bool) []byte {
	switch x := v.(type) {
	case nil:
		if top {
			return append(b, "<nil>"...)
		}
		return append(b, "interface {}(nil)"...)
	case string:
		return strconv.AppendQuote(b, x)
	case json.Number:
		return strconv.AppendQuote(b, string(x))
	case bool:
		return strconv.AppendBool(b, x)
	case []any:
		if x == nil {
			return append(b, "[]interface {}(nil)"...)
		}
		b = append(b, "[]interface {}{"...)
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendGoSyntax(b, e, false)
		}
		return append(b, '}')
	case map[string]any:
		if x == nil {
			return append(b, "map[string]interface {}(nil)"...)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, "map[string]interface {}{"...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			b = appendGoSyntax(b, x[k], false)
		}
		return append(b, '}')
	}
	return append(b, typeName(v)...) // not reached: schemas are decoded trees
}
