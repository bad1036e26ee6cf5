package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// pageSpec is the body of a page section: surfacetest.Orders(Orders) with
// the overrides below applied in field order.
type pageSpec struct {
	// Orders is how many orders the table holds (SO-1001 on; SO-1003 locked).
	Orders int `json:"orders"`
	// Route replaces the fixture's "/orders" when present ("" removes it).
	Route *string `json:"route"`
	// Remove drops fixture actions by id.
	Remove []string `json:"remove"`
	// Actions replace the fixture action with the same id, or are appended.
	Actions []pageAction `json:"actions"`
	// Duplicate appends a second copy of each named action, so one id is
	// declared twice.
	Duplicate []string `json:"duplicate"`
	// Regions, State, Feedback and Unavailable replace the fixture's when present.
	Regions     []surface.Region      `json:"regions"`
	State       map[string]any        `json:"state"`
	Feedback    []surface.Feedback    `json:"feedback"`
	Unavailable []surface.Unavailable `json:"unavailable"`
	// Offscreen and Locked mark records out of view and locked.
	Offscreen []string `json:"offscreen"`
	Locked    []string `json:"locked"`
	// RecordActions sets a record's template-to-action map, so a template
	// can be made not to apply to one record.
	RecordActions map[string]map[string]string `json:"recordActions"`
	// ViewError makes every read of the registry fail.
	ViewError bool `json:"viewError"`
}

// pageAction is a registry action plus how the page executes it.
type pageAction struct {
	surface.Action
	// Handler names a fixture handler to run for this action ("" keeps the
	// handler registered under the action's own id, if any).
	Handler string `json:"handler,omitempty"`
	// Result, when set, is the executor's answer after the handler ran
	// (unless the handler failed or answered a business error).
	Result json.RawMessage `json:"result,omitempty"`
}

// optionsSpec is the body of an options section; it maps onto surface.Options.
type optionsSpec struct {
	App    string   `json:"app"`
	Expose []string `json:"expose"` // absent: everything; []: nothing
	// Session is a session object, null (open mode), "missing" (the getter
	// answers no session) or "error" (the getter fails).
	Session          json.RawMessage `json:"session"`
	RecordLimit      int             `json:"recordLimit"`
	MaxRecordLimit   int             `json:"maxRecordLimit"`
	RateLimit        *rateLimitSpec  `json:"rateLimit"`
	Replay           json.RawMessage `json:"replay"` // true or {"windowMs": n}
	ExecuteTimeoutMs int64           `json:"executeTimeoutMs"`
	// AuditFails makes the audit sink fail after recording each event, and
	// the OnAuditError hook panic, to show neither can change a response.
	AuditFails bool `json:"auditFails"`
	Limits     struct {
		MaxRequestBytes  int `json:"maxRequestBytes"`
		MaxDepth         int `json:"maxDepth"`
		MaxStringBytes   int `json:"maxStringBytes"`
		MaxArrayLen      int `json:"maxArrayLen"`
		MaxMembers       int `json:"maxMembers"`
		MaxResponseBytes int `json:"maxResponseBytes"`
	} `json:"limits"`
	Context struct {
		MaxCapabilities int `json:"maxCapabilities"`
		MaxRegions      int `json:"maxRegions"`
		MaxRecordIDs    int `json:"maxRecordIds"`
		MaxFeedback     int `json:"maxFeedback"`
		MaxUnavailable  int `json:"maxUnavailable"`
		MaxStateKeys    int `json:"maxStateKeys"`
	} `json:"context"`
	After struct {
		MaxRecords int `json:"maxRecords"`
		MaxFields  int `json:"maxFields"`
		MaxState   int `json:"maxState"`
	} `json:"after"`
}

type rateLimitSpec struct {
	MaxRequests int   `json:"maxRequests"`
	WindowMs    int64 `json:"windowMs"`
	// Limiter replaces the kernel's limiter with a broken one: "error",
	// "zero" (an illegal zero Decision), "deny0" (Deny without a wait) or
	// "panic".
	Limiter string `json:"limiter"`
}

type replaySpec struct {
	WindowMs int64 `json:"windowMs"`
	// Guard replaces the kernel's guard with a broken one: "error", "zero"
	// (an illegal zero decision) or "panic".
	Guard string `json:"guard"`
}

// sessionSpec is a session object. Times are relative to the clock when the
// section is applied; a missing expiresInMs leaves ExpiresAt zero, which the
// kernel must refuse as malformed, and a missing scope is nil, likewise.
type sessionSpec struct {
	AgentID      string   `json:"agentId"`
	SessionID    string   `json:"sessionId"`
	UserID       string   `json:"userId"`
	ExpiresInMs  *int64   `json:"expiresInMs"`
	Scope        []string `json:"scope"`
	DelegationID string   `json:"delegationId"`
}

// sessionMode says what the session getter answers.
type sessionMode int

const (
	sessionOpen    sessionMode = iota // no getter at all
	sessionMissing                    // getter answers (nil, nil)
	sessionError                      // getter answers an error
	sessionObject                     // getter answers the current session
)

// decodeStrict decodes one JSON value into v, refusing unknown fields so a
// misspelt option fails the transcript instead of being ignored.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// parseSession reads a session value: null, "missing", "error" or an object.
func parseSession(raw json.RawMessage, now time.Time) (sessionMode, surface.Session, error) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "", "null":
		return sessionOpen, surface.Session{}, nil
	case `"missing"`:
		return sessionMissing, surface.Session{}, nil
	case `"error"`:
		return sessionError, surface.Session{}, nil
	}
	var ss sessionSpec
	if err := decodeStrict(raw, &ss); err != nil {
		return 0, surface.Session{}, fmt.Errorf("session: %w", err)
	}
	s := surface.Session{
		AgentID: ss.AgentID, SessionID: ss.SessionID, UserID: ss.UserID,
		Scope: ss.Scope, DelegationID: ss.DelegationID,
	}
	if ss.ExpiresInMs != nil {
		s.ExpiresAt = now.Add(time.Duration(*ss.ExpiresInMs) * time.Millisecond)
	}
	return sessionObject, s, nil
}

// buildPage returns the orders page with spec's overrides applied.
func buildPage(spec pageSpec) (*surfacetest.Page, error) {
	p := surfacetest.Orders(spec.Orders)
	if spec.Route != nil {
		p.Route = *spec.Route
	}
	for _, id := range spec.Remove {
		i := actionIndex(p.Actions, id)
		if i < 0 {
			return nil, fmt.Errorf("page: remove: no action %q", id)
		}
		p.Actions = append(p.Actions[:i], p.Actions[i+1:]...)
	}
	for _, a := range spec.Actions {
		if i := actionIndex(p.Actions, a.ID); i >= 0 {
			p.Actions[i] = a.Action
		} else {
			p.Actions = append(p.Actions, a.Action)
		}
		if a.Handler == "" && a.Result == nil {
			continue
		}
		var inner surfacetest.Handler
		if a.Handler != "" {
			if inner = p.Handlers[a.Handler]; inner == nil {
				return nil, fmt.Errorf("page: action %q: no fixture handler %q", a.ID, a.Handler)
			}
		}
		p.Handlers[a.ID] = cannedHandler(inner, a.Result)
	}
	for _, id := range spec.Duplicate {
		i := actionIndex(p.Actions, id)
		if i < 0 {
			return nil, fmt.Errorf("page: duplicate: no action %q", id)
		}
		p.Actions = append(p.Actions, p.Actions[i])
	}
	if spec.Regions != nil {
		p.Regions = spec.Regions
	}
	if spec.State != nil {
		p.State = spec.State
	}
	if spec.Feedback != nil {
		p.Feedback = spec.Feedback
	}
	if spec.Unavailable != nil {
		p.Unavailable = spec.Unavailable
	}
	for _, id := range spec.Offscreen {
		if err := setRecord(p, id, func(r *surface.Record) { r.Offscreen = true }); err != nil {
			return nil, err
		}
	}
	for _, id := range spec.Locked {
		if err := setRecord(p, id, func(r *surface.Record) { r.Fields["status"] = "locked" }); err != nil {
			return nil, err
		}
	}
	if spec.ViewError {
		p.ViewErr = errors.New("page store is unreachable")
	}
	for id, m := range spec.RecordActions {
		if err := setRecord(p, id, func(r *surface.Record) { r.Actions = m }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func actionIndex(actions []surface.Action, id string) int {
	for i := range actions {
		if actions[i].ID == id {
			return i
		}
	}
	return -1
}

// setRecord changes one record of p; it is called before the page is shared.
func setRecord(p *surfacetest.Page, id string, f func(*surface.Record)) error {
	for i := range p.Records {
		if p.Records[i].ID == id {
			f(&p.Records[i])
			return nil
		}
	}
	return fmt.Errorf("page: no record %q", id)
}

// cannedHandler runs inner (when set) for its effect on the page, then
// answers result instead of inner's answer, unless inner failed.
func cannedHandler(inner surfacetest.Handler, result json.RawMessage) surfacetest.Handler {
	return func(p *surfacetest.Page, call surface.Call) (json.RawMessage, error) {
		var out json.RawMessage
		if inner != nil {
			var err error
			if out, err = inner(p, call); err != nil {
				return nil, err
			}
			if result == nil || isBusinessError(out) {
				return out, nil
			}
		}
		return result, nil
	}
}

func isBusinessError(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	e, ok := m["error"]
	return ok && string(e) != "null"
}

// surfaceOptions maps spec onto surface.Options; the caller adds the
// registry, executor, clock, session and audit sink.
func surfaceOptions(spec optionsSpec) (surface.Options, error) {
	o := surface.Options{
		App:            spec.App,
		RecordLimit:    spec.RecordLimit,
		MaxRecordLimit: spec.MaxRecordLimit,
		ExecuteTimeout: time.Duration(spec.ExecuteTimeoutMs) * time.Millisecond,
		Limits: surface.Limits{
			MaxRequestBytes:  spec.Limits.MaxRequestBytes,
			MaxDepth:         spec.Limits.MaxDepth,
			MaxStringBytes:   spec.Limits.MaxStringBytes,
			MaxArrayLen:      spec.Limits.MaxArrayLen,
			MaxMembers:       spec.Limits.MaxMembers,
			MaxResponseBytes: spec.Limits.MaxResponseBytes,
			MaxCapabilities:  spec.Context.MaxCapabilities,
			MaxRegions:       spec.Context.MaxRegions,
			MaxRecordIDs:     spec.Context.MaxRecordIDs,
			MaxFeedback:      spec.Context.MaxFeedback,
			MaxUnavailable:   spec.Context.MaxUnavailable,
			MaxStateKeys:     spec.Context.MaxStateKeys,
			MaxAfterRecords:  spec.After.MaxRecords,
			MaxAfterFields:   spec.After.MaxFields,
			MaxAfterState:    spec.After.MaxState,
		},
	}
	if spec.Expose != nil {
		ids := spec.Expose
		o.Expose = func(id string) bool { return slices.Contains(ids, id) }
	}
	if rl := spec.RateLimit; rl != nil {
		o.RateLimit = &surface.RateLimitOptions{
			MaxRequests: rl.MaxRequests,
			Window:      time.Duration(rl.WindowMs) * time.Millisecond,
		}
		if rl.Limiter != "" {
			if !oneOf(rl.Limiter, "error", "zero", "deny0", "panic") {
				return o, fmt.Errorf("options: rateLimit: unknown limiter %q", rl.Limiter)
			}
			o.RateLimit.Limiter = brokenLimiter(rl.Limiter)
		}
	}
	switch raw := string(bytes.TrimSpace(spec.Replay)); raw {
	case "", "null", "false":
	case "true":
		o.Replay = &surface.ReplayOptions{}
	default:
		var rs replaySpec
		if err := decodeStrict(spec.Replay, &rs); err != nil {
			return o, fmt.Errorf("options: replay: %w", err)
		}
		o.Replay = &surface.ReplayOptions{Window: time.Duration(rs.WindowMs) * time.Millisecond}
		if rs.Guard != "" {
			if !oneOf(rs.Guard, "error", "zero", "panic") {
				return o, fmt.Errorf("options: replay: unknown guard %q", rs.Guard)
			}
			o.Replay.Guard = brokenGuard(rs.Guard)
		}
	}
	return o, nil
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// brokenLimiter is a shared limiter that has failed in one of the ways the
// kernel must read as "unavailable", never as "allowed".
type brokenLimiter string

func (b brokenLimiter) Allow(context.Context, string, time.Time) (surface.Decision, error) {
	switch b {
	case "error":
		return surface.Decision{}, errors.New("limiter store is unreachable")
	case "deny0":
		return surface.Decision{Verdict: surface.Deny}, nil
	case "panic":
		panic("limiter panics")
	}
	return surface.Decision{}, nil
}

// brokenGuard is a shared replay guard that has failed likewise.
type brokenGuard string

func (b brokenGuard) Claim(context.Context, surface.ReplayKey, time.Time, time.Duration) (surface.ReplayDecision, error) {
	switch b {
	case "error":
		return 0, errors.New("guard store is unreachable")
	case "panic":
		panic("guard panics")
	}
	return 0, nil
}

// sessionSource is the getter a scene installs: it answers from the scene's
// current session on every call, so revoke, scope and session steps take
// effect on the next request without rebuilding anything.
func (sc *scene) sessionSource(context.Context) (*surface.Session, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	switch sc.mode {
	case sessionMissing:
		return nil, nil
	case sessionError:
		return nil, errors.New("session store is unreachable")
	}
	s := sc.sess
	if s.Scope != nil {
		s.Scope = append([]string{}, s.Scope...)
	}
	return &s, nil
}
