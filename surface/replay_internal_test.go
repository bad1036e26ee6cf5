package surface

import (
	"context"
	"errors"
	"testing"
	"time"
)

// guardModel is the reference a memoryGuard must agree with: every claim
// kept with its expiry, none forgotten, a claim live while at < expiry, and
// a new claim refused while capacity claims are live.
type guardModel struct {
	capacity int
	claims   map[uint64]int64
}

func (m *guardModel) claim(h uint64, at, window int64) (ReplayDecision, error) {
	if exp, ok := m.claims[h]; ok && at < exp {
		return Replayed, nil
	}
	if m.live(at) >= m.capacity {
		return 0, errReplayGuardFull
	}
	m.claims[h] = at + window
	return Claimed, nil
}

func (m *guardModel) live(at int64) int {
	n := 0
	for _, exp := range m.claims {
		if at < exp {
			n++
		}
	}
	return n
}

// checkTable checks the table's own invariants: used counts the taken
// slots, one slot at least is empty, and every claim is reachable from its
// home slot without crossing an empty one.
func checkTable(t *testing.T, g *memoryGuard) {
	t.Helper()
	used := 0
	mask := len(g.slots) - 1
	for i, c := range g.slots {
		if c.hash == 0 {
			continue
		}
		used++
		for j := int(c.hash) & mask; j != i; j = (j + 1) & mask {
			if g.slots[j].hash == 0 {
				t.Fatalf("slot %d (home %d) is cut off by the empty slot %d", i, int(c.hash)&mask, j)
			}
		}
	}
	if used != g.used || used >= len(g.slots) || used > g.capacity {
		t.Fatalf("used = %d, counted %d, of %d slots, capacity %d", g.used, used, len(g.slots), g.capacity)
	}
}

// FuzzMemoryGuard drives a guard with a small table, hashes that share
// home slots and runs that wrap around the table's end, windows of every
// length and a clock that moves on by random steps, against guardModel.
// The input's first two bytes choose the capacity and the first table's
// size (so that the table grows); then each three bytes are one claim:
// key, time step, window.
func FuzzMemoryGuard(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 10, 2, 0, 10, 3, 0, 10, 4, 0, 10, 1, 9, 1, 4, 1, 10})
	f.Add([]byte{1, 0, 7, 0, 0, 7, 0, 0, 7, 1, 1})
	f.Add([]byte{16, 4, 0, 0, 200, 8, 0, 200, 16, 0, 200, 24, 0, 200, 1, 0, 3, 9, 0, 3, 17, 0, 3, 0, 250, 1})
	f.Add([]byte{5, 1, 255, 0, 255, 127, 0, 255, 63, 0, 255, 31, 0, 255, 15, 0, 255, 255, 100, 1})
	f.Fuzz(fuzzMemoryGuard)
}

func fuzzMemoryGuard(t *testing.T, in []byte) {
	if len(in) < 2 {
		return
	}
	g := newMemoryGuard(int(in[0]%24) + 1)
	g.startSlots = 2 << (in[1] % 5)
	m := &guardModel{capacity: g.capacity, claims: map[uint64]int64{}}
	now := time.Unix(1_000_000, 0)
	var at int64
	for op := in[2:]; len(op) >= 3; op = op[3:] {
		// Keys 1..64 on homes that collide in small tables; key 0xff.. for
		// the table's last slot, where a run wraps to slot 0.
		h := uint64(op[0]%64) + 1
		if op[0] >= 192 {
			h = ^uint64(op[0] % 4)
		}
		step := int64(op[1] % 16)
		window := int64(op[2] % 32)
		if op[2] == 255 {
			window = 1<<63 - 1 // never ends
		}
		at += step
		wantD, wantErr := m.claim(h, at, window)
		if window == 1<<63-1 && wantD == Claimed {
			m.claims[h] = 1<<63 - 1
		}
		d, err := g.claim(h, now.Add(time.Duration(at)), time.Duration(window))
		if d != wantD || !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			t.Fatalf("claim %#x at %d for %d: %v, %v; the model says %v, %v", h, at, window, d, err, wantD, wantErr)
		}
		checkTable(t, g)
		if n, want := g.Len(), m.live(at); n != want {
			t.Fatalf("at %d: Len() = %d, %d claims live", at, n, want)
		}
	}
}

// TestMemoryGuardFirstTable: the default capacity's table is taken whole
// at the first claim, 2 MiB at most.
func TestMemoryGuardFirstTable(t *testing.T) {
	g := newMemoryGuard(defaultReplayCapacity)
	if _, err := g.Claim(context.Background(), ReplayKey{SessionID: "s", RequestID: "r"}, time.Unix(1, 0), time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(g.slots); n*16 > 2<<20 || n*7/8 < defaultReplayCapacity || n != g.maxSlots() {
		t.Fatalf("first table: %d slots", n)
	}
}

// TestMemoryGuardSeeded: two guards place the same key differently, so a
// caller who learns one guard's collisions cannot aim them at another.
func TestMemoryGuardSeeded(t *testing.T) {
	key := ReplayKey{SessionID: "s", RequestID: "r"}
	a, b := newMemoryGuard(1), newMemoryGuard(1)
	if a.hash(key) == b.hash(key) {
		t.Fatal("two guards hash a key alike")
	}
	if a.hash(key) != a.hash(key) {
		t.Fatal("a guard hashes a key two ways")
	}
}

// TestMemoryGuardStaysFull: a guard kept full, one claim expiring for each
// that arrives, accepts every fresh claim and walks its table about once
// per len(next) claims, not once per claim.
func TestMemoryGuardStaysFull(t *testing.T) {
	const capacity = 4096
	g := newMemoryGuard(capacity)
	now := time.Unix(1_000_000, 0)
	window := time.Duration(capacity) * time.Millisecond
	h := uint64(0)
	claim := func(i int) {
		t.Helper()
		h++
		if d, err := g.claim(h*0x9e3779b97f4a7c15|1, now.Add(time.Duration(i)*time.Millisecond), window); d != Claimed || err != nil {
			t.Fatalf("claim %d: %v, %v", i, d, err)
		}
	}
	for i := 0; i < capacity; i++ {
		claim(i)
	}
	if g.sweeps != 0 {
		t.Fatalf("%d sweeps while filling", g.sweeps)
	}
	const more = 20_000
	for i := capacity; i < capacity+more; i++ {
		claim(i) // the claim made capacity milliseconds ago has just expired
	}
	if n := g.Len(); n != capacity {
		t.Fatalf("%d live claims, want %d", n, capacity)
	}
	if limit := more/cap(g.next) + 2; g.sweeps > limit {
		t.Fatalf("%d sweeps for %d claims, want at most %d", g.sweeps, more, limit)
	}
}
