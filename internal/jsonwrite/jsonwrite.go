// Package jsonwrite writes JSON text byte for byte as encoding/json.Marshal
// does, without reflection.
//
// encoding/json works by reflection, which costs about five times more
// under WebAssembly than natively, and the kernel writes a response on
// every request; linked into the js/wasm build its encoder would also add
// to the binary. Writer writes the pieces a caller's own shapes are made
// of: strings escaped as Marshal escapes them (HTML-safe, U+2028 and
// U+2029 too, invalid UTF-8 as U+FFFD), numbers and floats in Marshal's
// forms, times as time.Time.MarshalJSON writes them, embedded JSON
// compacted. What only encoding/json writes exactly, or refuses (an
// invalid json.Number or json.RawMessage, NaN, a time outside RFC 3339),
// sets Slow; the caller then asks encoding/json, where it is linked.
package jsonwrite

import (
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Writer appends JSON text to B.
type Writer struct {
	B []byte
	// Slow is set when a value was left unwritten because encoding/json
	// must decide it; B is then incomplete.
	Slow bool
}

// Raw appends s as it is: punctuation and member names the caller knows.
func (w *Writer) Raw(s string) { w.B = append(w.B, s...) }

// Byte appends one byte of punctuation.
func (w *Writer) Byte(c byte) { w.B = append(w.B, c) }

// Str appends s as a JSON string.
func (w *Writer) Str(s string) { w.B = AppendString(w.B, s) }

// Int appends n in decimal.
func (w *Writer) Int(n int64) { w.B = strconv.AppendInt(w.B, n, 10) }

// Uint appends n in decimal.
func (w *Writer) Uint(n uint64) { w.B = strconv.AppendUint(w.B, n, 10) }

// Bool appends true or false.
func (w *Writer) Bool(v bool) {
	if v {
		w.Raw("true")
	} else {
		w.Raw("false")
	}
}

// OptStr appends key (`,"name":`) and s unless s is empty: an omitempty
// string after a first member.
func (w *Writer) OptStr(key, s string) {
	if s != "" {
		w.Raw(key)
		w.Str(s)
	}
}

// OptInt appends key and n unless n is 0.
func (w *Writer) OptInt(key string, n int64) {
	if n != 0 {
		w.Raw(key)
		w.Int(n)
	}
}

// Strings appends list as an array of strings; nil is null.
func (w *Writer) Strings(list []string) {
	if list == nil {
		w.Raw("null")
		return
	}
	w.B = append(w.B, '[')
	for i, s := range list {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.Str(s)
	}
	w.B = append(w.B, ']')
}

// Number appends a json.Number as its text; encoding/json writes "" as 0
// and refuses text that is not a JSON number.
func (w *Writer) Number(n json.Number) {
	s := string(n)
	if s == "" {
		s = "0"
	}
	if !ValidNumber(s) {
		w.Slow = true
		return
	}
	w.Raw(s)
}

// Float appends f (of the given bit size) as encoding/json does (like an ECMAScript number to string
// conversion); NaN and infinities are not JSON.
func (w *Writer) Float(f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.Slow = true
		return
	}
	if bits == 64 && f > 0 && f < maxThousandths {
		// A whole number of thousandths (a duration in milliseconds
		// measured in microseconds, as every audit event has) is written
		// from its integer: the shortest text that reads back as f is then
		// that decimal (see maxThousandths), and strconv's search for it
		// costs more under WebAssembly than the rest of the event.
		if m := math.Round(f * 1000); m/1000 == f {
			w.B = appendThousandths(w.B, int64(m))
			return
		}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	w.B = strconv.AppendFloat(w.B, f, format, -1, bits)
	if format == 'e' {
		// e-09 -> e-9
		n := len(w.B)
		if n >= 4 && w.B[n-4] == 'e' && w.B[n-3] == '-' && w.B[n-2] == '0' {
			w.B[n-2] = w.B[n-1]
			w.B = w.B[:n-1]
		}
	}
}

// RawMessage appends embedded JSON compacted, as encoding/json does. Input
// the compactor is not sure of is left to encoding/json.
func (w *Writer) RawMessage(m json.RawMessage) {
	if m == nil {
		w.Raw("null")
		return
	}
	b, ok := AppendCompact(w.B, m)
	if !ok {
		w.Slow = true
		return
	}
	w.B = b
}

// Time appends t as time.Time.MarshalJSON does: RFC 3339 with nanoseconds.
// Years outside 0-9999 and offsets of a day or more are not RFC 3339, and
// encoding/json refuses them.
func (w *Writer) Time(t time.Time) {
	_, offset := t.Zone()
	s := stampOf(t, offset)
	if !s.ok {
		w.Slow = true
		return
	}
	w.B = append(w.B, '"')
	w.B = append(w.B, s.clock[:]...)
	w.B = appendNanos(w.B, t.Nanosecond())
	w.B = append(w.B, s.zone...)
	w.B = append(w.B, '"')
}

// stamp is the text of one second in one zone: the date and clock, and the
// zone's suffix. Every audit event carries its time, and requests come many
// to a second, so the last stamp is kept and only the nanoseconds are
// written for each: working out the date (twice, with the year check) cost
// about as much, under WebAssembly, as the rest of the event together.
type stamp struct {
	unix   int64
	offset int
	ok     bool     // a year of 0-9999 and an offset under a day
	clock  [19]byte // 2006-01-02T15:04:05
	zone   string   // Z or -07:00
}

var lastStamp atomic.Pointer[stamp]

// stampOf answers the stamp of t's second in a zone offset seconds east of
// UTC (t.Zone's), reusing the last one when it is that second's.
func stampOf(t time.Time, offset int) *stamp {
	unix := t.Unix()
	if s := lastStamp.Load(); s != nil && s.unix == unix && s.offset == offset {
		return s
	}
	s := &stamp{unix: unix, offset: offset}
	if y := t.Year(); y >= 0 && y <= 9999 && offset > -24*3600 && offset < 24*3600 {
		s.ok = true
		appendDateClock(s.clock[:0], t)
		s.zone = string(appendZone(nil, offset))
	}
	lastStamp.Store(s)
	return s
}

// appendDateClock appends 2006-01-02T15:04:05, as t.AppendFormat does for
// years 0 to 9999, which would bring time's whole layout formatter.
func appendDateClock(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, int(month), 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	b = append(b, 'T')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, min, 2)
	b = append(b, ':')
	return appendPadded(b, sec, 2)
}

// appendNanos appends .999999999 without its trailing zeros; nothing for 0.
func appendNanos(b []byte, ns int) []byte { return appendFraction(b, ns, 9) }

// appendFraction appends n (0 <= n < 10^digits) as the digits after a
// decimal point, without trailing zeros; nothing for 0.
func appendFraction(b []byte, n, digits int) []byte {
	if n == 0 {
		return b
	}
	b = append(b, '.')
	b = appendPadded(b, n, digits)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// appendZone appends Z or -07:00 for an offset in seconds east of UTC;
// seconds of an offset are not written.
func appendZone(b []byte, offset int) []byte {
	if offset == 0 {
		return append(b, 'Z')
	}
	zone := offset / 60
	if zone < 0 {
		b = append(b, '-')
		zone = -zone
	} else {
		b = append(b, '+')
	}
	b = appendPadded(b, zone/60, 2)
	b = append(b, ':')
	return appendPadded(b, zone%60, 2)
}

// maxThousandths bounds the floats Float writes from their thousandths.
// Below it, half a float64's spacing (f times 2^-53) is far under 0.001, so
// no other decimal with as few significant digits as m/1000 reads back as
// the same float: m/1000 is the shortest text, as strconv would find.
const maxThousandths = 1e12

// appendThousandths appends m/1000 in decimal, without trailing zeros.
func appendThousandths(b []byte, m int64) []byte {
	b = strconv.AppendInt(b, m/1000, 10)
	return appendFraction(b, int(m%1000), 3)
}

// appendPadded appends n (not negative) in decimal, zero-padded to width.
func appendPadded(b []byte, n, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for n >= 10 || width > 1 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	i--
	buf[i] = byte('0' + n)
	return append(b, buf[i:]...)
}

// encoding/json's HTML-safe escaping: printable, and not ", \, <, > or &.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// plainInString marks the bytes a string literal in embedded JSON is
// copied with unchanged and without a closer look: not ", \, a control
// character, <, >, &, or 0xE2 (which may start U+2028 or U+2029).
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json escapes
// it: control characters, ", \, <, > and & escaped, U+2028 and U+2029 as
// \u2028 and \u2029, and each byte of invalid UTF-8 as \ufffd. JSON.parse
// reads the result back as exactly s (for valid UTF-8).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ValidNumber reports whether s is a JSON number (RFC 8259 grammar).
func ValidNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// maxCompactDepth bounds the nesting AppendCompact follows; deeper input is
// left to encoding/json, which has its own limit.
const maxCompactDepth = 512

// AppendCompact appends the JSON text src without insignificant whitespace,
// with <, >, &, U+2028 and U+2029 escaped, as encoding/json writes a
// json.RawMessage. It reports false, leaving the caller to fall back, for
// anything that is not one well-formed JSON value.
func AppendCompact(dst, src []byte) ([]byte, bool) {
	c := compactor{dst: dst, src: src}
	c.space()
	if !c.value(0) {
		return dst, false
	}
	c.space()
	if c.pos != len(src) {
		return dst, false
	}
	return c.dst, true
}

// CompactTop is AppendCompact that also asks top about each member name
// of the outermost object, as written between its quotes (escapes left as
// they are), until it answers true; hit reports whether it did. A caller
// learns in one pass that a value is well formed and lacks some members.
func CompactTop(dst, src []byte, top func(name []byte) bool) (out []byte, ok, hit bool) {
	c := compactor{dst: dst, src: src, top: top}
	c.space()
	if !c.value(0) {
		return c.dst, false, c.hit
	}
	c.space()
	return c.dst, c.pos == len(src), c.hit
}

type compactor struct {
	dst, src []byte
	pos      int
	top      func(name []byte) bool
	hit      bool
}

func (c *compactor) space() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *compactor) value(depth int) bool {
	if c.pos >= len(c.src) || depth > maxCompactDepth {
		return false
	}
	switch ch := c.src[c.pos]; {
	case ch == '{':
		if c.open('{', '}') {
			return true
		}
		for {
			keyAt := c.pos + 1
			if c.pos >= len(c.src) || c.src[c.pos] != '"' || !c.string() {
				return false
			}
			if depth == 0 && c.top != nil && !c.hit {
				c.hit = c.top(c.src[keyAt : c.pos-1])
			}
			c.space()
			if c.pos >= len(c.src) || c.src[c.pos] != ':' {
				return false
			}
			c.dst = append(c.dst, ':')
			c.pos++
			c.space()
			if !c.value(depth + 1) {
				return false
			}
			if done, ok := c.after('}'); done {
				return ok
			}
		}
	case ch == '[':
		if c.open('[', ']') {
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			if done, ok := c.after(']'); done {
				return ok
			}
		}
	case ch == '"':
		return c.string()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-' || ('0' <= ch && ch <= '9'):
		start := c.pos
		for c.pos < len(c.src) && numberByte(c.src[c.pos]) {
			c.pos++
		}
		if !ValidNumber(string(c.src[start:c.pos])) {
			return false
		}
		c.dst = append(c.dst, c.src[start:c.pos]...)
		return true
	}
	return false
}

// open copies the opening bracket at pos and reports whether the container
// is empty, in which case its closing bracket is copied too.
func (c *compactor) open(opening, closing byte) (empty bool) {
	c.dst = append(c.dst, opening)
	c.pos++
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == closing {
		c.dst = append(c.dst, closing)
		c.pos++
		return true
	}
	return false
}

// after reads what follows a container's element: a comma (not done, so
// the next element follows), the closing bracket (done, ok), or anything
// else (done, not ok).
func (c *compactor) after(closing byte) (done, ok bool) {
	c.space()
	if c.pos >= len(c.src) {
		return true, false
	}
	switch c.src[c.pos] {
	case ',':
		c.dst = append(c.dst, ',')
		c.pos++
		c.space()
		return false, false
	case closing:
		c.dst = append(c.dst, closing)
		c.pos++
		return true, true
	}
	return true, false
}

func numberByte(b byte) bool {
	return '0' <= b && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

func (c *compactor) literal(lit string) bool {
	if len(c.src)-c.pos < len(lit) || string(c.src[c.pos:c.pos+len(lit)]) != lit {
		return false
	}
	c.dst = append(c.dst, lit...)
	c.pos += len(lit)
	return true
}

// string copies one string literal, escaping <, >, &, U+2028 and U+2029 as
// encoding/json's compaction does; other bytes, invalid UTF-8 included, are
// kept as they are.
func (c *compactor) string() bool {
	c.dst = append(c.dst, '"')
	c.pos++
	start := c.pos
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		if plainInString[ch] {
			c.pos++
			continue
		}
		switch {
		case ch == '"':
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '"')
			c.pos++
			return true
		case ch < 0x20:
			return false
		case ch == '\\':
			if c.pos+1 >= len(c.src) {
				return false
			}
			switch c.src[c.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.pos += 2
			case 'u':
				if c.pos+6 > len(c.src) {
					return false
				}
				for _, h := range c.src[c.pos+2 : c.pos+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				c.pos += 6
			default:
				return false
			}
		case ch == '<' || ch == '>' || ch == '&':
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
			c.pos++
			start = c.pos
		case ch == 0xE2 && c.pos+2 < len(c.src) && c.src[c.pos+1] == 0x80 && c.src[c.pos+2]&^1 == 0xA8:
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[c.src[c.pos+2]&0xF])
			c.pos += 3
			start = c.pos
		default:
			c.pos++
		}
	}
	return false
}
