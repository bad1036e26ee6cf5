//go:build js && wasm

package hostbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// decodeExact decodes one JSON value into v with numbers kept as
// json.Number (exact text), refusing trailing data.
func decodeExact(data []byte, v any, strictFields bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strictFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// hasLoneSurrogate reports whether JSON text holds a \u escape of a UTF-16
// surrogate that is not half of a high-low pair. encoding/json would turn it
// into U+FFFD, so the Go value would differ from the JS string; such input
// is refused instead. (Backslashes occur only inside strings in valid JSON,
// so no string tracking is needed.)
func hasLoneSurrogate(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		i++
		if i >= len(data) || data[i] != 'u' {
			continue // \" \\ \n ...: the escaped byte is consumed
		}
		r, ok := hex4(data, i+1)
		if !ok {
			continue // malformed; the decoder refuses it
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // low half without a high half
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
				if lo, ok := hex4(data, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
