//go:build !js

package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Targets of the page-cost rows (issue: nothing on the page's critical
// path for visitors who never meet an agent).
const (
	moduleTarget       = 1.05   // the page's first module, with ÷ without
	surfaceBytesTarget = 16_000 // brotli bytes of the runtime before any agent message
	pageCodeTarget     = 1.02   // row P
	idleContactTarget  = 2.0    // prefetch "idle": first describe ÷ a warm one
	contactTarget      = 1.0    // lazy: first describe ÷ (today's cold start + one describe)
	// firstContactWarm is how many describes follow the first on a page.
	firstContactWarm = 20
)

// loadsOf picks the loads of one variant at one CPU rate.
func loadsOf(all []loadSample, variant string, rate float64) []loadSample {
	var out []loadSample
	for _, l := range all {
		if l.Variant == variant && l.CPU == rate {
			out = append(out, l)
		}
	}
	return out
}

func pick(ls []loadSample, f func(loadSample) float64) []float64 {
	out := make([]float64, len(ls))
	for i, l := range ls {
		out[i] = f(l)
	}
	return out
}

func longTaskMS(l loadSample) float64 {
	total := 0.0
	for _, t := range l.LongTasks {
		if len(t) == 2 {
			total += t[1]
		}
	}
	return total
}

// rates lists the CPU rates measured, in order.
func (p pageLoads) rates() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, l := range p.Loads {
		if !seen[l.CPU] {
			seen[l.CPU] = true
			out = append(out, l.CPU)
		}
	}
	sort.Float64s(out)
	return out
}

// surfaceBrotli sums the brotli sizes of the /pling/ files the loads with
// the surface fetched, and says whether any of them asked for the kernel.
func (p pageLoads) surfaceBrotli() (int64, bool) {
	var sum int64
	for _, s := range p.SurfaceFiles {
		sum += s.Brotli
	}
	asked := false
	for _, l := range p.Loads {
		if l.Variant == "with" && l.WasmAsked {
			asked = true
		}
	}
	return sum, asked
}

// pageLoadRows are the demo's rows: its first module's start at each CPU
// rate, the runtime's bytes before any agent message, long tasks.
func pageLoadRows(p pageLoads) ([]row, error) {
	var rows []row
	for _, rate := range p.rates() {
		with, without := loadsOf(p.Loads, "with", rate), loadsOf(p.Loads, "without", rate)
		w, err := summarize(pick(with, func(l loadSample) float64 { return l.ModuleMS }), "ms")
		if err != nil {
			return nil, fmt.Errorf("demo with the surface at CPU %g×: %w", rate, err)
		}
		wo, err := summarize(pick(without, func(l loadSample) float64 { return l.ModuleMS }), "ms")
		if err != nil {
			return nil, fmt.Errorf("demo without the surface at CPU %g×: %w", rate, err)
		}
		ratio := w.Median / wo.Median
		rows = append(rows, row{num: "L1", what: fmt.Sprintf("the page's own first module starts (demo, cold, CPU %g×)", rate),
			baseline: "same site, boot.js exports no runtime", base: fmtVal(wo.Median, "ms"), surf: fmtVal(w.Median, "ms"), ratio: ratio,
			target: fmt.Sprintf("≤ %.2f×", moduleTarget), pass: boolp(ratio <= moduleTarget),
			note:    fmt.Sprintf("+%s; %d loads each, alternated", fmtVal(w.Median-wo.Median, "ms"), w.N),
			baseSum: &wo, sSum: &w, baseName: fmt.Sprintf("demo-without-cpu%g", rate), name: fmt.Sprintf("demo-with-cpu%g", rate)})
	}
	for _, rate := range p.rates() {
		with, without := loadsOf(p.Loads, "with", rate), loadsOf(p.Loads, "without", rate)
		count := func(l loadSample) float64 { return float64(len(l.LongTasks)) }
		wc, err := summarize(pick(with, count), "tasks")
		if err != nil {
			return nil, err
		}
		woc, err := summarize(pick(without, count), "tasks")
		if err != nil {
			return nil, err
		}
		wms, _ := summarize(pick(with, longTaskMS), "ms")
		woms, _ := summarize(pick(without, longTaskMS), "ms")
		extra := wc.Median - woc.Median
		rows = append(rows, row{num: "L2", what: fmt.Sprintf("long tasks (> 50 ms) during the demo's load, CPU %g×", rate),
			baseline: "same site without the surface", base: fmt.Sprintf("%g", woc.Median), surf: fmt.Sprintf("%g", wc.Median), ratio: math.NaN(),
			target: "none caused by the surface", pass: boolp(extra <= 0),
			note: fmt.Sprintf("medians per load; their total %s with, %s without (the most in one load: %g with, %g without)",
				fmtVal(wms.Median, "ms"), fmtVal(woms.Median, "ms"), wc.Max, woc.Max)})
	}
	if len(p.Loads) > 0 {
		with, without := loadsOf(p.Loads, "with", 1), loadsOf(p.Loads, "without", 1)
		sb := func(l loadSample) float64 { return float64(l.SurfaceB) }
		tb := func(l loadSample) float64 { return float64(l.TotalB) }
		ws, err := summarize(pick(with, sb), "B")
		if err != nil {
			return nil, fmt.Errorf("demo bytes: %w", err)
		}
		wos, err := summarize(pick(without, sb), "B")
		if err != nil {
			return nil, fmt.Errorf("demo bytes: %w", err)
		}
		wt, _ := summarize(pick(with, tb), "B")
		wot, _ := summarize(pick(without, tb), "B")
		brotli, asked := p.surfaceBrotli()
		kernel := "no request for surface.wasm"
		if asked {
			kernel = "surface.wasm requested"
		}
		rows = append(rows, row{num: "L3", what: "the runtime's bytes (/pling/) fetched before any agent message, as served",
			baseline: "same site without the surface", base: kb(int64(wos.Median)), surf: kb(int64(ws.Median)), ratio: ratioOr(ws.Median, wos.Median),
			target: "≤ 16 KB brotli, no surface.wasm", pass: boolp(brotli <= surfaceBytesTarget && !asked),
			note: fmt.Sprintf("%s brotli -q 11 over %d files; %s; the whole page %s with, %s without",
				kb(brotli), len(p.SurfaceFiles), kernel, kb(int64(wt.Median)), kb(int64(wot.Median)))})
	}
	return rows, nil
}

// contactSplit is the first contact of one mode, by medians.
type contactSplit struct {
	n                               int
	first, warm, setup              float64
	fetch, compile, start, describe float64
	timed                           bool // ready() gave the start's timings
	streamed                        int  // pages whose kernel compiled while it downloaded
	unsupported                     bool // the runtime has no lazy start
	early                           int  // pages that requested surface.wasm before any agent message
}

// splitContacts reads the samples of one mode. The describe itself is the
// first describe less what of the start was on its path: fetch, compile
// and start after a lazy contact; start alone after an idle prefetch.
func splitContacts(all []contactSample, mode string) (contactSplit, error) {
	var c contactSplit
	var first, warm, setup, fetch, compile, start, describe []float64
	for _, s := range all {
		if s.Mode != mode {
			continue
		}
		if s.API == "none" {
			c.unsupported = true
			continue
		}
		first = append(first, s.FirstMS)
		setup = append(setup, s.SetupMS)
		if s.WasmBefore {
			c.early++
		}
		warm = append(warm, s.WarmMS...)
		if t := s.Timings; t != nil {
			c.timed = true
			if t.Streamed {
				c.streamed++
			}
			fetch = append(fetch, t.FetchMS)
			compile = append(compile, t.CompileMS)
			start = append(start, t.StartMS)
			onPath := t.FetchMS + t.CompileMS + t.StartMS
			if mode == "idle" {
				onPath = t.StartMS
			}
			describe = append(describe, math.Max(0, s.FirstMS-onPath))
		}
	}
	if c.unsupported && len(first) == 0 {
		return c, nil
	}
	c.n = len(first)
	med := func(xs []float64, what string) (float64, error) {
		s, err := summarize(xs, "ms")
		if err != nil {
			return 0, fmt.Errorf("first contact (%s), %s: %w", mode, what, err)
		}
		return s.Median, nil
	}
	var err error
	if c.first, err = med(first, "first describe"); err != nil {
		return c, err
	}
	if c.warm, err = med(warm, "warm describes"); err != nil {
		return c, err
	}
	if c.setup, err = med(setup, "setup"); err != nil {
		return c, err
	}
	if c.timed {
		c.fetch, _ = med(fetch, "fetch")
		c.compile, _ = med(compile, "compile")
		c.start, _ = med(start, "start")
		c.describe, _ = med(describe, "describe")
	}
	return c, nil
}

// contactRows: the first describe with the kernel started on contact,
// the same after an idle prefetch, and today's cold start + one describe.
func contactRows(all []contactSample) ([]row, error) {
	if len(all) == 0 {
		return nil, nil
	}
	today, err := splitContacts(all, "today")
	if err != nil {
		return nil, err
	}
	if today.n == 0 {
		return nil, fmt.Errorf("first contact: no load of today's loadSurface()")
	}
	ref := today.setup + today.first
	var rows []row
	lazy, err := splitContacts(all, "lazy")
	if err != nil {
		return nil, err
	}
	lazyRow := row{num: "F1", what: "an agent's first describe on an idle page, kernel started on contact",
		baseline: "today: cold start + one describe", base: fmtVal(ref, "ms"), ratio: math.NaN(),
		target: "≤ 1.0× today's"}
	switch {
	case lazy.n == 0:
		lazyRow.surf = "—"
		lazyRow.note = "not measured: this runtime has no lazy start (no top-level createSurface)"
	default:
		lazyRow.surf = fmtVal(lazy.first, "ms")
		lazyRow.ratio = lazy.first / ref
		lazyRow.pass = boolp(lazyRow.ratio <= contactTarget && lazy.early == 0)
		lazyRow.note = splitNote(lazy, true)
		if lazy.early > 0 {
			// Then the kernel did not start on contact, and the split
			// measures something else.
			lazyRow.note = fmt.Sprintf("%d of %d pages requested surface.wasm before any agent message; ", lazy.early, lazy.n) + lazyRow.note
		}
	}
	rows = append(rows, lazyRow)

	idle, err := splitContacts(all, "idle")
	if err != nil {
		return nil, err
	}
	idleRow := row{num: "F2", what: `the same with prefetch: "idle"`, baseline: "a warm describe, same pages",
		ratio: math.NaN(), target: fmt.Sprintf("≤ %.0f× a warm describe", idleContactTarget)}
	switch {
	case idle.n == 0:
		idleRow.base, idleRow.surf = "—", "—"
		idleRow.note = "not measured: this runtime has no lazy start (no top-level createSurface)"
	default:
		idleRow.base = fmtVal(idle.warm*1000, "µs")
		idleRow.surf = fmtVal(idle.first, "ms")
		idleRow.ratio = idle.first / idle.warm
		idleRow.pass = boolp(idleRow.ratio <= idleContactTarget)
		idleRow.note = splitNote(idle, false)
	}
	rows = append(rows, idleRow)

	rows = append(rows, row{num: "F3", what: "today: loadSurface() cold start, then the first describe", baseline: "a warm describe, same pages",
		base: fmtVal(today.warm*1000, "µs"), surf: fmtVal(ref, "ms"), ratio: ref / today.warm, target: "report only (the reference of F1)",
		note: fmt.Sprintf("cold start %s + first describe %s; %d pages", fmtVal(today.setup, "ms"), fmtVal(today.first*1000, "µs"), today.n)})
	return rows, nil
}

func splitNote(c contactSplit, lazy bool) string {
	if !c.timed {
		return fmt.Sprintf("ready() gave no timings; warm describe %s; %d pages", fmtVal(c.warm*1000, "µs"), c.n)
	}
	if lazy && c.streamed == c.n {
		return fmt.Sprintf("fetch to the headers %s + download and compile, streamed %s + start %s + describe %s; warm describe %s; %d pages",
			fmtVal(c.fetch, "ms"), fmtVal(c.compile, "ms"), fmtVal(c.start, "ms"), fmtVal(c.describe, "ms"), fmtVal(c.warm*1000, "µs"), c.n)
	}
	if lazy {
		return fmt.Sprintf("fetch %s + compile %s + start %s + describe %s (%d of %d pages streamed); warm describe %s; %d pages",
			fmtVal(c.fetch, "ms"), fmtVal(c.compile, "ms"), fmtVal(c.start, "ms"), fmtVal(c.describe, "ms"), c.streamed, c.n, fmtVal(c.warm*1000, "µs"), c.n)
	}
	return fmt.Sprintf("start %s + describe %s (fetch %s and compile %s ran in idle time); %d pages",
		fmtVal(c.start, "ms"), fmtVal(c.describe, "ms"), fmtVal(c.fetch, "ms"), fmtVal(c.compile, "ms"), c.n)
}

func ratioOr(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

// kb writes bytes as kilobytes (1,000 bytes), as the targets are written.
func kb(b int64) string {
	if b < 10_000 {
		return fmt.Sprintf("%.2f KB", float64(b)/1000)
	}
	return fmt.Sprintf("%.1f KB", float64(b)/1000)
}

// pageLoadsMarkdown is the page-cost section: each rate's loads, the
// runtime's files fetched, and the first contacts by mode.
func pageLoadsMarkdown(p pageLoads, contacts []contactSample) string {
	var b strings.Builder
	if len(p.Loads) > 0 {
		b.WriteString("\n## Page cost: the demo with and without the surface\n\n")
		b.WriteString("Cold loads of the demo as `make site` builds it, served as `cmd/demo` serves it, each in a fresh browser context with the cache off, " +
			"alternating with the same site whose `boot.js` exports no runtime. Times are from navigation start to the first statement of `main.js`.\n\n")
		b.WriteString("| CPU | variant | loads | first module: median | p90 | long tasks per load (median) | their ms (median) | bytes: all | bytes: /pling/ |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, rate := range p.rates() {
			for _, v := range []string{"without", "with"} {
				ls := loadsOf(p.Loads, v, rate)
				m, err := summarize(pick(ls, func(l loadSample) float64 { return l.ModuleMS }), "ms")
				if err != nil {
					continue
				}
				lc, _ := summarize(pick(ls, func(l loadSample) float64 { return float64(len(l.LongTasks)) }), "")
				lm, _ := summarize(pick(ls, longTaskMS), "ms")
				tb, _ := summarize(pick(ls, func(l loadSample) float64 { return float64(l.TotalB) }), "B")
				sb, _ := summarize(pick(ls, func(l loadSample) float64 { return float64(l.SurfaceB) }), "B")
				fmt.Fprintf(&b, "| %g× | %s | %d | %s | %s | %g | %s | %s | %s |\n", rate, v, m.N, fmtVal(m.Median, "ms"), fmtVal(m.P90, "ms"),
					lc.Median, fmtVal(lm.Median, "ms"), kb(int64(tb.Median)), kb(int64(sb.Median)))
			}
		}
		if len(p.SurfaceFiles) > 0 {
			b.WriteString("\n| runtime file fetched before any agent message | raw | gzip -9 | brotli -q 11 |\n|---|---:|---:|---:|\n")
			names := make([]string, 0, len(p.SurfaceFiles))
			for k := range p.SurfaceFiles {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				s := p.SurfaceFiles[k]
				fmt.Fprintf(&b, "| `%s` | %d | %d | %d |\n", k, s.Raw, s.Gzip, s.Brotli)
			}
		}
	}
	if len(contacts) > 0 {
		b.WriteString("\n## An agent's first describe on an idle page\n\n")
		b.WriteString("`first-contact.html`, a fresh browser context per page, cache off; the page is left idle (2 s; with `prefetch: \"idle\"`, 2 s after the kernel's download ended), " +
			"then a caller in an isolated world sends a describe, then 20 more. Fetch, compile and start are what `surface.ready()` reports; " +
			"the describe itself is the first describe less the part of the start on its path. Medians, ms.\n\n")
		b.WriteString("| mode | pages | page script start → listening | first describe | fetch | compile | start | describe itself | warm describe |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, m := range contactModes {
			c, err := splitContacts(contacts, m)
			if err != nil {
				continue
			}
			if c.n == 0 {
				fmt.Fprintf(&b, "| %s | — | not measured: this runtime has no lazy start | | | | | | |\n", m)
				continue
			}
			dash := func(v float64) string {
				if !c.timed {
					return "—"
				}
				return fmt.Sprintf("%.1f", v)
			}
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %s | %s | %s | %s | %.3f |\n", m, c.n, c.setup, c.first,
				dash(c.fetch), dash(c.compile), dash(c.start), dash(c.describe), c.warm)
		}
	}
	return b.String()
}
