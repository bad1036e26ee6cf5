package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// cGuardFunc adapts a function to surface.ReplayGuard.
type cGuardFunc func(ctx context.Context, key surface.ReplayKey, now time.Time, window time.Duration) (surface.ReplayDecision, error)

func (f cGuardFunc) Claim(ctx context.Context, key surface.ReplayKey, now time.Time, window time.Duration) (surface.ReplayDecision, error) {
	return f(ctx, key, now, window)
}

// cRecordingGuard wraps a MemoryGuard and logs every claim.
type cRecordingGuard struct {
	inner surface.ReplayGuard
	log   func(string)

	mu      sync.Mutex
	keys    []surface.ReplayKey
	windows []time.Duration
}

func (g *cRecordingGuard) Claim(ctx context.Context, key surface.ReplayKey, now time.Time, window time.Duration) (surface.ReplayDecision, error) {
	g.mu.Lock()
	g.keys = append(g.keys, key)
	g.windows = append(g.windows, window)
	g.mu.Unlock()
	if g.log != nil {
		g.log("claim " + key.RequestID)
	}
	return g.inner.Claim(ctx, key, now, window)
}

func (g *cRecordingGuard) claims() []surface.ReplayKey {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]surface.ReplayKey(nil), g.keys...)
}

// TestReplayOffByDefault: without Options.Replay an id may repeat.
func TestReplayOffByDefault(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1"))})
	cCheck(t, f.handle(cInvoke("same", "orders.search", nil)), "")
	cCheck(t, f.handle(cInvoke("same", "orders.search", nil)), "")
	if n := cCalls(f); n != 2 {
		t.Fatalf("executor ran %d times, want 2", n)
	}
}

// TestReplayWindow: inside its window a (session, id) pair runs once; from
// the end of the window on it is fresh again. A claim lives for
// [claimed, claimed+window).
func TestReplayWindow(t *testing.T) {
	tests := []struct {
		name   string
		opt    surface.ReplayOptions
		window time.Duration
	}{
		{"default window", surface.ReplayOptions{}, 5 * time.Minute},
		{"custom window", surface.ReplayOptions{Window: 30 * time.Second}, 30 * time.Second},
		{"custom guard, default window", surface.ReplayOptions{Guard: surface.NewMemoryGuard(10)}, surface.DefaultReplayWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := tt.opt
			f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1")), Replay: &opt})
			start := f.clock.Now()
			steps := []struct {
				at    time.Duration
				want  surface.Code
				calls int
			}{
				{0, "", 1},
				{0, surface.CodeReplayDetected, 1},
				{tt.window / 2, surface.CodeReplayDetected, 1},
				{tt.window - time.Nanosecond, surface.CodeReplayDetected, 1},
				{tt.window, "", 2}, // fresh: claimed again for another window
				{tt.window + time.Second, surface.CodeReplayDetected, 2},
				{2*tt.window - time.Nanosecond, surface.CodeReplayDetected, 2},
				{3 * tt.window, "", 3},
			}
			for i, st := range steps {
				f.clock.Set(start.Add(st.at))
				cCheck(t, f.handle(cInvoke("id-1", "orders.search", nil)), st.want)
				if n := cCalls(f); n != st.calls {
					t.Fatalf("step %d (+%v): executor ran %d times, want %d", i, st.at, n, st.calls)
				}
			}
		})
	}
}

// TestReplayWindowGiven: the guard is asked with the configured window.
func TestReplayWindowGiven(t *testing.T) {
	for _, w := range []time.Duration{0, time.Second, time.Hour} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			g := &cRecordingGuard{inner: surface.NewMemoryGuard(10)}
			f := cNewFix(t, nil, surface.Options{Replay: &surface.ReplayOptions{Window: w, Guard: g}})
			cCheck(t, f.handle(cInvoke("a", "orders.search", nil)), "")
			want := w
			if w == 0 {
				want = surface.DefaultReplayWindow
			}
			if len(g.windows) != 1 || g.windows[0] != want {
				t.Fatalf("guard windows = %v, want [%v]", g.windows, want)
			}
		})
	}
}

// TestReplayPerSession: the same id in two sessions is two calls; within
// each session it is still one.
func TestReplayPerSession(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{Session: cCtxSession, Replay: &surface.ReplayOptions{}})
	a := cWithSession(context.Background(), cSession("s-a"))
	b := cWithSession(context.Background(), cSession("s-b"))
	cCheck(t, f.handleCtx(a, cInvoke("same", "orders.search", nil)), "")
	cCheck(t, f.handleCtx(b, cInvoke("same", "orders.search", nil)), "")
	cCheck(t, f.handleCtx(a, cInvoke("same", "orders.search", nil)), surface.CodeReplayDetected)
	cCheck(t, f.handleCtx(b, cInvoke("same", "orders.search", nil)), surface.CodeReplayDetected)
	calls := f.page.Calls()
	if len(calls) != 2 || calls[0].Context.SessionID != "s-a" || calls[1].Context.SessionID != "s-b" {
		t.Fatalf("calls = %+v", calls)
	}
}

// TestReplayInvokeOnly: describe ids are never claimed, so they may repeat
// and do not burn an id for a later invoke.
func TestReplayInvokeOnly(t *testing.T) {
	g := &cRecordingGuard{inner: surface.NewMemoryGuard(10)}
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1")), Replay: &surface.ReplayOptions{Guard: g}})
	steps := []struct {
		req  []byte
		want surface.Code
	}{
		{cDescribe("x"), ""},
		{cDescribe("x"), ""},
		{cInvoke("x", "orders.search", nil), ""},
		{cDescribe("x"), ""},
		{cInvoke("x", "orders.search", nil), surface.CodeReplayDetected},
	}
	for i, st := range steps {
		t.Run(fmt.Sprint(i), func(t *testing.T) { cCheck(t, f.handle(st.req), st.want) })
	}
	if n := len(g.claims()); n != 2 {
		t.Fatalf("guard saw %d claims, want 2 (the invokes)", n)
	}
	if n := cCalls(f); n != 1 {
		t.Fatalf("executor ran %d times, want 1", n)
	}
}

// TestReplayClaimBeforeExecute: the id is claimed before the executor runs,
// so a crash or timeout in the executor can never let the id run again.
func TestReplayClaimBeforeExecute(t *testing.T) {
	var mu sync.Mutex
	var order []string
	log := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	page := surfacetest.Orders(4)
	exec := func(ctx context.Context, c surface.Call) (json.RawMessage, error) {
		log("execute " + c.Context.RequestID)
		return page.Execute(ctx, c)
	}
	g := &cRecordingGuard{inner: surface.NewMemoryGuard(10), log: log}
	f := cNewFix(t, page, surface.Options{Execute: exec, Replay: &surface.ReplayOptions{Guard: g}})
	cCheck(t, f.handle(cInvoke("a", "orders.search", nil)), "")
	cCheck(t, f.handle(cInvoke("b", "update_note@order", map[string]any{"record": "SO-1002", "note": "n"})), "")
	cCheck(t, f.handle(cInvoke("a", "orders.search", nil)), surface.CodeReplayDetected)
	want := []string{"claim a", "execute a", "claim b", "execute b", "claim a"}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("order = %q, want %q", order, want)
	}
}

// TestReplayRejectedRequestsKeepTheirID: a request refused before the claim
// step does not burn its id; the corrected request with the same id runs.
func TestReplayRejectedRequestsKeepTheirID(t *testing.T) {
	tests := []struct {
		name string
		bad  []byte
		want surface.Code
	}{
		{"unknown capability", cInvoke("r", "orders.nope", nil), surface.CodeCapabilityNotExposed},
		{"out of scope", cInvoke("r", "orders.fail", nil), surface.CodeCapabilityNotExposed},
		{"schema violation", cInvoke("r", "update_note@order", map[string]any{"record": "SO-1001", "note": 7}), surface.CodeInvalidRequest},
		{"missing record", cInvoke("r", "update_note@order", map[string]any{"note": "n"}), surface.CodeInvalidRequest},
		{"unknown record", cInvoke("r", "update_note@order", map[string]any{"record": "SO-9", "note": "n"}), surface.CodeInvalidRequest},
		{"input not an object", cInvoke("r", "update_note@order", []any{"SO-1001"}), surface.CodeInvalidRequest},
		{"unknown field", []byte(`{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"update_note@order","extra":1}`), surface.CodeInvalidRequest},
		{"bad protocol", []byte(`{"protocol":"pling.surface/9","id":"r","method":"invoke","capability":"update_note@order"}`), surface.CodeProtocolVersionUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := cSession("s-1")
			sess.Scope = []string{"orders.search", "update_note@order"}
			g := &cRecordingGuard{inner: surface.NewMemoryGuard(10)}
			f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(sess), Replay: &surface.ReplayOptions{Guard: g}})
			cCheck(t, f.handle(tt.bad), tt.want)
			if n := len(g.claims()); n != 0 {
				t.Fatalf("a refused request made %d claims", n)
			}
			cCheck(t, f.handle(cInvoke("r", "update_note@order", map[string]any{"record": "SO-1001", "note": "n"})), "")
			cCheck(t, f.handle(cInvoke("r", "update_note@order", map[string]any{"record": "SO-1001", "note": "n"})), surface.CodeReplayDetected)
			if n := cCalls(f); n != 1 {
				t.Fatalf("executor ran %d times, want 1", n)
			}
		})
	}
}

// TestReplayInjectedGuard: a guard that errors, panics or answers an
// illegal decision refuses the invoke without running it.
func TestReplayInjectedGuard(t *testing.T) {
	answer := func(d surface.ReplayDecision, err error) cGuardFunc {
		return func(context.Context, surface.ReplayKey, time.Time, time.Duration) (surface.ReplayDecision, error) {
			return d, err
		}
	}
	tests := []struct {
		name  string
		guard surface.ReplayGuard
		want  surface.Code
	}{
		{"error", answer(surface.Claimed, errors.New("store down")), surface.CodeReplayGuardUnavailable},
		{"error with replayed", answer(surface.Replayed, errors.New("store down")), surface.CodeReplayGuardUnavailable},
		{"panic", cGuardFunc(func(context.Context, surface.ReplayKey, time.Time, time.Duration) (surface.ReplayDecision, error) {
			panic("guard broke")
		}), surface.CodeReplayGuardUnavailable},
		{"zero decision", answer(0, nil), surface.CodeReplayGuardUnavailable},
		{"unknown decision", answer(7, nil), surface.CodeReplayGuardUnavailable},
		{"full memory guard", answer(0, surface.ErrReplayGuardFull), surface.CodeReplayGuardUnavailable},
		{"claimed", answer(surface.Claimed, nil), ""},
		{"replayed", answer(surface.Replayed, nil), surface.CodeReplayDetected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cNewFix(t, nil, surface.Options{Replay: &surface.ReplayOptions{Guard: tt.guard}})
			cCheck(t, f.handle(cInvoke("i", "orders.search", nil)), tt.want)
			// describe never consults the guard.
			cCheck(t, f.handle(cDescribe("i")), "")
			want := 0
			if tt.want == "" {
				want = 1
			}
			if n := cCalls(f); n != want {
				t.Fatalf("executor ran %d times, want %d", n, want)
			}
		})
	}
}

// TestReplayMemoryGuardBounded: at capacity the guard refuses new claims
// rather than forget one still inside its window; expiry frees the room.
func TestReplayMemoryGuardBounded(t *testing.T) {
	const capacity = 3
	const window = time.Minute
	g := surface.NewMemoryGuard(capacity)
	f := cNewFix(t, nil, surface.Options{Replay: &surface.ReplayOptions{Guard: g, Window: window}})
	start := f.clock.Now()
	steps := []struct {
		at    time.Duration
		id    string
		want  surface.Code
		calls int
		len   int
	}{
		{0, "a", "", 1, 1},
		{time.Second, "b", "", 2, 2},
		{2 * time.Second, "c", "", 3, 3},
		{3 * time.Second, "d", surface.CodeReplayGuardUnavailable, 3, 3}, // full: fail closed
		{3 * time.Second, "a", surface.CodeReplayDetected, 3, 3},         // nothing was forgotten
		{3 * time.Second, "c", surface.CodeReplayDetected, 3, 3},
		{window - time.Nanosecond, "d", surface.CodeReplayGuardUnavailable, 3, 3},
		{window, "d", "", 4, 3},                                 // "a" expired: its slot is reused
		{window, "e", surface.CodeReplayGuardUnavailable, 4, 3}, // b, c, d live
		{window, "b", surface.CodeReplayDetected, 4, 3},         // still inside its window
		{window + 2*time.Second, "e", "", 5, 2},                 // b and c expired
		{window + 2*time.Second, "a", "", 6, 3},                 // a is fresh again
		{window + 2*time.Second, "f", surface.CodeReplayGuardUnavailable, 6, 3},
		{10 * window, "f", "", 7, 1},
	}
	for i, st := range steps {
		t.Run(fmt.Sprintf("%d-%s@%v", i, st.id, st.at), func(t *testing.T) {
			f.clock.Set(start.Add(st.at))
			cCheck(t, f.handle(cInvoke(st.id, "orders.search", nil)), st.want)
			if n := cCalls(f); n != st.calls {
				t.Fatalf("executor ran %d times, want %d", n, st.calls)
			}
			if n := surface.Held(g); n != st.len {
				t.Fatalf("guard holds %d claims, want %d", n, st.len)
			}
		})
	}
}

// TestMemoryGuardDirect checks the guard's own answers, including the
// sentinel error at capacity.
func TestMemoryGuardDirect(t *testing.T) {
	ctx := context.Background()
	g := surface.NewMemoryGuard(2)
	now := surfacetest.Epoch
	k := func(s, r string) surface.ReplayKey { return surface.ReplayKey{SessionID: s, RequestID: r} }
	steps := []struct {
		key  surface.ReplayKey
		at   time.Duration
		want surface.ReplayDecision
		err  error
	}{
		{k("s", "1"), 0, surface.Claimed, nil},
		{k("t", "1"), 0, surface.Claimed, nil}, // another session: another key
		{k("s", "1"), 0, surface.Replayed, nil},
		{k("s", "2"), 0, 0, surface.ErrReplayGuardFull},
		{k("s", "1"), time.Second, surface.Claimed, nil}, // both claims of +0 expired at +1s
		{k("s", "2"), time.Second, surface.Claimed, nil},
		{k("u", "1"), time.Second, 0, surface.ErrReplayGuardFull},
		{k("s", "2"), time.Second, surface.Replayed, nil},
	}
	for i, st := range steps {
		d, err := g.Claim(ctx, st.key, now.Add(st.at), time.Second)
		if d != st.want || !errors.Is(err, st.err) || (st.err == nil) != (err == nil) {
			t.Fatalf("step %d: Claim(%v) = %v, %v; want %v, %v", i, st.key, d, err, st.want, st.err)
		}
	}
	if n := surface.NewMemoryGuard(0); n == nil {
		t.Fatal("NewMemoryGuard(0) = nil")
	}
}

// TestMemoryGuardCompacts: a long run of short-lived claims keeps the guard
// at its live count.
func TestMemoryGuardCompacts(t *testing.T) {
	g := surface.NewMemoryGuard(8)
	now := surfacetest.Epoch
	for i := 0; i < 20_000; i++ {
		now = now.Add(time.Millisecond)
		if d, err := g.Claim(context.Background(), surface.ReplayKey{SessionID: "s", RequestID: fmt.Sprint(i)}, now, 3*time.Millisecond); d != surface.Claimed || err != nil {
			t.Fatalf("claim %d: %v, %v", i, d, err)
		}
		if n := surface.Held(g); n > 3 {
			t.Fatalf("claim %d: guard holds %d live claims", i, n)
		}
	}
}

// TestMemoryGuardExpiryOrder: claims leave when their windows end, in
// batches made at different times.
func TestMemoryGuardExpiryOrder(t *testing.T) {
	g := surface.NewMemoryGuard(1000)
	now := surfacetest.Epoch
	claims := func(prefix string, n int, at time.Duration) {
		t.Helper()
		for i := 0; i < n; i++ {
			key := surface.ReplayKey{SessionID: "s", RequestID: fmt.Sprint(prefix, i)}
			if d, err := g.Claim(context.Background(), key, now.Add(at), time.Second); d != surface.Claimed || err != nil {
				t.Fatalf("%s%d: %v, %v", prefix, i, d, err)
			}
		}
	}
	claims("a", 10, 0)                     // expire at 1s
	claims("b", 4, 2*time.Second)          // the a's leave; expire at 3s
	claims("c", 40, 2500*time.Millisecond) // expire at 3.5s
	claims("d", 1, 3200*time.Millisecond)  // the b's leave, nothing else
	if n := surface.Held(g); n != 40+1 {
		t.Fatalf("guard holds %d claims at 3.2s, want %d", n, 40+1)
	}
	claims("e", 1, 3600*time.Millisecond) // the c's leave
	if n := surface.Held(g); n != 2 {
		t.Fatalf("guard holds %d claims at 3.6s, want 2", n)
	}
}

// TestMemoryGuardKeys: keys that differ only in where the session id ends
// are different keys, and with claims of different windows mixed in the
// table, claims still inside their window stay replays and expired ones are
// fresh again.
func TestMemoryGuardKeys(t *testing.T) {
	ctx := context.Background()
	g := surface.NewMemoryGuard(1000)
	now := surfacetest.Epoch
	claim := func(s, r string, at time.Duration, window time.Duration) surface.ReplayDecision {
		t.Helper()
		d, err := g.Claim(ctx, surface.ReplayKey{SessionID: s, RequestID: r}, now.Add(at), window)
		if err != nil {
			t.Fatalf("Claim(%q, %q): %v", s, r, err)
		}
		return d
	}
	// Ten short claims, four long ones, then, once the short ones expired,
	// forty more long ones.
	for i := 0; i < 10; i++ {
		claim("s", fmt.Sprint("short-", i), 0, time.Second)
	}
	for _, k := range [][2]string{{"ab", "c"}, {"a", "bc"}, {"", "abc"}, {"abc", ""}} {
		if d := claim(k[0], k[1], 0, time.Hour); d != surface.Claimed {
			t.Fatalf("(%q, %q): %v, want a fresh claim", k[0], k[1], d)
		}
	}
	for i := 0; i < 40; i++ {
		claim("s", fmt.Sprint("long-", i), 2*time.Second, time.Minute)
	}
	for i := 0; i < 40; i++ {
		if d := claim("s", fmt.Sprint("long-", i), 3*time.Second, time.Minute); d != surface.Replayed {
			t.Fatalf("long-%d inside its window: %v", i, d)
		}
	}
	for i := 0; i < 10; i++ {
		if d := claim("s", fmt.Sprint("short-", i), 3*time.Second, time.Second); d != surface.Claimed {
			t.Fatalf("short-%d after its window: %v", i, d)
		}
	}
	for _, k := range [][2]string{{"ab", "c"}, {"a", "bc"}, {"", "abc"}, {"abc", ""}} {
		if d := claim(k[0], k[1], 3*time.Second, time.Hour); d != surface.Replayed {
			t.Fatalf("(%q, %q) inside its window: %v", k[0], k[1], d)
		}
	}
	if n := surface.Held(g); n != 4+40+10 {
		t.Fatalf("guard holds %d claims, want %d", n, 4+40+10)
	}
	// A window too long to add to the clock never ends.
	if d := claim("s", "forever", 3*time.Second, time.Duration(1<<63-1)); d != surface.Claimed {
		t.Fatalf("forever: %v", d)
	}
	if d := claim("s", "forever", 100*365*24*time.Hour, time.Second); d != surface.Replayed {
		t.Fatalf("forever, a century later: %v", d)
	}
}

// TestMemoryGuardHammer: goroutines racing to claim overlapping ids each
// win a key exactly once.
func TestMemoryGuardHammer(t *testing.T) {
	const (
		goroutines = 8
		ids        = 300
		sessions   = 2
	)
	g := surface.NewMemoryGuard(ids * sessions)
	now := surfacetest.Epoch
	var wins [sessions][ids]atomic.Int32
	var bad atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ids*sessions; i++ {
				j := (i + w*37) % (ids * sessions) // each goroutine starts elsewhere
				s, id := j%sessions, j/sessions
				d, err := g.Claim(context.Background(), surface.ReplayKey{SessionID: fmt.Sprint("s", s), RequestID: fmt.Sprint(id)}, now, time.Minute)
				switch {
				case err != nil:
					bad.Add(1)
				case d == surface.Claimed:
					wins[s][id].Add(1)
				case d != surface.Replayed:
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d bad answers", n)
	}
	for s := range wins {
		for id := range wins[s] {
			if n := wins[s][id].Load(); n != 1 {
				t.Fatalf("key (s%d, %d) claimed %d times", s, id, n)
			}
		}
	}
}

// TestReplayHammerSurface: concurrent invokes sharing ids run each id once.
func TestReplayHammerSurface(t *testing.T) {
	const (
		goroutines = 8
		ids        = 40
	)
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1")), Replay: &surface.ReplayOptions{}})
	var ok, replayed, other atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ids; i++ {
				r := f.handle(cInvoke(fmt.Sprint("id-", (i+w)%ids), "orders.search", nil))
				switch cCode(r) {
				case "":
					ok.Add(1)
				case surface.CodeReplayDetected:
					replayed.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != ids || replayed.Load() != ids*(goroutines-1) || other.Load() != 0 {
		t.Fatalf("ok=%d replayed=%d other=%d; want %d, %d, 0", ok.Load(), replayed.Load(), other.Load(), ids, ids*(goroutines-1))
	}
	seen := map[string]int{}
	for _, c := range f.page.Calls() {
		seen[c.Context.RequestID]++
	}
	if len(seen) != ids {
		t.Fatalf("executor saw %d distinct ids, want %d", len(seen), ids)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("id %s ran %d times", id, n)
		}
	}
}

// TestMemoryGuardFixedTable: a guard of the default capacity takes its
// table at its first claim and allocates nothing more while it fills to
// its capacity, lets claims expire and is refused at capacity: its memory
// does not move with the number of claims it holds.
func TestMemoryGuardFixedTable(t *testing.T) {
	g := surface.NewMemoryGuard(surface.DefaultReplayCapacity)
	now := surfacetest.Epoch
	ctx := context.Background()
	ids := make([]surface.ReplayKey, 2*surface.DefaultReplayCapacity)
	for i := range ids {
		ids[i] = surface.ReplayKey{SessionID: "s", RequestID: fmt.Sprint("id-", i)}
	}
	if d, err := g.Claim(ctx, ids[0], now, 5*time.Minute); d != surface.Claimed || err != nil {
		t.Fatal(d, err)
	}
	i := 1
	claim := func(at time.Duration, want surface.ReplayDecision, wantErr error) {
		d, err := g.Claim(ctx, ids[i], now.Add(at), 5*time.Minute)
		if d != want || !errors.Is(err, wantErr) {
			t.Fatalf("claim %d at %v: %v, %v", i, at, d, err)
		}
		i++
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// Filled to capacity over four minutes, refused once full, then half
	// of it again after the first claims expired.
	for i < surface.DefaultReplayCapacity {
		claim(time.Duration(i)*(4*time.Minute/surface.DefaultReplayCapacity), surface.Claimed, nil)
	}
	claim(4*time.Minute, 0, surface.ErrReplayGuardFull)
	for i < surface.DefaultReplayCapacity*3/2 {
		claim(9*time.Minute+time.Duration(i), surface.Claimed, nil)
	}
	runtime.ReadMemStats(&after)
	if allocs := after.Mallocs - before.Mallocs; allocs != 0 {
		t.Fatalf("%v allocations while the guard filled", allocs)
	}
}

// TestMemoryGuardGrows: a guard whose capacity needs more than its first
// table doubles it and forgets nothing: every claim is still a replay
// inside its window, and fresh after it.
func TestMemoryGuardGrows(t *testing.T) {
	const n = 200_000 // more than the first table holds
	g := surface.NewMemoryGuard(300_000)
	ctx := context.Background()
	now := surfacetest.Epoch
	key := func(i int) surface.ReplayKey { return surface.ReplayKey{SessionID: "s", RequestID: strconv.Itoa(i)} }
	for i := 0; i < n; i++ {
		// The first thousand claims end after a second, the rest after an hour.
		w := time.Hour
		if i < 1000 {
			w = time.Second
		}
		if d, err := g.Claim(ctx, key(i), now, w); d != surface.Claimed || err != nil {
			t.Fatalf("claim %d: %v, %v", i, d, err)
		}
	}
	for i := 0; i < n; i++ {
		want := surface.Replayed
		if i < 1000 {
			want = surface.Claimed
		}
		if d, err := g.Claim(ctx, key(i), now.Add(time.Minute), time.Hour); d != want || err != nil {
			t.Fatalf("claim %d again: %v, %v; want %v", i, d, err, want)
		}
	}
	if l := surface.Held(g); l != n {
		t.Fatalf("Len() = %d, want %d", l, n)
	}
}
