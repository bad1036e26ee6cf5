package surface

import (
	"context"
	"sync"
	"time"
)

// Limiter decides whether one more request of a session fits its window.
// Implement it to share limits across replicas; the kernel treats an error,
// a panic or an illegal Decision as RATE_LIMIT_UNAVAILABLE and refuses the
// request.
type Limiter interface {
	Allow(ctx context.Context, key string, now time.Time) (Decision, error)
}

// Decision is a Limiter's answer. The zero value is illegal on purpose, so a
// limiter that forgets to decide cannot let a request through.
type Decision struct {
	Verdict Verdict
	// RetryAfter is required with Deny: how long until the key is admitted.
	RetryAfter time.Duration
}

// Verdict is Allow or Deny.
type Verdict uint8

const (
	Allow Verdict = iota + 1
	Deny
)

func (d Decision) legal() bool {
	switch d.Verdict {
	case Allow:
		return d.RetryAfter == 0
	case Deny:
		return d.RetryAfter > 0
	}
	return false
}

// slidingWindow is an exact in-process sliding-window limiter: a key is
// admitted when fewer than max of its admitted requests lie in (now-window, now].
// Keys whose requests have all left the window are dropped, so memory follows
// the number of active sessions.
type slidingWindow struct {
	max    int
	window time.Duration

	mu    sync.Mutex
	base  time.Time // the first call's time; admitted times count from it
	logs  map[string]*ring
	calls int
}

// ring holds a key's admitted times, oldest first, in nanoseconds after the
// limiter's base; it never holds more than max. It starts small and grows
// as the key uses it: a limit of a million requests a minute must not cost
// 8 MB for every session that sends one. Offsets rather than time.Time: 8
// bytes a request instead of 24, and no pointer for the collector to scan.
type ring struct {
	times []int64
	head  int
	n     int
}

const initialRing = 8

// NewSlidingWindow returns the in-process limiter: exact, admitting max
// requests per window per key, its memory following the keys in use.
func NewSlidingWindow(max int, window time.Duration) Limiter { return newSlidingWindow(max, window) }

func newSlidingWindow(max int, window time.Duration) *slidingWindow {
	return &slidingWindow{max: max, window: window, logs: make(map[string]*ring)}
}

// Allow implements Limiter.
func (l *slidingWindow) Allow(_ context.Context, key string, now time.Time) (Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base.IsZero() {
		l.base = now
	}
	// Sub uses the monotonic clock when both times carry it.
	at := int64(now.Sub(l.base))
	l.calls++
	if l.calls%1024 == 0 {
		l.sweep(at)
	}
	r := l.logs[key]
	if r == nil {
		r = &ring{times: make([]int64, min(l.max, initialRing))}
		l.logs[key] = r
	}
	r.expire(at, l.window)
	if r.n < l.max {
		r.push(at, l.max)
		return Decision{Verdict: Allow}, nil
	}
	// The oldest admitted time leaves the window at oldest+window. A clock
	// that jumped backwards keeps old entries counted (fail closed) but never
	// asks for more than one window of patience.
	wait := l.window - time.Duration(at-r.times[r.head])
	if wait <= 0 || wait > l.window {
		wait = l.window
	}
	return Decision{Verdict: Deny, RetryAfter: wait}, nil
}

// Len reports how many keys the limiter tracks (for tests and metrics).
func (l *slidingWindow) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.logs)
}

func (l *slidingWindow) sweep(at int64) {
	for k, r := range l.logs {
		r.expire(at, l.window)
		if r.n == 0 {
			delete(l.logs, k)
		}
	}
}

func (r *ring) expire(at int64, window time.Duration) {
	for r.n > 0 && at-r.times[r.head] >= int64(window) {
		r.head = (r.head + 1) % len(r.times)
		r.n--
	}
}

func (r *ring) push(t int64, max int) {
	if r.n == len(r.times) {
		// Full but below max: grow, keeping the times in order from 0.
		grown := make([]int64, min(max, 2*len(r.times)))
		n := copy(grown, r.times[r.head:])
		copy(grown[n:], r.times[:r.head])
		r.times, r.head = grown, 0
	}
	r.times[(r.head+r.n)%len(r.times)] = t
	r.n++
}
