//go:build js && wasm

package sprint

import (
	"reflect"
	"strconv"
)

// Sprint is fmt.Sprint(v) for strings, errors, Stringers, booleans and
// numbers; any other value reads "(a value of type T)".
func Sprint(v any) (s string) {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uintptr:
		return strconv.FormatUint(uint64(x), 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	// A method that panics must not turn the report of one panic into
	// another; fmt, too, reports such a value instead of failing.
	defer func() {
		if recover() != nil {
			s = "(a value of type " + reflect.TypeOf(v).String() + ")"
		}
	}()
	switch x := v.(type) {
	case error:
		return x.Error()
	case interface{ String() string }:
		return x.String()
	}
	return "(a value of type " + reflect.TypeOf(v).String() + ")"
}
