package surface

import (
	"context"
	"errors"
	"hash/maphash"
	"math"
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
//
// It keeps a 64-bit hash of each key (seeded per guard, so that no caller
// can aim two keys at one value) rather than the key itself: 16 bytes a
// claim and no pointers, so its memory does not grow with the length of
// request ids and the collector never scans it. A guard holds a second's
// worth of requests or more, which made the keys and their copies in the
// insertion order most of what a busy surface kept. Two live keys sharing
// a hash, about one chance in 2^64 per pair, make the later one refused as
// a replay: never run twice, at worst refused once.
type MemoryGuard struct {
	capacity int
	seed     maphash.Seed

	mu     sync.Mutex
	base   time.Time        // the first claim's time; expiries count from it
	claims map[uint64]int64 // key hash -> expiry, in nanoseconds after base
	ring   []claim          // claims in the order they were made, oldest at head
	head   int
	n      int // claims in ring
}

type claim struct {
	hash   uint64
	expiry int64
}

// NewMemoryGuard returns a guard holding at most capacity live claims.
func NewMemoryGuard(capacity int) *MemoryGuard {
	if capacity <= 0 {
		capacity = DefaultReplayCapacity
	}
	return &MemoryGuard{capacity: capacity, seed: maphash.MakeSeed(), claims: make(map[uint64]int64)}
}

// Claim implements ReplayGuard.
func (g *MemoryGuard) Claim(_ context.Context, key ReplayKey, now time.Time, window time.Duration) (ReplayDecision, error) {
	h := g.hash(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.base.IsZero() {
		g.base = now
	}
	// Sub uses the monotonic clock when both times carry it, so a step of
	// the wall clock neither ends nor stretches a window.
	at := int64(now.Sub(g.base))
	g.expire(at)
	if exp, ok := g.claims[h]; ok && at < exp {
		return Replayed, nil
	}
	if len(g.claims) >= g.capacity {
		return 0, ErrReplayGuardFull
	}
	exp := at + int64(window)
	if exp < at { // a window too long to add: never expires
		exp = math.MaxInt64
	}
	g.claims[h] = exp
	g.push(claim{h, exp})
	return Claimed, nil
}

func (g *MemoryGuard) hash(key ReplayKey) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	// The session id's length first, so that no two keys write the same
	// bytes ("ab"+"c" and "a"+"bc" differ).
	l := uint64(len(key.SessionID))
	_, _ = h.Write([]byte{byte(l), byte(l >> 8), byte(l >> 16), byte(l >> 24), byte(l >> 32), byte(l >> 40), byte(l >> 48), byte(l >> 56)})
	_, _ = h.WriteString(key.SessionID)
	_, _ = h.WriteString(key.RequestID)
	return h.Sum64()
}

// push appends c to the ring, doubling it when full.
func (g *MemoryGuard) push(c claim) {
	if g.n == len(g.ring) {
		grown := make([]claim, max(16, 2*len(g.ring)))
		for i := 0; i < g.n; i++ {
			grown[i] = g.ring[(g.head+i)%len(g.ring)]
		}
		g.ring, g.head = grown, 0
	}
	g.ring[(g.head+g.n)%len(g.ring)] = c
	g.n++
}

// Len reports how many claims the guard holds (for tests and metrics).
func (g *MemoryGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.claims)
}

// expire drops claims from the front of the insertion order while they have
// expired. A claim re-made after expiry is kept by its newest entry.
func (g *MemoryGuard) expire(at int64) {
	for g.n > 0 {
		c := g.ring[g.head]
		if at < c.expiry {
			return
		}
		if exp, ok := g.claims[c.hash]; ok && exp == c.expiry {
			delete(g.claims, c.hash)
		}
		g.ring[g.head] = claim{}
		g.head = (g.head + 1) % len(g.ring)
		g.n--
	}
}
