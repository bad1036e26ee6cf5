package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// ParseActions decodes the JSON form of an action list (the json tags of
// Action and RecordTemplate) exactly as encoding/json decodes it into a
// []Action with Decoder.UseNumber: null gives a nil list, an input schema
// keeps its exact text (null included, as "null"), unknown members are
// ignored, and anything after the value is an error.
//
// Hosts that receive the page's actions as JSON text parse them once per
// version. Under WebAssembly, encoding/json's first use of a type costs
// tens of milliseconds (reflection over the type, then cold code), which
// lands on a page's first describe. ParseActions reads the usual form
// directly and, like ParseView, leaves everything else (members spelt in
// another case, repeated members, escaped surrogates in read strings, null
// list elements, type mismatches, malformed input) to encoding/json, so
// the two never disagree.
func ParseActions(data []byte) ([]Action, error) {
	if utf8.Valid(data) {
		p := viewParser{data: string(data)}
		p.space()
		acts := p.actionList()
		p.space()
		if !p.bad && p.pos == len(data) {
			return acts, nil
		}
	}
	var acts []Action
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&acts); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return acts, nil
}

var (
	actionFields   = []string{"id", "description", "inputSchema", "effect", "approval", "fidelity", "source", "scopePath", "handoff", "flowSteps", "offscreen", "record"}
	templateFields = []string{"kind", "param", "total", "offscreen"}
)

// actionList reads a list of actions; null gives nil, as encoding/json does.
func (p *viewParser) actionList() []Action {
	acts := []Action{}
	if !p.array(func() {
		acts = append(acts, Action{})
		p.action(&acts[len(acts)-1])
	}) {
		return nil
	}
	return acts
}

func (p *viewParser) action(a *Action) {
	p.object(actionFields, func(field int) {
		switch field {
		case 0:
			p.field(&a.ID)
		case 1:
			p.field(&a.Description)
		case 2:
			a.InputSchema = p.raw()
		case 3:
			p.field(&a.Effect)
		case 4:
			p.field(&a.Approval)
		case 5:
			p.field(&a.Fidelity)
		case 6:
			p.field(&a.Source)
		case 7:
			p.stringList(&a.ScopePath)
		case 8:
			p.field(&a.Handoff)
		case 9:
			p.stringList(&a.FlowSteps)
		case 10:
			p.boolField(&a.Offscreen)
		case 11:
			if p.null() {
				return
			}
			t := new(RecordTemplate)
			p.object(templateFields, func(f int) {
				switch f {
				case 0:
					p.field(&t.Kind)
				case 1:
					p.field(&t.Param)
				case 2:
					p.intField(&t.Total)
				case 3:
					p.intField(&t.Offscreen)
				}
			})
			a.Record = t
		}
	})
}

// stringList reads a []string field: null leaves it nil, [] makes it
// empty. A null element is left to encoding/json (which stores "").
func (p *viewParser) stringList(dst *[]string) {
	list := []string{}
	if p.array(func() {
		if p.peek() != '"' {
			p.bad = true
			return
		}
		list = append(list, p.str())
	}) {
		*dst = list
	}
}

// raw reads any value and returns a copy of its text, as json.RawMessage
// keeps it (a null value too).
func (p *viewParser) raw() json.RawMessage {
	p.space()
	start := p.pos
	p.skip(0)
	if p.bad {
		return nil
	}
	return json.RawMessage(p.data[start:p.pos])
}

// skip reads over one value, checking it as strictly as encoding/json's
// scanner does, without building anything. Strings are only checked, not
// decoded, so escaped surrogates are fine here.
func (p *viewParser) skip(depth int) {
	if depth > maxViewDepth {
		p.bad = true
		return
	}
	switch c := p.peek(); {
	case c == '{':
		p.pos++
		if p.peek() == '}' {
			p.pos++
			return
		}
		for !p.bad {
			if p.peek() != '"' {
				p.bad = true
				return
			}
			p.skipString()
			if p.peek() != ':' {
				p.bad = true
				return
			}
			p.pos++
			p.skip(depth + 1)
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
	case c == '[':
		p.array(func() { p.skip(depth + 1) })
	case c == '"':
		p.skipString()
	case c == 't' && p.literal("true"), c == 'f' && p.literal("false"), c == 'n' && p.null():
	case c == '-' || ('0' <= c && c <= '9'):
		start := p.pos
		for p.pos < len(p.data) && numberByte(p.data[p.pos]) {
			p.pos++
		}
		if !validNumber(p.data[start:p.pos]) {
			p.bad = true
		}
	default:
		p.bad = true
	}
}

// skipString reads over a string literal (the position is at its quote).
func (p *viewParser) skipString() {
	p.pos++
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return
		case c < 0x20:
			p.bad = true
			return
		case c != '\\':
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break // unterminated
		}
		switch p.data[p.pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.pos += 2
		case 'u':
			if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
				p.bad = true
				return
			}
			p.pos += 6
		default:
			p.bad = true
			return
		}
	}
	p.bad = true
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
