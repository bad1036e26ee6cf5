package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseView decodes the JSON form of a View (the json tags of View and the
// types it holds) exactly as encoding/json does with Decoder.UseNumber:
// numbers in free-form values (Record.Fields, View.State) stay json.Number,
// unknown members are ignored, and anything after the value is an error.
//
// Hosts that receive the page's view as JSON text call it on every read
// whose text changed. encoding/json works by reflection, which costs about
// five times more under WebAssembly than natively; ParseView reads the
// usual form of a view directly and leaves everything else (members spelt
// in another case, repeated members, escaped surrogates, type mismatches,
// malformed input) to encoding/json, so the two never disagree.
func ParseView(data []byte) (*View, error) {
	if utf8.Valid(data) {
		// One copy of the text; strings without escapes are slices of it,
		// which saves an allocation per string (a view holds many ids).
		p := viewParser{data: string(data)}
		v := new(View)
		p.space()
		p.view(v)
		p.space()
		if !p.bad && p.pos == len(data) {
			return v, nil
		}
	}
	v := new(View)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// viewParser reads the common form of a view. bad means "not taken":
// ParseView then asks encoding/json.
type viewParser struct {
	data string
	pos  int
	bad  bool
}

// maxViewDepth bounds the nesting of free-form values the parser follows;
// deeper input goes to encoding/json.
const maxViewDepth = 200

var (
	viewFields        = []string{"route", "actions", "regions", "records", "recordIds", "recordIdsTotal", "recordsTotal", "state", "feedback", "unavailable"}
	regionFields      = []string{"id", "label", "description"}
	recordFields      = []string{"id", "kind", "fields", "offscreen", "actions"}
	feedbackFields    = []string{"level", "message", "record"}
	unavailableFields = []string{"id", "reason"}
)

func (p *viewParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (p *viewParser) peek() byte {
	p.space()
	if p.pos >= len(p.data) {
		return 0
	}
	return p.data[p.pos]
}

func (p *viewParser) null() bool {
	if p.peek() == 'n' && strings.HasPrefix(p.data[p.pos:], "null") {
		p.pos += 4
		return true
	}
	return false
}

// object reads an object, calling member for each member name with the
// position at its value; member must read the value. seen[i] records the
// names of fields (by index) already read: a repeated field is left to
// encoding/json, and so is a name that matches a field only when case is
// ignored, which encoding/json would also take.
func (p *viewParser) object(fields []string, member func(field int)) {
	if p.peek() != '{' {
		p.bad = true
		return
	}
	p.pos++
	var seen uint32
	if p.peek() == '}' {
		p.pos++
		return
	}
	for !p.bad {
		if p.peek() != '"' {
			p.bad = true
			return
		}
		key := p.str()
		if p.peek() != ':' {
			p.bad = true
			return
		}
		p.pos++
		field := -1
		for i, f := range fields {
			if key == f {
				field = i
				break
			}
			if strings.EqualFold(key, f) {
				p.bad = true
				return
			}
		}
		if field >= 0 {
			if seen&(1<<field) != 0 {
				p.bad = true
				return
			}
			seen |= 1 << field
			member(field)
		} else {
			p.value(0) // unknown: read and dropped
		}
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return
		default:
			p.bad = true
		}
	}
}

// array reads an array, calling elem with the position at each element.
// It reports whether the array was there (false for null).
func (p *viewParser) array(elem func()) bool {
	if p.null() {
		return false
	}
	if p.peek() != '[' {
		p.bad = true
		return false
	}
	p.pos++
	if p.peek() == ']' {
		p.pos++
		return true
	}
	for !p.bad {
		elem()
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return true
		default:
			p.bad = true
		}
	}
	return true
}

// field reads a string field: null leaves it as it is, as encoding/json does.
func (p *viewParser) field(dst *string) {
	if p.null() {
		return
	}
	if p.peek() != '"' {
		p.bad = true
		return
	}
	*dst = p.str()
}

func (p *viewParser) intField(dst *int) {
	if p.null() {
		return
	}
	p.space()
	start := p.pos
	for p.pos < len(p.data) && numberByte(p.data[p.pos]) {
		p.pos++
	}
	text := p.data[start:p.pos]
	if !validNumber(text) || strings.ContainsAny(text, ".eE") {
		p.bad = true // not an integer: encoding/json reports it
		return
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || int64(int(n)) != n {
		p.bad = true
		return
	}
	*dst = int(n)
}

func (p *viewParser) boolField(dst *bool) {
	switch {
	case p.null():
	case p.literal("true"):
		*dst = true
	case p.literal("false"):
		*dst = false
	default:
		p.bad = true
	}
}

func (p *viewParser) literal(lit string) bool {
	if p.peek() == lit[0] && strings.HasPrefix(p.data[p.pos:], lit) {
		p.pos += len(lit)
		return true
	}
	return false
}

// str reads a string literal (the position is at its quote). Escaped
// surrogates and control characters are left to encoding/json, which turns
// lone surrogates into U+FFFD; the input is valid UTF-8 (checked once).
func (p *viewParser) str() string {
	p.pos++ // the opening quote
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			p.pos++
			return s
		}
		if c == '\\' {
			return p.strEscaped(start)
		}
		if c < 0x20 {
			p.bad = true
			return ""
		}
		p.pos++
	}
	p.bad = true
	return ""
}

func (p *viewParser) strEscaped(start int) string {
	b := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b)
		case c < 0x20:
			p.bad = true
			return ""
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			p.bad = true
			return ""
		}
		switch e := p.data[p.pos+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if p.pos+6 > len(p.data) {
				p.bad = true
				return ""
			}
			r, err := strconv.ParseUint(p.data[p.pos+2:p.pos+6], 16, 32)
			if err != nil || (r >= 0xD800 && r <= 0xDFFF) {
				p.bad = true
				return ""
			}
			b = utf8.AppendRune(b, rune(r))
			p.pos += 4
		default:
			p.bad = true
			return ""
		}
		p.pos += 2
	}
	p.bad = true
	return ""
}

// value reads any JSON value as encoding/json reads it into an any with
// UseNumber: map[string]any (a repeated name keeps its last value), []any,
// string, json.Number, bool or nil.
func (p *viewParser) value(depth int) any {
	if depth > maxViewDepth {
		p.bad = true
		return nil
	}
	switch c := p.peek(); {
	case c == '{':
		p.pos++
		m := map[string]any{}
		if p.peek() == '}' {
			p.pos++
			return m
		}
		for !p.bad {
			if p.peek() != '"' {
				p.bad = true
				return nil
			}
			key := p.str()
			if p.peek() != ':' {
				p.bad = true
				return nil
			}
			p.pos++
			m[key] = p.value(depth + 1)
			switch p.peek() {
			case ',':
				p.pos++
			case '}':
				p.pos++
				return m
			default:
				p.bad = true
			}
		}
		return nil
	case c == '[':
		list := []any{}
		p.array(func() { list = append(list, p.value(depth+1)) })
		return list
	case c == '"':
		return p.str()
	case c == 't' && p.literal("true"):
		return true
	case c == 'f' && p.literal("false"):
		return false
	case c == 'n' && p.null():
		return nil
	case c == '-' || ('0' <= c && c <= '9'):
		start := p.pos
		for p.pos < len(p.data) && numberByte(p.data[p.pos]) {
			p.pos++
		}
		text := p.data[start:p.pos]
		if !validNumber(text) {
			p.bad = true
			return nil
		}
		return json.Number(text)
	}
	p.bad = true
	return nil
}

// freeObject reads a map[string]any field: null leaves it nil, {} makes an
// empty map, as encoding/json does.
func (p *viewParser) freeObject(dst *map[string]any) {
	if p.null() {
		return
	}
	if p.peek() != '{' {
		p.bad = true
		return
	}
	m, _ := p.value(0).(map[string]any)
	*dst = m
}

func (p *viewParser) view(v *View) {
	p.object(viewFields, func(field int) {
		switch viewFields[field] {
		case "route":
			p.field(&v.Route)
		case "actions":
			p.bad = true // hosts send actions apart; encoding/json reads them here
		case "regions":
			list := []Region{}
			if p.array(func() {
				var r Region
				p.object(regionFields, func(f int) {
					switch f {
					case 0:
						p.field(&r.ID)
					case 1:
						p.field(&r.Label)
					case 2:
						p.field(&r.Description)
					}
				})
				list = append(list, r)
			}) {
				v.Regions = list
			}
		case "records":
			list := []Record{}
			if p.array(func() {
				var r Record
				p.record(&r)
				list = append(list, r)
			}) {
				v.Records = list
			}
		case "recordIds":
			list := []string{}
			if p.array(func() {
				var s string
				if p.peek() != '"' {
					p.bad = true // null elements and the rest: encoding/json decides
					return
				}
				s = p.str()
				list = append(list, s)
			}) {
				v.RecordIDs = list
			}
		case "recordIdsTotal":
			p.intField(&v.RecordIDsTotal)
		case "recordsTotal":
			p.intField(&v.RecordsTotal)
		case "state":
			p.freeObject(&v.State)
		case "feedback":
			list := []Feedback{}
			if p.array(func() {
				var f Feedback
				p.object(feedbackFields, func(i int) {
					switch i {
					case 0:
						p.field(&f.Level)
					case 1:
						p.field(&f.Message)
					case 2:
						p.field(&f.Record)
					}
				})
				list = append(list, f)
			}) {
				v.Feedback = list
			}
		case "unavailable":
			list := []Unavailable{}
			if p.array(func() {
				var u Unavailable
				p.object(unavailableFields, func(i int) {
					switch i {
					case 0:
						p.field(&u.ID)
					case 1:
						p.field(&u.Reason)
					}
				})
				list = append(list, u)
			}) {
				v.Unavailable = list
			}
		}
	})
}

func (p *viewParser) record(r *Record) {
	p.object(recordFields, func(f int) {
		switch f {
		case 0:
			p.field(&r.ID)
		case 1:
			p.field(&r.Kind)
		case 2:
			p.freeObject(&r.Fields)
		case 3:
			p.boolField(&r.Offscreen)
		case 4:
			p.stringMap(&r.Actions)
		}
	})
}

// stringMap reads a map[string]string field. A null value in it is left
// to encoding/json (which stores "").
func (p *viewParser) stringMap(dst *map[string]string) {
	if p.null() {
		return
	}
	if p.peek() != '{' {
		p.bad = true
		return
	}
	p.pos++
	m := map[string]string{}
	*dst = m
	if p.peek() == '}' {
		p.pos++
		return
	}
	for !p.bad {
		if p.peek() != '"' {
			p.bad = true
			return
		}
		key := p.str()
		if p.peek() != ':' {
			p.bad = true
			return
		}
		p.pos++
		if p.peek() != '"' {
			p.bad = true
			return
		}
		m[key] = p.str()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return
		default:
			p.bad = true
		}
	}
}
