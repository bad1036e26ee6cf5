//go:build !js

package main

import (
	"fmt"
	"math"
	"sort"
)

// summary is the distribution of one variant's samples, in the unit they
// were taken in.
type summary struct {
	N                int
	Median, P90, P99 float64
	Min, Max         float64
	Unit             string
}

// summarize sorts a copy of xs and reads its quantiles. It fails on an empty
// or non-finite sample: that is a measurement that was not taken.
func summarize(xs []float64, unit string) (summary, error) {
	if len(xs) == 0 {
		return summary{}, fmt.Errorf("no samples")
	}
	s := append([]float64(nil), xs...)
	for _, x := range s {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return summary{}, fmt.Errorf("sample %v is not a duration", x)
		}
	}
	sort.Float64s(s)
	return summary{
		N:      len(s),
		Median: quantile(s, 0.5),
		P90:    quantile(s, 0.9),
		P99:    quantile(s, 0.99),
		Min:    s[0],
		Max:    s[len(s)-1],
		Unit:   unit,
	}, nil
}

// quantile interpolates linearly between the closest ranks of sorted s.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
