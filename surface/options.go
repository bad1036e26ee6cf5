package surface

import (
	"context"
	"encoding/json"
	"time"
)

// Options configures a Surface. The zero value of every field except Now
// is a documented default; New copies the struct, so later changes by the
// caller have no effect.
//
// What an exchange asks its host for is decided by the options themselves
// (RateLimit, Replay, OnAudit) and, for the session, by how it was begun.
// The functions and services here are how Drive, and with it Handle,
// HandleJSON and Describe, answer those asks. A host that answers some asks
// itself through Exchange.Answer leaves those fields nil.
//
// The names follow the reference package's option table (registry, execute,
// app, expose, session, recordLimit, maxRecordLimit, rateLimit, replay,
// onAudit, onAuditError); the rest are bounds and injected services that a
// Go kernel has to make explicit.
type Options struct {
	// Registry reads the page's own action registry: the single source of
	// truth, read on every describe and invoke, so that no stale answer
	// wins over the page. It answers with what the page shows now; records
	// are read lazily (the kernel asks only for the window or the ids it
	// needs, so a table of 100,000 rows costs what its window costs).
	// Drive fails view asks closed (INTERNAL_ERROR) without it.
	Registry func(ctx context.Context, q ViewQuery) (*View, error)
	// Execute runs one accepted invoke through the page's existing
	// execution path (validation, availability, confirmation, backend
	// call), exactly once. A business failure is a result with an "error"
	// member; a Go error means the executor itself broke and becomes
	// INTERNAL_ERROR, as does a missing Execute under Drive.
	Execute func(ctx context.Context, call Call) (json.RawMessage, error)
	// Now is the clock. Required: the kernel never reads the system clock
	// itself, so tests and hosts decide what time it is.
	Now func() time.Time

	// App names the application in every description. Default: omitted.
	App string
	// Expose is the page-level upper bound on what any session may see:
	// it answers whether a capability id (folded template ids included) may
	// be exposed. Default nil: every capability the registry lists.
	Expose func(id string) bool
	// Session returns the verified session in force for one call. It is
	// evaluated on every describe and handled request, so expiry and
	// revocation take effect without reloading anything; nil with no
	// error is no session (SESSION_REQUIRED), an error fails closed
	// (SESSION_INVALID). Default nil: open mode, where every exposed
	// capability is callable without a session. Open mode is for local
	// debugging only; production pages set this. StaticSession answers a
	// fixed one.
	Session func(ctx context.Context) (*Session, error)

	// RecordLimit is describe's default record window. Default 8.
	RecordLimit int
	// MaxRecordLimit clamps a caller's limit. Default 100.
	MaxRecordLimit int

	// RateLimit limits handled requests per verified session. Default nil: off.
	RateLimit *RateLimitOptions
	// Replay guards invoke ids per session. Default nil: off.
	Replay *ReplayOptions

	// OnAudit receives one metadata-only event per handled request. Default nil.
	OnAudit func(ctx context.Context, ev AuditEvent) error
	// OnAuditError is told when OnAudit fails or panics; it cannot change the
	// response. Default nil: the failure is dropped.
	OnAuditError func(ctx context.Context, err error, ev AuditEvent)

	// ExecuteTimeout bounds one executor call. Default 30s. A call that does
	// not answer in time gets INTERNAL_ERROR; its effect is unknown, so the
	// request id stays claimed and a retry is refused as a replay.
	ExecuteTimeout time.Duration
	// Limits bounds a request before and while it is parsed, the lists of
	// a description and the observation attached to an invoke. Zero fields
	// take the defaults each field names.
	Limits Limits
	// MaxSignatureSessions bounds the per-session cache behind
	// capabilities: "changed". Default 1024; past it an arbitrary entry is
	// dropped, which only costs that session one full list.
	MaxSignatureSessions int
	// MaxSchemaCache bounds compiled input schemas kept. Default 1024.
	MaxSchemaCache int
}

// Limits bounds what the kernel reads and writes.
type Limits struct {
	// MaxRequestBytes is the largest encoded request. Default 64 KiB.
	MaxRequestBytes int
	// MaxDepth is the deepest nesting of arrays and objects. Default 32.
	MaxDepth int
	// MaxStringBytes is the longest string, keys included. Default 16 KiB.
	MaxStringBytes int
	// MaxArrayLen is the longest array. Default 1024.
	MaxArrayLen int
	// MaxMembers is the most members of one object. Default 256.
	MaxMembers int
	// MaxResponseBytes is the largest encoded response HandleJSON returns;
	// a larger one is replaced by INTERNAL_ERROR. Default 1 MiB; New refuses
	// less than 4 KiB, where a failure might not fit.
	MaxResponseBytes int

	// The lists of a description. Each list that is cut says so through
	// its total.
	MaxCapabilities int // default 256 (capabilitiesTotal is added when cut)
	MaxRegions      int // default 32 (regionsTotal is added when cut)
	MaxRecordIDs    int // default 200 (recordIdsTotal)
	MaxFeedback     int // default 20 (feedbackTotal)
	MaxUnavailable  int // default 50 (unavailableTotal)
	MaxStateKeys    int // default 64 (stateTotal is added when cut)

	// The observation of an invoke ("after").
	MaxAfterRecords int // changed records, default 20
	MaxAfterFields  int // changed fields per record, default 32
	MaxAfterState   int // changed state keys, default 32
}

// defaultLimits are the bounds used for zero Limits fields.
var defaultLimits = Limits{
	MaxRequestBytes:  64 << 10,
	MaxDepth:         32,
	MaxStringBytes:   16 << 10,
	MaxArrayLen:      1024,
	MaxMembers:       256,
	MaxResponseBytes: 1 << 20,

	MaxCapabilities: 256,
	MaxRegions:      32,
	MaxRecordIDs:    200,
	MaxFeedback:     20,
	MaxUnavailable:  50,
	MaxStateKeys:    64,

	MaxAfterRecords: 20,
	MaxAfterFields:  32,
	MaxAfterState:   32,
}

// RateLimitOptions turns on the per-session rate limit of handled requests.
type RateLimitOptions struct {
	// MaxRequests admitted per Window per session. Must be positive.
	MaxRequests int
	// Window is the sliding window. Must be positive.
	Window time.Duration
	// Limiter replaces the in-process sliding window, for limits shared
	// across replicas. Default nil: NewSlidingWindow(MaxRequests, Window).
	// With neither a Limiter nor MaxRequests and Window, the host answers
	// every limit ask itself, and Drive fails them closed
	// (RATE_LIMIT_UNAVAILABLE).
	Limiter Limiter
}

// ReplayOptions turns on the replay guard for invoke.
type ReplayOptions struct {
	// Window is how long a (session, request id) pair stays claimed.
	// Default five minutes.
	Window time.Duration
	// Guard replaces the in-process guard, for guards shared across
	// replicas. Default nil: NewMemoryGuard(defaultReplayCapacity).
	Guard ReplayGuard
}

// DefaultReplayWindow is the replay window when ReplayOptions.Window is zero.
const DefaultReplayWindow = 5 * time.Minute

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

func (l Limits) withDefaults() Limits {
	d := defaultLimits
	return Limits{
		MaxRequestBytes:  orDefault(l.MaxRequestBytes, d.MaxRequestBytes),
		MaxDepth:         orDefault(l.MaxDepth, d.MaxDepth),
		MaxStringBytes:   orDefault(l.MaxStringBytes, d.MaxStringBytes),
		MaxArrayLen:      orDefault(l.MaxArrayLen, d.MaxArrayLen),
		MaxMembers:       orDefault(l.MaxMembers, d.MaxMembers),
		MaxResponseBytes: orDefault(l.MaxResponseBytes, d.MaxResponseBytes),
		MaxCapabilities:  orDefault(l.MaxCapabilities, d.MaxCapabilities),
		MaxRegions:       orDefault(l.MaxRegions, d.MaxRegions),
		MaxRecordIDs:     orDefault(l.MaxRecordIDs, d.MaxRecordIDs),
		MaxFeedback:      orDefault(l.MaxFeedback, d.MaxFeedback),
		MaxUnavailable:   orDefault(l.MaxUnavailable, d.MaxUnavailable),
		MaxStateKeys:     orDefault(l.MaxStateKeys, d.MaxStateKeys),
		MaxAfterRecords:  orDefault(l.MaxAfterRecords, d.MaxAfterRecords),
		MaxAfterFields:   orDefault(l.MaxAfterFields, d.MaxAfterFields),
		MaxAfterState:    orDefault(l.MaxAfterState, d.MaxAfterState),
	}
}
