package jsonwrite

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// Time must write a time as time.Time.MarshalJSON does, for every year
// from 0 to 9999 and any zone under a day.
func TestTimeIsMarshalJSON(t *testing.T) {
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
			want, err := lt.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var w Writer
			if w.Time(lt); w.Slow || string(w.B) != string(want) {
				t.Fatalf("time(%v) = %s (slow %v), MarshalJSON says %s", lt, w.B, w.Slow, want)
			}
		}
	}
}

// Time writes a time from the stamp of its second: times in one second, in
// several zones, one after another, must each be written as encoding/json
// writes them, whichever stamp was kept last.
func TestTimeReusesItsSecond(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("A", 3600), time.FixedZone("B", -(9*3600 + 30*60)), time.FixedZone("Z", 0)}
	base := time.Date(2026, 12, 2, 19, 59, 59, 0, time.UTC)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 4000 {
		tm := base.Add(time.Duration(rng.Int64N(3e9))) // three seconds, the stamp changing
		if i%7 == 0 {
			tm = tm.Truncate(time.Second) // no nanoseconds
		}
		lt := tm.In(zones[rng.IntN(len(zones))])
		want, err := lt.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var w Writer
		w.Time(lt)
		if w.Slow || string(w.B) != string(want) {
			t.Fatalf("time(%v) = %s (slow %v), MarshalJSON says %s", lt, w.B, w.Slow, want)
		}
	}
	// Out of RFC 3339's range: left to encoding/json, which refuses it,
	// even right after a stamp of the same second in another zone was kept.
	for _, lt := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		base.In(time.FixedZone("day", 24*3600)), base.In(time.FixedZone("-day", -24*3600)),
	} {
		var kept Writer
		kept.Time(lt.In(time.UTC)) // that second's stamp, in UTC
		var w Writer
		if w.Time(lt); !w.Slow {
			t.Fatalf("time(%v) wrote %s; want it left to encoding/json", lt, w.B)
		}
	}
}

// Float writes a whole number of thousandths from its integer; the text
// must be strconv's shortest, as for every other float.
func TestFloatThousandths(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		var w Writer
		w.Float(f, 64)
		want := strconv.AppendFloat(nil, f, 'f', -1, 64)
		if f != 0 && (math.Abs(f) < 1e-6 || math.Abs(f) >= 1e21) {
			return // exponent form: not this path
		}
		if string(w.B) != string(want) {
			t.Fatalf("float(%v) = %s, strconv says %s", f, w.B, want)
		}
	}
	for _, m := range []int64{1, 5, 10, 50, 100, 999, 1000, 1001, 1010, 1100, 12345, 999999, 1e6, 123456789, 999999999999999, 1e15 - 1} {
		check(float64(m) / 1000)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		check(float64(rng.Int64N(1e15)) / 1000)                               // every exact thousandth below the bound
		check(float64(rng.Int64N(1e6)) / 1000)                                // durations as the kernel measures them
		check(rng.Float64() * math.Pow(10, float64(rng.IntN(30)-10)))         // anything else
		check(float64(rng.Int64N(1e13)) / math.Pow(10, float64(rng.IntN(6)))) // near the bound, other scales
	}
	for _, f := range []float64{0, math.Copysign(0, -1), -1.5, 0.0005, 0.001, 1e12 - 0.001, 1e12, 1e12 + 0.5, math.Nextafter(0.001, 1)} {
		check(f)
	}
}

func FuzzFloat(f *testing.F) {
	for _, v := range []float64{0.001, 1.5, 12.345, 1e12, 0.1 + 0.2} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsInf(v, 0) || math.IsNaN(v) || (v != 0 && (math.Abs(v) < 1e-6 || math.Abs(v) >= 1e21)) {
			return
		}
		var w Writer
		w.Float(v, 64)
		if want := strconv.AppendFloat(nil, v, 'f', -1, 64); string(w.B) != string(want) {
			t.Fatalf("float(%v) = %s, strconv says %s", v, w.B, want)
		}
	})
}
