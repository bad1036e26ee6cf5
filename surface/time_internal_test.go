package surface

import (
	"math/rand/v2"
	"testing"
	"time"
)

// appendRFC3339Nano must write what time.Time.AppendFormat writes, for
// every year the wire writer gives it (0 to 9999) and any zone.
func TestAppendRFC3339NanoIsAppendFormat(t *testing.T) {
	zones := []*time.Location{
		time.UTC, time.FixedZone("", 0), time.FixedZone("A", 3600), time.FixedZone("B", -3600),
		time.FixedZone("C", 5*3600+30*60), time.FixedZone("D", -(9*3600 + 30*60)), time.FixedZone("E", 59),
		time.FixedZone("F", -59), time.FixedZone("G", -3601), time.FixedZone("H", 23*3600+59*60+59),
		time.FixedZone("I", -(23*3600 + 59*60 + 59)),
	}
	if loc, err := time.LoadLocation("Europe/Berlin"); err == nil {
		zones = append(zones, loc)
	}
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 12, 2, 1, 2, 3, 0, time.UTC), time.Date(2024, 2, 29, 12, 0, 0, 1, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 100000000, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 120, time.UTC),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(253402300799), rng.Int64N(1e9)))
	}
	for _, tm := range times {
		for _, z := range zones {
			lt := tm.In(z)
			if y := lt.Year(); y < 0 || y > 9999 {
				continue
			}
			want := string(lt.AppendFormat(nil, time.RFC3339Nano))
			if got := string(appendRFC3339Nano(nil, lt)); got != want {
				t.Fatalf("appendRFC3339Nano(%v) = %s, AppendFormat says %s", lt, got, want)
			}
		}
	}
}
