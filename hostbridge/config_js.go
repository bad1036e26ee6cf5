//go:build js && wasm

package hostbridge

import (
	"errors"
	"math"
	"time"
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

var (
	configFields    = []string{"app", "expose", "recordLimit", "maxRecordLimit", "rateLimit", "replay", "executeTimeoutMs", "hostTimeoutMs"}
	rateLimitFields = []string{"maxRequests", "windowMs"}
	replayFields    = []string{"windowMs"}
)

// parseConfig decodes the config text as decodeExact does with unknown
// members refused: the JS runtime's usual form directly (see quickReader),
// anything else, errors included, through encoding/json.
func parseConfig(data []byte) (Config, error) {
	var cfg Config
	if quick(data, func(r *quickReader) { r.config(&cfg) }) {
		return cfg, nil
	}
	cfg = Config{}
	err := decodeExact(data, &cfg, true)
	return cfg, err
}

func (r *quickReader) config(c *Config) {
	r.object(configFields, func(field int) {
		switch field {
		case 0:
			r.text(&c.App)
		case 1:
			r.texts(&c.Expose)
		case 2:
			r.integer(&c.RecordLimit)
		case 3:
			r.integer(&c.MaxRecordLimit)
		case 4:
			if !r.null() {
				rl := new(RateLimitConfig)
				r.object(rateLimitFields, func(f int) {
					if f == 0 {
						r.integer(&rl.MaxRequests)
					} else {
						r.float(&rl.WindowMs)
					}
				})
				c.RateLimit = rl
			}
		case 5:
			if !r.null() {
				rp := new(ReplayConfig)
				r.object(replayFields, func(int) { r.float(&rp.WindowMs) })
				c.Replay = rp
			}
		case 6:
			r.float(&c.ExecuteTimeoutMs)
		case 7:
			r.float(&c.HostTimeoutMs)
		}
	})
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
