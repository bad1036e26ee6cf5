//go:build !js

package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// stagePairs are the round trips whose time is split into stages: each
// surface variant beside its baseline, run alternately as the table's
// rows are.
var stagePairs = [][2]string{
	{"echo-js", "floor-surface"},
	{"invoke-mcpb", "invoke-surface"},
	{"describe-js", "describe-surface"},
}

// measureStages splits each round trip at the moments the page's own code
// runs. bench.html?trace marks when its registry, session getter, executor
// and audit sink are called and return (its hooks, which any page has);
// the caller records when it sent each request and when the reply came.
// The caller's world and the page share one clock (performance.now), so
// each mark falls inside the call it belongs to. What lies between two
// marks is the caller, the transport, and the surface's (or the baseline's)
// own work; no sampling profiler attributes anything. It returns the
// report as Markdown.
func measureStages(s *session, n, warm int, progress func(string)) (string, error) {
	t, _, err := openCaller(s, "?trace")
	if err != nil {
		return "", err
	}
	defer t.close()
	var md strings.Builder
	fmt.Fprintf(&md, "# Where a round trip's time goes\n\n")
	fmt.Fprintf(&md, "Produced by `make bench-trace` on %s: %s, commit %s. %d calls of each variant after %d untimed, each pair alternating as in the targets table, medians and p90 in µs (the page's clock: 5 µs steps).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), s.version, commit(), n, warm)
	md.WriteString("A stage runs from one moment to the next: *request* (the caller posts) and *reply* (the caller has the answer), and between them the page's hooks as they are called and return. A stage from a hook to its return is the page's own code; every other stage is the caller, the transport and the responder's own work (the surface's, or the baseline's).\n")
	for _, p := range stagePairs {
		if _, err := eval[[]any](t, `window.__bench.takeMarks()`); err != nil {
			return "", err
		}
		start := time.Now()
		spans, err := evalAgent[map[string][]float64](t, fmt.Sprintf(`benchAgent.trace(%s, %s, %d, %d)`, jsLit(p[0]), jsLit(p[1]), n, warm))
		if err != nil {
			return "", err
		}
		marks, err := eval[[]any](t, `window.__bench.takeMarks()`)
		if err != nil {
			return "", err
		}
		for _, v := range p {
			table, err := stageTable(spans[v], marks)
			if err != nil {
				return "", fmt.Errorf("%s: %w", v, err)
			}
			fmt.Fprintf(&md, "\n## %s\n\n%s", v, table)
		}
		progress(fmt.Sprintf("%s and %s: %d calls each traced in %s", p[0], p[1], n, time.Since(start).Round(time.Millisecond)))
	}
	return md.String(), t.healthy()
}

// mark is one moment of a round trip, in ms on the page's clock.
type mark struct {
	name string
	at   float64
}

// stageTable assigns the page's marks (name, time, name, time, ...) to the
// calls whose span (start, end, start, end, ...) holds them, and tabulates
// the time between consecutive moments of the calls, in the order of the
// path most calls took. Marks outside every span (the untimed calls') are
// dropped.
func stageTable(spans []float64, raw []any) (string, error) {
	if len(spans) == 0 || len(spans)%2 != 0 || len(raw)%2 != 0 {
		return "", fmt.Errorf("%d span times and %d mark fields", len(spans), len(raw))
	}
	marks := make([]mark, 0, len(raw)/2)
	for i := 0; i < len(raw); i += 2 {
		name, ok1 := raw[i].(string)
		at, ok2 := raw[i+1].(float64)
		if !ok1 || !ok2 {
			return "", fmt.Errorf("mark %d is %v %v", i/2, raw[i], raw[i+1])
		}
		marks = append(marks, mark{name, at})
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].at < marks[j].at })
	calls := len(spans) / 2
	stages := map[string][]float64{}
	paths := map[string]int{}
	pathOf := map[string][]string{}
	var totals []float64
	m := 0
	for c := 0; c < calls; c++ {
		start, end := spans[2*c], spans[2*c+1]
		seq := []mark{{"request", start}}
		for m < len(marks) && marks[m].at < start {
			m++
		}
		for ; m < len(marks) && marks[m].at <= end; m++ {
			seq = append(seq, marks[m])
		}
		seq = append(seq, mark{"reply", end})
		var keys []string
		for i := 1; i < len(seq); i++ {
			k := seq[i-1].name + " → " + seq[i].name
			stages[k] = append(stages[k], 1000*(seq[i].at-seq[i-1].at))
			keys = append(keys, k)
		}
		sig := strings.Join(keys, "|")
		paths[sig]++
		pathOf[sig] = keys
		totals = append(totals, 1000*(end-start))
	}
	common := ""
	for sig, k := range paths {
		if common == "" || k > paths[common] || k == paths[common] && sig < common {
			common = sig
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d calls took this path.\n\n", paths[common], calls)
	b.WriteString("| stage | whose code | median µs | p90 µs |\n|---|---|---:|---:|\n")
	for _, k := range pathOf[common] {
		sum, err := summarize(stages[k], "µs")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f |\n", k, whose(k), sum.Median, sum.P90)
	}
	sum, err := summarize(totals, "µs")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "| **round trip** | | **%.0f** | **%.0f** |\n", sum.Median, sum.P90)
	return b.String(), nil
}

// whose names the code a stage runs: the page's own between a hook and its
// return, the executor from its call to its settling.
func whose(stage string) string {
	from, to, _ := strings.Cut(stage, " → ")
	if to == from+" returned" || from == "execute" && to == "settled" {
		return "the page's"
	}
	return ""
}
