//go:build !(js && wasm)

package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
)

// Natively, what the kernel's own readers, writers and comparisons cannot
// do is left to encoding/json and reflect: the wording of a decoding error
// (ParseView, ParseActions), values that are not JSON trees or wire types
// (AppendJSON), and comparing such values (sameValue). Under js/wasm these
// are not linked (stdjson_js.go): everything there was read from JSON text
// by the kernel, and encoding/json's reflective encoder and decoder would
// add about 100 KB to the compressed binary.

// decodeStd decodes data into v as encoding/json's Decoder does with
// UseNumber, refusing anything after the value.
func decodeStd(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// marshalStd is json.Marshal.
func marshalStd(v any) ([]byte, error) { return json.Marshal(v) }

// deepEqualStd is reflect.DeepEqual.
func deepEqualStd(a, b any) bool { return reflect.DeepEqual(a, b) }
