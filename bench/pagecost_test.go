//go:build !js

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(variant string, cpu, moduleMS float64, longTasks int, surfaceB int64, wasm bool) loadSample {
	l := loadSample{Variant: variant, CPU: cpu, ModuleMS: moduleMS, SurfaceB: surfaceB, TotalB: surfaceB + 100_000, WasmAsked: wasm}
	for i := 0; i < longTasks; i++ {
		l.LongTasks = append(l.LongTasks, []float64{float64(i * 100), 60})
	}
	return l
}

func rowsByNum(rows []row, num string) []row {
	var out []row
	for _, r := range rows {
		if r.num == num {
			out = append(out, r)
		}
	}
	return out
}

func TestPageLoadRows(t *testing.T) {
	p := pageLoads{
		Loads: []loadSample{
			// CPU 1×: medians 210 with, 200 without: 1.05×, at the bound.
			load("with", 1, 200, 1, 5_000, false), load("without", 1, 190, 1, 0, false),
			load("with", 1, 210, 1, 5_000, false), load("without", 1, 200, 1, 0, false),
			load("with", 1, 500, 1, 5_000, false), load("without", 1, 900, 1, 0, false),
			// CPU 4×: 2×, and one more long task with the surface.
			load("with", 4, 800, 2, 5_000, false), load("without", 4, 400, 1, 0, false),
		},
		SurfaceFiles: map[string]wasmSize{"/pling/a.js": {Raw: 40_000, Brotli: 9_000}, "/pling/b.js": {Raw: 20_000, Brotli: 6_000}},
	}
	rows, err := pageLoadRows(p)
	if err != nil {
		t.Fatal(err)
	}
	l1 := rowsByNum(rows, "L1")
	if len(l1) != 2 {
		t.Fatalf("L1 rows %d, want one per CPU rate", len(l1))
	}
	if got := l1[0]; math.Abs(got.ratio-1.05) > 1e-9 || verdict(got.pass) != "PASS" || got.base != "200.0 ms" || got.surf != "210.0 ms" || !strings.Contains(got.what, "CPU 1×") {
		t.Errorf("L1 at 1×: %+v, want 210 ÷ 200 ms = 1.05×, a pass", got)
	}
	if got := l1[1]; math.Abs(got.ratio-2) > 1e-9 || verdict(got.pass) != "MISS" || !strings.Contains(got.what, "CPU 4×") {
		t.Errorf("L1 at 4×: %+v, want 2×, a miss", got)
	}
	l2 := rowsByNum(rows, "L2")
	if len(l2) != 2 || verdict(l2[0].pass) != "PASS" || verdict(l2[1].pass) != "MISS" || l2[1].surf != "2" || l2[1].base != "1" {
		t.Errorf("L2: %+v, want a pass at 1× (as many as without) and a miss at 4× (2 against 1)", l2)
	}
	l3 := rowsByNum(rows, "L3")
	if len(l3) != 1 || verdict(l3[0].pass) != "PASS" || !strings.Contains(l3[0].note, "15.0 KB brotli") || !strings.Contains(l3[0].note, "no request for surface.wasm") {
		t.Fatalf("L3: %+v, want 15 KB brotli, a pass", l3)
	}
	if l3[0].surf != "5.00 KB" || !math.IsNaN(l3[0].ratio) {
		t.Errorf("L3: %+v, want 5.00 KB as served and no ratio against a baseline of none", l3[0])
	}

	// One request for the kernel, or 16,001 bytes, misses.
	p.Loads[4].WasmAsked = true
	rows, err = pageLoadRows(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByNum(rows, "L3")[0]; verdict(got.pass) != "MISS" || !strings.Contains(got.note, "surface.wasm requested") {
		t.Errorf("a load that asked for surface.wasm: %+v, want a miss", got)
	}
	p.Loads[4].WasmAsked = false
	p.SurfaceFiles["/pling/c.js"] = wasmSize{Brotli: 1_001}
	rows, _ = pageLoadRows(p)
	if got := rowsByNum(rows, "L3")[0]; verdict(got.pass) != "MISS" {
		t.Errorf("16,001 bytes: %+v, want a miss", got)
	}

	if rows, err := pageLoadRows(pageLoads{}); err != nil || len(rows) != 0 {
		t.Errorf("no loads: %d rows, %v; want none", len(rows), err)
	}
	if _, err := pageLoadRows(pageLoads{Loads: []loadSample{load("with", 1, 100, 0, 0, false)}}); err == nil {
		t.Error("loads with the surface and none without gave a ratio")
	}
}

func contact(mode string, setup, first float64, warm []float64, tm *startup) contactSample {
	api := "createSurface"
	if mode == "today" {
		api = "loadSurface"
	}
	return contactSample{Mode: mode, API: api, SetupMS: setup, FirstMS: first, WarmMS: warm, Timings: tm}
}

func TestContactRows(t *testing.T) {
	samples := []contactSample{
		contact("today", 700, 100, []float64{1, 1, 1}, nil),
		contact("today", 900, 100, []float64{1, 1, 1}, nil), // reference: 800 + 100 = 900 ms
		contact("lazy", 5, 600, []float64{1}, &startup{FetchMS: 200, CompileMS: 150, StartMS: 200}),
		contact("lazy", 5, 800, []float64{1}, &startup{FetchMS: 200, CompileMS: 150, StartMS: 200}),
		contact("idle", 5, 3, []float64{1, 1, 2}, &startup{FetchMS: 200, CompileMS: 150, StartMS: 1}),
	}
	rows, err := contactRows(samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want F1, F2, F3", len(rows))
	}
	f1, f2, f3 := rows[0], rows[1], rows[2]
	if f1.num != "F1" || f1.base != "900.0 ms" || f1.surf != "700.0 ms" || math.Abs(f1.ratio-700.0/900) > 1e-9 || verdict(f1.pass) != "PASS" {
		t.Errorf("F1: %+v, want 700 ms against 900, a pass", f1)
	}
	// The describe itself: 700 less 200 + 150 + 200 on its path.
	if !strings.Contains(f1.note, "fetch 200.0 ms + compile 150.0 ms + start 200.0 ms + describe 150.0 ms") {
		t.Errorf("F1 note %q, want the split", f1.note)
	}
	// prefetch "idle": 3 ms against a warm 1 ms, and only the start on its path.
	if f2.num != "F2" || math.Abs(f2.ratio-3) > 1e-9 || verdict(f2.pass) != "MISS" || !strings.Contains(f2.note, "start 1.0 ms + describe 2.0 ms") {
		t.Errorf("F2: %+v, want 3× a warm describe, a miss, the start alone on the path", f2)
	}
	if f3.num != "F3" || f3.surf != "900.0 ms" || f3.pass != nil {
		t.Errorf("F3: %+v, want the 900 ms reference, no verdict", f3)
	}

	// A lazy page that fetched the kernel before anyone spoke misses F1,
	// however fast its first describe.
	samples[2].WasmBefore = true
	rows, err = contactRows(samples)
	if err != nil {
		t.Fatal(err)
	}
	if f1 := rows[0]; verdict(f1.pass) != "MISS" || !strings.Contains(f1.note, "1 of 2 pages requested surface.wasm before any agent message") {
		t.Errorf("F1 with the kernel fetched early: %+v, want a miss that says so", f1)
	}

	// A runtime without a lazy start: F1 and F2 say so and judge nothing.
	old := []contactSample{
		{Mode: "lazy", API: "none"}, {Mode: "idle", API: "none"},
		contact("today", 700, 100, []float64{1}, nil),
	}
	rows, err = contactRows(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:2] {
		if r.pass != nil || !strings.Contains(r.note, "no lazy start") || !math.IsNaN(r.ratio) {
			t.Errorf("%s without a lazy start: %+v", r.num, r)
		}
	}
	if _, err := contactRows([]contactSample{{Mode: "lazy", API: "none"}}); err == nil {
		t.Error("no reference load gave rows")
	}
	if rows, err := contactRows(nil); err != nil || rows != nil {
		t.Errorf("nothing measured: %v, %v", rows, err)
	}
}

func TestIsKernelPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/pling/surface.wasm":          true,
		"/pling/surface.3f9a1c.wasm":   true,
		"/pling/pling-surface.js":      false,
		"/bench/hello.wasm":            false,
		"/other/surface.wasm":          false,
		"/pling/surface.wasm.map":      false,
		"/pling/surface-kernel-b.wasm": true,
	} {
		if got := isKernelPath(p); got != want {
			t.Errorf("isKernelPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestFmtRatio(t *testing.T) {
	if got := fmtRatio(math.NaN()); got != "—" {
		t.Errorf("NaN: %q", got)
	}
	if got := fmtRatio(1.234); got != "1.23×" {
		t.Errorf("1.234: %q", got)
	}
}

// TestDropRuntimePreload: the baseline site preloads nothing of the
// runtime, and keeps every other line as it was.
func TestDropRuntimePreload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.html")
	page := "<head>\n  <link rel=\"modulepreload\" href=\"pling/pling-surface.js\">\n  <link rel=\"modulepreload\" href=\"app.js\">\n  <script type=\"module\" src=\"boot.js\"></script>\n</head>\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dropRuntimePreload(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "<head>\n  <link rel=\"modulepreload\" href=\"app.js\">\n  <script type=\"module\" src=\"boot.js\"></script>\n</head>\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
