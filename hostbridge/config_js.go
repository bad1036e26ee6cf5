//go:build js && wasm

package hostbridge

import (
	"errors"
	"math"
	"time"

	"pling.dev/agent/internal/jsonread"
)

// Config is the static part of a surface's options, sent by the JS runtime
// as one JSON object. Which optional host functions exist (session, expose,
// allow, claim, audit, auditError) is read from the host object itself.
// Zero fields take the kernel's defaults.
type Config struct {
	// App names the application in descriptions and replies.
	App string `json:"app,omitempty"`
	// Expose, when non-nil, is the page-level list of exposable ids. A
	// host expose() function is used instead when present.
	Expose []string `json:"expose,omitempty"`
	// RecordLimit and MaxRecordLimit: the describe record window (8, 100).
	RecordLimit    int `json:"recordLimit,omitempty"`
	MaxRecordLimit int `json:"maxRecordLimit,omitempty"`
	// RateLimit turns the per-session rate limit on. With a host allow()
	// function its numbers are not used.
	RateLimit *RateLimitConfig `json:"rateLimit,omitempty"`
	// Replay turns the invoke replay guard on.
	Replay *ReplayConfig `json:"replay,omitempty"`
	// ExecuteTimeoutMs bounds one executor call. Default 30000.
	ExecuteTimeoutMs float64 `json:"executeTimeoutMs,omitempty"`
	// HostTimeoutMs bounds every other awaited host Promise (session,
	// registry view, limiter, guard, audit). Default 10000.
	HostTimeoutMs float64 `json:"hostTimeoutMs,omitempty"`
}

// RateLimitConfig mirrors the page option rateLimit.
type RateLimitConfig struct {
	MaxRequests int     `json:"maxRequests,omitempty"`
	WindowMs    float64 `json:"windowMs,omitempty"`
}

// ReplayConfig mirrors the page option replay.
type ReplayConfig struct {
	WindowMs float64 `json:"windowMs,omitempty"`
}

// Member names, keyed by the constants the readers switch on: a name and
// the code that reads its value meet by name, never by position.
var (
	configFields    = [...]string{configApp: "app", configExpose: "expose", configRecordLimit: "recordLimit", configMaxRecordLimit: "maxRecordLimit", configRateLimit: "rateLimit", configReplay: "replay", configExecuteTimeoutMs: "executeTimeoutMs", configHostTimeoutMs: "hostTimeoutMs"}
	rateLimitFields = [...]string{rateLimitMaxRequests: "maxRequests", rateLimitWindowMs: "windowMs"}
	replayFields    = [...]string{replayWindowMs: "windowMs"}
)

// parseConfig decodes the config text as encoding/json would with
// unknown members refused (DisallowUnknownFields).
func parseConfig(data []byte) (Config, error) {
	var cfg Config
	r := jsonread.New(data)
	r.Object(configFields[:], true, func(field int) {
		switch field {
		case configApp:
			r.String(&cfg.App)
		case configExpose:
			r.Strings(&cfg.Expose)
		case configRecordLimit:
			r.Int(&cfg.RecordLimit)
		case configMaxRecordLimit:
			r.Int(&cfg.MaxRecordLimit)
		case configRateLimit:
			if r.Null() {
				cfg.RateLimit = nil
				return
			}
			if cfg.RateLimit == nil {
				cfg.RateLimit = new(RateLimitConfig)
			}
			rl := cfg.RateLimit
			r.Object(rateLimitFields[:], true, func(f int) {
				switch f {
				case rateLimitMaxRequests:
					r.Int(&rl.MaxRequests)
				case rateLimitWindowMs:
					r.Float(&rl.WindowMs)
				}
			})
		case configReplay:
			if r.Null() {
				cfg.Replay = nil
				return
			}
			if cfg.Replay == nil {
				cfg.Replay = new(ReplayConfig)
			}
			rp := cfg.Replay
			r.Object(replayFields[:], true, func(f int) {
				if f == replayWindowMs {
					r.Float(&rp.WindowMs)
				}
			})
		case configExecuteTimeoutMs:
			r.Float(&cfg.ExecuteTimeoutMs)
		case configHostTimeoutMs:
			r.Float(&cfg.HostTimeoutMs)
		}
	})
	if r.End() {
		return cfg, nil
	}
	// encoding/json names the first unknown member unless the value
	// before it broke a rule, or the value itself is not JSON.
	if r.HasUnknown {
		v := jsonread.New(data)
		v.Skip()
		if !v.Err {
			return Config{}, unknownField(r.Unknown)
		}
	}
	return Config{}, errNotDecoded
}

// DefaultHostTimeout bounds awaited host Promises other than the executor.
const DefaultHostTimeout = 10 * time.Second

// millis converts a millisecond option; zero means unset. Negative, NaN or
// absurdly large values are configuration errors.
func millis(name string, ms float64) (time.Duration, error) {
	if ms == 0 {
		return 0, nil
	}
	if math.IsNaN(ms) || ms < 0 || ms > 1e12 {
		return 0, errors.New(name + " must be a positive number of milliseconds")
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if d <= 0 {
		d = 1 // a sub-nanosecond window still means "on"
	}
	return d, nil
}

// durationFromMillis turns a limiter's retryAfterMs into a duration,
// rounding up so that a fraction of a millisecond is never read as zero.
func durationFromMillis(ms float64) time.Duration {
	if ms > 1e12 {
		ms = 1e12
	}
	return time.Duration(math.Ceil(ms * float64(time.Millisecond)))
}

// Members of the config object, indexes into configFields.
const (
	configApp = iota
	configExpose
	configRecordLimit
	configMaxRecordLimit
	configRateLimit
	configReplay
	configExecuteTimeoutMs
	configHostTimeoutMs
)

// Members of the rateLimit object, indexes into rateLimitFields.
const (
	rateLimitMaxRequests = iota
	rateLimitWindowMs
)

// Members of the replay object, indexes into replayFields.
const (
	replayWindowMs = iota
)
