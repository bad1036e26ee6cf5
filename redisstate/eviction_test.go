package redisstate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/redistest"
	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

// A Redis with a memory limit and an eviction policy drops keys before
// they expire when it fills, and every key here has a TTL, so volatile-lru
// picks them first: a claim would vanish inside its window and the same
// request run again. Such a Redis is refused, closed; with noeviction a
// full Redis refuses the write, which is closed too.
func TestEvictingRedisIsRefused(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	ctx := context.Background()
	for _, kv := range [][2]string{{"maxmemory", "3mb"}, {"maxmemory-policy", "volatile-lru"}} {
		if err := rc.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	g, err := redisstate.NewGuard(rc, redisstate.Options{App: "evict"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := redisstate.NewLimiter(rc, 1, time.Hour, redisstate.Options{App: "evict"})
	if err != nil {
		t.Fatal(err)
	}
	k := surface.ReplayKey{SessionID: "s", RequestID: "r-1"}
	claim := func() (surface.ReplayDecision, error) { return g.Claim(ctx, k, time.Time{}, time.Hour) }
	first, err1 := claim()
	allow1, errA := l.Allow(ctx, "s", time.Time{})
	// Other data of the same Redis fills it; the policy evicts.
	pad := make([]byte, 10<<10)
	for i := 0; i < 1000; i++ {
		if err := rc.Set(ctx, fmt.Sprintf("other:%d", i), pad, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	again, err2 := claim()
	allow2, errB := l.Allow(ctx, "s", time.Time{})
	if err1 == nil && first == surface.Claimed && err2 == nil && again == surface.Claimed {
		t.Fatal("one request id was claimed twice inside its window: the claim was evicted")
	}
	if errA == nil && allow1.Verdict == surface.Allow && errB == nil && allow2.Verdict == surface.Allow {
		t.Fatal("two requests passed a limit of one an hour: the window was evicted")
	}
	for _, err := range []error{err1, err2, errA, errB} {
		if err == nil {
			t.Fatal("a decision was made on a Redis that may evict its keys")
		}
	}

	// noeviction: decisions are made, and a full Redis refuses them.
	if err := rc.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d, err := claim(); err != nil || d != surface.Claimed {
		t.Fatalf("noeviction: %v %v", d, err)
	}
	// Filled to its limit: a new claim and a new admission, which would each
	// store one more key, are refused. The limiter's script once trimmed its
	// window first; after that write Redis no longer checked memory, and it
	// admitted (and stored) every request past maxmemory.
	// (A limit below what it holds already: filling it with keys raced
	// with the background freeing of FLUSHALL.)
	if err := rc.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "fill", pad, 0).Err(); err == nil {
		t.Fatal("Redis is not full")
	}
	for i := 0; i < 50; i++ {
		fresh := surface.ReplayKey{SessionID: fmt.Sprint("s-", i), RequestID: "r-1"}
		if d, err := g.Claim(ctx, fresh, time.Time{}, time.Hour); err == nil {
			t.Fatalf("a full Redis stored claim %d: %v", i, d)
		}
		if d, err := l.Allow(ctx, fmt.Sprint("s-", i), time.Time{}); err == nil {
			t.Fatalf("a full Redis stored admission %d: %v", i, d)
		}
	}
}
