package redisstate_test

import (
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/redisstate"
	"pling.dev/agent/surface"
)

// A replica's kernel and a page's backend share one Redis: the kernel
// takes the limiter and guard as options, and the backend mounts Handler
// behind its own login, naming the session it verified.
func Example() {
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	opts := redisstate.Options{App: "orders", Timeout: 250 * time.Millisecond}
	limiter, err := redisstate.NewLimiter(rc, 60, time.Minute, opts)
	if err != nil {
		log.Fatal(err)
	}
	guard, err := redisstate.NewGuard(rc, opts)
	if err != nil {
		log.Fatal(err)
	}
	_ = surface.Options{
		RateLimit: &surface.RateLimitOptions{Limiter: limiter},
		Replay:    &surface.ReplayOptions{Guard: guard},
		// Registry, Execute, Now, Session as usual.
	}

	h, err := redisstate.Handler(redisstate.HandlerOptions{
		Limiter: limiter,
		Guard:   guard,
		Session: func(r *http.Request) (string, bool) {
			c, err := r.Cookie("session") // the backend's own check goes here
			if err != nil {
				return "", false
			}
			return c.Value, true
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/pling/state", h)
}
