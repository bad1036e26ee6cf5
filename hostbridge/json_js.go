//go:build js && wasm

package hostbridge

import (
	"errors"
	"strconv"

	"pling.dev/agent/internal/jsonread"
)

// The bridge reads the small JSON texts the JS runtime writes (the config,
// a session, expose answers, a describe input) with jsonread, which reads
// them as encoding/json's Decoder would with UseNumber but without
// reflection: encoding/json's decoder is not linked into the module, and
// its first use per type would cost milliseconds on the way to a page's
// first answer.

// errNotDecoded is the error of a text that encoding/json would refuse or
// not read into the value asked for. Its text stays inside the bridge
// (the kernel answers with a code), except for the config, whose unknown
// members are named as encoding/json names them.
var errNotDecoded = errors.New("json: the text is not one JSON value of the expected shape")

// read runs fn over data and reports errNotDecoded unless it took all of it.
func read(data []byte, fn func(r *jsonread.Reader)) error {
	r := jsonread.New(data)
	fn(r)
	if !r.End() {
		return errNotDecoded
	}
	return nil
}

// hasLoneSurrogate reports whether JSON text holds a \u escape of a UTF-16
// surrogate that is not half of a high-low pair. encoding/json would turn it
// into U+FFFD, so the Go value would differ from the JS string; such input
// is refused instead. (Backslashes occur only inside strings in valid JSON,
// so no string tracking is needed.)
func hasLoneSurrogate(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		i++
		if i >= len(data) || data[i] != 'u' {
			continue // \" \\ \n ...: the escaped byte is consumed
		}
		r, ok := hex4(data, i+1)
		if !ok {
			continue // malformed; the decoder refuses it
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // low half without a high half
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 < len(data) && data[i+1] == '\\' && data[i+2] == 'u' {
				if lo, ok := hex4(data, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// parseBools decodes expose answers ([]bool).
func parseBools(data []byte) ([]bool, error) {
	var out []bool
	err := read(data, func(r *jsonread.Reader) { jsonread.List(r, &out, r.Bool) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Member names, keyed by the constants the readers switch on: a name and
// the code that reads its value meet by name, never by position.
var sessionFields = [...]string{sessionAgentID: "agentId", sessionSessionID: "sessionId", sessionUserID: "userId", sessionExpiresAt: "expiresAt", sessionScope: "scope", sessionDelegationID: "delegationId", sessionRevokedAt: "revokedAt"}

// decodeSession decodes session text into w.
func decodeSession(data []byte, w *wireSession) error {
	return read(data, func(r *jsonread.Reader) {
		r.Object(sessionFields[:], false, func(field int) {
			switch field {
			case sessionAgentID:
				r.String(&w.AgentID)
			case sessionSessionID:
				r.String(&w.SessionID)
			case sessionUserID:
				r.String(&w.UserID)
			case sessionExpiresAt:
				r.Number(&w.ExpiresAt)
			case sessionScope:
				r.Strings(&w.Scope)
			case sessionDelegationID:
				r.String(&w.DelegationID)
			case sessionRevokedAt:
				r.Number(&w.RevokedAt)
			}
		})
	})
}

// unknownField words a config's unknown member as encoding/json's
// DisallowUnknownFields does.
func unknownField(key string) error {
	return errors.New("json: unknown field " + strconv.Quote(key))
}

// Members of the session object, indexes into sessionFields.
const (
	sessionAgentID = iota
	sessionSessionID
	sessionUserID
	sessionExpiresAt
	sessionScope
	sessionDelegationID
	sessionRevokedAt
)
