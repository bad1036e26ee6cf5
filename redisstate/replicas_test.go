package redisstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/redistest"
	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// fleet is n kernel replicas, each its own HTTP server with its own Redis
// client, clock and page, sharing one Redis. executions counts executor
// calls across all of them: the effect that must happen once.
type fleet struct {
	urls       []string
	executions atomic.Int64
	clients    []*redis.Client
}

type fleetConfig struct {
	skews       []time.Duration // one replica per skew of its clock
	limit       int             // 0: no rate limit
	window      time.Duration
	replay      bool
	timeout     time.Duration
	app         string
	readTimeout time.Duration
}

func newFleet(t *testing.T, addr string, cfg fleetConfig) *fleet {
	t.Helper()
	f := &fleet{}
	if cfg.app == "" {
		cfg.app = "orders"
	}
	if cfg.timeout == 0 {
		// Generous: these tests count decisions, and a shared machine under
		// the race detector is slow; a timeout would refuse (closed) and
		// spoil the count. The stall test sets its own.
		cfg.timeout = 10 * time.Second
	}
	for i, skew := range cfg.skews {
		rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: cfg.readTimeout})
		t.Cleanup(func() { rc.Close() })
		f.clients = append(f.clients, rc)
		skew := skew
		now := func() time.Time { return time.Now().Add(skew) }
		page := surfacetest.Orders(3)
		opts := surface.Options{
			Registry: page.View,
			Execute: func(ctx context.Context, c surface.Call) (json.RawMessage, error) {
				f.executions.Add(1)
				return page.Execute(ctx, c)
			},
			Now: now,
			App: cfg.app,
			Session: surface.StaticSession(&surface.Session{
				AgentID: "agent-1", SessionID: "sess-1", UserID: "user-1",
				ExpiresAt: time.Now().Add(24 * time.Hour),
				Scope:     []string{"orders.search", "update_note@order"},
			}),
		}
		ro := redisstate.Options{App: cfg.app, Timeout: cfg.timeout}
		if cfg.limit > 0 {
			l, err := redisstate.NewLimiter(rc, cfg.limit, cfg.window, ro)
			if err != nil {
				t.Fatal(err)
			}
			opts.RateLimit = &surface.RateLimitOptions{Limiter: l}
		}
		if cfg.replay {
			g, err := redisstate.NewGuard(rc, ro)
			if err != nil {
				t.Fatal(err)
			}
			opts.Replay = &surface.ReplayOptions{Guard: g, Window: time.Minute}
		}
		s, err := surface.New(opts)
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(s.HandleJSON(r.Context(), body))
		}))
		t.Cleanup(srv.Close)
		f.urls = append(f.urls, srv.URL)
	}
	return f
}

type reply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code         string `json:"code"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	} `json:"error"`
}

func (r reply) code() string {
	if r.OK {
		return "ok"
	}
	if r.Error == nil {
		return "(no error)"
	}
	return r.Error.Code
}

// invoke sends one orders.search invoke with id to replica i.
func (f *fleet) invoke(t *testing.T, i int, id string) reply {
	t.Helper()
	body := fmt.Sprintf(`{"protocol":"pling.surface/0.1","id":%q,"method":"invoke","capability":"orders.search","input":{"query":"x"}}`, id)
	resp, err := http.Post(f.urls[i%len(f.urls)], "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Errorf("replica %d: %v", i, err)
		return reply{}
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Errorf("replica %d: %v", i, err)
	}
	return r
}

// burst sends n invokes at once, request i to replica i mod len, with
// ids from id(i), and counts the answers by code.
func (f *fleet) burst(t *testing.T, n int, id func(int) string) (map[string]int, []reply) {
	t.Helper()
	replies := make([]reply, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = id(i)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			replies[i] = f.invoke(t, i, ids[i])
		}()
	}
	close(start)
	wg.Wait()
	codes := map[string]int{}
	for _, r := range replies {
		codes[r.code()]++
	}
	return codes, replies
}

// quiet keeps go-redis from logging each refused dial of the fault tests.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

var skewed = []time.Duration{-30 * time.Second, 0, 30 * time.Second, 10 * time.Second}

// 200 requests of one session at once, spread over four replicas whose
// clocks disagree by up to a minute: exactly the 60 of the window pass.
func TestReplicasShareOneRateBudget(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name  string
		skews []time.Duration
	}{
		{"clocks agree", []time.Duration{0, 0, 0, 0}},
		{"clocks skewed by 30s", skewed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, srv.Addr, fleetConfig{skews: tc.skews, limit: 60, window: time.Minute, app: "rl-" + tc.name})
			codes, replies := f.burst(t, 200, func(i int) string { return fmt.Sprintf("r-%d", i) })
			if codes["ok"] != 60 || codes["RATE_LIMITED"] != 140 {
				t.Fatalf("answers by code: %v, want 60 ok and 140 RATE_LIMITED", codes)
			}
			if got := f.executions.Load(); got != 60 {
				t.Fatalf("executions: %d, want 60", got)
			}
			for _, r := range replies {
				if !r.OK && (r.Error.RetryAfterMs <= 0 || r.Error.RetryAfterMs > 60_000) {
					t.Fatalf("retryAfterMs %d is outside the window", r.Error.RetryAfterMs)
				}
			}
		})
	}
}

// 50 invokes with one id at once over four skewed replicas: one runs.
func TestReplicasRunOneIDOnce(t *testing.T) {
	srv := redistest.Start(t)
	f := newFleet(t, srv.Addr, fleetConfig{skews: skewed, replay: true})
	codes, _ := f.burst(t, 50, func(int) string { return "same-id" })
	if codes["ok"] != 1 || codes["REPLAY_DETECTED"] != 49 {
		t.Fatalf("answers by code: %v, want 1 ok and 49 REPLAY_DETECTED", codes)
	}
	if got := f.executions.Load(); got != 1 {
		t.Fatalf("executions: %d, want 1", got)
	}
}

// The window slides on Redis's clock: a denied request is admitted once
// the retry-after it was given has passed, and not before.
func TestWindowSlides(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	l, err := redisstate.NewLimiter(rc, 3, 400*time.Millisecond, redisstate.Options{App: "slide"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if d, err := l.Allow(ctx, "s", time.Time{}); err != nil || d.Verdict != surface.Allow {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
	d, err := l.Allow(ctx, "s", time.Time{})
	if err != nil || d.Verdict != surface.Deny || d.RetryAfter <= 0 || d.RetryAfter > 400*time.Millisecond {
		t.Fatalf("fourth request: %+v %v", d, err)
	}
	if d, _ := l.Allow(ctx, "other", time.Time{}); d.Verdict != surface.Allow {
		t.Fatalf("another key shares the budget: %+v", d)
	}
	time.Sleep(d.RetryAfter + 5*time.Millisecond)
	if d, err := l.Allow(ctx, "s", time.Time{}); err != nil || d.Verdict != surface.Allow {
		t.Fatalf("after retryAfter: %+v %v", d, err)
	}
	// Keys expire with their window: the store does not keep idle sessions.
	ttl, err := rc.PTTL(ctx, "pling:rl:5:slide:s").Result()
	if err != nil || ttl <= 0 || ttl > 401*time.Millisecond {
		t.Fatalf("window key ttl %v %v, want (0, 401ms]", ttl, err)
	}
}

// A claim expires after its window (on Redis's clock) and is bounded in
// size whatever the length of the ids.
func TestClaimExpires(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	g, err := redisstate.NewGuard(rc, redisstate.Options{App: "claims"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	long := string(bytes.Repeat([]byte("x"), 4096))
	k := surface.ReplayKey{SessionID: "s", RequestID: long}
	for i, want := range []surface.ReplayDecision{surface.Claimed, surface.Replayed} {
		if d, err := g.Claim(ctx, k, time.Time{}, 300*time.Millisecond); err != nil || d != want {
			t.Fatalf("claim %d: %v %v, want %v", i, d, err, want)
		}
	}
	// The same request id in another session, and "ab"+"c" against "a"+"bc".
	for _, other := range []surface.ReplayKey{{SessionID: "t", RequestID: long}, {SessionID: "ab", RequestID: "c"}, {SessionID: "a", RequestID: "bc"}} {
		if d, err := g.Claim(ctx, other, time.Time{}, time.Minute); err != nil || d != surface.Claimed {
			t.Fatalf("claim %q/%q: %v %v, want claimed", other.SessionID, other.RequestID[:min(8, len(other.RequestID))], d, err)
		}
	}
	if n := len(g.Key(k)); n > 100 {
		t.Fatalf("a claim's key is %d bytes: it follows the id's length", n)
	}
	time.Sleep(350 * time.Millisecond)
	if d, err := g.Claim(ctx, k, time.Time{}, 300*time.Millisecond); err != nil || d != surface.Claimed {
		t.Fatalf("after the window: %v %v, want claimed", d, err)
	}
}

// Two apps on one Redis never share a budget or a claim.
func TestAppsAreApart(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	ctx := context.Background()
	a, _ := redisstate.NewLimiter(rc, 1, time.Minute, redisstate.Options{App: "a"})
	b, _ := redisstate.NewLimiter(rc, 1, time.Minute, redisstate.Options{App: "a:b"})
	for _, l := range []*redisstate.Limiter{a, b} {
		if d, err := l.Allow(ctx, "s", time.Time{}); err != nil || d.Verdict != surface.Allow {
			t.Fatalf("first request of an app: %+v %v", d, err)
		}
	}
	ga, _ := redisstate.NewGuard(rc, redisstate.Options{App: "a"})
	gb, _ := redisstate.NewGuard(rc, redisstate.Options{App: "b"})
	for _, g := range []*redisstate.Guard{ga, gb} {
		if d, err := g.Claim(ctx, surface.ReplayKey{SessionID: "s", RequestID: "r"}, time.Time{}, time.Minute); err != nil || d != surface.Claimed {
			t.Fatalf("first claim of an app: %v %v", d, err)
		}
	}
}
