package surface

import "context"

// Held is how many keys the in-process limiter or claims the in-process
// guard holds: tests check that both stay bounded.
func Held(v any) int {
	switch v := v.(type) {
	case *memoryGuard:
		return v.Len()
	case *slidingWindow:
		return v.Len()
	}
	panic("Held: not an in-process limiter or guard")
}

// Names the package keeps unexported, under their old names for the
// external tests.
var (
	ErrWrongAnswer     = errWrongAnswer
	ErrReplayGuardFull = errReplayGuardFull
	DefaultLimits      = defaultLimits
)

const (
	DefaultReplayCapacity = defaultReplayCapacity
	MinResponseBytes      = minResponseBytes
	MaxRecordSelection    = maxRecordSelection
	OutcomeOK             = outcomeOK
	OutcomeBusinessError  = outcomeBusinessError
	OutcomeProtocolError  = outcomeProtocolError
	MethodDescribe        = methodDescribe
	MethodInvoke          = methodInvoke
	ApprovalPending       = approvalPending
	ApprovalGranted       = approvalGranted
	ApprovalDenied        = approvalDenied
	ApprovalUnknown       = approvalUnknown
)

// IsSession reports whether c is a session failure code.
func IsSession(c Code) bool { return c.isSession() }

// HandleValue answers a request a transport decoded already.
func (s *Surface) HandleValue(ctx context.Context, v any) *Response { return s.handleValue(ctx, v) }

// Registry is the type of Options.Registry, for tests that pass one around.
type Registry = func(ctx context.Context, q ViewQuery) (*View, error)

// Encode marshals r within Limits.MaxResponseBytes.
func (s *Surface) Encode(r *Response) []byte {
	b, _, _ := s.encode(nil, r)
	return b
}

var askNames = [...]string{"done", "session", "limit", "view", "claim", "execute", "audit"}

// String names k in test failures.
func (k AskKind) String() string {
	if int(k) < len(askNames) {
		return askNames[k]
	}
	return "unknown"
}

// ExposeIDs returns an Expose predicate that admits exactly ids.
func ExposeIDs(ids ...string) func(string) bool {
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	return func(id string) bool { _, ok := set[id]; return ok }
}
