// Package redisstate keeps a surface's rate limits and replay claims in
// Redis, so that every replica serving one app shares them. It implements
// the kernel's surface.Limiter and surface.ReplayGuard, and Handler serves
// both to pages over HTTP (see js/pling-shared.js).
//
// Every decision is one atomic step on the server: a Lua script for the
// sliding window, SET NX PX for a claim. Time is Redis's own (TIME inside
// the script, PX expiry), never the replica's clock, so replicas whose
// clocks disagree still count one window. Every key expires, so the store
// holds only what is still inside a window.
//
// Any failure (Redis down, a timeout, an answer of the wrong shape) is an
// error, which the kernel turns into RATE_LIMIT_UNAVAILABLE or
// REPLAY_GUARD_UNAVAILABLE: a request is refused, never let through. So is
// a Redis that may evict keys before they expire (a maxmemory with any
// policy but noeviction): it would forget a claim inside its window. The
// check asks the server a command without keys reaches: with a Ring or
// Cluster client that is one shard, so give every shard the same policy.
//
// Claims and windows live in Redis's memory. A restart that does not
// replay every write (appendonly yes with appendfsync always does), or a
// failover to a replica that had not received them, forgets those of the
// last window, and a request claimed just before can run once more: run
// Redis that way where that matters.
package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/surface"
)

// DefaultTimeout bounds one decision when Options.Timeout is zero.
const DefaultTimeout = 500 * time.Millisecond

// Options are what a Limiter and a Guard share.
type Options struct {
	// App namespaces the keys, so that apps sharing one Redis never share a
	// budget or a claim. Required.
	App string
	// Timeout bounds one decision, whatever the client's own timeouts: a
	// stalled Redis refuses the request when it passes. Default DefaultTimeout.
	Timeout time.Duration
}

func (o Options) check() error {
	if o.App == "" {
		return errors.New("redisstate: Options.App is required")
	}
	if o.Timeout < 0 {
		return errors.New("redisstate: Options.Timeout must not be negative")
	}
	return nil
}

func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// prefix is "pling:<kind>:<len(app)>:<app>:"; the length keeps app "a:b"
// and app "a" with a key "b:..." apart.
func (o Options) prefix(kind string) string {
	return "pling:" + kind + ":" + strconv.Itoa(len(o.App)) + ":" + o.App + ":"
}

// ErrBadAnswer is returned when Redis answers a script with something it
// cannot have produced.
var ErrBadAnswer = errors.New("redisstate: malformed answer from Redis")

// ErrMayEvict is returned when Redis has a memory limit and a policy that
// evicts keys when it is reached: every key here has a TTL, so volatile-*
// policies take them first, and a claim or a window would vanish before
// its time. Set maxmemory-policy noeviction (a full Redis then refuses the
// write, which refuses the request) or no maxmemory.
var ErrMayEvict = errors.New("redisstate: Redis may evict keys before they expire (maxmemory-policy is not noeviction)")

// evictionRecheck is how long a Redis found not to evict is trusted before
// it is asked again: its configuration can change while it runs.
const evictionRecheck = 10 * time.Second

// memoryPolicy answers {maxmemory, maxmemory-policy}. INFO, unlike CONFIG,
// is allowed on managed Redis services.
var memoryPolicy = redis.NewScript(`
local s = redis.call('INFO', 'memory')
return {string.match(s, 'maxmemory:(%d+)') or '', string.match(s, 'maxmemory_policy:([%w-]+)') or ''}
`)

// evictionCheck remembers until when Redis was last found not to evict.
type evictionCheck struct{ okUntil atomic.Int64 }

func (e *evictionCheck) check(ctx context.Context, c redis.Scripter) error {
	if time.Now().UnixNano() < e.okUntil.Load() {
		return nil
	}
	v, err := memoryPolicy.Run(ctx, c, nil).StringSlice()
	switch {
	case err != nil:
		return err
	case len(v) != 2 || v[0] == "" || v[1] == "":
		return ErrBadAnswer
	case v[0] != "0" && v[1] != "noeviction":
		return ErrMayEvict
	}
	e.okUntil.Store(time.Now().Add(evictionRecheck).UnixNano())
	return nil
}

// slidingWindow admits a request when fewer than max admitted requests lie
// in (now-window, now], now being the server's clock in microseconds. The
// sorted set holds one member per admitted request, scored by its time; a
// member is unique because within one microsecond the count only grows
// (the trim at the start removes the same members for every call of that
// microsecond). The member is named from TIME's own strings: Lua prints a
// number of 16 digits with 14 (1.7961975274609e+15), which would give two
// admissions up to 100µs apart with one count the same name, and ZADD would
// only move it. Returns {1, 0} or {0, retry-after in microseconds}.
//
// The ZADD is the script's first write: Redis checks a script's memory only
// until it has written, so a script that trimmed first went on adding to a
// Redis over its maxmemory. Counting (ZCOUNT, a read) and trimming after
// the add leave a full Redis refusing the admission, as it refuses a claim.
// The exclusive bound is written with %.0f: Lua's own number to string
// conversion keeps 14 digits.
var slidingWindow = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local after = '(' .. string.format('%.0f', now - window)
local n = redis.call('ZCOUNT', KEYS[1], after, '+inf')
if n < max then
  redis.call('ZADD', KEYS[1], now, t[1] .. '.' .. t[2] .. '-' .. n)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1)
  return {1, 0}
end
local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], after, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local wait = tonumber(oldest[2]) + window - now
if wait <= 0 or wait > window then wait = window end
return {0, wait}
`)

// Limiter is a sliding-window surface.Limiter in Redis: max admitted
// requests per window per key (the kernel's key is the session id).
type Limiter struct {
	c      redis.Scripter
	evict  evictionCheck
	opts   Options
	prefix string
	max    int
	window time.Duration
}

// NewLimiter returns a limiter admitting max requests per window per key.
func NewLimiter(c redis.Scripter, max int, window time.Duration, opts Options) (*Limiter, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if c == nil || max <= 0 || window < time.Microsecond {
		return nil, errors.New("redisstate: NewLimiter needs a client, a positive max and a window of a microsecond or more")
	}
	return &Limiter{c: c, opts: opts, prefix: opts.prefix("rl"), max: max, window: window}, nil
}

// Allow implements surface.Limiter. now is ignored: Redis's clock decides.
func (l *Limiter) Allow(ctx context.Context, key string, _ time.Time) (surface.Decision, error) {
	return bounded(ctx, l.opts.timeout(), func(ctx context.Context) (surface.Decision, error) {
		if err := l.evict.check(ctx, l.c); err != nil {
			return surface.Decision{}, err
		}
		v, err := slidingWindow.Run(ctx, l.c, []string{l.prefix + key}, l.window.Microseconds(), l.max).Int64Slice()
		if err != nil {
			return surface.Decision{}, err
		}
		return l.read(v)
	})
}

// read checks a script's answer against what the script can return.
func (l *Limiter) read(v []int64) (surface.Decision, error) {
	switch {
	case len(v) != 2:
	case v[0] == 1 && v[1] == 0:
		return surface.Decision{Verdict: surface.Allow}, nil
	case v[0] == 0 && v[1] > 0 && v[1] <= l.window.Microseconds():
		return surface.Decision{Verdict: surface.Deny, RetryAfter: time.Duration(v[1]) * time.Microsecond}, nil
	}
	return surface.Decision{}, ErrBadAnswer
}

// Guard is a surface.ReplayGuard in Redis: a claim is a key set only if it
// does not exist, expiring after the window by Redis's clock.
type Guard struct {
	c      redis.Cmdable
	evict  evictionCheck
	opts   Options
	prefix string
}

// NewGuard returns a replay guard on c.
func NewGuard(c redis.Cmdable, opts Options) (*Guard, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("redisstate: NewGuard needs a client")
	}
	return &Guard{c: c, opts: opts, prefix: opts.prefix("rp")}, nil
}

// Claim implements surface.ReplayGuard. now is ignored; window is rounded
// up to whole milliseconds.
func (g *Guard) Claim(ctx context.Context, key surface.ReplayKey, _ time.Time, window time.Duration) (surface.ReplayDecision, error) {
	if window <= 0 {
		return 0, errors.New("redisstate: a claim needs a positive window")
	}
	// Whole milliseconds, rounded up: the expiry is never shorter than the window.
	px := (window + time.Millisecond - 1) / time.Millisecond * time.Millisecond
	return bounded(ctx, g.opts.timeout(), func(ctx context.Context) (surface.ReplayDecision, error) {
		// SET NX PX is one atomic command: the first claim sets the key,
		// every later one inside the window finds it, and Redis's clock
		// ends the window.
		if err := g.evict.check(ctx, g.c); err != nil {
			return 0, err
		}
		ok, err := g.c.SetNX(ctx, g.Key(key), "1", px).Result()
		if err != nil {
			return 0, err
		}
		if ok {
			return surface.Claimed, nil
		}
		return surface.Replayed, nil
	})
}

// Key is the Redis key of a claim: the prefix and a SHA-256 of the session
// and request ids, so that a claim's size does not follow the length of
// the ids and no two pairs share one.
func (g *Guard) Key(k surface.ReplayKey) string {
	return g.prefix + claimHash(k)
}

// claimHash is the hex SHA-256 of the session id's length (8 bytes,
// big-endian), the session id and the request id: a claim's name in Redis,
// in the page's IndexedDB and in the handler's audit (testdata/claimkeys).
func claimHash(k surface.ReplayKey) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(k.SessionID)))
	h.Write(n[:])
	h.Write([]byte(k.SessionID))
	h.Write([]byte(k.RequestID))
	return hex.EncodeToString(h.Sum(nil))
}

// bounded runs f under a timeout and returns when it passes even if f does
// not: a client configured without ContextTimeoutEnabled waits for its own
// read timeout, and the request must be refused before that. f's goroutine
// ends when the client gives up.
func bounded[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("redisstate: %v", r)}
			}
		}()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("redisstate: %w", ctx.Err())
	}
}
