// Package strictjson is a bounded, strict JSON decoder for the surface
// protocol kernel.
//
// The kernel talks to a browser peer that parses messages with JSON.parse.
// Any document that the two sides would read differently is a parser
// differential, and differentials are where protocol confusion attacks live
// (one side checks the "method" it sees, the other side executes the one it
// sees). This package therefore accepts only documents whose meaning is the
// same under JSON.parse and under this decoder, and refuses the rest:
//
//   - Duplicate keys are refused. JSON.parse keeps the last occurrence and
//     so does encoding/json, but other readers (and a human reading a log)
//     take the first; refusing is the only answer every reader agrees with.
//   - Keys of one object that are equal under Unicode simple case folding
//     (strings.EqualFold) but not byte-equal, such as "id" and "ID", are
//     refused. encoding/json matches struct fields case-insensitively and
//     keeps the last match, so Go code unmarshalling {"id":"a","ID":"b"}
//     into a struct sees ID == "b", while JS, which is case-sensitive, reads
//     obj.id == "a".
//   - Escaped lone surrogates (for example "\ud800") are refused. JS strings
//     keep them as they are, while Go silently replaces them with U+FFFD, so
//     the two sides would hold different strings.
//   - Invalid UTF-8 is refused rather than replaced, for the same reason.
//   - Numbers are kept as their exact source text (json.Number), never
//     rounded through float64, so the kernel never acts on a value that
//     differs from the one on the wire without saying so.
//
// Everything else follows RFC 8259 to the letter: no comments, no trailing
// commas, no NaN, no leading zeros or '+', exactly one value surrounded only
// by JSON whitespace. A UTF-8 byte order mark is not JSON whitespace and is
// refused. Where the decoder differs from JSON.parse it only ever refuses;
// it never accepts a document with a different meaning.
//
// Decoding is bounded: MaxBytes is checked before the first byte is read,
// and every other limit stops the scan at the byte where it is exceeded, so
// hostile input costs no more than reading up to the limit. The parser is
// iterative, with nesting capped at 10000 even when no depth limit is given,
// so deeply nested input cannot exhaust the goroutine stack.
//
// CheckValue applies the same rules to a Go value tree that was built in
// memory (for example an outgoing message), so both directions of the
// protocol are held to one definition of an acceptable document.
package strictjson
