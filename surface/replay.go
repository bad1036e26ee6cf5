package surface

import (
	"cmp"
	"context"
	"errors"
	"hash/maphash"
	"math"
	"slices"
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

// defaultReplayCapacity is how many live claims NewMemoryGuard holds by default.
const defaultReplayCapacity = 100_000

// errReplayGuardFull is returned by NewMemoryGuard's guard when every slot holds a claim
// still inside its window. Forgetting one would let that id run twice, so the
// guard refuses instead.
var errReplayGuardFull = errors.New("surface: replay guard is full")

// memoryGuard is an in-process ReplayGuard with bounded memory: claims expire
// after their window, and when capacity live claims exist it fails closed.
//
// It keeps a 64-bit hash of each key (seeded per guard, so that no caller
// can aim two keys at one value) rather than the key itself: 16 bytes a
// claim and no pointers, so its memory does not grow with the length of
// request ids and the collector never scans it. Two live keys sharing a
// hash, about one chance in 2^64 per pair, make the later one refused as a
// replay: never run twice, at worst refused once.
//
// The hashes live in one open-addressing table (linear probing), not in a
// Go map with an insertion-order ring beside it: a map whose keys churn
// grows its tables by doubling and keeps them, and the ring doubled too,
// so a guard filling up at a steady rate kept raising its memory. A guard
// of up to 114,688 claims (the default capacity among them) takes its
// whole table, 2 MiB at most, at its first claim, and never moves it; a
// larger one starts there and doubles when more than 7/8 of its slots are
// taken. An expired claim stays in its slot until a claim reuses the slot
// on its probe path or a sweep removes it; a sweep of the whole table runs
// when the guard would otherwise be full, or grow, and a claim has expired
// since the last one.
type memoryGuard struct {
	capacity int
	seed     maphash.Seed

	mu      sync.Mutex
	base    time.Time // the first claim's time; expiries count from it
	last    int64     // the latest claim's time, after base (what Len counts at)
	slots   []claim   // a power of two; hash 0 marks an empty slot
	used    int       // slots holding a claim, live or expired
	soonest int64     // no claim in slots expires before this

	// next holds, from the last sweep, the claims that were then the
	// soonest to expire, soonest first; rest is when the soonest claim not
	// in next expires, or later. A guard that stays full, one claim
	// expiring for each that arrives, frees the next one from here instead
	// of walking the whole table for every claim.
	next   []claim
	nextAt int // next[:nextAt] are done with
	rest   int64
	sweeps int // how many sweeps walked the table (tests read it)

	startSlots int // the first table's size; 0: up to initialSlots (tests make it small)
}

// claim is one slot: a key's hash and when its claim ends, in nanoseconds
// after the guard's base.
type claim struct {
	hash   uint64
	expiry int64
}

// initialSlots is the table a guard takes at its first claim when its
// capacity needs more: 2 MiB, enough for the default capacity.
const initialSlots = 1 << 17

// NewMemoryGuard returns the in-process guard: claims expire after their
// window, and with capacity live claims it fails closed
// (errReplayGuardFull).
func NewMemoryGuard(capacity int) ReplayGuard { return newMemoryGuard(capacity) }

func newMemoryGuard(capacity int) *memoryGuard {
	if capacity <= 0 {
		capacity = defaultReplayCapacity
	}
	return &memoryGuard{capacity: capacity, seed: maphash.MakeSeed()}
}

// maxSlots is the table that holds capacity claims with at most 7/8 of it
// taken and one slot always empty, which ends every probe.
func (g *memoryGuard) maxSlots() int {
	n := 2
	for n*7/8 < g.capacity || n <= g.capacity {
		n *= 2
	}
	return n
}

// Claim implements ReplayGuard.
func (g *memoryGuard) Claim(_ context.Context, key ReplayKey, now time.Time, window time.Duration) (ReplayDecision, error) {
	return g.claim(g.hash(key), now, window)
}

// claim is Claim on a key's hash, h != 0.
func (g *memoryGuard) claim(h uint64, now time.Time, window time.Duration) (ReplayDecision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.slots == nil {
		n := min(g.maxSlots(), initialSlots)
		if g.startSlots > 0 {
			n = min(g.maxSlots(), g.startSlots)
		}
		g.base = now
		g.slots = make([]claim, n)
		g.soonest, g.rest = math.MaxInt64, math.MaxInt64
		g.next = make([]claim, 0, min(g.capacity, nextCount))
	}
	// Sub uses the monotonic clock when both times carry it, so a step of
	// the wall clock neither ends nor stretches a window.
	at := int64(now.Sub(g.base))
	g.last = at
	exp := at + int64(window)
	if exp < at { // a window too long to add: never expires
		exp = math.MaxInt64
	}
	i, found, free := g.find(h, at)
	switch {
	case found && at < g.slots[i].expiry:
		return Replayed, nil
	case found:
		g.slots[i].expiry = exp // the same key again after its window
	case free >= 0:
		g.slots[free] = claim{h, exp} // an expired claim on the path gives its slot
	default:
		if g.used >= g.capacity || g.used >= len(g.slots)*7/8 {
			if at >= g.soonest {
				g.dropNext(at)
				if g.used >= g.capacity || g.used >= len(g.slots)*7/8 {
					g.sweep(at)
				}
			}
			if g.used >= g.capacity {
				return 0, errReplayGuardFull
			}
			if g.used >= len(g.slots)*7/8 {
				g.grow()
			}
			i, _, _ = g.find(h, at)
		}
		g.slots[i] = claim{h, exp}
		g.used++
	}
	g.soonest = min(g.soonest, exp)
	g.rest = min(g.rest, exp)
	return Claimed, nil
}

// find looks h up. It answers h's slot and found, or the empty slot that
// ended the probe; free is the first slot on the path whose claim expired
// by at, or -1.
func (g *memoryGuard) find(h uint64, at int64) (i int, found bool, free int) {
	mask := len(g.slots) - 1
	free = -1
	for i = int(h) & mask; ; i = (i + 1) & mask {
		switch s := g.slots[i]; {
		case s.hash == h:
			return i, true, free
		case s.hash == 0:
			return i, false, free
		case free < 0 && at >= s.expiry:
			free = i
		}
	}
}

// sweep removes every claim expired by at, keeps the nextCount soonest
// of the rest in next, and notes when the soonest of the others ends.
func (g *memoryGuard) sweep(at int64) {
	mask := len(g.slots) - 1
	// Start just past an empty slot: removing a claim only moves claims of
	// its own run, which ends at an empty slot, so no claim moves to a slot
	// the walk has passed.
	start := 0
	for g.slots[start].hash != 0 {
		start++
	}
	g.sweeps++
	g.next, g.nextAt = g.next[:0], 0
	g.rest = math.MaxInt64
	for n := 1; n <= len(g.slots); n++ {
		i := (start + n) & mask
		for g.slots[i].hash != 0 && at >= g.slots[i].expiry {
			g.remove(i) // another claim may move into i: look again
		}
		if g.slots[i].hash != 0 {
			g.keepSoonest(g.slots[i])
		}
	}
	// next was a max-heap on expiry; soonest first from here on.
	slices.SortFunc(g.next, func(a, b claim) int { return cmp.Compare(a.expiry, b.expiry) })
	g.noteSoonest()
}

// nextCount is how many of the soonest claims a sweep keeps in next, at
// most: 16 KB, taken with the table, and a guard that stays full walks its
// table once per nextCount claims.
const nextCount = 1024

// keepSoonest offers c to next, a max-heap on expiry as long as its
// capacity (taken with the table, never grown) during a sweep; a claim left
// out, or pushed out, lowers rest.
func (g *memoryGuard) keepSoonest(c claim) {
	h := g.next
	if len(h) < cap(h) {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p].expiry >= h[i].expiry {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		g.next = h
		return
	}
	if len(h) == 0 || c.expiry >= h[0].expiry {
		g.rest = min(g.rest, c.expiry)
		return
	}
	g.rest = min(g.rest, h[0].expiry)
	h[0] = c
	for i := 0; ; {
		l, r, big := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].expiry > h[big].expiry {
			big = l
		}
		if r < len(h) && h[r].expiry > h[big].expiry {
			big = r
		}
		if big == i {
			break
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// dropNext removes the claims of next that expired by at and are still in
// the table as next recorded them (a key claimed again since has a new
// expiry and stays; a slot given to another key no longer holds it).
func (g *memoryGuard) dropNext(at int64) {
	for ; g.nextAt < len(g.next) && g.next[g.nextAt].expiry <= at; g.nextAt++ {
		c := g.next[g.nextAt]
		if i, found, _ := g.find(c.hash, at); found && g.slots[i].expiry == c.expiry {
			g.remove(i)
		}
	}
	g.noteSoonest()
}

// noteSoonest sets soonest from what is left of next and from rest.
func (g *memoryGuard) noteSoonest() {
	g.soonest = g.rest
	if g.nextAt < len(g.next) {
		g.soonest = min(g.soonest, g.next[g.nextAt].expiry)
	}
}

// remove empties slot i and moves later claims of its run back, so that
// every claim stays reachable from its home slot without tombstones.
func (g *memoryGuard) remove(i int) {
	mask := len(g.slots) - 1
	g.used--
	for j := i; ; {
		g.slots[i] = claim{}
		for {
			j = (j + 1) & mask
			if g.slots[j].hash == 0 {
				return
			}
			home := int(g.slots[j].hash) & mask
			// The claim at j stays when its home lies cyclically in (i, j].
			if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
				continue
			}
			g.slots[i] = g.slots[j]
			i = j
			break
		}
	}
}

// grow doubles the table.
func (g *memoryGuard) grow() {
	old := g.slots
	g.slots = make([]claim, 2*len(old))
	mask := len(g.slots) - 1
	for _, c := range old {
		if c.hash == 0 {
			continue
		}
		i := int(c.hash) & mask
		for g.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		g.slots[i] = c
	}
}

func (g *memoryGuard) hash(key ReplayKey) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	// The session id's length first, so that no two keys write the same
	// bytes ("ab"+"c" and "a"+"bc" differ).
	l := uint64(len(key.SessionID))
	_, _ = h.Write([]byte{byte(l), byte(l >> 8), byte(l >> 16), byte(l >> 24), byte(l >> 32), byte(l >> 40), byte(l >> 48), byte(l >> 56)})
	_, _ = h.WriteString(key.SessionID)
	_, _ = h.WriteString(key.RequestID)
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1 // 0 marks an empty slot
}

// Len reports how many claims the guard holds that are live at its latest
// claim's time (for tests and metrics). It reads the whole table.
func (g *memoryGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.slots {
		if c.hash != 0 && g.last < c.expiry {
			n++
		}
	}
	return n
}
