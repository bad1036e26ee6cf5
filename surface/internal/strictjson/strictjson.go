package strictjson

import (
	"strconv"
	"strings"
)

// Limits bounds a decode. A zero field means "no bound" for that field only.
//
// A negative field is a bound that nothing satisfies (fail closed), so a
// limit computed by a caller that underflowed refuses everything instead of
// silently meaning "unbounded".
//
// MaxDepth is the one exception to "zero means no bound": nesting is always
// capped at 10000 (the same cap encoding/json uses), and a larger MaxDepth is
// clamped to it, so hostile "[[[[..." or a cyclic Go value can never run
// away.
type Limits struct {
	MaxBytes   int // total input size in bytes
	MaxDepth   int // nesting depth of arrays/objects (top-level object = depth 1)
	MaxString  int // bytes of any one decoded string, object keys included
	MaxArray   int // elements of any one array
	MaxMembers int // members of any one object
}

// hardMaxDepth is the nesting cap applied when MaxDepth is zero or larger.
const hardMaxDepth = 10000

func effectiveDepth(d int) int {
	if d == 0 || d > hardMaxDepth {
		return hardMaxDepth
	}
	return d
}

// exceeds reports whether n breaks the bound max (0 means unbounded).
func exceeds(n, max int) bool { return max != 0 && n > max }

// Kind says which rule a document broke; callers map it to protocol codes
// without reading messages.
type Kind uint8

const (
	KindSyntax           Kind = iota + 1 // not JSON, trailing data, bad escape, invalid UTF-8, lone surrogate
	KindTooLarge                         // MaxBytes
	KindTooDeep                          // MaxDepth
	KindStringTooLong                    // MaxString
	KindArrayTooLong                     // MaxArray
	KindTooManyMembers                   // MaxMembers
	KindDuplicateKey                     // same key twice in one object
	KindCaseVariantKey                   // two keys of one object equal under strings.EqualFold but not byte-equal
	KindUnsupportedValue                 // only from CheckValue: a Go value that is not a JSON value
)

var kindNames = [...]string{
	KindSyntax:           "syntax",
	KindTooLarge:         "too_large",
	KindTooDeep:          "too_deep",
	KindStringTooLong:    "string_too_long",
	KindArrayTooLong:     "array_too_long",
	KindTooManyMembers:   "too_many_members",
	KindDuplicateKey:     "duplicate_key",
	KindCaseVariantKey:   "case_variant_key",
	KindUnsupportedValue: "unsupported_value",
}

// String returns a stable snake_case name, suitable for logs and metrics.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Error reports why a document or value was refused.
type Error struct {
	Kind   Kind
	Offset int64  // byte offset in input where detected (-1 for CheckValue)
	Path   string // JSON pointer (RFC 6901) of the offending value where known, "" for the root
	Msg    string // short human text, no input content echoed beyond the path
}

func (e *Error) Error() string {
	if e == nil {
		return "strictjson: <nil>"
	}
	var b strings.Builder
	b.WriteString("strictjson: ")
	b.WriteString(e.Kind.String())
	if e.Path != "" {
		// Quoted so a hostile key cannot inject control characters into logs.
		b.WriteString(" at ")
		b.WriteString(strconv.Quote(e.Path))
	}
	if e.Offset >= 0 {
		b.WriteString(" (offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteByte(')')
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// appendPointerToken appends one RFC 6901 reference token: "~" becomes "~0"
// and "/" becomes "~1".
func appendPointerToken(b *strings.Builder, tok string) {
	if !strings.ContainsAny(tok, "~/") {
		b.WriteString(tok)
		return
	}
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; c {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(c)
		}
	}
}
