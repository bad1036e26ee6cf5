package redisstate_test

import (
	"fmt"
	"testing"
	"time"

	"pling.dev/agent/internal/redistest"
)

// Redis stops in the middle of a run: every request while it is down is
// refused with the code of the store that failed, the executor is never
// called, and service comes back when Redis does, with the same replicas.
func TestRedisDownRefusesAndRecovers(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  fleetConfig
		code string
	}{
		{"limiter", fleetConfig{limit: 1000, window: time.Minute}, "RATE_LIMIT_UNAVAILABLE"},
		{"guard", fleetConfig{replay: true}, "REPLAY_GUARD_UNAVAILABLE"},
		{"both", fleetConfig{limit: 1000, window: time.Minute, replay: true}, "RATE_LIMIT_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			tc.cfg.skews = skewed
			f := newFleet(t, srv.Addr, tc.cfg)
			seq := 0
			next := func(int) string { seq++; return fmt.Sprintf("%s-%d", tc.name, seq) }
			if codes, _ := f.burst(t, 8, next); codes["ok"] != 8 {
				t.Fatalf("before the fault: %v", codes)
			}
			srv.Stop()
			before := f.executions.Load()
			codes, _ := f.burst(t, 40, next)
			if codes[tc.code] != 40 {
				t.Fatalf("while Redis is down: %v, want 40 %s", codes, tc.code)
			}
			if got := f.executions.Load(); got != before {
				t.Fatalf("the executor ran %d times while Redis was down", got-before)
			}
			srv.Restart()
			if codes, _ := f.burst(t, 8, next); codes["ok"] != 8 {
				t.Fatalf("after Redis came back: %v", codes)
			}
		})
	}
}

// A stalled Redis (SIGSTOP: connections open, no answer) is refused by the
// adapter's own timeout, closed, even with a client whose read timeout is
// far longer; then it answers again.
func TestStalledRedisTimesOutClosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  fleetConfig
		code string
	}{
		{"limiter", fleetConfig{limit: 1000, window: time.Minute}, "RATE_LIMIT_UNAVAILABLE"},
		{"guard", fleetConfig{replay: true}, "REPLAY_GUARD_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			tc.cfg.skews = skewed
			tc.cfg.timeout = 200 * time.Millisecond
			tc.cfg.readTimeout = time.Minute
			f := newFleet(t, srv.Addr, tc.cfg)
			seq := 0
			next := func(int) string { seq++; return fmt.Sprintf("%s-%d", tc.name, seq) }
			if codes, _ := f.burst(t, 4, next); codes["ok"] != 4 {
				t.Fatalf("before the stall: %v", codes)
			}
			srv.Pause()
			before := f.executions.Load()
			done := make(chan map[string]int, 1)
			go func() { codes, _ := f.burst(t, 8, next); done <- codes }()
			select {
			case codes := <-done:
				if codes[tc.code] != 8 {
					t.Fatalf("while Redis is stalled: %v, want 8 %s", codes, tc.code)
				}
			case <-time.After(30 * time.Second):
				// Not a speed check: the client's read timeout is a
				// minute, so only the adapter's timeout answers at all.
				t.Fatal("requests hung on a stalled Redis")
			}
			if got := f.executions.Load(); got != before {
				t.Fatalf("the executor ran %d times while Redis was stalled", got-before)
			}
			srv.Resume()
			// Connections that timed out are dropped by the client; new
			// ones answer.
			deadline := time.Now().Add(20 * time.Second)
			for {
				codes, _ := f.burst(t, 4, next)
				if codes["ok"] == 4 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the stall: %v", codes)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
