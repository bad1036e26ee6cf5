//go:build js && wasm

package hostbridge

import (
	"encoding/json"
	"errors"
	"strconv"

	"pling.dev/agent/internal/jsonread"
	"pling.dev/agent/surface"
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

// decodeSession decodes session text into s, its times into expires and
// revoked.
func decodeSession(data []byte, w *surface.Session, expires, revoked **json.Number) error {
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
				r.Number(expires)
			case sessionScope:
				r.Strings(&w.Scope)
			case sessionDelegationID:
				r.String(&w.DelegationID)
			case sessionRevokedAt:
				r.Number(revoked)
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
