//go:build js && wasm

package pagejson

import "errors"

// Under js/wasm encoding/json is not linked (it would add about 100 KB to
// the compressed binary). A view or an action list the readers refuse is
// refused with this error, whose text never leaves the bridge (the agent
// sees a protocol code).
var errNotDecoded = errors.New("json: the text is not one JSON value of the expected shape")

func decodeStd([]byte, any) error { return errNotDecoded }
