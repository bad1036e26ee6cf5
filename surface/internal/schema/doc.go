// Package schema compiles and applies capability input schemas for the
// surface kernel: a JSON Schema 2020-12 assertion subset, standard library
// only.
//
// The kernel refuses an invoke whose input fails its capability's schema,
// and withholds a capability whose schema does not compile. The validator
// therefore fails closed: a schema either compiles to something that checks
// every assertion it states, or it does not compile at all.
//
// # Supported keywords
//
// Assertions and applicators: type (a name or an array of names; "integer"
// accepts any number with no fractional part, 1.0 included), enum, const,
// properties, required, additionalProperties, patternProperties,
// propertyNames, minProperties, maxProperties, dependentRequired,
// dependentSchemas, items, prefixItems, contains, minContains, maxContains,
// minItems, maxItems, uniqueItems, minLength, maxLength (in Unicode code
// points), pattern (see Patterns), minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// multipleOf, format (see Formats), allOf, anyOf, oneOf, not,
// if/then/else, $ref, $defs and definitions, and the boolean schemas true
// and false.
//
// $ref accepts "#" and JSON pointers into the same document ("#/$defs/a",
// "#/definitions/a", "#/properties/a/items", percent-encoding allowed).
// References are resolved when the schema compiles, and every schema in the
// document is compiled once however often it is referenced.
//
// Annotations are checked for shape and otherwise ignored: title,
// description, default, examples, deprecated, readOnly, writeOnly,
// $comment, contentEncoding, contentMediaType and contentSchema (but see
// draft-07 below). $schema may be absent or name 2020-12,
// 2019-09 or draft-07, at the root only. $id is accepted at the root only,
// where it cannot change what a "#..." reference means, and is ignored.
// Keywords no dialect defines are ignored, as 2020-12 says.
//
// Documents always get the 2020-12 meaning of each keyword. Naming an older
// dialect only removes what it lacks: under 2019-09 prefixItems is an
// unknown keyword; under draft-07 so are prefixItems, dependentRequired,
// dependentSchemas, minContains and maxContains, and keywords next to $ref
// are ignored, as draft-07 says. draft-07 also asserts content, as the
// validator the kernel used before did: with contentEncoding "base64" the
// string must decode ("value is not base64 encoded"), and with
// contentMediaType "application/json" the string, or what it decodes to,
// must be JSON ("value is not of mediatype 'application/json'"). Other
// encodings and media types stay annotations, and an unknown encoding
// means the media type is not checked either.
//
// # Patterns
//
// pattern and the keys of patternProperties are ECMA-262 regular
// expressions with the Unicode flag's semantics, as JSON Schema specifies
// and as the page's own JavaScript reads them, matched anywhere in the
// string. Each is parsed as ECMA-262 into a regexp/syntax program and run
// by a Pike VM, in time linear in the input whatever the pattern:
// \d, \w and \b are ASCII; \s is every ECMA-262 WhiteSpace and
// LineTerminator (U+000B, U+00A0, U+FEFF, U+2028, U+2029 and every Zs
// character among them) and \S its complement; "." is any code point but
// \n, \r, U+2028 and U+2029; $ is the end of the input only; [] matches
// nothing and [^] anything; \t \n \v \f \r \0 \cX \xHH \uHHHH (surrogate
// pairs included) and \u{H...} are characters; \p{...} and \P{...} take
// General_Category values by any of their names (L, Letter, Nd, digit, ...)
// and gc=, General_Category=, sc= and Script= forms; {n,m} counts may have
// leading zeros. What a finite automaton cannot express, or a pattern that
// is not ECMA-262, does not compile: lookahead and lookbehind,
// backreferences, lone surrogate escapes, the properties Go has no table
// for (C and Other, which include unassigned code points, LC,
// Script_Extensions, binary properties but Any and ASCII), Go-only syntax
// (\z, \A, \Q, (?i), (?P<n>), [[:alpha:]], \pL), and RE2's bounds: repeat
// counts over 1000, nested repeats of over 1000 copies, and a repeat that
// would compile to over 3.3 million instructions.
//
// The format "regex" still checks Go regexp syntax, as the validator the
// kernel used before did. It is read without regexp/syntax's parser (see
// goregexp.go) and gets regexp.Compile's verdict except near two of that
// parser's bounds, 1,000 levels of nesting and 3.3 million instructions,
// which are estimated.
//
// # Formats
//
// format is an assertion whatever $schema says (2020-12 and 2019-09 make it
// an annotation by default; the validator the kernel used before asserted
// it for documents without $schema, and page authors rely on that). The
// checks give that validator's verdicts, including where it is more
// lenient than the RFCs, so no input changes fate: date-time, date, time,
// duration, period, hostname, email, ipv4 (also ip-address), ipv6, uri,
// iri, uri-reference (also uriref), iri-reference, uri-template, regex (Go
// syntax), json-pointer, relative-json-pointer and uuid. Among the
// leniencies: uri and uri-reference accept characters such as spaces in
// paths, ipv4 and time read numbers with strconv.Atoi ("+1.2.3.4"),
// hostname checks only the first label for a leading hyphen, and email
// with a bracketed domain ("x@[192.0.2.1]") does not check the local part.
// Formats judge strings only; other values pass. Any other name, including
// idn-email and idn-hostname, is an annotation, as it was before. A
// failure reads "'abc' is not valid 'email'".
//
// # What does not compile
//
// A keyword this package does not implement would be silently skipped if it
// were ignored, letting through input its author meant to refuse. So these
// make Compile fail: $dynamicRef, $dynamicAnchor, $recursiveRef,
// $recursiveAnchor, $anchor, $vocabulary, unevaluatedProperties,
// unevaluatedItems, dependencies (the pre-2019 form), $id below the root,
// $schema below the root or naming another dialect, any $ref that is not a
// pointer into this document (remote, relative, anchor, or the ambiguous
// "#/"), items as an array (the pre-2020 tuple form), and under draft-07
// contentSchema next to contentMediaType, which the previous validator
// applied to the content there.
//
// Malformed values fail too, with a *CompileError naming the location: an
// unknown type name, a negative or fractional count, a pattern that is not
// one of the ECMA-262 patterns above, required that is not an array of distinct strings, an
// empty allOf/anyOf/oneOf/prefixItems, an empty enum (validators disagree
// on it; write false), multipleOf <= 0, a $ref to nothing, a title that is
// not a string, and so on. So does a cycle of references that never
// descends into the instance ({"$ref": "#"} at the root, or two definitions
// that allOf each other), which could only loop. The document itself is
// read with strictjson, so duplicate or case-variant keys refuse it as well.
//
// Validation is bounded: past 256 nested subschema applications or 2^20
// schema evaluations it stops with a violation rather than run on, so no
// schema can overflow the stack or hang the page.
//
// # Numbers
//
// Numbers compare as exact decimals, never through float64: 1, 1.0 and 1e0
// are equal for enum, const and uniqueItems, and minimum: 0.1 is exactly
// 0.1. Instance numbers may be json.Number (exact text), float64 (read as
// the shortest decimal that round-trips, which is what it prints as) or Go
// integers. Exponents beyond ±10^18 saturate. multipleOf is exact whenever
// the divisor has at most 18 significant digits, by modular arithmetic on
// the digits; a longer divisor falls back to float64 division, which can
// misjudge values float64 cannot represent.
//
// # Reports
//
// Validate returns the leaf failures with the instance location (an RFC 6901
// pointer), the failing keyword and a message. Messages keep the wording of
// the most common Go JSON Schema validator (the tests' reference
// implementation), so text that clients and transcripts already show does
// not change: "expected string, but got number", "missing properties:
// 'note'", "additionalProperties 'x' not allowed". anyOf and oneOf with no
// passing branch report the failures of every branch; a wrongly typed value
// reports only its type.
package schema
