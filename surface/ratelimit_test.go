package surface_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// cCeilMs is d rounded up to whole milliseconds, as retryAfterMs must be:
// rounding down would invite a retry that is still refused.
func cCeilMs(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// TestRateLimitSlidingWindowExact walks one session through a 3-per-10s
// window, alternating methods, and checks every verdict and retryAfterMs
// against a reference model computed from the fake clock.
func TestRateLimitSlidingWindowExact(t *testing.T) {
	const max = 3
	const window = 10 * time.Second
	f := cNewFix(t, nil, surface.Options{
		Session:   surface.StaticSession(cSession("s-1")),
		RateLimit: &surface.RateLimitOptions{MaxRequests: max, Window: window},
	})
	start := f.clock.Now()
	steps := []struct {
		at        time.Duration // since start
		admit     bool
		retryMs   int64 // checked when not admitted; 0 = use the model only
		describeq bool
	}{
		{0, true, 0, true},
		{time.Second, true, 0, false},
		{2500 * time.Millisecond, true, 0, true},
		{3500*time.Millisecond + 300*time.Microsecond, false, 6500, false}, // 6499.7ms rounds up
		{3500*time.Millisecond + 300*time.Microsecond, false, 6500, true},  // a refusal consumes nothing
		{window - time.Nanosecond, false, 1, false},                        // the oldest is still inside
		{window, true, 0, true},                                            // the oldest left at exactly +window
		{window, false, 1000, false},                                       // next oldest is +1s
		{11 * time.Second, true, 0, true},
		{11 * time.Second, false, 1500, false},
		{12500 * time.Millisecond, true, 0, false},
		{12500 * time.Millisecond, false, 7500, true},
	}
	var admitted []time.Time
	for i, st := range steps {
		t.Run(fmt.Sprintf("%d@%v", i, st.at), func(t *testing.T) {
			f.clock.Set(start.Add(st.at))
			now := f.clock.Now()
			// Reference model: admitted times still inside (now-window, now].
			var live []time.Time
			for _, a := range admitted {
				if now.Sub(a) < window {
					live = append(live, a)
				}
			}
			modelAdmit := len(live) < max
			if modelAdmit != st.admit {
				t.Fatalf("test table disagrees with the model: admit=%v", modelAdmit)
			}
			var r *surface.Response
			if st.describeq {
				r = f.handle(cDescribe(fmt.Sprintf("d-%d", i)))
			} else {
				r = f.handle(cInvoke(fmt.Sprintf("i-%d", i), "orders.search", nil))
			}
			if st.admit {
				cCheck(t, r, "")
				admitted = append(admitted, now)
				return
			}
			cCheck(t, r, surface.CodeRateLimited)
			want := cCeilMs(live[0].Add(window).Sub(now))
			if st.retryMs != 0 && st.retryMs != want {
				t.Fatalf("test table retry %d disagrees with the model %d", st.retryMs, want)
			}
			if r.Error.RetryAfterMs != want {
				t.Fatalf("retryAfterMs = %d, want %d", r.Error.RetryAfterMs, want)
			}
		})
	}
}

// TestSlidingWindowDecisions checks the limiter's own Decisions, including
// the exact RetryAfter before it is rounded for the wire.
func TestSlidingWindowDecisions(t *testing.T) {
	ctx := context.Background()
	l := surface.NewSlidingWindow(2, time.Minute)
	t0 := surfacetest.Epoch
	want := []struct {
		at   time.Duration
		want surface.Decision
	}{
		{0, surface.Decision{Verdict: surface.Allow}},
		{10 * time.Second, surface.Decision{Verdict: surface.Allow}},
		{15 * time.Second, surface.Decision{Verdict: surface.Deny, RetryAfter: 45 * time.Second}},
		{time.Minute - time.Nanosecond, surface.Decision{Verdict: surface.Deny, RetryAfter: time.Nanosecond}},
		{time.Minute, surface.Decision{Verdict: surface.Allow}},
		{time.Minute + time.Second, surface.Decision{Verdict: surface.Deny, RetryAfter: 9 * time.Second}},
	}
	for i, w := range want {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, err := l.Allow(ctx, "k", t0.Add(w.at))
			if err != nil || got != w.want {
				t.Fatalf("Allow at +%v = %+v, %v; want %+v", w.at, got, err, w.want)
			}
		})
	}
}

// TestRateLimitPerSession: sessions never share a budget.
func TestRateLimitPerSession(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{
		Session:   cCtxSession,
		RateLimit: &surface.RateLimitOptions{MaxRequests: 2, Window: time.Minute},
	})
	a := cWithSession(context.Background(), cSession("s-a"))
	b := cWithSession(context.Background(), cSession("s-b"))
	steps := []struct {
		name string
		ctx  context.Context
		want surface.Code
	}{
		{"a1", a, ""}, {"a2", a, ""}, {"a3", a, surface.CodeRateLimited},
		{"b1", b, ""}, {"b2", b, ""}, {"b3", b, surface.CodeRateLimited},
		{"a4", a, surface.CodeRateLimited},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			cCheck(t, f.handleCtx(st.ctx, cInvoke(st.name, "orders.search", nil)), st.want)
		})
	}
	if n := cCalls(f); n != 4 {
		t.Fatalf("executor ran %d times, want 4", n)
	}
}

// TestRateLimitOpenMode: without sessions every caller shares one budget.
func TestRateLimitOpenMode(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{RateLimit: &surface.RateLimitOptions{MaxRequests: 2, Window: time.Minute}})
	cCheck(t, f.handle(cDescribe("1")), "")
	cCheck(t, f.handle(cInvoke("2", "orders.search", nil)), "")
	cCheck(t, f.handle(cDescribe("3")), surface.CodeRateLimited)
}

// TestRateLimitMethods: Handle is limited for both methods; the direct,
// in-page Describe is neither limited nor counted.
func TestRateLimitMethods(t *testing.T) {
	newFix := func() *cFix {
		return cNewFix(t, nil, surface.Options{
			Session:   surface.StaticSession(cSession("s-1")),
			RateLimit: &surface.RateLimitOptions{MaxRequests: 2, Window: time.Minute},
		})
	}
	t.Run("handle is limited", func(t *testing.T) {
		f := newFix()
		cCheck(t, f.handle(cDescribe("1")), "")
		cCheck(t, f.handle(cInvoke("2", "orders.search", nil)), "")
		cCheck(t, f.handle(cDescribe("3")), surface.CodeRateLimited)
		cCheck(t, f.handle(cInvoke("4", "orders.search", nil)), surface.CodeRateLimited)
		// Even a request that would fail its own checks later is counted and refused first.
		cCheck(t, f.handle(cInvoke("5", "no.such.capability", nil)), surface.CodeRateLimited)
		if n := cCalls(f); n != 1 {
			t.Fatalf("executor ran %d times, want 1", n)
		}
	})
	t.Run("direct describe is not limited", func(t *testing.T) {
		f := newFix()
		cCheck(t, f.handle(cDescribe("1")), "")
		cCheck(t, f.handle(cDescribe("2")), "")
		cCheck(t, f.handle(cDescribe("3")), surface.CodeRateLimited)
		for i := 0; i < 5; i++ {
			if _, err := f.s.Describe(context.Background(), surface.DescribeInput{}); err != nil {
				t.Fatalf("Describe %d: %v", i, err)
			}
		}
	})
	t.Run("direct describe is not counted", func(t *testing.T) {
		f := newFix()
		for i := 0; i < 5; i++ {
			if _, err := f.s.Describe(context.Background(), surface.DescribeInput{}); err != nil {
				t.Fatalf("Describe %d: %v", i, err)
			}
		}
		cCheck(t, f.handle(cDescribe("1")), "")
		cCheck(t, f.handle(cDescribe("2")), "")
		cCheck(t, f.handle(cDescribe("3")), surface.CodeRateLimited)
	})
}

// cLimiterFunc adapts a function to surface.Limiter.
type cLimiterFunc func(ctx context.Context, key string, now time.Time) (surface.Decision, error)

func (f cLimiterFunc) Allow(ctx context.Context, key string, now time.Time) (surface.Decision, error) {
	return f(ctx, key, now)
}

// TestRateLimitInjectedLimiter: the kernel believes a legal Decision and
// refuses on anything else, without running the executor.
func TestRateLimitInjectedLimiter(t *testing.T) {
	answer := func(d surface.Decision, err error) cLimiterFunc {
		return func(context.Context, string, time.Time) (surface.Decision, error) { return d, err }
	}
	tests := []struct {
		name    string
		lim     surface.Limiter
		want    surface.Code
		retryMs int64
	}{
		{"error", answer(surface.Decision{Verdict: surface.Allow}, errors.New("redis down")), surface.CodeRateLimitUnavailable, 0},
		{"panic", cLimiterFunc(func(context.Context, string, time.Time) (surface.Decision, error) { panic("limiter broke") }), surface.CodeRateLimitUnavailable, 0},
		{"zero decision", answer(surface.Decision{}, nil), surface.CodeRateLimitUnavailable, 0},
		{"deny without retry", answer(surface.Decision{Verdict: surface.Deny}, nil), surface.CodeRateLimitUnavailable, 0},
		{"deny with negative retry", answer(surface.Decision{Verdict: surface.Deny, RetryAfter: -time.Second}, nil), surface.CodeRateLimitUnavailable, 0},
		{"allow with retry", answer(surface.Decision{Verdict: surface.Allow, RetryAfter: time.Second}, nil), surface.CodeRateLimitUnavailable, 0},
		{"unknown verdict", answer(surface.Decision{Verdict: 9}, nil), surface.CodeRateLimitUnavailable, 0},
		{"legal allow", answer(surface.Decision{Verdict: surface.Allow}, nil), "", 0},
		{"legal deny 1ns", answer(surface.Decision{Verdict: surface.Deny, RetryAfter: time.Nanosecond}, nil), surface.CodeRateLimited, 1},
		{"legal deny 1.5ms", answer(surface.Decision{Verdict: surface.Deny, RetryAfter: 1500 * time.Microsecond}, nil), surface.CodeRateLimited, 2},
		{"legal deny 3s", answer(surface.Decision{Verdict: surface.Deny, RetryAfter: 3 * time.Second}, nil), surface.CodeRateLimited, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cNewFix(t, nil, surface.Options{
				Session:   surface.StaticSession(cSession("s-1")),
				RateLimit: &surface.RateLimitOptions{Limiter: tt.lim},
			})
			for _, r := range []*surface.Response{
				f.handle(cDescribe("d")),
				f.handle(cInvoke("i", "orders.search", nil)),
			} {
				cCheck(t, r, tt.want)
				if tt.want == surface.CodeRateLimited && r.Error.RetryAfterMs != tt.retryMs {
					t.Fatalf("retryAfterMs = %d, want %d", r.Error.RetryAfterMs, tt.retryMs)
				}
				if tt.want == surface.CodeRateLimitUnavailable && r.Error.RetryAfterMs != 0 {
					t.Fatalf("unavailable limiter reported retryAfterMs %d", r.Error.RetryAfterMs)
				}
			}
			wantCalls := 0
			if tt.want == "" {
				wantCalls = 1
			}
			if n := cCalls(f); n != wantCalls {
				t.Fatalf("executor ran %d times, want %d", n, wantCalls)
			}
		})
	}
}

// TestRateLimitLimiterInputs: the limiter is asked with the session id and
// the injected clock's time.
func TestRateLimitLimiterInputs(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	var times []time.Time
	lim := cLimiterFunc(func(_ context.Context, key string, now time.Time) (surface.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, key)
		times = append(times, now)
		return surface.Decision{Verdict: surface.Allow}, nil
	})
	f := cNewFix(t, nil, surface.Options{Session: cCtxSession, RateLimit: &surface.RateLimitOptions{Limiter: lim}})
	f.clock.Advance(42 * time.Second)
	f.handleCtx(cWithSession(context.Background(), cSession("s-a")), cDescribe("1"))
	f.handleCtx(cWithSession(context.Background(), cSession("s-b")), cInvoke("2", "orders.search", nil))
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] != "s-a" || keys[1] != "s-b" {
		t.Fatalf("limiter keys = %q", keys)
	}
	for _, at := range times {
		if !at.Equal(f.clock.Now()) {
			t.Fatalf("limiter asked at %v, clock says %v", at, f.clock.Now())
		}
	}
}

// TestRateLimitSharedLimiter: one limiter behind two Surfaces (two
// replicas) enforces one budget per session across both.
func TestRateLimitSharedLimiter(t *testing.T) {
	shared := surface.NewSlidingWindow(3, time.Minute)
	page := surfacetest.Orders(4)
	opts := surface.Options{
		Session:   cCtxSession,
		RateLimit: &surface.RateLimitOptions{Limiter: shared},
	}
	f1 := cNewFix(t, page, opts)
	f2 := cNewFix(t, page, opts)
	a := cWithSession(context.Background(), cSession("s-a"))
	b := cWithSession(context.Background(), cSession("s-b"))
	steps := []struct {
		f    *cFix
		ctx  context.Context
		want surface.Code
	}{
		{f1, a, ""}, {f2, a, ""}, {f1, a, ""},
		{f2, a, surface.CodeRateLimited}, {f1, a, surface.CodeRateLimited},
		{f2, b, ""},
	}
	for i, st := range steps {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cCheck(t, st.f.handleCtx(st.ctx, cDescribe(fmt.Sprint(i))), st.want)
		})
	}
	if n := surface.Held(shared); n != 2 {
		t.Fatalf("shared limiter tracks %d keys, want 2", n)
	}
}

// TestRateLimitConfig: a built-in limiter needs positive bounds; an injected
// one needs none.
func TestRateLimitConfig(t *testing.T) {
	page := surfacetest.Orders(1)
	clock := surfacetest.NewClock()
	tests := []struct {
		name string
		rl   surface.RateLimitOptions
		ok   bool
	}{
		{"zero max", surface.RateLimitOptions{Window: time.Minute}, false},
		{"negative max", surface.RateLimitOptions{MaxRequests: -1, Window: time.Minute}, false},
		{"zero window", surface.RateLimitOptions{MaxRequests: 1}, false},
		{"negative window", surface.RateLimitOptions{MaxRequests: 1, Window: -time.Second}, false},
		{"positive", surface.RateLimitOptions{MaxRequests: 1, Window: time.Second}, true},
		{"injected", surface.RateLimitOptions{Limiter: surface.NewSlidingWindow(1, time.Second)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl := tt.rl
			_, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: clock.Now, RateLimit: &rl})
			if (err == nil) != tt.ok {
				t.Fatalf("New error = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestRateLimitClockBackwards: entries admitted before the clock jumped
// back keep counting (fail closed), and the wait asked for stays bounded by
// one window.
func TestRateLimitClockBackwards(t *testing.T) {
	const window = 10 * time.Second
	f := cNewFix(t, nil, surface.Options{
		Session:   surface.StaticSession(cSession("s-1")),
		RateLimit: &surface.RateLimitOptions{MaxRequests: 3, Window: window},
	})
	f.clock.Set(surfacetest.Epoch.Add(-2 * time.Hour)) // the session is valid throughout
	start := f.clock.Now()
	steps := []struct {
		at      time.Duration
		want    surface.Code
		retryMs int64
	}{
		{0, "", 0},
		{time.Second, "", 0},
		{2 * time.Second, "", 0},
		{-time.Hour, surface.CodeRateLimited, window.Milliseconds()}, // capped at one window
		{-time.Second, surface.CodeRateLimited, window.Milliseconds()},
		{2 * time.Second, surface.CodeRateLimited, 8000},
		{window, "", 0},
		{window, surface.CodeRateLimited, 1000},
	}
	for i, st := range steps {
		t.Run(fmt.Sprintf("%d@%v", i, st.at), func(t *testing.T) {
			f.clock.Set(start.Add(st.at))
			r := f.handle(cDescribe(fmt.Sprint(i)))
			cCheck(t, r, st.want)
			if st.want != "" && r.Error.RetryAfterMs != st.retryMs {
				t.Fatalf("retryAfterMs = %d, want %d", r.Error.RetryAfterMs, st.retryMs)
			}
		})
	}
}

// TestSlidingWindowClockWalk drives one key with a clock that moves forward
// and jumps backwards at random. Measured on a monotonic timeline (each
// call's time is the latest the limiter has seen so far), no window ever
// holds more than max admissions.
func TestSlidingWindowClockWalk(t *testing.T) {
	const max = 4
	const window = 10 * time.Second
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			l := surface.NewSlidingWindow(max, window)
			now := surfacetest.Epoch
			latest := now
			var admitted []time.Time // on the monotonic timeline
			denied := 0
			for i := 0; i < 3000; i++ {
				switch r := rng.IntN(100); {
				case r < 10: // a jump back of up to two windows
					now = now.Add(-time.Duration(rng.Int64N(int64(2 * window))))
				case r < 15: // a jump forward past the window
					now = now.Add(window + time.Duration(rng.Int64N(int64(window))))
				default:
					now = now.Add(time.Duration(rng.Int64N(int64(window / 4))))
				}
				if now.After(latest) {
					latest = now
				}
				d, err := l.Allow(context.Background(), "k", now)
				if err != nil {
					t.Fatal(err)
				}
				switch d.Verdict {
				case surface.Allow:
					if d.RetryAfter != 0 {
						t.Fatalf("allow with RetryAfter %v", d.RetryAfter)
					}
					admitted = append(admitted, latest)
					inWindow := 0
					for _, a := range admitted {
						if latest.Sub(a) < window {
							inWindow++
						}
					}
					if inWindow > max {
						t.Fatalf("call %d: %d admissions inside one window, max %d", i, inWindow, max)
					}
				case surface.Deny:
					denied++
					if d.RetryAfter <= 0 || d.RetryAfter > window {
						t.Fatalf("deny with RetryAfter %v", d.RetryAfter)
					}
				default:
					t.Fatalf("illegal decision %+v", d)
				}
			}
			if denied == 0 || len(admitted) < max {
				t.Fatalf("walk exercised too little: %d admitted, %d denied", len(admitted), denied)
			}
		})
	}
}

// TestSlidingWindowHammer: many goroutines on one limiter with a fixed
// clock admit exactly max per key, never more.
func TestSlidingWindowHammer(t *testing.T) {
	const (
		max        = 50
		keys       = 5
		goroutines = 8
		perG       = 400
	)
	l := surface.NewSlidingWindow(max, time.Minute)
	now := surfacetest.Epoch
	var admitted [keys]atomic.Int64
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				k := (g + i) % keys
				d, err := l.Allow(context.Background(), fmt.Sprint("key-", k), now)
				switch {
				case err != nil:
					bad.Add(1)
				case d.Verdict == surface.Allow:
					admitted[k].Add(1)
				case d.Verdict == surface.Deny && d.RetryAfter == time.Minute:
				default:
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d bad decisions", n)
	}
	for k := range admitted {
		if got := admitted[k].Load(); got != max {
			t.Errorf("key-%d admitted %d, want exactly %d", k, got, max)
		}
	}
	if n := surface.Held(l); n != keys {
		t.Fatalf("limiter tracks %d keys, want %d", n, keys)
	}
}

// TestSlidingWindowSweep: keys of sessions gone idle are dropped once their
// window has passed and enough calls have triggered a sweep; live keys stay.
func TestSlidingWindowSweep(t *testing.T) {
	const idle = 100
	l := surface.NewSlidingWindow(2, time.Second)
	ctx := context.Background()
	now := surfacetest.Epoch
	for i := 0; i < idle; i++ {
		if d, _ := l.Allow(ctx, fmt.Sprint("idle-", i), now); d.Verdict != surface.Allow {
			t.Fatalf("idle-%d refused", i)
		}
	}
	if n := surface.Held(l); n != idle {
		t.Fatalf("Len = %d, want %d", n, idle)
	}
	now = now.Add(2 * time.Second)
	// The active key is admitted twice, then refused; its entries are live.
	calls := 0
	for surface.Held(l) > 1 && calls < 100_000 {
		l.Allow(ctx, "active", now)
		calls++
	}
	if n := surface.Held(l); n != 1 {
		t.Fatalf("after %d calls Len = %d, want 1 (idle keys swept)", calls, n)
	}
	if d, _ := l.Allow(ctx, "active", now); d.Verdict != surface.Deny {
		t.Fatalf("the sweep dropped a live key: %+v", d)
	}
	// Once the active key is idle too, it goes the same way.
	now = now.Add(2 * time.Second)
	for i := 0; surface.Held(l) > 1 && i < 100_000; i++ {
		l.Allow(ctx, "other", now)
	}
	if n := surface.Held(l); n != 1 {
		t.Fatalf("Len = %d, want 1 (only the key still in use)", n)
	}
}
