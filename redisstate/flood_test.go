package redisstate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/redistest"
	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

// A burst fills the window; just before it slides, a flood starts and
// lasts a quarter of one, so every request it gets admitted lies in one
// window: at most max of them, however the burst's members expire. Each
// flood call trims the one that expired and finds the same count as the
// call before it, the shape that named two admissions alike when Lua
// printed their microsecond time with 14 digits and ZADD then only moved
// one member.
func TestLimiterFloodAtWindowEdge(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	defer rc.Close()
	const max, window = 200, time.Second
	l, err := redisstate.NewLimiter(rc, max, window, redisstate.Options{App: "flood", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	flood := func(until time.Time) int64 {
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(until) {
					d, err := l.Allow(ctx, "s", time.Time{})
					if err != nil {
						t.Error(err)
						return
					}
					if d.Verdict == surface.Allow {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return admitted.Load()
	}
	start := time.Now()
	if n := flood(start.Add(window / 4)); n > max {
		t.Fatalf("the burst admitted %d, max %d", n, max)
	}
	time.Sleep(time.Until(start.Add(window * 9 / 10)))
	if n := flood(time.Now().Add(window / 4)); n > max {
		t.Fatalf("%d admitted within one window of %v, max %d", n, window, max)
	}
}
