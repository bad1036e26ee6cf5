package schema

import (
	"strconv"
)

// Schema is a compiled schema document. It is immutable and safe for
// concurrent use.
type Schema struct {
	root *node
}

// Violation is one leaf failure of an instance against a schema.
type Violation struct {
	// InstancePath is the RFC 6901 JSON pointer of the failing value, ""
	// for the instance itself.
	InstancePath string
	// Keyword is the keyword that failed, such as "type" or "required". A
	// false schema reports the keyword that applied it ("properties",
	// "items", ...), or "false" when the whole schema is false.
	Keyword string
	// Message says what is wrong, in the words of the common Go JSON Schema
	// validators (so existing transcripts and clients keep their text).
	Message string
}

// CompileError says why a schema document does not compile.
type CompileError struct {
	// Location is the URI fragment of the offending schema or keyword,
	// "#" for the document itself, "#/properties/a/minLength" for one keyword.
	Location string
	Reason   string
}

func (e *CompileError) Error() string {
	// Quoted: the location holds property names from the document.
	return "schema does not compile at " + strconv.Quote(e.Location) + ": " + e.Reason
}

// node is one compiled schema object or boolean schema.
type node struct {
	loc string // URI fragment of the schema, for errors

	isBool bool
	allow  bool // the value of a boolean schema

	types    []string // as written, for messages
	typeMask uint8    // 1 << kind; integer adds typeInteger

	enum     []any
	enumMsg  string
	hasConst bool
	constV   any
	constMsg string

	props         map[string]*node
	propOrder     []string // sorted names of props: a stable report order
	required      []string
	addl          *node // additionalProperties given as a schema object
	addlFalse     bool  // additionalProperties: false
	patterns      []patternProp
	propertyNames *node
	minProps      int // -1: absent
	maxProps      int
	depRequired   []depRequired
	depSchemas    []depSchema

	prefix      []*node
	items       *node
	contains    *node
	minContains int // 1 unless given
	maxContains int // -1: absent
	minItems    int
	maxItems    int
	unique      bool

	minLen     int
	maxLen     int
	pattern    *pattern
	patternSrc string // as the schema wrote it, for messages

	format     func(string) bool // nil: no format, or one that is not asserted
	formatName string
	content    *contentCheck // draft-07 only

	minimum, maximum, exclMin, exclMax, multipleOf *bound

	ref                 *node
	allOf, anyOf, oneOf []*node
	not                 *node
	ifN, thenN, elseN   *node

	// inPlace lists the subschemas applied to the same instance value; a
	// cycle among them would never consume input and is refused.
	inPlace []*node
}

// typeInteger is the bit for "integer" in typeMask, next to the kind bits.
const typeInteger = 1 << 7

type bound struct {
	d decimal
	f float64 // for messages
}

type patternProp struct {
	re   *pattern
	node *node
}

type depRequired struct {
	name     string
	required []string
}

type depSchema struct {
	name string
	node *node
}
