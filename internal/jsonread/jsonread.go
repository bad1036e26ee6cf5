// Package jsonread reads JSON text into Go values the way encoding/json's
// Decoder does with UseNumber, without reflection.
//
// The kernel and its WebAssembly bridge read a few fixed shapes (a view,
// an action list, a session, the bridge's config, a result object) and
// free-form JSON trees. encoding/json would do it, but its decoder is
// reflective: linked into the js/wasm build it brings most of reflect,
// fmt and its own encoder, about a sixth of the compressed binary, and its
// first use of each type costs milliseconds there. Reader gives the same
// values: member names matched exactly first and then ignoring case, a
// repeated member decoded into what the earlier one left (see List),
// strings unquoted with invalid UTF-8 and lone surrogates turned into
// U+FFFD, numbers kept as their text, nesting capped at 10000 levels.
// Where encoding/json fails, Reader only says so (Err); callers that need
// encoding/json's wording of the failure ask it then (see surface's
// stdjson_*.go).
package jsonread

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: 10000 levels are read, the
// next one is an error.
const maxDepth = 10000

// Reader reads one JSON text. Err is set at the first thing encoding/json
// would refuse (a syntax error, a type mismatch, an unknown member where
// the caller forbids them); after that the values read are meaningless.
type Reader struct {
	Data string
	Pos  int
	Err  bool
	// Floats makes Value check each number as encoding/json checks a
	// number it decodes into an any without UseNumber (it must fit a
	// float64).
	Floats bool
	// Unknown is the member name a strict Object refused, when
	// HasUnknown.
	Unknown    string
	HasUnknown bool
	depth      int
}

// New returns a Reader over data.
func New(data []byte) *Reader { return &Reader{Data: string(data)} }

// End reports whether only white space is left, as Decoder.Token's io.EOF
// after the value does, and nothing went wrong.
func (r *Reader) End() bool {
	r.Space()
	return !r.Err && r.Pos == len(r.Data)
}

// Space skips JSON white space.
func (r *Reader) Space() {
	for r.Pos < len(r.Data) {
		switch r.Data[r.Pos] {
		case ' ', '\t', '\n', '\r':
			r.Pos++
		default:
			return
		}
	}
}

// Peek returns the next byte after white space, or 0 at the end.
func (r *Reader) Peek() byte {
	r.Space()
	if r.Pos >= len(r.Data) {
		return 0
	}
	return r.Data[r.Pos]
}

// Literal reads lit (true, false, null) if it comes next.
func (r *Reader) Literal(lit string) bool {
	if r.Peek() == lit[0] && strings.HasPrefix(r.Data[r.Pos:], lit) {
		r.Pos += len(lit)
		return true
	}
	return false
}

// Null reads null if it comes next.
func (r *Reader) Null() bool { return r.Literal("null") }

func (r *Reader) fail() { r.Err = true }

// enter and leave count nesting as encoding/json's scanner does.
func (r *Reader) enter() bool {
	r.depth++
	if r.depth > maxDepth {
		r.fail()
		return false
	}
	return true
}

func (r *Reader) leave() { r.depth-- }

// Object reads an object into a struct whose JSON member names are fields:
// member is called with the index of the field a name matches (exactly,
// else ignoring case, as encoding/json matches) and must read the value;
// a name that matches none is read and dropped, or is an error when
// strict (DisallowUnknownFields). null is no change, as for a struct.
func (r *Reader) Object(fields []string, strict bool, member func(field int)) {
	if r.Null() {
		return
	}
	r.members(func(key string) {
		field := match(fields, key)
		switch {
		case field >= 0:
			member(field)
		case strict:
			r.Unknown, r.HasUnknown = key, true
			r.fail()
		default:
			r.Skip()
		}
	})
}

func match(fields []string, key string) int {
	for i, f := range fields {
		if key == f {
			return i
		}
	}
	for i, f := range fields {
		if strings.EqualFold(key, f) {
			return i
		}
	}
	return -1
}

// members reads an object, calling member with each name, the position at
// its value. Anything but an object is an error.
func (r *Reader) members(member func(key string)) {
	if r.Peek() != '{' {
		r.fail()
		return
	}
	if !r.enter() {
		return
	}
	defer r.leave()
	r.Pos++
	if r.Peek() == '}' {
		r.Pos++
		return
	}
	for !r.Err {
		if r.Peek() != '"' {
			r.fail()
			return
		}
		key := r.str()
		if r.Peek() != ':' {
			r.fail()
			return
		}
		r.Pos++
		member(key)
		switch r.Peek() {
		case ',':
			r.Pos++
		case '}':
			r.Pos++
			return
		default:
			r.fail()
		}
	}
}

// elements reads an array, calling elem at each element. Anything but an
// array is an error.
func (r *Reader) elements(elem func()) {
	if r.Peek() != '[' {
		r.fail()
		return
	}
	if !r.enter() {
		return
	}
	defer r.leave()
	r.Pos++
	if r.Peek() == ']' {
		r.Pos++
		return
	}
	for !r.Err {
		elem()
		switch r.Peek() {
		case ',':
			r.Pos++
		case ']':
			r.Pos++
			return
		default:
			r.fail()
		}
	}
}

// List reads an array into *dst as encoding/json does: null makes it nil;
// element i is decoded into the element already at i when the slice's
// capacity holds one (a repeated member merges into what the earlier one
// left), else into a new zero element; the slice ends up as long as the
// array, and an empty array gives an empty, non-nil slice.
func List[T any](r *Reader, dst *[]T, elem func(*T)) {
	if r.Null() {
		*dst = nil
		return
	}
	s := *dst
	i := 0
	r.elements(func() {
		if i < cap(s) {
			s = s[:i+1]
		} else {
			var zero T
			s = append(s, zero)
		}
		elem(&s[i])
		i++
	})
	if i == 0 {
		s = []T{}
	} else {
		s = s[:i]
	}
	*dst = s
}

// String reads a string field: null leaves it as it is.
func (r *Reader) String(dst *string) {
	if r.Null() {
		return
	}
	if r.Peek() != '"' {
		r.fail()
		return
	}
	*dst = r.str()
}

// Bool reads a bool field: null leaves it as it is.
func (r *Reader) Bool(dst *bool) {
	switch {
	case r.Null():
	case r.Literal("true"):
		*dst = true
	case r.Literal("false"):
		*dst = false
	default:
		r.fail()
	}
}

// Int reads an int field: null leaves it as it is; a fraction, an exponent
// or a value out of range is an error.
func (r *Reader) Int(dst *int) {
	if r.Null() {
		return
	}
	text, ok := r.number()
	if !ok {
		return
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || int64(int(n)) != n {
		r.fail()
		return
	}
	*dst = int(n)
}

// Float reads a float64 field: null leaves it as it is; a number beyond
// float64's range is an error.
func (r *Reader) Float(dst *float64) {
	if r.Null() {
		return
	}
	text, ok := r.number()
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		r.fail()
		return
	}
	*dst = f
}

// Number reads a *json.Number field: null makes it nil; a number, or a
// string holding a valid number, is stored in the existing Number or a new
// one.
func (r *Reader) Number(dst **json.Number) {
	if r.Null() {
		*dst = nil
		return
	}
	var text string
	if r.Peek() == '"' {
		text = r.str()
		if !ValidNumber(text) {
			r.fail()
			return
		}
	} else {
		var ok bool
		if text, ok = r.number(); !ok {
			return
		}
	}
	if *dst == nil {
		*dst = new(json.Number)
	}
	**dst = json.Number(text)
}

// Raw reads any value and returns its text as it stands (null as "null"),
// as json.RawMessage's UnmarshalJSON keeps it.
func (r *Reader) Raw() json.RawMessage {
	r.Space()
	start := r.Pos
	r.Skip()
	if r.Err {
		return nil
	}
	return json.RawMessage(r.Data[start:r.Pos])
}

// Tree reads a map[string]any field: null makes it nil; an object's
// members are added to the existing map or a new one.
func (r *Reader) Tree(dst *map[string]any) {
	if r.Null() {
		*dst = nil
		return
	}
	m := *dst
	r.members(func(key string) {
		if m == nil {
			m = map[string]any{}
		}
		m[key] = r.Value()
	})
	if m == nil && !r.Err {
		m = map[string]any{}
	}
	*dst = m
}

// StringMap reads a map[string]string field like Tree; a null member
// value stores "".
func (r *Reader) StringMap(dst *map[string]string) {
	if r.Null() {
		*dst = nil
		return
	}
	m := *dst
	if m == nil {
		m = map[string]string{}
	}
	r.members(func(key string) {
		var s string
		r.String(&s)
		m[key] = s
	})
	*dst = m
}

// Strings reads a []string field (List of String).
func (r *Reader) Strings(dst *[]string) { List(r, dst, r.String) }

// Value reads any value into the tree encoding/json builds in an any with
// UseNumber: map[string]any (a repeated name keeps its last value), []any,
// string, json.Number, bool or nil.
func (r *Reader) Value() any {
	switch c := r.Peek(); {
	case c == '{':
		m := map[string]any{}
		r.members(func(key string) { m[key] = r.Value() })
		return m
	case c == '[':
		list := []any{}
		r.elements(func() { list = append(list, r.Value()) })
		return list
	case c == '"':
		return r.str()
	case c == 't' && r.Literal("true"):
		return true
	case c == 'f' && r.Literal("false"):
		return false
	case c == 'n' && r.Null():
		return nil
	}
	text, ok := r.number()
	if !ok {
		return nil
	}
	if r.Floats {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			r.fail()
			return nil
		}
	}
	return json.Number(text)
}

// Skip reads over one value, checking it as encoding/json's scanner does.
func (r *Reader) Skip() {
	switch c := r.Peek(); {
	case c == '{':
		r.members(func(string) { r.Skip() })
	case c == '[':
		r.elements(r.Skip)
	case c == '"':
		r.skipString()
	case c == 't' && r.Literal("true"), c == 'f' && r.Literal("false"), c == 'n' && r.Null():
	default:
		r.number()
	}
}

// number reads a number literal and returns its text.
func (r *Reader) number() (string, bool) {
	r.Space()
	start := r.Pos
	for r.Pos < len(r.Data) && numberByte(r.Data[r.Pos]) {
		r.Pos++
	}
	text := r.Data[start:r.Pos]
	if !ValidNumber(text) {
		r.fail()
		return "", false
	}
	return text, true
}

// A number's longest run of these bytes is either one number or an error
// (no number can be followed by one of them), so reading the run and then
// checking it agrees with encoding/json's scanner.
func numberByte(b byte) bool {
	return '0' <= b && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

// ValidNumber reports whether s is a JSON number.
func ValidNumber(s string) bool {
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

// str reads a string literal (the position at its quote) and unquotes it
// as encoding/json does: invalid UTF-8 and escaped surrogates that are not
// a high-low pair each become U+FFFD.
func (r *Reader) str() string {
	r.Pos++
	start := r.Pos
	for r.Pos < len(r.Data) {
		c := r.Data[r.Pos]
		switch {
		case c == '"':
			s := r.Data[start:r.Pos]
			r.Pos++
			return s
		case c == '\\':
			return r.strSlow(start)
		case c < 0x20:
			r.fail()
			return ""
		case c < utf8.RuneSelf:
			r.Pos++
		default:
			ch, size := utf8.DecodeRuneInString(r.Data[r.Pos:])
			if ch == utf8.RuneError && size == 1 {
				return r.strSlow(start)
			}
			r.Pos += size
		}
	}
	r.fail()
	return ""
}

func (r *Reader) strSlow(start int) string {
	b := make([]byte, 0, r.Pos-start+16)
	b = append(b, r.Data[start:r.Pos]...)
	for r.Pos < len(r.Data) {
		c := r.Data[r.Pos]
		switch {
		case c == '"':
			r.Pos++
			return string(b)
		case c < 0x20:
			r.fail()
			return ""
		case c == '\\':
			if !r.escape(&b) {
				r.fail()
				return ""
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r.Pos++
		default:
			ch, size := utf8.DecodeRuneInString(r.Data[r.Pos:])
			if ch == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, r.Data[r.Pos:r.Pos+size]...)
			}
			r.Pos += size
		}
	}
	r.fail()
	return ""
}

// escape appends the character of the escape at the position.
func (r *Reader) escape(b *[]byte) bool {
	if r.Pos+1 >= len(r.Data) {
		return false
	}
	switch e := r.Data[r.Pos+1]; e {
	case '"', '\\', '/':
		*b = append(*b, e)
	case 'b':
		*b = append(*b, '\b')
	case 'f':
		*b = append(*b, '\f')
	case 'n':
		*b = append(*b, '\n')
	case 'r':
		*b = append(*b, '\r')
	case 't':
		*b = append(*b, '\t')
	case 'u':
		ch, ok := hex4(r.Data, r.Pos+2)
		if !ok {
			return false
		}
		r.Pos += 6
		if utf16.IsSurrogate(ch) {
			// A high half followed by an escaped low half is one
			// character; anything else is U+FFFD, and what follows is
			// read on its own.
			if r.Pos+1 < len(r.Data) && r.Data[r.Pos] == '\\' && r.Data[r.Pos+1] == 'u' {
				if lo, ok := hex4(r.Data, r.Pos+2); ok {
					if dec := utf16.DecodeRune(ch, lo); dec != utf8.RuneError {
						r.Pos += 6
						*b = utf8.AppendRune(*b, dec)
						return true
					}
				}
			}
			ch = utf8.RuneError
		}
		*b = utf8.AppendRune(*b, ch)
		return true
	default:
		return false
	}
	r.Pos += 2
	return true
}

func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var ch rune
	for _, c := range []byte(s[at : at+4]) {
		ch <<= 4
		switch {
		case '0' <= c && c <= '9':
			ch |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			ch |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			ch |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return ch, true
}

// skipString reads over a string literal, checking its escapes.
func (r *Reader) skipString() {
	r.Pos++
	for r.Pos < len(r.Data) {
		c := r.Data[r.Pos]
		switch {
		case c == '"':
			r.Pos++
			return
		case c < 0x20:
			r.fail()
			return
		case c != '\\':
			r.Pos++
			continue
		}
		if r.Pos+1 >= len(r.Data) {
			break
		}
		switch r.Data[r.Pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			r.Pos += 2
		case 'u':
			if _, ok := hex4(r.Data, r.Pos+2); !ok {
				r.fail()
				return
			}
			r.Pos += 6
		default:
			r.fail()
			return
		}
	}
	r.fail()
}

// Valid reports whether data is one JSON value, as json.Valid does.
func Valid(data []byte) bool {
	r := New(data)
	r.Skip()
	return r.End()
}

// HasLoneSurrogate reports whether JSON text holds a \u escape of a UTF-16
// surrogate that is not half of a high-low pair, which encoding/json (and
// this package) turn into U+FFFD: a host that must not let the Go value
// differ from the JavaScript string refuses such text. (Backslashes occur only inside strings in valid JSON,
// so no string tracking is needed.)
func HasLoneSurrogate(data string) bool {
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
