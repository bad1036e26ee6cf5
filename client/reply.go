package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"pling.dev/agent/surface"
)

// maxReplyDepth bounds the nesting the key check walks. The kernel refuses
// requests deeper than 32; results and descriptions add a few levels.
const maxReplyDepth = 128

// expect is what a reply must match.
type expect struct {
	id     string
	method method
	app    string // "" accepts any app
	max    int    // largest reply in bytes
}

// envelope is a reply that passed the checks common to both methods.
type envelope struct {
	ok     bool
	result json.RawMessage // set when ok
	after  json.RawMessage // set when ok and after is present and not null
	perr   *ProtocolError  // set when !ok
	app    string          // the wrapper's app, when the reply came wrapped
}

// parseEnvelope checks a reply and splits it into a success or a protocol
// failure. Every field that decides the classification is read with its
// exact name; anything ambiguous is refused rather than guessed at.
func parseEnvelope(data []byte, want expect) (*envelope, error) {
	if want.max > 0 && len(data) > want.max {
		return nil, badReply("larger than " + strconv.Itoa(want.max) + " bytes")
	}
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	top, ok := members(data)
	if !ok {
		return nil, badReply("not a JSON object")
	}
	env := &envelope{}
	if raw, wrapped := top["envelope"]; wrapped {
		if s, _ := str(top["channel"]); s != "pling.surface" {
			return nil, badReply("wrapper is not on the pling.surface channel")
		}
		if s, _ := str(top["kind"]); s != "response" {
			return nil, badReply("wrapper is not a response")
		}
		if a, present := top["app"]; present && !isNull(a) {
			if env.app, ok = str(a); !ok {
				return nil, badReply("wrapper app is not a string")
			}
		}
		if want.app != "" && env.app != want.app {
			return nil, &ReplyError{Err: ErrAppMismatch, Detail: "app " + brief(env.app) + ", want " + brief(want.app)}
		}
		if top, ok = members(raw); !ok {
			return nil, badReply("envelope is not a JSON object")
		}
	}

	p, present := top["protocol"]
	proto, isStr := str(p)
	switch {
	case !present || !isStr:
		return nil, badReply("protocol missing or not a string")
	case proto != surface.Protocol:
		return nil, &ReplyError{Err: ErrProtocolMismatch, Detail: "protocol " + brief(proto)}
	}
	id, isStr := str(top["id"])
	if !isStr {
		return nil, badReply("id missing or not a string")
	}
	if _, present := top["ok"]; !present {
		return nil, badReply("ok missing")
	}
	okv, isBool := boolean(top["ok"])
	if !isBool {
		return nil, badReply("ok is not a boolean")
	}
	env.ok = okv
	result, hasResult := top["result"]
	errv, hasError := top["error"]
	if hasError && isNull(errv) {
		hasError = false
	}

	if !okv {
		// A request too broken to read its id from is answered with "";
		// the transport already paired this reply with the request.
		if id != want.id && id != "" {
			return nil, &ReplyError{Err: ErrIDMismatch, Detail: "id " + brief(id) + ", want " + brief(want.id)}
		}
		if hasResult {
			return nil, badReply("ok false with a result")
		}
		if !hasError {
			return nil, badReply("ok false without an error")
		}
		perr, err := parseProtocolError(errv)
		if err != nil {
			return nil, err
		}
		perr.ID = want.id
		env.perr = perr
		return env, nil
	}
	if id != want.id {
		return nil, &ReplyError{Err: ErrIDMismatch, Detail: "id " + brief(id) + ", want " + brief(want.id)}
	}
	if hasError {
		return nil, badReply("ok true with an error")
	}
	if !hasResult {
		return nil, badReply("ok true without a result")
	}
	env.result = result
	if a, present := top["after"]; present && !isNull(a) {
		if want.method != methodInvoke {
			return nil, badReply("after on a describe")
		}
		if _, ok := members(a); !ok {
			return nil, badReply("after is not an object")
		}
		env.after = a
	}
	return env, nil
}

func parseProtocolError(raw json.RawMessage) (*ProtocolError, error) {
	m, ok := members(raw)
	if !ok {
		return nil, badReply("error is not an object")
	}
	code, ok := str(m["code"])
	if !ok || code == "" {
		return nil, badReply("error code missing or not a string")
	}
	e := &ProtocolError{Code: surface.Code(code)}
	if raw, present := m["message"]; present && !isNull(raw) {
		if e.Message, ok = str(raw); !ok {
			return nil, badReply("error message is not a string")
		}
	}
	if raw, present := m["retryAfterMs"]; present && !isNull(raw) {
		ms, ok := nonNegative(raw)
		if !ok {
			return nil, badReply("retryAfterMs is not a non-negative integer")
		}
		e.RetryAfter = time.Duration(min(ms, int64(math.MaxInt64/time.Millisecond))) * time.Millisecond
	}
	if raw, present := m["violations"]; present && !isNull(raw) {
		if err := decode(raw, &e.Violations); err != nil {
			return nil, badReply("violations are not a list of violations")
		}
	}
	return e, nil
}

// classifyResult reads an invoke result: a business failure when it is an
// object whose error member is not null, with the approval status when it
// has an approval member.
func classifyResult(raw json.RawMessage) (*Result, error) {
	r := &Result{Kind: Success, Value: raw}
	m, isObj := members(raw)
	if !isObj {
		return r, nil // any JSON value is a business success
	}
	if e, present := m["error"]; present && !isNull(e) {
		em, ok := members(e)
		if !ok {
			return nil, badReply("result error is not an object")
		}
		code, ok := str(em["code"])
		if !ok || code == "" {
			return nil, badReply("result error code missing or not a string")
		}
		r.Kind, r.Code = BusinessFailure, code
		if raw, present := em["message"]; present && !isNull(raw) {
			if r.Message, ok = str(raw); !ok {
				return nil, badReply("result error message is not a string")
			}
		}
	}
	if a, present := m["approval"]; present {
		am, ok := members(a)
		if !ok {
			return nil, badReply("approval is not an object")
		}
		st, _ := str(am["status"])
		switch Approval(st) {
		case ApprovalPending, ApprovalGranted, ApprovalDenied, ApprovalUnknown:
			r.Approval = Approval(st)
		default:
			return nil, badReply("approval status " + brief(st) + " is not known")
		}
	}
	return r, nil
}

// parseDescription reads a describe result.
func parseDescription(raw json.RawMessage, want expect, askedChanged bool) (*Description, error) {
	m, ok := members(raw)
	if !ok {
		return nil, badReply("description is not an object")
	}
	if p, present := m["protocol"]; present {
		if s, _ := str(p); s != surface.Protocol {
			return nil, &ReplyError{Err: ErrProtocolMismatch, Detail: "description protocol " + brief(s)}
		}
	}
	if !isArray(m["capabilities"]) {
		return nil, badReply("capabilities missing or not an array")
	}
	if _, ok := members(m["context"]); !ok {
		return nil, badReply("context missing or not an object")
	}
	d := &Description{}
	if err := decode(raw, &d.Description); err != nil {
		return nil, badReply("description does not have the expected shape")
	}
	if want.app != "" && d.App != want.app {
		return nil, &ReplyError{Err: ErrAppMismatch, Detail: "app " + brief(d.App) + ", want " + brief(want.app)}
	}
	if d.CapabilitiesUnchanged && (!askedChanged || len(d.Capabilities) > 0) {
		return nil, badReply("capabilitiesUnchanged without a changed request")
	}
	seen := make(map[string]bool, len(d.Capabilities))
	for _, c := range d.Capabilities {
		if c.ID == "" || seen[c.ID] {
			return nil, badReply("capability ids must be unique and non-empty")
		}
		seen[c.ID] = true
		if c.Record != nil && c.Record.Param == "" {
			return nil, badReply("folded template " + brief(c.ID) + " names no record parameter")
		}
	}
	return d, nil
}

// checkKeys validates data as one JSON value and refuses what encoding/json
// would read differently from a JavaScript peer: invalid UTF-8, duplicate
// keys, and keys that differ only in case (encoding/json matches struct
// fields case-insensitively, so {"id":"a","ID":"b"} would read "b").
func checkKeys(data []byte) error {
	if detail := scanJSON(data); detail != "" {
		return badReply(detail)
	}
	return nil
}

// scanJSON returns what is wrong with data as strict JSON, or "".
func scanJSON(data []byte) string {
	if !utf8.Valid(data) {
		return "not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj, wantKey bool
		keys         map[string]struct{}
	}
	var stack []frame
	done := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if !done {
				return "not JSON"
			}
			return ""
		}
		if err != nil {
			return "not JSON"
		}
		if done {
			return "data after the JSON value"
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
			} else {
				k, _ := tok.(string)
				f := foldKey(k)
				if _, dup := stack[n-1].keys[f]; dup {
					return "duplicate or case-variant key " + brief(k)
				}
				stack[n-1].keys[f] = struct{}{}
				stack[n-1].wantKey = false
				continue
			}
		} else if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{obj: true, wantKey: true, keys: map[string]struct{}{}})
			case '[':
				stack = append(stack, frame{})
			default: // ']'
				stack = stack[:n-1]
			}
			if len(stack) > maxReplyDepth {
				return "nested deeper than " + strconv.Itoa(maxReplyDepth)
			}
			if d == '{' || d == '[' {
				continue
			}
		}
		// A value ended: the enclosing object wants a key next.
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		} else if n == 0 {
			done = true
		}
	}
}

// foldKey is the case-insensitive form encoding/json matches names by.
func foldKey(k string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, k)
}

// members returns the members of a JSON object by exact name, or false when
// raw is not an object. raw has passed checkKeys, so there are no duplicates.
func members(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false
	}
	return m, true
}

func str(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func boolean(raw json.RawMessage) (v, ok bool) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// nonNegative reads a non-negative integer, written as 3, 3.0 or 3e0 alike
// (a JavaScript peer cannot tell them apart).
func nonNegative(raw json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// decode unmarshals raw into v keeping numbers exact.
func decode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// brief quotes s for an error message, cut so a hostile reply cannot fill a log.
func brief(s string) string {
	const most = 64
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}
