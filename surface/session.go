package surface

import (
	"context"
	"time"
)

// Session is a verified binding of caller, user, scope and expiry. The host
// builds it after verifying a credential through its own transport or
// backend; the kernel never sees the credential, and a request body can never
// supply or change a session.
type Session struct {
	AgentID   string `json:"agentId"`
	SessionID string `json:"sessionId"`
	UserID    string `json:"userId"`
	// ExpiresAt is when the session stops being valid. It must be set.
	ExpiresAt time.Time `json:"-"`
	// Scope lists the capability ids (folded template ids included) this
	// session may see and call. It must be non-nil: an empty, non-nil scope
	// is a valid session that can do nothing; a nil scope is malformed,
	// because "no scope given" must never mean "everything".
	Scope        []string `json:"scope"`
	DelegationID string   `json:"delegationId,omitempty"`
	// RevokedAt, when non-zero, marks the session revoked from that instant on.
	RevokedAt time.Time `json:"-"`
}

// StaticSession returns a session function (Options.Session) that always
// answers s.
func StaticSession(s *Session) func(context.Context) (*Session, error) {
	return func(context.Context) (*Session, error) { return s, nil }
}

// checkSession validates s at now and returns a session error or nil.
// Revocation is checked before expiry: a revoked session stays revoked.
func checkSession(s *Session, now time.Time) *Error {
	if s == nil {
		return newError(CodeSessionRequired, "a verified session is required")
	}
	if s.AgentID == "" || s.SessionID == "" || s.UserID == "" || s.Scope == nil || s.ExpiresAt.IsZero() {
		return newError(CodeSessionInvalid, "session is malformed")
	}
	for _, id := range s.Scope {
		if id == "" {
			return newError(CodeSessionInvalid, "session is malformed")
		}
	}
	if !s.RevokedAt.IsZero() && !now.Before(s.RevokedAt) {
		return newError(CodeSessionRevoked, "session was revoked")
	}
	if !now.Before(s.ExpiresAt) {
		return newError(CodeSessionExpired, "session has expired")
	}
	return nil
}
