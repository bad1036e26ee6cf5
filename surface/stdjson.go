//go:build !(js && wasm)

package surface

import (
	"encoding/json"
	"reflect"
)

// Natively, what the kernel's own writers and comparisons cannot do is
// left to encoding/json and reflect: values that are not JSON trees or
// wire types (AppendJSON), and comparing such values (sameValue). Under
// js/wasm these are not linked (stdjson_js.go): everything there was read
// from JSON text, and encoding/json's reflective encoder would add to the
// compressed binary.

// marshalStd is json.Marshal.
func marshalStd(v any) ([]byte, error) { return json.Marshal(v) }

// deepEqualStd is reflect.DeepEqual.
func deepEqualStd(a, b any) bool { return reflect.DeepEqual(a, b) }
