//go:build js && wasm

package hostbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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

// quickReader reads the usual form of the small JSON texts the JS runtime
// writes with JSON.stringify (the config, a session, expose answers):
// objects whose members are all known and appear once, strings without
// escapes, numbers, literals and lists of them. Anything else sets bad,
// and the caller hands the text to decodeExact instead, so values and
// errors stay exactly those of encoding/json. What the common form saves is
// encoding/json's reflection, whose first use per type costs milliseconds
// under WebAssembly, on the way to a page's first answer.
type quickReader struct {
	data string
	pos  int
	bad  bool
}

// quick runs read over data and reports whether it took all of it.
func quick(data []byte, read func(r *quickReader)) bool {
	if !utf8.Valid(data) {
		return false // encoding/json would write U+FFFD in its place
	}
	r := quickReader{data: string(data)}
	read(&r)
	r.space()
	return !r.bad && r.pos == len(r.data)
}

func (r *quickReader) space() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (r *quickReader) peek() byte {
	r.space()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

func (r *quickReader) literal(lit string) bool {
	if r.peek() == lit[0] && strings.HasPrefix(r.data[r.pos:], lit) {
		r.pos += len(lit)
		return true
	}
	return false
}

func (r *quickReader) null() bool { return r.literal("null") }

// object reads an object, calling member with the index in fields of each
// member name; member must read the value. A name not in fields, spelt in
// another case, or repeated is left to encoding/json.
func (r *quickReader) object(fields []string, member func(field int)) {
	if r.peek() != '{' {
		r.bad = true
		return
	}
	r.pos++
	if r.peek() == '}' {
		r.pos++
		return
	}
	var seen uint32
	for !r.bad {
		if r.peek() != '"' {
			r.bad = true
			return
		}
		key := r.str()
		if r.peek() != ':' {
			r.bad = true
			return
		}
		r.pos++
		field := slices.Index(fields, key)
		if field < 0 || seen&(1<<field) != 0 {
			r.bad = true
			return
		}
		seen |= 1 << field
		member(field)
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return
		default:
			r.bad = true
		}
	}
}

// list reads an array, calling elem at each element. It reports whether
// the array was there (false for null).
func (r *quickReader) list(elem func()) bool {
	if r.null() {
		return false
	}
	if r.peek() != '[' {
		r.bad = true
		return false
	}
	r.pos++
	if r.peek() == ']' {
		r.pos++
		return true
	}
	for !r.bad {
		elem()
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return true
		default:
			r.bad = true
		}
	}
	return true
}

// str reads a string without escapes (the position is at its quote).
func (r *quickReader) str() string {
	r.pos++
	start := r.pos
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; {
		case c == '"':
			r.pos++
			return r.data[start : r.pos-1]
		case c == '\\' || c < 0x20:
			r.bad = true
			return ""
		}
		r.pos++
	}
	r.bad = true
	return ""
}

// text reads a string field: null leaves it as it is, as encoding/json does.
func (r *quickReader) text(dst *string) {
	if r.null() {
		return
	}
	if r.peek() != '"' {
		r.bad = true
		return
	}
	*dst = r.str()
}

// texts reads a []string field: null leaves it nil, [] makes it empty.
func (r *quickReader) texts(dst *[]string) {
	list := []string{}
	if r.list(func() {
		if r.peek() != '"' {
			r.bad = true // a null element too: encoding/json decides
			return
		}
		list = append(list, r.str())
	}) {
		*dst = list
	}
}

// number reads a number literal and returns its text; ok is false, and
// the reader bad, when there is none. null is "no number, nothing wrong".
func (r *quickReader) number() (text string, ok bool) {
	if r.null() {
		return "", false
	}
	r.space()
	start := r.pos
	for r.pos < len(r.data) && strings.IndexByte("0123456789+-.eE", r.data[r.pos]) >= 0 {
		r.pos++
	}
	text = r.data[start:r.pos]
	if !isJSONNumber(text) {
		r.bad = true
		return "", false
	}
	return text, true
}

// float and integer convert the way encoding/json does; a value it would
// refuse (out of range, a fraction for an int) is left to it.
func (r *quickReader) float(dst *float64) {
	if text, ok := r.number(); ok {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			r.bad = true
			return
		}
		*dst = f
	}
}

func (r *quickReader) integer(dst *int) {
	if text, ok := r.number(); ok {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || int64(int(n)) != n {
			r.bad = true
			return
		}
		*dst = int(n)
	}
}

// exact reads a *json.Number field: null leaves it nil.
func (r *quickReader) exact(dst **json.Number) {
	if text, ok := r.number(); ok {
		n := json.Number(text)
		*dst = &n
	}
}

// bools reads a []bool: null gives nil, and a null element false.
func (r *quickReader) bools() []bool {
	out := []bool{}
	if !r.list(func() {
		switch {
		case r.literal("true"):
			out = append(out, true)
		case r.literal("false"), r.null():
			out = append(out, false)
		default:
			r.bad = true
		}
	}) {
		return nil
	}
	return out
}

// isJSONNumber reports whether s is a number as JSON writes it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		n := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// parseBools decodes expose answers ([]bool) as decodeExact does.
func parseBools(data []byte) ([]bool, error) {
	var out []bool
	if quick(data, func(r *quickReader) { out = r.bools() }) {
		return out, nil
	}
	out = nil
	err := decodeExact(data, &out, false)
	return out, err
}

var sessionFields = []string{"agentId", "sessionId", "userId", "expiresAt", "scope", "delegationId", "revokedAt"}

// decodeSession decodes session text into w as decodeExact does.
func decodeSession(data []byte, w *wireSession) error {
	if quick(data, func(r *quickReader) { r.session(w) }) {
		return nil
	}
	*w = wireSession{}
	return decodeExact(data, w, false)
}

// session reads the usual form of a session's text into w.
func (r *quickReader) session(w *wireSession) {
	r.object(sessionFields, func(field int) {
		switch field {
		case 0:
			r.text(&w.AgentID)
		case 1:
			r.text(&w.SessionID)
		case 2:
			r.text(&w.UserID)
		case 3:
			r.exact(&w.ExpiresAt)
		case 4:
			r.texts(&w.Scope)
		case 5:
			r.text(&w.DelegationID)
		case 6:
			r.exact(&w.RevokedAt)
		}
	})
}
