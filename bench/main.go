//go:build !js

// Command bench measures the surface's performance targets against their
// baselines and prints the table that `make bench` reports:
//
//	go run ./bench -dir build/bench   # after `make bench-site`; `make bench` does both
//
// It runs the kernel micro-benchmarks natively and under GOOS=js with Node
// (benchstat-friendly output in go-native.txt and go-js.txt), computes the
// wasm transfer sizes, then drives one cross-origin-isolated headless
// Chromium over the pages in bench/web: cold starts, round trips from an
// isolated-world caller, and the Go instance's memory over many requests.
// Targets are reported, never asserted: the exit status is non-zero only
// when a measurement could not be taken. bench/README.md explains each row.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type config struct {
	dir      string // build/bench: output files, site/ inside
	site     string
	n, warm  int
	starts   int
	requests int
	demo     string // the demo site as `make site` built it
	loads    int    // timed cold loads of each demo variant per CPU rate
	contacts int    // first contacts per mode
	goBench  bool
	profile  bool
	trace    bool
	only     bool // -pagecost
}

// stage is one timed step of the run, for "where the time goes".
type stage struct {
	name string
	took time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "build/bench", "output directory; the site is served from its site/")
	flag.IntVar(&cfg.n, "n", 1500, "timed round trips per variant")
	flag.IntVar(&cfg.warm, "warm", 150, "untimed round trips per variant before timing")
	flag.IntVar(&cfg.starts, "starts", 15, "timed cold loads per startup page (after 2 untimed)")
	flag.IntVar(&cfg.requests, "requests", 100_000, "requests of the memory run")
	flag.StringVar(&cfg.demo, "demo", "build/site", "the demo site as `make site` builds it, for the page-cost rows")
	flag.IntVar(&cfg.loads, "loads", 12, "timed cold loads of the demo with and without the surface, per CPU rate (after 1 untimed pair)")
	flag.IntVar(&cfg.contacts, "contacts", 7, "first contacts per way of starting the surface (after 1 untimed round)")
	flag.BoolVar(&cfg.only, "pagecost", false, "only the page-cost rows (the demo's loads, first contact, row P)")
	flag.BoolVar(&cfg.goBench, "go", true, "run the kernel micro-benchmarks (go test -bench)")
	flag.BoolVar(&cfg.profile, "profile", false, "only the round trips, then a CPU profile of each variant into DIR/profile")
	flag.BoolVar(&cfg.trace, "trace", false, "only the round trips, split into stages at the page's hooks, into DIR/stages.md")
	flag.Parse()
	cfg.site = filepath.Join(cfg.dir, "site")
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench: a measurement could not be taken:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	began := time.Now()
	var stages []stage
	timed := func(name string, f func() error) error {
		fmt.Printf("\n== %s\n", name)
		start := time.Now()
		err := f()
		stages = append(stages, stage{name, time.Since(start)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	progress := func(s string) { fmt.Println("  " + s) }
	rep := &report{cfg: cfg, when: began}

	if cfg.profile || cfg.trace || cfg.only {
		cfg.goBench = false
	}
	if cfg.goBench {
		// The runner of make test-js: Go's wasm_exec_node.js, and the Go
		// object handed to the JS tests, which call the module's exports.
		runner, err := filepath.Abs(filepath.Join("hostbridge", "testdata", "exec_node.js"))
		if err != nil {
			return err
		}
		execJS := "node --stack-size=8192 " + runner
		native := filepath.Join(cfg.dir, "go-native.txt")
		jsOut := filepath.Join(cfg.dir, "go-js.txt")
		if err := timed("kernel micro-benchmarks, native", func() error {
			return runGoBench(native, nil, "test", "-run=NONE", "-bench=.", "-benchmem", "-count=5", "./surface/...")
		}); err != nil {
			return err
		}
		if err := timed("kernel micro-benchmarks, GOOS=js under Node", func() error {
			return runGoBench(jsOut, []string{"GOOS=js", "GOARCH=wasm"}, "test", "-exec="+execJS, "-run=NONE", "-bench=.", "-benchmem", "-count=5", "./surface/", "./surface/internal/schema/", "./hostbridge/")
		}); err != nil {
			return err
		}
		var err2 error
		if rep.goNative, err2 = goBenchMedians(native); err2 != nil {
			return err2
		}
		if rep.goJS, err2 = goBenchMedians(jsOut); err2 != nil {
			return err2
		}
	}

	if !cfg.profile && !cfg.trace && !cfg.only {
		if err := timed("wasm transfer sizes", func() error {
			sizes, err := measureSizesCached(filepath.Join(cfg.dir, "sizes-cache.json"),
				surfaceWasm(cfg), filepath.Join(cfg.site, "bench", "hello.wasm"))
			if err != nil {
				return err
			}
			rep.sizeSurface, rep.sizeHello = sizes[0], sizes[1]
			return nil
		}); err != nil {
			return err
		}
	}

	var s *session
	if err := timed("start Chromium", func() error {
		var err error
		s, err = startSession(cfg)
		return err
	}); err != nil {
		return err
	}
	defer s.stop()
	rep.chromium = s.version
	rep.loadBefore = loadAverage()
	progress(s.version + " at " + s.base)
	if cfg.trace {
		var md string
		if err := timed("round trips split at the page's hooks", func() error {
			var err error
			md, err = measureStages(s, cfg.n, cfg.warm, progress)
			return err
		}); err != nil {
			return err
		}
		out := filepath.Join(cfg.dir, "stages.md")
		fmt.Print("\n" + md)
		fmt.Printf("\nwritten: %s\n", out)
		return os.WriteFile(out, []byte(md), 0o644)
	}

	if !cfg.profile && !cfg.only {
		if err := timed("startup, cold loads", func() error {
			var err error
			rep.startup, err = measureStartup(s, cfg.starts, 2, progress)
			return err
		}); err != nil {
			return err
		}
	}
	profileDir := ""
	if cfg.profile {
		profileDir = filepath.Join(cfg.dir, "profile")
	}
	if !cfg.only {
		if err := timed("round trips from an isolated-world caller", func() error {
			var err error
			rep.trips, err = measureRoundTrips(s, cfg.n, cfg.warm, profileDir, progress)
			return err
		}); err != nil {
			return err
		}
	}
	if cfg.profile {
		if err := timed("profile the cold starts; code size by package", func() error {
			return profileStartup(s, profileDir, progress)
		}); err != nil {
			return err
		}
	}
	if !cfg.profile && !cfg.only {
		if err := timed("wasm memory over many requests", func() error {
			var err error
			rep.memory, err = measureMemory(s, memoryCheckpoints(cfg.requests), progress)
			return err
		}); err != nil {
			return err
		}
	}
	if !cfg.profile {
		if err := timed("the page's own code, before and after loading the surface", func() error {
			var err error
			rep.pageCost, err = measurePageCost(s)
			return err
		}); err != nil {
			return err
		}
		if cfg.loads > 0 {
			if err := timed("the demo with and without the surface, cold loads", func() error {
				var err error
				rep.loads, err = measurePageLoads(s, cfg.loads, 1, []float64{1, 4}, filepath.Join(cfg.dir, "sizes-cache.json"), progress)
				return err
			}); err != nil {
				return err
			}
		}
		if cfg.contacts > 0 {
			if err := timed("an agent's first describe on an idle page", func() error {
				var err error
				rep.contacts, err = measureFirstContact(s, cfg.contacts, firstContactWarm, progress)
				return err
			}); err != nil {
				return err
			}
		}
	}
	rep.loadAfter = loadAverage()
	s.stop()

	rep.stages = stages
	rep.total = time.Since(began)
	md, err := rep.markdown()
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(rep.terminal())
	name := "latest.md"
	if cfg.only {
		name = "latest-pagecost.md"
	}
	if cfg.profile {
		name = "latest-profile.md"
		fmt.Printf("\nprofiles: %s\n", filepath.Join(profileDir, "summary.md"))
	}
	if err := os.WriteFile(filepath.Join(cfg.dir, name), []byte(md), 0o644); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(rep.raw(), "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.dir, strings.TrimSuffix(name, ".md")+".json"), raw, 0o644); err != nil {
		return err
	}
	fmt.Printf("\nwritten: %s (raw samples in %s)\n", filepath.Join(cfg.dir, name), strings.TrimSuffix(name, ".md")+".json")
	return nil
}

// memoryCheckpoints are 1,000, 10,000 and every further tenth of total.
func memoryCheckpoints(total int) []int {
	cps := []int{1000, 10_000}
	step := total / 10
	if step < 1 {
		step = 1
	}
	for c := 2 * step; c <= total; c += step {
		if c > 10_000 {
			cps = append(cps, c)
		}
	}
	if cps[len(cps)-1] != total && total > 10_000 {
		cps = append(cps, total)
	}
	return cps
}

func goVersion() string { return runtime.Version() }

func runtimeCPUs() int { return runtime.NumCPU() }

// loadAverage is the one-minute load average, or "?" where there is none:
// the machine is shared, and a busy one widens every distribution.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
