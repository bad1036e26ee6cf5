package surface_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"pling.dev/agent/surface"
)

// TestSlidingWindowLargeLimitsMatchModel drives limits larger than a ring
// starts with through random arrivals and checks every verdict and wait
// against a reference model, so growing the ring never loses or reorders
// an admitted time.
func TestSlidingWindowLargeLimitsMatchModel(t *testing.T) {
	for _, max := range []int{1, 7, 8, 9, 50, 300} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) {
			const window = time.Second
			l := surface.NewSlidingWindow(max, window)
			rng := rand.New(rand.NewPCG(uint64(max), 7))
			now := time.Unix(1_700_000_000, 0)
			var admitted []time.Time
			for i := 0; i < 20*max+200; i++ {
				now = now.Add(time.Duration(rng.IntN(int(4*window/time.Duration(max)) + 1)))
				var live []time.Time
				for _, a := range admitted {
					if now.Sub(a) < window {
						live = append(live, a)
					}
				}
				admitted = live
				d, err := l.Allow(context.Background(), "k", now)
				if err != nil {
					t.Fatal(err)
				}
				if len(live) < max {
					if d.Verdict != surface.Allow {
						t.Fatalf("step %d: refused with %d of %d live", i, len(live), max)
					}
					admitted = append(admitted, now)
					continue
				}
				if d.Verdict != surface.Deny || d.RetryAfter != live[0].Add(window).Sub(now) {
					t.Fatalf("step %d: got %+v, want deny for %v", i, d, live[0].Add(window).Sub(now))
				}
			}
		})
	}
}

// TestSlidingWindowMemoryFollowsUse pins that a generous limit costs memory
// by what a session used, not by the limit: a million-request window used
// once per key must not hold a million slots per key.
func TestSlidingWindowMemoryFollowsUse(t *testing.T) {
	l := surface.NewSlidingWindow(1_000_000, time.Minute)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	now := time.Unix(1_700_000_000, 0)
	for i := 0; i < 100; i++ {
		if d, _ := l.Allow(context.Background(), fmt.Sprint("key-", i), now); d.Verdict != surface.Allow {
			t.Fatalf("key %d refused", i)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("100 keys with one request each allocated %d bytes", grew)
	}
}

// TestSlidingWindowEightBytesAnAdmission: a key that uses its whole limit
// costs 8 bytes an admitted request, rings grown on the way included, not
// a time.Time (24 bytes, with a pointer for the collector to scan) each.
// make bench's memory page runs at thousands of requests a second under a
// limit of 10,000 a second, so the ring is most of what the limiter keeps.
func TestSlidingWindowEightBytesAnAdmission(t *testing.T) {
	const max = 10_000
	l := surface.NewSlidingWindow(max, time.Second)
	now := time.Unix(1_700_000_000, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < max; i++ {
		if d, _ := l.Allow(context.Background(), "k", now.Add(time.Duration(i)*time.Microsecond)); d.Verdict != surface.Allow {
			t.Fatalf("request %d refused", i)
		}
	}
	runtime.ReadMemStats(&after)
	// Rings of 8, 16, ... 8192 and then 10,000 slots: 26,376 slots.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 26_376*8+4096 {
		t.Fatalf("%d admissions allocated %d bytes", max, grew)
	}
}
