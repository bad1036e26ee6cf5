//go:build !(js && wasm)

package pagejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// decodeStd decodes data into v as encoding/json's Decoder does with
// UseNumber, refusing anything after the value: natively, a text the
// readers do not take is left to encoding/json, for its wording.
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
