package surface

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"pling.dev/agent/surface/internal/strictjson"
)

// request is an envelope that passed step 1 (object, id, protocol, method).
// Method-specific fields are checked later, in step 4, so that session and
// rate-limit failures win over a bad field as the processing order demands.
type request struct {
	ID     string
	Method string
	fields map[string]any
}

// DescribeInput is the optional input of describe.
type DescribeInput struct {
	// Records names up to maxRecordSelection record ids to read in full.
	// It excludes Offset and Limit.
	Records []string
	// Offset and Limit select the record window; nil means unset.
	Offset *int
	Limit  *int
	// Changed asks for an empty capability list when the session's list is
	// unchanged since the last description it was sent.
	Changed bool
}

func (l Limits) strict() strictjson.Limits {
	return strictjson.Limits{
		MaxBytes:   l.MaxRequestBytes,
		MaxDepth:   l.MaxDepth,
		MaxString:  l.MaxStringBytes,
		MaxArray:   l.MaxArrayLen,
		MaxMembers: l.MaxMembers,
	}
}

// decodeError turns a strict decoder failure into INVALID_REQUEST. The kind
// decides the message; the input itself is never echoed.
func decodeError(err error) *Error {
	return decodeErrorOf("request", err)
}

// decodeErrorOf is decodeError for what names itself subject ("request",
// "describe input").
func decodeErrorOf(subject string, err error) *Error {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return newError(CodeInvalidRequest, subject+" is not valid JSON")
	}
	msg := subject + " is not valid JSON"
	switch se.Kind {
	case strictjson.KindTooLarge:
		msg = subject + " is larger than the size limit"
	case strictjson.KindTooDeep:
		msg = subject + " is nested deeper than the limit"
	case strictjson.KindStringTooLong:
		msg = "a string in the " + subject + " is longer than the limit"
	case strictjson.KindArrayTooLong:
		msg = "an array in the " + subject + " is longer than the limit"
	case strictjson.KindTooManyMembers:
		msg = "an object in the " + subject + " has more members than the limit"
	case strictjson.KindDuplicateKey:
		msg = subject + " has a duplicate key"
	case strictjson.KindCaseVariantKey:
		msg = subject + " has keys that differ only in case"
	case strictjson.KindUnsupportedValue:
		msg = subject + " holds a value that is not JSON"
	}
	if se.Path != "" {
		msg += " at " + clip(se.Path)
	}
	return newError(CodeInvalidRequest, msg)
}

// maxEchoBytes bounds each piece of a request (a key, a JSON pointer) that
// a message quotes, so that no message grows with the request.
const maxEchoBytes = 64

// clip cuts s to maxEchoBytes bytes on a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxEchoBytes {
		return s
	}
	n := maxEchoBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// quoteClipped is strconv.Quote of clip(s).
func quoteClipped(s string) string { return strconv.Quote(clip(s)) }

// validID reports whether id passes the id rules: a non-empty string of at
// most MaxIDBytes bytes of UTF-8. Only such an id is ever echoed.
func validID(id string) bool {
	return id != "" && len(id) <= MaxIDBytes && utf8.ValidString(id)
}

// refusedID is the id to echo for a request the strict decoder refused: the
// id when every reader would read the same one and it passes the rules,
// else "" (the id cannot be read).
func refusedID(id string, ok bool) string {
	if !ok || !validID(id) {
		return ""
	}
	return id
}

// parseEnvelope runs step 1 of the processing order on a decoded tree. It
// returns the id it could read (possibly "") even when it fails.
func parseEnvelope(v any) (*request, string, *Error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "", newError(CodeInvalidRequest, "request must be a JSON object")
	}
	id, ok := obj["id"].(string)
	if !ok || id == "" {
		return nil, "", newError(CodeInvalidRequest, "id must be a non-empty string")
	}
	if !validID(id) {
		return nil, "", newError(CodeInvalidRequest, "id is longer than "+strconv.Itoa(MaxIDBytes)+" bytes")
	}
	proto, present := obj["protocol"]
	ps, ok := proto.(string)
	switch {
	case !present:
		return nil, id, newError(CodeInvalidRequest, "protocol is required")
	case !ok:
		return nil, id, newError(CodeInvalidRequest, "protocol must be a string")
	case ps != Protocol:
		return nil, id, newError(CodeProtocolVersionUnsupported, "only "+Protocol+" is supported")
	}
	m, present := obj["method"]
	ms, ok := m.(string)
	switch {
	case !present:
		return nil, id, newError(CodeInvalidRequest, "method is required")
	case !ok:
		return nil, id, newError(CodeInvalidRequest, "method must be a string")
	case ms != string(methodDescribe) && ms != string(methodInvoke):
		return nil, id, newError(CodeMethodNotSupported, "method must be describe or invoke")
	}
	return &request{ID: id, Method: ms, fields: obj}, id, nil
}

// checkKnownFields refuses envelope members outside the method's set. A body
// cannot smuggle a session, a scope or anything else the kernel would ignore.
func checkKnownFields(obj map[string]any, allowed ...string) *Error {
	var unknown []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	// Name the first in key order so the message does not depend on map order.
	return newError(CodeInvalidRequest, "unknown field "+quoteClipped(slices.Min(unknown)))
}

// parseDescribeInput checks describe's input (step 4).
func parseDescribeInput(raw any, present bool) (DescribeInput, *Error) {
	var in DescribeInput
	if !present {
		return in, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return in, newError(CodeInvalidRequest, "describe input must be an object")
	}
	// Sorted, so that with several bad fields the same one is reported every time.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := obj[k]
		switch k {
		case "record":
			ids, err := parseRecordSelection(v)
			if err != nil {
				return in, err
			}
			in.Records = ids
		case "offset", "limit":
			n, ok := nonNegativeInt(v)
			if !ok {
				return in, newError(CodeInvalidRequest, k+" must be a non-negative integer")
			}
			if k == "offset" {
				in.Offset = &n
			} else {
				in.Limit = &n
			}
		case "capabilities":
			switch v {
			case "full":
			case "changed":
				in.Changed = true
			default:
				return in, newError(CodeInvalidRequest, `capabilities must be "full" or "changed"`)
			}
		default:
			return in, newError(CodeInvalidRequest, "unknown describe input field "+quoteClipped(k))
		}
	}
	if in.Records != nil && (in.Offset != nil || in.Limit != nil) {
		return in, newError(CodeInvalidRequest, "record cannot be combined with offset or limit")
	}
	return in, nil
}

func parseRecordSelection(v any) ([]string, *Error) {
	switch t := v.(type) {
	case string:
		if t == "" {
			return nil, newError(CodeInvalidRequest, "record must be a non-empty string")
		}
		return []string{t}, nil
	case []any:
		if len(t) == 0 || len(t) > maxRecordSelection {
			return nil, newError(CodeInvalidRequest, "record must list 1 to 20 ids")
		}
		ids := make([]string, 0, len(t))
		seen := make(map[string]bool, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, newError(CodeInvalidRequest, "record ids must be non-empty strings")
			}
			if !seen[s] {
				seen[s] = true
				ids = append(ids, s)
			}
		}
		return ids, nil
	}
	return nil, newError(CodeInvalidRequest, "record must be a string or an array of strings")
}

// maxSafeInteger is the largest integer a JavaScript peer represents exactly.
const maxSafeInteger = 1<<53 - 1

// nonNegativeInt accepts what a JavaScript peer would call a non-negative
// safe integer: 3, 3.0 and 3e0 alike (JSON.parse cannot tell them apart),
// never 1.5, -1, "3" or 1e400.
func nonNegativeInt(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, false
	}
	return int(f), true
}
