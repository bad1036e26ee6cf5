//go:build !js

package main

import (
	"fmt"
	"math"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// report gathers every measurement of one run and renders the table.
type report struct {
	cfg      config
	when     time.Time
	total    time.Duration
	stages   []stage
	chromium string
	// loadBefore and loadAfter are the machine's load around the browser run.
	loadBefore, loadAfter string

	goNative, goJS         map[string]float64
	sizeSurface, sizeHello wasmSize
	startup                startupResult
	trips                  roundTrips
	memory                 []memPoint
	pageCost               []pageOp
	loads                  pageLoads
	contacts               []contactSample
}

// row is one line of the targets table.
type row struct {
	num, what      string
	baseline       string // what the surface is compared with
	base, surf     string // the two medians, formatted
	ratio          float64
	target         string
	pass           *bool // nil: reported, no target
	note           string
	baseSum, sSum  *summary
	baseName, name string
}

const (
	memTarget  = 16 << 20
	sizeTarget = 1_000_000 // 1.0 MB
	// overheadTarget is row 7's bound on an invoke's cost over the bare
	// executor, in µs.
	overheadTarget = 60.0
)

func boolp(b bool) *bool { return &b }

// rows computes the targets table; series that were not measured in this
// mode (profile) are left out.
func (r *report) rows() ([]row, error) {
	var rows []row
	us := func(name string) (summary, error) {
		xs := r.trips.samples[name]
		ms := make([]float64, len(xs))
		for i, x := range xs {
			ms[i] = x * 1000
		}
		s, err := summarize(ms, "µs")
		if err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
		return s, nil
	}
	ratioRow := func(num, what, baseline, baseName, name string, target float64, conv func(string) (summary, error), unit string) error {
		b, err := conv(baseName)
		if err != nil {
			return err
		}
		s, err := conv(name)
		if err != nil {
			return err
		}
		ratio := s.Median / b.Median
		rw := row{num: num, what: what, baseline: baseline,
			base: fmtVal(b.Median, unit), surf: fmtVal(s.Median, unit), ratio: ratio,
			baseSum: &b, sSum: &s, baseName: baseName, name: name}
		if target > 0 {
			rw.target = fmt.Sprintf("≤ %.1f×", target)
			rw.pass = boolp(ratio <= target)
		} else {
			rw.target = "report only"
			rw.note = fmt.Sprintf("overhead %s per invoke", fmtVal(s.Median-b.Median, unit))
		}
		rows = append(rows, rw)
		return nil
	}
	if len(r.trips.samples) > 0 {
		if err := ratioRow("1", "describe round trip over postMessage (window 8, 50 actions, 48 orders)", "pure-JS responder, same work",
			"describe-js", "describe-surface", 1.3, us, "µs"); err != nil {
			return nil, err
		}
		if err := ratioRow("2", "invoke round trip, folded update_note, every control on", "MCP-B 5.1.0 tools/call",
			"invoke-mcpb", "invoke-surface", 0.9, us, "µs"); err != nil {
			return nil, err
		}
		// The floor under row 2: what a surface answer costs when the kernel
		// does nothing but refuse the request, against MCP-B's whole call and
		// against a pure-JS echo over the same transport.
		if err := ratioRow("2f", "floor: a request refused at its first step (one trip into Go)", "MCP-B 5.1.0 tools/call",
			"invoke-mcpb", "floor-surface", 0, us, "µs"); err != nil {
			return nil, err
		}
		rows[len(rows)-1].note = "report only: no kernel work at all"
		if err := ratioRow("2f", "floor: a request refused at its first step (one trip into Go)", "pure-JS echo, same transport",
			"echo-js", "floor-surface", 1.4, us, "µs"); err != nil {
			return nil, err
		}
		last := &rows[len(rows)-1]
		last.note = "the trip into Go and back costs " + fmtVal(last.sSum.Median-last.baseSum.Median, "µs")
		if err := ratioRow("3", "describe on a 100,000-row table (lazy source)", "same on a 100-row table",
			"table-100", "table-100000", 1.3, us, "µs"); err != nil {
			return nil, err
		}
	}
	if len(r.startup.hello) > 0 {
		ms := func(name string) (summary, error) {
			if name == "hello" {
				return summarize(r.startup.hello, "ms")
			}
			return summarize(r.startup.surface, "ms")
		}
		if err := ratioRow("4", "startup, cold: script start → surface listening", "hello-world Go wasm + encoding/json",
			"hello", "surface", 1.3, ms, "ms"); err != nil {
			return nil, err
		}
	}
	if r.sizeSurface.Raw > 0 {
		h, s := r.sizeHello, r.sizeSurface
		rows = append(rows,
			row{num: "5", what: "wasm transfer size, brotli -q 11", baseline: "hello.wasm", base: mb(h.Brotli), surf: mb(s.Brotli),
				ratio: float64(s.Brotli) / float64(h.Brotli), target: "≤ 1.0 MB", pass: boolp(s.Brotli <= sizeTarget)},
			row{num: "5", what: "wasm transfer size, gzip -9", baseline: "hello.wasm", base: mb(h.Gzip), surf: mb(s.Gzip),
				ratio: float64(s.Gzip) / float64(h.Gzip), target: "report only"},
			row{num: "5", what: "wasm size, raw", baseline: "hello.wasm", base: mb(h.Raw), surf: mb(s.Raw),
				ratio: float64(s.Raw) / float64(h.Raw), target: "report only"},
		)
	}
	if len(r.memory) > 0 {
		var at10k, last memPoint
		var steps []string
		for i, p := range r.memory {
			if p.Requests == 10_000 {
				at10k = p
			}
			if i > 0 && p.Requests > 10_000 && p.Bytes != r.memory[i-1].Bytes {
				steps = append(steps, fmt.Sprintf("%+.2f MiB from %s to %s", float64(p.Bytes-r.memory[i-1].Bytes)/(1<<20),
					thousands(r.memory[i-1].Requests), thousands(p.Requests)))
			}
			last = p
		}
		if at10k.Bytes == 0 {
			return nil, fmt.Errorf("memory: no reading at 10,000 requests")
		}
		flat := len(steps) == 0
		note := "no growth from 10,000 on"
		if !flat {
			note = "grew " + strings.Join(steps, ", ")
		}
		rows = append(rows, row{num: "6", what: fmt.Sprintf("wasm linear memory after %s requests (describe/invoke alternating)", thousands(last.Requests)),
			baseline: "after 10,000 requests", base: fmtMiB(at10k.Bytes), surf: fmtMiB(last.Bytes),
			ratio: float64(last.Bytes) / float64(at10k.Bytes), target: "≤ 16 MiB, flat",
			pass: boolp(last.Bytes <= memTarget && flat), note: note})
	}
	if len(r.trips.samples) > 0 {
		if err := ratioRow("7", "invoke overhead: surface.handle() (every control on) over the executor", "the executor called directly",
			"overhead-executor", "overhead-surface", 0, us, "µs"); err != nil {
			return nil, err
		}
		last := &rows[len(rows)-1]
		over := last.sSum.Median - last.baseSum.Median
		last.target = fmt.Sprintf("≤ %.0f µs", overheadTarget)
		last.pass = boolp(over <= overheadTarget)
		if _, ok := r.trips.samples["concurrent-surface"]; ok {
			s, err := us("concurrent-surface")
			if err != nil {
				return nil, err
			}
			rows = append(rows, row{num: "8", what: "16 invokes in flight, executors settling in random order (time per invoke)",
				baseline: "—", base: "—", surf: fmtVal(s.Median, "µs"), target: "all answered correctly; throughput reported",
				pass: boolp(true), note: fmt.Sprintf("every reply checked; %.0f invokes/s", 1e6/s.Median),
				sSum: &s, name: "concurrent-surface"})
		}
	}
	// The page-cost group: what the surface costs a visitor who never
	// meets an agent, then what the first agent waits for.
	lr, err := pageLoadRows(r.loads)
	if err != nil {
		return nil, err
	}
	rows = append(rows, lr...)
	if len(r.pageCost) > 0 {
		rw, err := pageCostRow(r.pageCost)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rw)
	}
	cr, err := contactRows(r.contacts)
	if err != nil {
		return nil, err
	}
	rows = append(rows, cr...)
	return rows, nil
}

// pageCostRow sums up page-cost.html: the geometric mean of the operations'
// after ÷ before ratios, and the worst of them.
func pageCostRow(ops []pageOp) (row, error) {
	logSum, worst, worstName := 0.0, 0.0, ""
	for _, op := range ops {
		b, err := summarize(op.Before, "ns")
		if err != nil {
			return row{}, fmt.Errorf("page cost %s: %w", op.Name, err)
		}
		a, err := summarize(op.After, "ns")
		if err != nil {
			return row{}, fmt.Errorf("page cost %s: %w", op.Name, err)
		}
		ratio := a.Median / b.Median
		logSum += math.Log(ratio)
		if ratio > worst {
			worst, worstName = ratio, op.Name
		}
	}
	mean := math.Exp(logSum / float64(len(ops)))
	return row{num: "P", what: fmt.Sprintf("the page's own code after loading the surface (%d everyday operations)", len(ops)),
		baseline: "the same code before, same page", base: "1.00×", surf: fmt.Sprintf("%.2f×", mean), ratio: mean,
		target: fmt.Sprintf("≤ %.2f×", pageCodeTarget), pass: boolp(mean <= pageCodeTarget),
		note: fmt.Sprintf("geometric mean; the most: %s, %.2f×", worstName, worst)}, nil
}

func fmtVal(v float64, unit string) string {
	switch unit {
	case "µs":
		if v >= 10_000 {
			return fmt.Sprintf("%.1f ms", v/1000)
		}
		if v >= 100 || v <= -100 {
			return fmt.Sprintf("%.0f µs", v)
		}
		return fmt.Sprintf("%.1f µs", v)
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

// thousands writes n with comma separators, as the targets are written.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fmtMiB(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

func verdict(p *bool) string {
	switch {
	case p == nil:
		return "—"
	case *p:
		return "PASS"
	}
	return "MISS"
}

// terminal renders the targets table for the console.
func (r *report) terminal() string {
	rows, err := r.rows()
	if err != nil {
		return "table: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-2s %-62s %-36s %12s %12s %7s %-16s %s\n", "#", "target", "baseline", "baseline", "surface", "ratio", "target", "result")
	for _, rw := range rows {
		fmt.Fprintf(&b, "%-2s %-62s %-36s %12s %12s %7s %-16s %s\n", rw.num, clip(rw.what, 62), clip(rw.baseline, 36), rw.base, rw.surf, fmtRatio(rw.ratio), rw.target, verdict(rw.pass))
	}
	return b.String()
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// markdown renders the full report: targets, distributions, memory,
// kernel micro-benchmarks, and where the run's time went.
func (r *report) markdown() (string, error) {
	rows, err := r.rows()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Benchmark results\n\n")
	fmt.Fprintf(&b, "Produced by `make bench` on %s: %s, %s, Node %s, %d CPUs, commit %s.\n",
		r.when.UTC().Format("2006-01-02 15:04 UTC"), r.chromium, goVersion(), nodeVersion(), runtimeCPUs(), commit())
	fmt.Fprintf(&b, "Round trips: %d timed per variant after %d untimed, A/B interleaved; startup: %d cold loads per page; "+
		"every page cross-origin isolated (5 µs clock). Medians; ratio = surface ÷ baseline, same run.\n",
		r.cfg.n, r.cfg.warm, r.cfg.starts)
	if r.trips.descLen > 0 {
		fmt.Fprintf(&b, "Row 1: the surface and the pure-JS responder answered the same description (%d bytes of JSON) before timing.\n", r.trips.descLen)
	}
	fmt.Fprintf(&b, "Machine load (1-minute average) when the browser run started: %s; when it ended: %s.\n\n", r.loadBefore, r.loadAfter)
	b.WriteString("| # | target | baseline | baseline median | surface median | ratio | target | result | note |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|---|---|\n")
	for _, rw := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rw.num, rw.what, rw.baseline, rw.base, rw.surf, fmtRatio(rw.ratio), rw.target, verdict(rw.pass), rw.note)
	}

	b.WriteString("\n## Distributions\n\n| series | n | median | p90 | p99 | min | max |\n|---|---:|---:|---:|---:|---:|---:|\n")
	listed := map[string]bool{} // a series can be the baseline of several rows
	for _, rw := range rows {
		for _, x := range []struct {
			name string
			s    *summary
		}{{rw.baseName, rw.baseSum}, {rw.name, rw.sSum}} {
			if x.s == nil || listed[x.name] {
				continue
			}
			listed[x.name] = true
			u := x.s.Unit
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", x.name, x.s.N, fmtVal(x.s.Median, u), fmtVal(x.s.P90, u), fmtVal(x.s.P99, u), fmtVal(x.s.Min, u), fmtVal(x.s.Max, u))
		}
	}

	if len(r.memory) > 0 {
		b.WriteString("\n## Memory of the Go instance\n\n| requests | linear memory | audit events | rate-limited, retried | bridge stats |\n|---:|---:|---:|---:|---|\n")
		for _, p := range r.memory {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", thousands(p.Requests), fmtMiB(p.Bytes), thousands(p.Audited), thousands(p.Limited), fmtStats(p.Stats))
		}
	}
	if len(r.pageCost) > 0 {
		b.WriteString("\n## What loading the surface costs the page's own code\n\n")
		b.WriteString("page-cost.html times each operation in rounds of 10,000 calls, before `loadSurface()` and after it, in the same page (row P).\n\n")
		b.WriteString("| operation | before (ns per call) | after | after ÷ before |\n|---|---:|---:|---:|\n")
		for _, op := range r.pageCost {
			bs, errB := summarize(op.Before, "ns")
			as, errA := summarize(op.After, "ns")
			if errB != nil || errA != nil {
				continue
			}
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.2f× |\n", op.Name, bs.Median, as.Median, as.Median/bs.Median)
		}
	}
	b.WriteString(pageLoadsMarkdown(r.loads, r.contacts))
	if r.sizeSurface.Raw > 0 {
		b.WriteString("\n## Sizes in bytes\n\n| file | raw | gzip -9 | brotli -q 11 |\n|---|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| surface.wasm | %d | %d | %d |\n", r.sizeSurface.Raw, r.sizeSurface.Gzip, r.sizeSurface.Brotli)
		fmt.Fprintf(&b, "| hello.wasm | %d | %d | %d |\n", r.sizeHello.Raw, r.sizeHello.Gzip, r.sizeHello.Brotli)
	}
	if len(r.goNative) > 0 {
		b.WriteString("\n## Kernel micro-benchmarks (median ns/op of 5 runs)\n\n")
		b.WriteString("Full output, for benchstat: `go-native.txt`, `go-js.txt`.\n\n| benchmark | native | GOOS=js (Node) | js ÷ native |\n|---|---:|---:|---:|\n")
		names := map[string]bool{}
		for k := range r.goNative {
			names[k] = true
		}
		for k := range r.goJS {
			names[k] = true
		}
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n, j := r.goNative[k], r.goJS[k]
			ratio := "—"
			if n > 0 && j > 0 {
				ratio = fmt.Sprintf("%.2f×", j/n)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k, fmtNs(n), fmtNs(j), ratio)
		}
	}
	b.WriteString("\n## Where the time went\n\n| stage | took |\n|---|---:|\n")
	for _, s := range r.stages {
		fmt.Fprintf(&b, "| %s | %s |\n", s.name, s.took.Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "| **total** (after `make bench-site`) | %s |\n", r.total.Round(100*time.Millisecond))
	return b.String(), nil
}

func fmtNs(v float64) string {
	switch {
	case v == 0:
		return "—"
	case v >= 1e6:
		return fmt.Sprintf("%.2f ms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

func fmtStats(m map[string]int) string {
	if m == nil {
		return "—"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// raw is everything measured, for reanalysis.
func (r *report) raw() map[string]any {
	return map[string]any{
		"when":       r.when.UTC().Format(time.RFC3339),
		"chromium":   r.chromium,
		"go":         goVersion(),
		"commit":     commit(),
		"n":          r.cfg.n,
		"warm":       r.cfg.warm,
		"roundTrips": r.trips.samples,
		"startup":    map[string][]float64{"hello": r.startup.hello, "surface": r.startup.surface},
		"sizes":      map[string]wasmSize{"surface": r.sizeSurface, "hello": r.sizeHello},
		"memory":     r.memory,
		"counts":     r.trips.counts,
		"goNative":   r.goNative,
		"goJS":       r.goJS,
		"pageCost":   r.pageCost,
		"demoLoads":  r.loads,
		"contacts":   r.contacts,
	}
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
}

// commit names the tree measured: the commit, and "+changes" when the
// working tree differs from it.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+changes"
	}
	return c
}
