package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// File is a parsed transcript: the prose header, then the sections in order.
// Format(Parse(b)) returns b for every b that Parse accepts and that ends in
// a newline, so a file can be rewritten section by section without
// disturbing anything else in it.
type File struct {
	Header   []byte
	Sections []Section
}

// Section is one "-- name args --" block. Body holds the lines up to the
// next marker, each with its newline.
type Section struct {
	Name string
	Args string
	Body []byte
	Line int // 1-based line of the marker, for error messages
}

// Section names. The expected sections are the ones Run rewrites with what
// happened; every other section is input and is copied through unchanged.
const (
	secPage     = "page"
	secOptions  = "options"
	secSession  = "session"
	secRequest  = "request"
	secResponse = "response"
	secContains = "contains"
	secAdvance  = "advance"
	secRevoke   = "revoke"
	secNavigate = "navigate"
	secScope    = "scope"
	secLock     = "lock"
	secCalls    = "calls"
	secAudit    = "audit"
)

// expected reports whether Run replaces the section's body.
func expected(name string) bool {
	return name == secResponse || name == secCalls || name == secAudit
}

// Parse splits a transcript into its header and sections and checks their
// shape: known names, well-formed arguments, a header that lists what the
// file pins, and every request answered by a response section. It does not
// interpret JSON bodies; Run does.
func Parse(data []byte) (*File, error) {
	f := &File{}
	var cur *Section
	body := &f.Header
	line := 0
	for len(data) > 0 {
		line++
		var ln []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			ln, data = data[:i+1], data[i+1:]
		} else {
			ln, data = append(data[:len(data):len(data)], '\n'), nil
		}
		if name, args, ok := marker(ln); ok {
			f.Sections = append(f.Sections, Section{Name: name, Args: args, Line: line})
			cur = &f.Sections[len(f.Sections)-1]
			body = &cur.Body
			continue
		}
		*body = append(*body, ln...)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// marker recognises "-- name args --".
func marker(ln []byte) (name, args string, ok bool) {
	s := strings.TrimSuffix(string(ln), "\n")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < len("-- x --") {
		return "", "", false
	}
	s = strings.TrimSpace(s[3 : len(s)-3])
	name, args, _ = strings.Cut(s, " ")
	return name, strings.TrimSpace(args), name != ""
}

func (f *File) check() error {
	if !hasList(f.Header) {
		return errors.New("transcript: the header must open the file with a prose list (lines starting with \"- \") of the behaviours it pins")
	}
	if len(f.Sections) == 0 {
		return errors.New("transcript: no sections")
	}
	for i, s := range f.Sections {
		if err := checkSection(s); err != nil {
			return fmt.Errorf("transcript: line %d: %w", s.Line, err)
		}
		prev := ""
		if i > 0 {
			prev = f.Sections[i-1].Name
		}
		next := ""
		if i+1 < len(f.Sections) {
			next = f.Sections[i+1].Name
		}
		switch {
		case s.Name == secRequest && next != secResponse:
			return fmt.Errorf("transcript: line %d: a request must be followed by its response section", s.Line)
		case s.Name == secResponse && prev != secRequest:
			return fmt.Errorf("transcript: line %d: a response section must follow a request", s.Line)
		case s.Name == secContains && prev != secResponse && prev != secContains:
			return fmt.Errorf("transcript: line %d: a contains section must follow a response", s.Line)
		}
	}
	return nil
}

func hasList(header []byte) bool {
	for _, ln := range strings.Split(string(header), "\n") {
		if strings.HasPrefix(ln, "- ") {
			return true
		}
	}
	return false
}

func checkSection(s Section) error {
	noArgs := func() error {
		if s.Args != "" {
			return fmt.Errorf("section %q takes no arguments", s.Name)
		}
		return nil
	}
	jsonBody := func() error {
		if !json.Valid(s.Body) {
			return fmt.Errorf("section %q must hold one JSON value", s.Name)
		}
		return nil
	}
	switch s.Name {
	case secPage, secOptions, secSession, secContains:
		if err := noArgs(); err != nil {
			return err
		}
		return jsonBody()
	case secResponse, secCalls, secAudit:
		// An empty body is allowed so a new file can be filled in by -update.
		if err := noArgs(); err != nil {
			return err
		}
		if len(bytes.TrimSpace(s.Body)) == 0 {
			return nil
		}
		return jsonBody()
	case secRequest:
		return nil // the args are a free-text label; the body is sent as is
	case secRevoke:
		return noArgs()
	case secAdvance:
		if _, err := strconv.ParseInt(s.Args, 10, 64); err != nil {
			return fmt.Errorf("advance takes a whole number of milliseconds, not %q", s.Args)
		}
		return nil
	case secNavigate, secLock:
		if s.Args == "" || strings.ContainsAny(s.Args, " \t") {
			return fmt.Errorf("section %q takes one argument", s.Name)
		}
		return nil
	case secScope:
		var ids []string
		if err := json.Unmarshal([]byte(s.Args), &ids); err != nil || ids == nil {
			return fmt.Errorf("scope takes a JSON array of capability ids, not %q", s.Args)
		}
		return nil
	}
	return fmt.Errorf("unknown section %q", s.Name)
}

// Format renders f back to transcript text.
func (f *File) Format() []byte {
	var b bytes.Buffer
	b.Write(f.Header)
	for _, s := range f.Sections {
		b.WriteString("-- ")
		b.WriteString(s.Name)
		if s.Args != "" {
			b.WriteByte(' ')
			b.WriteString(s.Args)
		}
		b.WriteString(" --\n")
		b.Write(s.Body)
	}
	return b.Bytes()
}

// requestBytes is what a request section sends: its body without the
// newline that ends the section, so a body can end in any byte but that one.
func requestBytes(body []byte) []byte {
	return bytes.TrimSuffix(body, []byte("\n"))
}
