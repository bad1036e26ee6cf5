//go:build !js

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// startupResult holds the cold-start samples of both pages, in ms.
type startupResult struct {
	hello, surface []float64
}

// openPage opens one of the benchmark pages in a tab of its own and waits
// until the page's global (window.__bench, __memory, __pageCost) says it is
// ready and cross-origin isolated: without isolation its clock is too coarse
// to measure. The caller closes the tab.
func openPage(s *session, page, global string, timeout time.Duration, fresh bool) (*tab, error) {
	t, err := s.openTab(timeout, fresh)
	if err != nil {
		return nil, err
	}
	if err := t.navigate(s.base + "/bench/" + page); err != nil {
		t.close()
		return nil, err
	}
	if err := waitFor(t, "window."+global+" && window."+global+".ready", 60*time.Second); err != nil {
		err = fmt.Errorf("%s never got ready: %w (%v)", page, err, t.healthy())
		t.close()
		return nil, err
	}
	if ok, err := eval[bool](t, "window."+global+".isolated"); err != nil || !ok {
		t.close()
		return nil, fmt.Errorf("%s is not cross-origin isolated (%v): its clock is too coarse to measure", page, err)
	}
	return t, nil
}

// measureStartup loads the two startup pages alternately, each load in a
// fresh browser context: warm pairs first (discarded), then pairs timed.
func measureStartup(s *session, pairs, warm int, progress func(string)) (startupResult, error) {
	var r startupResult
	for i := 0; i < warm+pairs; i++ {
		order := []string{"startup-hello.html", "startup-surface.html"}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, p := range order {
			ms, err := s.coldStart(p, nil)
			if err != nil {
				return r, err
			}
			if i < warm {
				continue
			}
			if strings.Contains(p, "hello") {
				r.hello = append(r.hello, ms)
			} else {
				r.surface = append(r.surface, ms)
			}
		}
		if i >= warm && (i-warm+1)%5 == 0 {
			progress(fmt.Sprintf("startup: %d/%d pairs", i-warm+1, pairs))
		}
	}
	return r, nil
}

// pairs are the comparisons made from the isolated-world caller, baseline
// first. Each runs as its own interleaved A/B series.
var pairs = [][2]string{
	{"describe-js", "describe-surface"},
	{"invoke-mcpb", "invoke-surface"},
	{"echo-js", "floor-surface"},
	{"table-100", "table-100000"},
}

// roundTrips holds every round-trip series of the benchmark page, in ms.
type roundTrips struct {
	samples  map[string][]float64
	mcpTools []string
	descLen  int
	counts   map[string]int
}

// sameDescription is the caller's comparison of the two describe answers.
type sameDescription struct {
	Equal   bool `json:"equal"`
	Bytes   int  `json:"bytes"`
	Surface any  `json:"surface"`
	JS      any  `json:"js"`
}

// openCaller opens the round-trip page (bench.html, with query appended),
// starts the caller in an isolated world, checks that the world is
// isolated, and connects the MCP client; it returns the tab and the tools
// MCP-B lists. The caller closes the tab.
func openCaller(s *session, query string) (*tab, []string, error) {
	t, err := openPage(s, "bench.html"+query, "__bench", 10*time.Minute, false)
	if err != nil {
		return nil, nil, err
	}
	tools, err := connectCaller(s, t)
	if err != nil {
		t.close()
		return nil, nil, err
	}
	return t, tools, nil
}

// connectCaller is openCaller's work once the page is open.
func connectCaller(s *session, t *tab) ([]string, error) {
	agent, err := os.ReadFile(filepath.Join(s.cfg.site, "bench", "agent.js"))
	if err != nil {
		return nil, err
	}
	client, err := os.ReadFile(filepath.Join(s.cfg.site, "bench", "mcp-client.js"))
	if err != nil {
		return nil, err
	}
	// Named, so that profiles tell the caller's functions from the browser's.
	if err := t.startCaller(string(client)+"\n//# sourceURL=caller/mcp-client.js\n", string(agent)+"\n//# sourceURL=caller/agent.js\n"); err != nil {
		return nil, err
	}
	if ok, err := evalAgent[bool](t, `benchAgent.isolated()`); err != nil || !ok {
		return nil, fmt.Errorf("the caller's world is not cross-origin isolated (%v)", err)
	}
	if leaked, err := evalAgent[bool](t, `benchAgent.pageGlobalsVisible()`); err != nil || leaked {
		return nil, fmt.Errorf("the caller's world sees the page's globals (%v): it is not isolated", err)
	}
	tools, err := evalAgent[[]string](t, `benchAgent.connectMCP()`)
	if err != nil {
		return nil, fmt.Errorf("connect the MCP client over MCP-B's tab transport: %w", err)
	}
	if len(tools) != 1 || tools[0] != "update_note" {
		return nil, fmt.Errorf("MCP-B lists tools %v, want [update_note]", tools)
	}
	return tools, nil
}

// measureRoundTrips opens bench.html, starts the caller in an isolated
// world, checks that the compared variants do the same work, and times
// them. With profileDir set it then records a CPU profile of each variant.
func measureRoundTrips(s *session, n, warm int, profileDir string, progress func(string)) (roundTrips, error) {
	r := roundTrips{samples: map[string][]float64{}}
	t, tools, err := openCaller(s, "")
	if err != nil {
		return r, err
	}
	defer t.close()
	r.mcpTools = tools
	same, err := evalAgent[sameDescription](t, `benchAgent.sameDescription()`)
	if err != nil {
		return r, err
	}
	if !same.Equal {
		return r, fmt.Errorf("the pure-JS responder and the surface describe differently, so they do not do the same work:\nsurface: %v\njs:      %v", same.Surface, same.JS)
	}
	r.descLen = same.Bytes

	for _, p := range pairs {
		start := time.Now()
		got, err := evalAgent[map[string][]float64](t, fmt.Sprintf(`benchAgent.compare(%s, %s, %d, %d)`, jsLit(p[0]), jsLit(p[1]), n, warm))
		if err != nil {
			return r, err
		}
		for k, v := range got {
			if len(v) != n {
				return r, fmt.Errorf("%s: %d samples, want %d", k, len(v), n)
			}
			r.samples[k] = v
		}
		progress(fmt.Sprintf("%s vs %s: %d round trips each in %s", p[0], p[1], n, time.Since(start).Round(time.Millisecond)))
	}

	start := time.Now()
	ovh, err := eval[map[string][]float64](t, fmt.Sprintf(`window.__bench.overhead(%d, %d)`, n, warm))
	if err != nil {
		return r, err
	}
	for k, v := range ovh {
		r.samples["overhead-"+k] = v
	}
	progress(fmt.Sprintf("executor vs surface.handle(): %d invokes each in %s", n, time.Since(start).Round(time.Millisecond)))

	start = time.Now()
	rounds := max(1, n/4)
	cc, err := eval[map[string][]float64](t, fmt.Sprintf(`window.__bench.concurrent(%d, %d)`, rounds, max(1, warm/4)))
	if err != nil {
		return r, err
	}
	for k, v := range cc {
		r.samples["concurrent-"+k] = v
	}
	progress(fmt.Sprintf("16 invokes in flight: %d rounds in %s", rounds, time.Since(start).Round(time.Millisecond)))

	if r.counts, err = eval[map[string]int](t, `window.__bench.counts()`); err != nil {
		return r, err
	}
	if err := t.healthy(); err != nil {
		return r, err
	}
	if profileDir != "" {
		if err := profileVariants(t, profileDir, n, progress); err != nil {
			return r, err
		}
	}
	return r, t.healthy()
}

// memPoint is the Go instance's memory after a number of requests.
type memPoint struct {
	Requests int            `json:"requests"`
	Bytes    int64          `json:"bytes"`
	Audited  int            `json:"audited"`
	Limited  int            `json:"limited"` // refused by the rate limit, then sent again
	Stats    map[string]int `json:"stats"`
}

// measureMemory opens memory.html (a fresh Go instance) and reads its
// linear memory at each checkpoint of a run of total requests.
func measureMemory(s *session, checkpoints []int, progress func(string)) ([]memPoint, error) {
	t, err := openPage(s, "memory.html", "__memory", 15*time.Minute, false)
	if err != nil {
		return nil, err
	}
	defer t.close()
	var out []memPoint
	start := time.Now()
	for _, c := range checkpoints {
		p, err := eval[memPoint](t, fmt.Sprintf(`window.__memory.runTo(%d)`, c))
		if err != nil {
			return nil, err
		}
		if p.Requests != c || p.Bytes <= 0 {
			return nil, fmt.Errorf("memory checkpoint %d: got %+v", c, p)
		}
		out = append(out, p)
		progress(fmt.Sprintf("memory: %d requests, %.1f MiB (%s)", c, float64(p.Bytes)/(1<<20), time.Since(start).Round(time.Second)))
	}
	return out, t.healthy()
}

// pageOp is one operation of page-cost.html: ns per call in each timed
// round, before loadSurface() and after it.
type pageOp struct {
	Name   string    `json:"name"`
	Before []float64 `json:"before"`
	After  []float64 `json:"after"`
}

// measurePageCost opens page-cost.html, which times everyday page code
// before and after it loads the surface.
func measurePageCost(s *session) ([]pageOp, error) {
	t, err := openPage(s, "page-cost.html", "__pageCost", 5*time.Minute, true)
	if err != nil {
		return nil, err
	}
	defer t.close()
	ops, err := eval[[]pageOp](t, `window.__pageCost.run()`)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if len(op.Before) == 0 || len(op.After) != len(op.Before) {
			return nil, fmt.Errorf("page cost: %s has %d and %d samples", op.Name, len(op.Before), len(op.After))
		}
	}
	return ops, t.healthy()
}

// profileVariants records a CPU profile of each variant run alone and
// writes it (loadable in DevTools) with a summary of where its time goes.
func profileVariants(t *tab, dir string, n int, progress func(string)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var all strings.Builder
	for _, p := range pairs {
		for _, v := range p {
			if err := startProfiler(t); err != nil {
				return err
			}
			start := time.Now()
			if _, err := evalAgent[int](t, fmt.Sprintf(`benchAgent.loop(%s, %d)`, jsLit(v), n)); err != nil {
				return err
			}
			wall := time.Since(start)
			res, err := chromedp.Call(t.ctx, profiler.Stop, cdp.Empty{})
			if err != nil {
				return err
			}
			raw, err := json.Marshal(res.Profile)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, v+".cpuprofile"), raw, 0o644); err != nil {
				return err
			}
			sum := summarizeProfile(res.Profile, 22)
			fmt.Fprintf(&all, "## %s: %d calls in %s (%.1f µs per call)\n\n%s\n", v, n, wall.Round(time.Millisecond), float64(wall.Microseconds())/float64(n), sum)
			progress(fmt.Sprintf("profiled %s", v))
		}
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(all.String()), 0o644)
}

// profileStartup records one cold load of each startup page (after two
// unrecorded ones) and the code size of surface.wasm by package, and adds
// both to the profile summary.
func profileStartup(s *session, dir string, progress func(string)) error {
	var all strings.Builder
	for _, name := range []string{"startup-hello.html", "startup-surface.html"} {
		for i := 0; i < 2; i++ {
			if _, err := s.coldStart(name, nil); err != nil {
				return err
			}
		}
		var p profiler.Profile
		ms, err := s.coldStart(name, &p)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		base := strings.TrimSuffix(name, ".html")
		if err := os.WriteFile(filepath.Join(dir, base+".cpuprofile"), raw, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&all, "## %s: one cold load, %.1f ms from script start to ready (profiled)\n\n%s\n", name, ms, summarizeProfile(&p, 22))
		progress("profiled " + name)
	}
	sizes, err := sizeBreakdown(surfaceWasm(s.cfg), 25)
	if err != nil {
		return err
	}
	fmt.Fprintf(&all, "## surface.wasm code size by package\n\n%s", sizes)
	f, err := os.OpenFile(filepath.Join(dir, "summary.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(all.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// summarizeProfile lists the functions with the most self time, and the
// share of wasm, JavaScript, garbage collection and idle time.
func summarizeProfile(p *profiler.Profile, top int) string {
	if p == nil || len(p.Samples) == 0 {
		return "(empty profile)\n"
	}
	// Self time per node from the sample deltas.
	self := map[int64]float64{}
	for i, id := range p.Samples {
		if i < len(p.TimeDeltas) {
			self[id] += float64(p.TimeDeltas[i])
		}
	}
	type fn struct {
		name string
		us   float64
	}
	byName := map[string]float64{}
	kinds := map[string]float64{}
	goPkgs := map[string]float64{}
	var total float64
	for _, node := range p.Nodes {
		us := self[node.ID]
		if us == 0 {
			continue
		}
		cf := node.CallFrame
		name := cf.FunctionName
		if name == "" {
			name = "(anonymous)"
		}
		where := filepath.Base(cf.URL)
		kind := "JavaScript"
		switch {
		case name == "(idle)" || name == "(program)" || name == "(garbage collector)" || name == "(root)":
			kind = name
			where = ""
		case strings.HasSuffix(cf.URL, ".wasm") || strings.HasPrefix(cf.URL, "wasm://"):
			kind = "Go (wasm)"
			goPkgs[goPackage(name)] += us
		case cf.URL == "":
			kind = "browser built-ins (postMessage, timers, …)"
			where = "built-in"
		}
		if where != "" {
			name += " [" + where + "]"
		}
		byName[name] += us
		kinds[kind] += us
		total += us
	}
	fns := make([]fn, 0, len(byName))
	for k, v := range byName {
		fns = append(fns, fn{k, v})
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].us > fns[j].us })
	var b strings.Builder
	b.WriteString("| where | share |\n|---|---|\n")
	kk := make([]fn, 0, len(kinds))
	for k, v := range kinds {
		kk = append(kk, fn{k, v})
	}
	sort.Slice(kk, func(i, j int) bool { return kk[i].us > kk[j].us })
	for _, k := range kk {
		fmt.Fprintf(&b, "| %s | %.1f%% |\n", k.name, 100*k.us/total)
	}
	if len(goPkgs) > 0 {
		pk := make([]fn, 0, len(goPkgs))
		for k, v := range goPkgs {
			pk = append(pk, fn{k, v})
		}
		sort.Slice(pk, func(i, j int) bool { return pk[i].us > pk[j].us })
		b.WriteString("\n| Go package (wasm self time) | share of all |\n|---|---|\n")
		for i, p := range pk {
			if i == 10 {
				break
			}
			fmt.Fprintf(&b, "| `%s` | %.1f%% |\n", p.name, 100*p.us/total)
		}
	}
	b.WriteString("\n| self time | function |\n|---|---|\n")
	for i, f := range fns {
		if i == top {
			break
		}
		fmt.Fprintf(&b, "| %.1f%% | `%s` |\n", 100*f.us/total, f.name)
	}
	return b.String()
}
