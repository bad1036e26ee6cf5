//go:build js && wasm

package hostbridge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"pling.dev/agent/surface"
)

// Surface is one page surface: the kernel wired to a JS host object.
type Surface struct {
	host        js.Value
	reg         *registry
	hostTimeout time.Duration
	limits      surface.Limits

	// main answers calls under the host's own session (or open mode).
	main *surface.Surface
	// perCall answers calls that bring their own session getter (a private
	// channel authenticated by the page) when the host itself has no
	// session: the kernel reads "no session source" as open mode, so those
	// calls need a kernel that always asks. Both kernels share the
	// registry, the limiter and the replay guard. Built on first use.
	perCallOnce sync.Once
	perCall     *surface.Surface
	perCallErr  error
	opts        surface.Options
	hasSession  bool

	closed atomic.Bool
}

// New wires a kernel to host with cfg. It fails on a configuration error.
func New(host js.Value, cfg Config) (*Surface, error) {
	if t := host.Type(); t != js.TypeObject && t != js.TypeFunction {
		return nil, errors.New("hostbridge: host must be an object")
	}
	for _, name := range []string{"actions", "view", "execute"} {
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
	if cfg.RecordLimit < 0 || cfg.MaxRecordLimit < 0 {
		return nil, errors.New("hostbridge: record limits must not be negative")
	}

	s := &Surface{
		host:        host,
		reg:         newRegistry(host, hostTimeout),
		hostTimeout: hostTimeout,
		limits:      surface.DefaultLimits,
		hasSession:  hasFunc(host, "session"),
	}
	o := surface.Options{
		Registry:       s.reg,
		Execute:        executor{host: host},
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
		o.Expose = surface.ExposeIDs(cfg.Expose...)
	}
	if rl := cfg.RateLimit; rl != nil {
		// One limiter for both kernels, so a session's budget is shared.
		var l surface.Limiter
		if hasFunc(host, "allow") {
			l = limiter{host: host, timeout: hostTimeout}
		} else {
			window, err := millis("rateLimit.windowMs", rl.WindowMs)
			if err != nil {
				return nil, err
			}
			if rl.MaxRequests <= 0 || window <= 0 {
				return nil, errors.New("hostbridge: rateLimit needs positive maxRequests and windowMs")
			}
			l = surface.NewSlidingWindow(rl.MaxRequests, window)
		}
		o.RateLimit = &surface.RateLimitOptions{Limiter: l}
	}
	if rp := cfg.Replay; rp != nil {
		window, err := millis("replay.windowMs", rp.WindowMs)
		if err != nil {
			return nil, err
		}
		var g surface.ReplayGuard = surface.NewMemoryGuard(surface.DefaultReplayCapacity)
		if hasFunc(host, "claim") {
			g = guard{host: host, timeout: hostTimeout}
		}
		o.Replay = &surface.ReplayOptions{Window: window, Guard: g}
	}
	if hasFunc(host, "audit") {
		a := auditor{host: host, hasError: hasFunc(host, "auditError"), timeout: hostTimeout}
		o.OnAudit = a.onAudit
		o.OnAuditError = a.onAuditError
	}
	s.opts = o

	main := o
	if s.hasSession {
		main.Session = sessionSource(host, true, hostTimeout)
	}
	if s.main, err = surface.New(main); err != nil {
		return nil, err
	}
	return s, nil
}

// kernelFor picks the kernel for a call with or without its own session.
func (s *Surface) kernelFor(perCall bool) (*surface.Surface, error) {
	if !perCall || s.hasSession {
		return s.main, nil
	}
	s.perCallOnce.Do(func() {
		o := s.opts
		o.Session = sessionSource(s.host, false, s.hostTimeout)
		s.perCall, s.perCallErr = surface.New(o)
	})
	return s.perCall, s.perCallErr
}

// Handle answers one request given as JSON text. session, when it is a JS
// function, is the session getter for this call alone (same answers as
// host.session()); otherwise the host's session applies. The answer is the
// encoded response, never larger than Limits.MaxResponseBytes.
func (s *Surface) Handle(ctx context.Context, request []byte, session js.Value) []byte {
	if s.closed.Load() {
		return s.failure(surface.CodeInternalError, "surface is closed")
	}
	perCall := session.Type() == js.TypeFunction
	k, err := s.kernelFor(perCall)
	if err != nil {
		return s.failure(surface.CodeInternalError, "internal error")
	}
	if perCall {
		ctx = context.WithValue(ctx, sessionKey{}, session)
	}
	return k.HandleJSON(ctx, request)
}

// failure encodes a protocol failure the kernel never saw.
func (s *Surface) failure(code surface.Code, msg string) []byte {
	return s.main.Encode(&surface.Response{
		Protocol: surface.Protocol, OK: false,
		Error: &surface.Error{Code: code, Message: msg},
	})
}

// describeAnswer is what a direct describe() resolves to.
type describeAnswer struct {
	OK     bool                 `json:"ok"`
	Result *surface.Description `json:"result,omitempty"`
	Error  *surface.Error       `json:"error,omitempty"`
}

// Describe answers a direct in-page describe with input as JSON text (empty:
// no input). Session failures keep their SESSION_* codes, which the JS
// runtime turns into SurfaceSessionError.
func (s *Surface) Describe(ctx context.Context, input []byte) []byte {
	var ans describeAnswer
	if s.closed.Load() {
		ans.Error = &surface.Error{Code: surface.CodeInternalError, Message: "surface is closed"}
	} else if in, perr := parseDescribeInput(input, s.limits.MaxRequestBytes); perr != nil {
		ans.Error = perr
	} else if d, err := s.main.Describe(ctx, in); err != nil {
		var pe *surface.Error
		if !errors.As(err, &pe) {
			pe = &surface.Error{Code: surface.CodeInternalError, Message: "internal error"}
		}
		ans.Error = pe
	} else {
		ans.OK, ans.Result = true, d
	}
	b, err := json.Marshal(ans)
	if err != nil {
		b, _ = json.Marshal(describeAnswer{Error: &surface.Error{Code: surface.CodeInternalError, Message: "description could not be encoded"}})
	}
	return b
}

// Close marks the surface closed: later calls answer INTERNAL_ERROR. Calls
// already running finish.
func (s *Surface) Close() { s.closed.Store(true) }

// Limits reports the request and response bounds in force.
func (s *Surface) Limits() surface.Limits { return s.limits }
