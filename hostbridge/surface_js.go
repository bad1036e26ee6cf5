//go:build js && wasm

package hostbridge

import (
	"errors"
	"slices"
	"syscall/js"
	"time"

	"pling.dev/agent/surface"
)

// Surface is one page surface: the kernel wired to a JS host object.
type Surface struct {
	host        js.Value
	lane        lane
	reg         *registry
	hostTimeout time.Duration
	limits      surface.Limits

	// main is the kernel. An exchange asks for a session when the host
	// has session() or the call brings its own getter (a private channel
	// authenticated by the page), and runs in open mode otherwise.
	main *surface.Surface
	// The last session each kind of getter answered as text: host.session()
	// may answer codeSame for it (see sessionFrom).
	lastHost, lastCall textCache[surface.Session]

	closed bool

	// reply is the host's reply(token, text, ...) function, which answers
	// calls made through the entry exports (see exports_js.go); slot is the
	// number those calls name this surface by.
	reply js.Value
	slot  int32
	// sessionForFn is the host's sessionFor(token), the session getter of
	// a call taken through an export with a getter of its own.
	sessionForFn js.Value
	// The host's functions the steps call (see flight.ask); allowFn and
	// claimFn are undefined when the in-process limiter and guard decide.
	sessionFn, execFn, waitFn, allowFn, claimFn js.Value
	// unansweredFn is the host's unanswered(), if it has one (see
	// flight.unanswered).
	unansweredFn js.Value

	// sentCaps is the shared capability list last passed to a reply
	// function in shared mode (see export): the JS runtime keeps exactly
	// that one, decoded, so a later answer naming it leaves it out.
	sentCaps uint64
}

// New wires a kernel to host with cfg. It fails on a configuration error.
func New(host js.Value, cfg Config) (*Surface, error) {
	if t := host.Type(); t != js.TypeObject && t != js.TypeFunction {
		return nil, errors.New("hostbridge: host must be an object")
	}
	for _, name := range []string{"actions", "view", "execute", "reply", "wait", "held"} {
		if !hasFunc(host, name) {
			return nil, errors.New("hostbridge: host." + name + " must be a function")
		}
	}
	execTimeout, err := millis("executeTimeoutMs", cfg.ExecuteTimeoutMs)
	if err != nil {
		return nil, err
	}
	hostTimeout, err := millis("hostTimeoutMs", cfg.HostTimeoutMs)
	if err != nil {
		return nil, err
	}
	if hostTimeout == 0 {
		hostTimeout = DefaultHostTimeout
	}

	l := newLane(host)
	if l.size == 0 {
		return nil, errors.New("hostbridge: host.io and host.entryIO must be two Uint8Arrays of one length")
	}
	s := &Surface{
		host:         host,
		lane:         l,
		reg:          newRegistry(host, l),
		hostTimeout:  hostTimeout,
		limits:       defaultLimits,
		reply:        hostFunc(host, "reply"),
		sessionFn:    hostFunc(host, "session"),
		sessionForFn: hostFunc(host, "sessionFor"),
		execFn:       hostFunc(host, "execute"),
		waitFn:       hostFunc(host, "wait"),
		unansweredFn: hostFunc(host, "unanswered"),
	}
	// The host answers the view, execute and session asks itself, so the
	// kernel gets no registry, executor or session function.
	o := surface.Options{
		Now:            time.Now,
		App:            cfg.App,
		RecordLimit:    cfg.RecordLimit,
		MaxRecordLimit: cfg.MaxRecordLimit,
		ExecuteTimeout: execTimeout,
		Limits:         s.limits,
	}
	switch {
	case s.reg.hasExpose:
		o.Expose = s.reg.isExposed
	case cfg.Expose != nil:
		ids := cfg.Expose
		o.Expose = func(id string) bool { return slices.Contains(ids, id) }
	}
	// With the host's allow() or claim(), the kernel asks and the host
	// answers; without, the kernel's in-process limiter and guard do.
	if rl := cfg.RateLimit; rl != nil {
		o.RateLimit = &surface.RateLimitOptions{}
		if s.allowFn = hostFunc(host, "allow"); s.allowFn.Type() != js.TypeFunction {
			window, err := millis("rateLimit.windowMs", rl.WindowMs)
			if err != nil {
				return nil, err
			}
			if rl.MaxRequests <= 0 || window <= 0 {
				return nil, errors.New("hostbridge: rateLimit needs positive maxRequests and windowMs")
			}
			o.RateLimit = &surface.RateLimitOptions{MaxRequests: rl.MaxRequests, Window: window}
		}
	}
	if rp := cfg.Replay; rp != nil {
		window, err := millis("replay.windowMs", rp.WindowMs)
		if err != nil {
			return nil, err
		}
		s.claimFn = hostFunc(host, "claim")
		o.Replay = &surface.ReplayOptions{Window: window}
	}
	if a := (auditor{audit: hostFunc(host, "audit"), auditError: hostFunc(host, "auditError"), lane: l}); a.audit.Type() == js.TypeFunction {
		o.OnAudit = a.onAudit
		o.OnAuditError = a.onAuditError
	}
	if s.main, err = surface.New(o); err != nil {
		return nil, err
	}
	return s, nil
}

// defaultLimits are the kernel's default request bounds (zero Limits
// fields), which the bridge checks a request against before the kernel
// sees it and tells the page.
var defaultLimits = surface.Limits{MaxRequestBytes: 64 << 10, MaxResponseBytes: 1 << 20}

// hasSession reports whether the host has session(): exchanges then ask
// for the caller's session.
func (s *Surface) hasSession() bool { return s.sessionFn.Type() == js.TypeFunction }

// failure encodes a protocol failure the kernel never saw.
func (s *Surface) failure(code surface.Code, msg string) []byte {
	b, _ := surface.AppendJSON(nil, &surface.Response{
		Protocol: surface.Protocol, OK: false,
		Error: &surface.Error{Code: code, Message: msg},
	})
	return b
}
