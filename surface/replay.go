package surface

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ReplayGuard claims a (session, request id) pair before an invoke runs.
// Implement it to share claims across replicas. The kernel treats an error,
// a panic or an illegal ReplayDecision as REPLAY_GUARD_UNAVAILABLE.
//
// A guard stores claims, never responses: a repeated id is refused, not
// answered from a cache.
type ReplayGuard interface {
	Claim(ctx context.Context, key ReplayKey, now time.Time, window time.Duration) (ReplayDecision, error)
}

// ReplayKey is what a claim is made on. The same request id in two sessions
// is two different keys.
type ReplayKey struct {
	SessionID string
	RequestID string
}

// ReplayDecision is a guard's answer. The zero value is illegal.
type ReplayDecision uint8

const (
	// Claimed means the pair was fresh and is now taken.
	Claimed ReplayDecision = iota + 1
	// Replayed means the pair was already taken inside its window.
	Replayed
)

// DefaultReplayCapacity is how many live claims NewMemoryGuard holds by default.
const DefaultReplayCapacity = 100_000

// ErrReplayGuardFull is returned by MemoryGuard when every slot holds a claim
// still inside its window. Forgetting one would let that id run twice, so the
// guard refuses instead.
var ErrReplayGuardFull = errors.New("surface: replay guard is full")

// MemoryGuard is an in-process ReplayGuard with bounded memory: claims expire
// after their window, and when capacity live claims exist it fails closed.
type MemoryGuard struct {
	capacity int

	mu     sync.Mutex
	claims map[ReplayKey]time.Time // key -> expiry
	order  []claim                 // claims in the order they were made
	head   int
}

type claim struct {
	key    ReplayKey
	expiry time.Time
}

// NewMemoryGuard returns a guard holding at most capacity live claims.
func NewMemoryGuard(capacity int) *MemoryGuard {
	if capacity <= 0 {
		capacity = DefaultReplayCapacity
	}
	return &MemoryGuard{capacity: capacity, claims: make(map[ReplayKey]time.Time)}
}

// Claim implements ReplayGuard.
func (g *MemoryGuard) Claim(_ context.Context, key ReplayKey, now time.Time, window time.Duration) (ReplayDecision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire(now)
	if exp, ok := g.claims[key]; ok && now.Before(exp) {
		return Replayed, nil
	}
	if len(g.claims) >= g.capacity {
		return 0, ErrReplayGuardFull
	}
	exp := now.Add(window)
	g.claims[key] = exp
	g.order = append(g.order, claim{key, exp})
	return Claimed, nil
}

// Len reports how many claims the guard holds (for tests and metrics).
func (g *MemoryGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.claims)
}

// expire drops claims from the front of the insertion order while they have
// expired. A claim re-made after expiry is kept by its newest entry.
func (g *MemoryGuard) expire(now time.Time) {
	for g.head < len(g.order) && !now.Before(g.order[g.head].expiry) {
		c := g.order[g.head]
		if exp, ok := g.claims[c.key]; ok && exp.Equal(c.expiry) {
			delete(g.claims, c.key)
		}
		g.order[g.head] = claim{}
		g.head++
	}
	// Compact once the dead prefix dominates, so the slice stays bounded.
	if g.head > 1024 && g.head*2 > len(g.order) {
		n := copy(g.order, g.order[g.head:])
		clear(g.order[n:])
		g.order = g.order[:n]
		g.head = 0
	}
}
