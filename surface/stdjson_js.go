//go:build js && wasm

package surface

import "errors"

// Under js/wasm encoding/json is not linked (see stdjson.go).

// errNotEncoded: a value that is neither a JSON tree nor a wire type
// cannot be encoded there. The bridge only ever hands the kernel values it
// read from JSON text, so this is not reached from a page.
var errNotEncoded = errors.New("json: value is not a JSON tree or a wire type")

func marshalStd(any) ([]byte, error) { return nil, errNotEncoded }

// deepEqualStd: values that are not JSON trees do not occur there, and
// would read as changed.
func deepEqualStd(any, any) bool { return false }
