package strictjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Decode parses exactly one JSON value from data. Result types:
// map[string]any, []any, string, json.Number (exact text, never float64),
// bool, nil. On failure the error is always a *Error.
func Decode(data []byte, lim Limits) (any, error) {
	return DecodeWords(data, lim, nil)
}

// DecodeWords is Decode where a member name or string value written
// without escapes that equals one of words is returned as that word,
// already boxed, instead of as a new string: the names and values a
// protocol repeats in every message then cost no allocation. The tree is
// the one Decode returns; every limit applies as in Decode.
func DecodeWords(data []byte, lim Limits, words *Words) (any, error) {
	// Checked before any byte is looked at: an oversized input costs O(1).
	if exceeds(len(data), lim.MaxBytes) {
		return nil, &Error{Kind: KindTooLarge, Offset: int64(max(lim.MaxBytes, 0)), Msg: "input exceeds MaxBytes"}
	}
	d := decoder{data: data, lim: lim, maxDepth: effectiveDepth(lim.MaxDepth), words: words}
	sc := scratches.Get().(*scratch)
	d.stack, d.keys = sc.stack[:0], sc.keys[:0]
	v, err := d.run()
	sc.keep(d.stack, d.keys)
	scratches.Put(sc)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Words is a fixed set of strings for DecodeWords. It is read-only once
// made, so one set serves concurrent decoders.
type Words struct {
	boxed  map[string]any // each word, boxed once as an any
	maxLen int
}

// NewWords returns the set of the given strings.
func NewWords(words ...string) *Words {
	w := &Words{boxed: make(map[string]any, len(words))}
	for _, s := range words {
		w.boxed[s] = s
		w.maxLen = max(w.maxLen, len(s))
	}
	return w
}

// word reads the string at d.pos when it is one of d.words, written
// without escapes and within MaxString; otherwise it reports false and
// leaves d.pos alone, for str to read (and refuse) the string as usual.
func (d *decoder) word() (string, any, bool) {
	w := d.words
	if w == nil {
		return "", nil, false
	}
	data := d.data
	start := d.pos + 1
	end := start
	for ; end < len(data) && end-start <= w.maxLen; end++ {
		c := data[end]
		if c == '"' {
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return "", nil, false
		}
	}
	if end >= len(data) || data[end] != '"' || exceeds(end-start, d.lim.MaxString) {
		return "", nil, false
	}
	v, ok := w.boxed[string(data[start:end])]
	if !ok {
		return "", nil, false
	}
	d.pos = end + 1
	return v.(string), v, true
}

// scratch is the parse stack and key list of one Decode, kept for the next:
// the kernel decodes every request and most host answers, and under
// WebAssembly each allocation also costs collector work later.
type scratch struct {
	stack []frame
	keys  []string
}

var scratches = sync.Pool{New: func() any {
	return &scratch{stack: make([]frame, 0, 4), keys: make([]string, 0, smallObject)}
}}

// keep takes back the slices a decode grew, cleared so that the pool holds
// no part of a decoded value, unless they grew past what typical messages
// need (a hostile input's deep stack is not kept).
func (sc *scratch) keep(stack []frame, keys []string) {
	if cap(stack) <= 64 {
		clear(stack[:cap(stack)])
		sc.stack = stack[:0]
	}
	if cap(keys) <= 4*smallObject {
		clear(keys[:cap(keys)])
		sc.keys = keys[:0]
	}
}

// TopString reads the string member name of a top-level object, for a
// caller that refused data and still names it in its answer (the protocol
// echoes a request's id). It answers only where every reader agrees on that
// member: data is one JSON document of at most lim.MaxBytes bytes, its top
// level is an object, and name is its only key equal to name under case
// folding. Other keys may repeat or differ only in case, and the other
// bounds of lim do not apply (nesting is still capped at 10000): data was
// refused for those already, and they say nothing about the member.
func TopString(data []byte, lim Limits, name string) (string, bool) {
	if exceeds(len(data), lim.MaxBytes) {
		return "", false
	}
	d := decoder{data: data, lim: Limits{MaxBytes: lim.MaxBytes}, maxDepth: hardMaxDepth, lenientKeys: true, watch: foldKey(name)}
	v, err := d.run()
	if err != nil || d.clash {
		return "", false
	}
	obj, _ := v.(map[string]any)
	s, ok := obj[name].(string)
	return s, ok
}

// TopStringOf is TopString for a decoded value: v is a map[string]any whose
// only key equal to name under case folding is name, holding a string.
func TopStringOf(v any, name string) (string, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := obj[name].(string)
	if !ok {
		return "", false
	}
	for k := range obj {
		if k != name && strings.EqualFold(k, name) {
			return "", false
		}
	}
	return s, true
}

// frame is one open container on the explicit parse stack. The parser is
// iterative so nesting costs heap (bounded by maxDepth), never Go stack.
type frame struct {
	obj   map[string]any
	fold  map[string]struct{} // fold keys, built only for large objects
	arr   []any
	key   string // key of the member being parsed (objects)
	keys0 int    // start of this object's keys in decoder.keys (small objects)
	isObj bool
}

type decoder struct {
	data     []byte
	pos      int
	lim      Limits
	maxDepth int
	stack    []frame
	buf      []byte // scratch for strings with escapes, reused across strings
	// keys holds the keys of every open small object, innermost last; an
	// object's keys are contiguous because inner objects close (and truncate
	// back) before the outer object reads its next key.
	keys []string
	// lenientKeys lets duplicate and case-variant keys through (TopString);
	// clash is then set when one of them folds to watch at the top level.
	lenientKeys bool
	watch       string
	clash       bool
	words       *Words // strings handed out without allocating (DecodeWords)
}

// pathMode says whether an error concerns the value being parsed at the top
// of the stack (atValue) or the innermost open container itself (atContainer:
// a key, a separator, a member or element count).
type pathMode bool

const (
	atValue     pathMode = true
	atContainer pathMode = false
)

// path renders the JSON pointer for an error; only called on failure.
func (d *decoder) path(mode pathMode) string {
	n := len(d.stack)
	if mode == atContainer {
		n--
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		f := &d.stack[i]
		b.WriteByte('/')
		if f.isObj {
			appendPointerToken(&b, f.key)
		} else {
			b.WriteString(strconv.Itoa(len(f.arr)))
		}
	}
	return b.String()
}

func (d *decoder) fail(k Kind, off int, mode pathMode, msg string) *Error {
	return &Error{Kind: k, Offset: int64(off), Path: d.path(mode), Msg: msg}
}

func (d *decoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) run() (any, *Error) {
	for {
		val, opened, err := d.value()
		if err != nil {
			return nil, err
		}
		if opened {
			continue // first member/element of a new container
		}
		// Attach val to its parent and close every container that ends here.
		for {
			n := len(d.stack)
			if n == 0 {
				d.skipWS()
				if d.pos != len(d.data) {
					return nil, d.fail(KindSyntax, d.pos, atValue, "trailing data after value")
				}
				return val, nil
			}
			top := &d.stack[n-1]
			if top.isObj {
				top.obj[top.key] = val
			} else {
				top.arr = append(top.arr, val)
			}
			d.skipWS()
			if d.pos >= len(d.data) {
				return nil, d.fail(KindSyntax, d.pos, atContainer, "unexpected end of input")
			}
			c := d.data[d.pos]
			if c == ',' {
				d.pos++
				if top.isObj {
					err = d.member()
				} else {
					err = d.element()
				}
				if err != nil {
					return nil, err
				}
				break // parse the next value
			}
			switch {
			case top.isObj && c == '}':
				val = top.obj
			case !top.isObj && c == ']':
				val = top.arr
			case top.isObj:
				return nil, d.fail(KindSyntax, d.pos, atContainer, "expected ',' or '}'")
			default:
				return nil, d.fail(KindSyntax, d.pos, atContainer, "expected ',' or ']'")
			}
			d.pos++
			if top.isObj {
				d.keys = d.keys[:top.keys0]
			}
			d.stack[n-1] = frame{} // drop references held by the popped slot
			d.stack = d.stack[:n-1]
		}
	}
}

// value parses one value at d.pos. For a non-empty container it pushes a
// frame, consumes the first key (objects) and reports opened=true.
func (d *decoder) value() (val any, opened bool, err *Error) {
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, false, d.fail(KindSyntax, d.pos, atValue, "unexpected end of input")
	}
	switch c := d.data[d.pos]; c {
	case '{', '[':
		// Checked before descending, so hostile nesting stops right here.
		if len(d.stack)+1 > d.maxDepth {
			return nil, false, d.fail(KindTooDeep, d.pos, atValue, "nesting exceeds MaxDepth")
		}
		open := d.pos
		d.pos++
		d.skipWS()
		if c == '{' {
			if d.pos < len(d.data) && d.data[d.pos] == '}' {
				if exceeds(0, d.lim.MaxMembers) {
					return nil, false, d.fail(KindTooManyMembers, open, atValue, "object exceeds MaxMembers")
				}
				d.pos++
				return map[string]any{}, false, nil
			}
			d.stack = append(d.stack, frame{isObj: true, obj: make(map[string]any), keys0: len(d.keys)})
			return nil, true, d.member()
		}
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			if exceeds(0, d.lim.MaxArray) {
				return nil, false, d.fail(KindArrayTooLong, open, atValue, "array exceeds MaxArray")
			}
			d.pos++
			return []any{}, false, nil
		}
		d.stack = append(d.stack, frame{})
		return nil, true, d.element()
	case '"':
		if _, v, ok := d.word(); ok {
			return v, false, nil
		}
		s, err := d.str(atValue)
		if err != nil {
			return nil, false, err
		}
		return s, false, nil
	case 't':
		return true, false, d.literal("true")
	case 'f':
		return false, false, d.literal("false")
	case 'n':
		return nil, false, d.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			end, bad := scanNumber(d.data, d.pos)
			if bad >= 0 {
				return nil, false, d.fail(KindSyntax, bad, atValue, "invalid number")
			}
			// Exact source text: no rounding, no float64 round trip.
			num := json.Number(d.data[d.pos:end])
			d.pos = end
			return num, false, nil
		}
		return nil, false, d.fail(KindSyntax, d.pos, atValue, "unexpected character")
	}
}

func (d *decoder) literal(lit string) *Error {
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return nil
	}
	return d.fail(KindSyntax, d.pos, atValue, "invalid literal")
}

// member parses `"key" :` for the next member of the object on top of the
// stack and checks the member count and key rules.
func (d *decoder) member() *Error {
	top := &d.stack[len(d.stack)-1]
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.fail(KindSyntax, d.pos, atContainer, "unexpected end of input")
	}
	if d.data[d.pos] != '"' {
		return d.fail(KindSyntax, d.pos, atContainer, "expected string key")
	}
	if exceeds(len(top.obj)+1, d.lim.MaxMembers) {
		return d.fail(KindTooManyMembers, d.pos, atContainer, "object exceeds MaxMembers")
	}
	keyAt := d.pos
	key, _, known := d.word()
	if !known {
		var err *Error
		if key, err = d.str(atContainer); err != nil {
			return err
		}
	}
	top.key = key
	k := d.checkKey(top, key)
	if k != 0 && d.lenientKeys {
		if len(d.stack) == 1 && foldKey(key) == d.watch {
			d.clash = true
		}
		k = 0
	}
	switch k {
	case KindDuplicateKey:
		return d.fail(KindDuplicateKey, keyAt, atValue, "duplicate key")
	case KindCaseVariantKey:
		return d.fail(KindCaseVariantKey, keyAt, atValue, "key differs from another key only by case")
	}
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.fail(KindSyntax, d.pos, atValue, "unexpected end of input")
	}
	if d.data[d.pos] != ':' {
		return d.fail(KindSyntax, d.pos, atValue, "expected ':'")
	}
	d.pos++
	return nil
}

// element checks the element count before the next element of the array on
// top of the stack is parsed.
func (d *decoder) element() *Error {
	top := &d.stack[len(d.stack)-1]
	if exceeds(len(top.arr)+1, d.lim.MaxArray) {
		d.skipWS()
		return d.fail(KindArrayTooLong, d.pos, atContainer, "array exceeds MaxArray")
	}
	return nil
}

// str scans the string starting at the quote at d.pos. Strings without
// escapes are sliced straight from the input (one allocation, for the
// result); the first backslash switches to strSlow.
func (d *decoder) str(mode pathMode) (string, *Error) {
	data := d.data
	limit := d.lim.MaxString
	start := d.pos + 1
	i := start
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			if exceeds(i-start, limit) {
				return "", d.fail(KindStringTooLong, d.pos, mode, "string exceeds MaxString")
			}
			d.pos = i + 1
			return string(data[start:i]), nil
		case c == '\\':
			return d.strSlow(start, i, mode)
		case c < 0x20:
			return "", d.fail(KindSyntax, i, mode, "control character in string")
		case c < utf8.RuneSelf:
			if exceeds(i+1-start, limit) {
				return "", d.fail(KindStringTooLong, i, mode, "string exceeds MaxString")
			}
			i++
		default:
			_, size := utf8.DecodeRune(data[i:])
			if size == 1 { // RuneError of width 1: invalid or encoded surrogate
				return "", d.fail(KindSyntax, i, mode, "invalid UTF-8 in string")
			}
			if exceeds(i+size-start, limit) {
				return "", d.fail(KindStringTooLong, i, mode, "string exceeds MaxString")
			}
			i += size
		}
	}
	return "", d.fail(KindSyntax, len(data), mode, "unterminated string")
}

func (d *decoder) strSlow(start, i int, mode pathMode) (string, *Error) {
	data := d.data
	limit := d.lim.MaxString
	buf := append(d.buf[:0], data[start:i]...)
	run := i // start of raw bytes not yet copied into buf
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			buf = append(buf, data[run:i]...)
			d.buf = buf
			if exceeds(len(buf), limit) {
				return "", d.fail(KindStringTooLong, start-1, mode, "string exceeds MaxString")
			}
			d.pos = i + 1
			return string(buf), nil
		case c == '\\':
			buf = append(buf, data[run:i]...)
			at := i
			if i+1 >= len(data) {
				return "", d.fail(KindSyntax, len(data), mode, "unterminated string")
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				i += 2
			case 'b':
				buf = append(buf, '\b')
				i += 2
			case 'f':
				buf = append(buf, '\f')
				i += 2
			case 'n':
				buf = append(buf, '\n')
				i += 2
			case 'r':
				buf = append(buf, '\r')
				i += 2
			case 't':
				buf = append(buf, '\t')
				i += 2
			case 'u':
				r, ok := hex4(data, i+2)
				if !ok {
					return "", d.fail(KindSyntax, at, mode, "invalid \\u escape")
				}
				i += 6
				switch {
				case 0xDC00 <= r && r <= 0xDFFF:
					return "", d.fail(KindSyntax, at, mode, "lone low surrogate escape")
				case 0xD800 <= r && r <= 0xDBFF:
					// JS would keep a lone surrogate and Go would turn it into
					// U+FFFD; only a proper pair is accepted.
					lo, ok := rune(-1), false
					if i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
						lo, ok = hex4(data, i+2)
					}
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return "", d.fail(KindSyntax, at, mode, "lone high surrogate escape")
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.fail(KindSyntax, at, mode, "invalid escape")
			}
			run = i
			if exceeds(len(buf), limit) {
				d.buf = buf
				return "", d.fail(KindStringTooLong, at, mode, "string exceeds MaxString")
			}
		case c < 0x20:
			d.buf = buf
			return "", d.fail(KindSyntax, i, mode, "control character in string")
		case c < utf8.RuneSelf:
			if exceeds(len(buf)+i+1-run, limit) {
				d.buf = buf
				return "", d.fail(KindStringTooLong, i, mode, "string exceeds MaxString")
			}
			i++
		default:
			_, size := utf8.DecodeRune(data[i:])
			if size == 1 {
				d.buf = buf
				return "", d.fail(KindSyntax, i, mode, "invalid UTF-8 in string")
			}
			if exceeds(len(buf)+i+size-run, limit) {
				d.buf = buf
				return "", d.fail(KindStringTooLong, i, mode, "string exceeds MaxString")
			}
			i += size
		}
	}
	d.buf = buf
	return "", d.fail(KindSyntax, len(data), mode, "unterminated string")
}

// hex4 decodes the four hex digits at data[i:i+4].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// scanNumber matches the RFC 8259 number grammar
//
//	-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//
// starting at s[i]. It returns the end of the number and bad == -1, or the
// offset of the first offending byte in bad. It does not look past the
// number: what follows is the caller's business (a separator or trailing
// data).
func scanNumber[T string | []byte](s T, i int) (end, bad int) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return i, i
	case s[i] == '0':
		i++
		if i < len(s) && isDigit(s[i]) {
			return i, i // leading zero
		}
	case '1' <= s[i] && s[i] <= '9':
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return i, i
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return i, i
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return i, i
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i, -1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// checkKey classifies key against the keys already accepted in object f,
// which are pairwise distinct and pairwise not EqualFold, and records it.
// Small objects compare against a flat list with strings.EqualFold (cheap,
// no per-object allocation); once an object reaches smallObject members its
// keys move into a set of fold keys, so a whole object costs O(total key
// bytes) rather than O(n²) comparisons.
func (d *decoder) checkKey(f *frame, key string) Kind {
	if f.fold == nil {
		keys := d.keys[f.keys0:]
		if len(keys) < smallObject {
			for _, k := range keys {
				if k == key {
					return KindDuplicateKey
				}
				if strings.EqualFold(k, key) {
					return KindCaseVariantKey
				}
			}
			d.keys = append(d.keys, key)
			return 0
		}
		f.fold = make(map[string]struct{}, 2*len(keys))
		for _, k := range keys {
			f.fold[foldKey(k)] = struct{}{}
		}
		d.keys = d.keys[:f.keys0] // this object no longer needs the list
	}
	if _, dup := f.obj[key]; dup {
		return KindDuplicateKey
	}
	fk := foldKey(key)
	if _, ok := f.fold[fk]; ok {
		return KindCaseVariantKey // exact duplicates were ruled out above
	}
	f.fold[fk] = struct{}{}
	return 0
}
