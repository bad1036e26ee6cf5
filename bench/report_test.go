//go:build !js

package main

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/runtime"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name             string
		xs               []float64
		median, p90, p99 float64
		wantErr          bool
	}{
		{name: "one", xs: []float64{7}, median: 7, p90: 7, p99: 7},
		{name: "odd", xs: []float64{3, 1, 2}, median: 2, p90: 2.8, p99: 2.98},
		{name: "even, interpolated", xs: []float64{4, 1, 3, 2}, median: 2.5, p90: 3.7, p99: 3.97},
		{name: "empty is no measurement", xs: nil, wantErr: true},
		{name: "negative is no duration", xs: []float64{1, -1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := summarize(tt.xs, "ms")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			const eps = 1e-9
			for _, c := range []struct{ got, want float64 }{{s.Median, tt.median}, {s.P90, tt.p90}, {s.P99, tt.p99}} {
				if d := c.got - c.want; d > eps || d < -eps {
					t.Errorf("got median %v p90 %v p99 %v, want %v %v %v", s.Median, s.P90, s.P99, tt.median, tt.p90, tt.p99)
				}
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -10000: "-10,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMemoryCheckpoints(t *testing.T) {
	tests := []struct {
		total int
		want  []int
	}{
		{100_000, []int{1000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}},
		{12_000, []int{1000, 10_000, 10_800, 12_000}},
		{10_000, []int{1000, 10_000}},
	}
	for _, tt := range tests {
		if got := memoryCheckpoints(tt.total); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("memoryCheckpoints(%d) = %v, want %v", tt.total, got, tt.want)
		}
	}
}

func TestGoBenchMedians(t *testing.T) {
	out := `goos: js
goarch: wasm
pkg: pling.dev/agent/surface
BenchmarkDescribe         	    1789	    600 ns/op	   84426 B/op	     188 allocs/op
BenchmarkDescribe         	    1789	    500 ns/op	   84426 B/op	     188 allocs/op
BenchmarkDescribe         	    1789	    900 ns/op	   84426 B/op	     188 allocs/op
BenchmarkDecodeEnvelope/body=describe-2  	  849524	      1612 ns/op	  41.57 MB/s	    1368 B/op	      17 allocs/op
PASS
pkg: pling.dev/agent/hostbridge
BenchmarkDescribe/bridge         	    1576	    682764 ns/op	   71344 B/op	     171 allocs/op
`
	file := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := goBenchMedians(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"surface BenchmarkDescribe":                     600,
		"surface BenchmarkDecodeEnvelope/body=describe": 1612,
		"hostbridge BenchmarkDescribe/bridge":           682764,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := os.WriteFile(file, []byte("PASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := goBenchMedians(file); err == nil {
		t.Error("an output without results must be an error")
	}
}

func TestMemoryRow(t *testing.T) {
	mem := func(bytes ...int64) []memPoint {
		cps := memoryCheckpoints(100_000)
		out := make([]memPoint, len(bytes))
		for i, b := range bytes {
			out[i] = memPoint{Requests: cps[i], Bytes: b}
		}
		return out
	}
	const mib = 1 << 20
	tests := []struct {
		name string
		mem  []memPoint
		pass bool
	}{
		{"flat and small", mem(8*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib, 9*mib), true},
		{"growth before 10,000 is allowed", mem(4*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib, 12*mib), true},
		{"one step after 10,000 is growth", mem(9*mib, 9*mib, 9*mib, 10*mib, 10*mib, 10*mib, 10*mib, 10*mib, 10*mib, 10*mib, 10*mib), false},
		{"flat but too large", mem(17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib, 17*mib), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := (&report{memory: tt.mem}).rows()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].pass == nil {
				t.Fatalf("rows = %+v", rows)
			}
			if *rows[0].pass != tt.pass {
				t.Errorf("pass = %v, want %v (%s)", *rows[0].pass, tt.pass, rows[0].note)
			}
		})
	}
}

func TestSummarizeProfile(t *testing.T) {
	p := &profiler.Profile{
		Nodes: []*profiler.ProfileNode{
			{ID: 1, CallFrame: &runtime.CallFrame{FunctionName: "(root)"}},
			{ID: 2, CallFrame: &runtime.CallFrame{FunctionName: "encoding_json.appendCompact", URL: "http://127.0.0.1:1/pling/surface.wasm"}},
			{ID: 3, CallFrame: &runtime.CallFrame{FunctionName: "onMessage", URL: "http://127.0.0.1:1/pling/pling-surface.js"}},
			{ID: 4, CallFrame: &runtime.CallFrame{FunctionName: "postMessage"}},
		},
		Samples:    []int64{2, 2, 2, 3, 4},
		TimeDeltas: []int64{10, 10, 10, 10, 10},
	}
	got := summarizeProfile(p, 10)
	for _, want := range []string{
		"| Go (wasm) | 60.0% |",
		"| JavaScript | 20.0% |",
		"| 60.0% | `encoding_json.appendCompact [surface.wasm]` |",
		"| 20.0% | `postMessage [built-in]` |",
		"| `encoding_json` | 60.0% |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

func TestGoPackage(t *testing.T) {
	for name, want := range map[string]string{
		"encoding_json.appendCompact":                                 "encoding_json",
		"runtime.scanObject":                                          "runtime",
		"runtime.__stkframe_.getStackMap":                             "runtime",
		"pling.dev_agent_surface.appendQuoted":                        "pling.dev_agent_surface",
		"github.com_santhosh_tekuri_jsonschema_v5.__Schema_.validate": "github.com_santhosh_tekuri_jsonschema_v5",
		"_rt0_wasm_js":                                                "_rt0_wasm_js",
	} {
		if got := goPackage(name); got != want {
			t.Errorf("goPackage(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCodeSizes(t *testing.T) {
	module := []byte{
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // types: () -> ()
		0x02, 0x07, 0x01, 0x01, 'm', 0x01, 'f', 0x00, 0x00, // one imported function: index 0
		0x03, 0x02, 0x01, 0x00, // one function of type 0: index 1
		0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // its body: 2 bytes
		0x00, 0x0f, 0x04, 'n', 'a', 'm', 'e', 0x01, 0x08, 0x01, 0x01, 0x05, 'p', 'k', 'g', '.', 'f', // name of index 1
	}
	path := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(path, module, 0o644); err != nil {
		t.Fatal(err)
	}
	sizes, data, err := codeSizes(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"pkg.f": 2}; !reflect.DeepEqual(sizes, want) || data != 0 {
		t.Errorf("got %v and data %d, want %v and 0", sizes, data, want)
	}
	if err := os.WriteFile(path, module[:len(module)-17], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := codeSizes(path); err == nil {
		t.Error("a module without function names must be an error")
	}
	if err := os.WriteFile(path, module[:len(module)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := codeSizes(path); err == nil {
		t.Error("a truncated module must be an error")
	}
}

// The floor rows put the cheapest surface answer next to MCP-B's whole call
// and next to a pure-JS echo, from the same run's samples.
func TestRowsFloor(t *testing.T) {
	ms := func(v float64) []float64 { return []float64{v / 1000, v / 1000, v / 1000} }
	r := &report{trips: roundTrips{samples: map[string][]float64{
		"describe-js": ms(400), "describe-surface": ms(600),
		"invoke-mcpb": ms(200), "invoke-surface": ms(500),
		"echo-js": ms(80), "floor-surface": ms(220),
		"table-100": ms(500), "table-100000": ms(550),
		"overhead-executor": ms(1), "overhead-surface": ms(250),
	}}}
	rows, err := r.rows()
	if err != nil {
		t.Fatal(err)
	}
	var floor []row
	for _, rw := range rows {
		if rw.num == "2f" {
			floor = append(floor, rw)
		}
	}
	if len(floor) != 2 {
		t.Fatalf("%d floor rows, want 2", len(floor))
	}
	if got := floor[0]; got.baseName != "invoke-mcpb" || got.name != "floor-surface" || math.Abs(got.ratio-1.1) > 1e-9 || got.pass != nil {
		t.Errorf("floor vs MCP-B: %+v", got)
	}
	if got := floor[1]; got.baseName != "echo-js" || math.Abs(got.ratio-2.75) > 1e-9 || got.note != "the trip into Go and back costs 140 µs" {
		t.Errorf("floor vs echo: %+v", got)
	}
}

func TestPageCostRow(t *testing.T) {
	ops := []pageOp{
		{Name: "fast", Before: []float64{10, 10, 10}, After: []float64{10, 10, 10}},
		{Name: "slow", Before: []float64{2, 2, 2}, After: []float64{8, 8, 8}},
		{Name: "odd", Before: []float64{5, 4, 6}, After: []float64{4, 4, 4}}, // median 5 → 4
	}
	rw, err := pageCostRow(ops)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Cbrt(1 * 4 * 0.8)
	if math.Abs(rw.ratio-want) > 1e-9 || verdict(rw.pass) != "MISS" || !strings.Contains(rw.note, "slow, 4.00×") {
		t.Errorf("row %+v, want the geometric mean %.4f, a miss of 1.02×, slow as the largest", rw, want)
	}
	// 1.02× is the bound: 1.01 and 1.0 by geometric mean pass.
	ok, err := pageCostRow([]pageOp{
		{Name: "a", Before: []float64{100}, After: []float64{102}},
		{Name: "b", Before: []float64{100}, After: []float64{100}},
	})
	if err != nil || verdict(ok.pass) != "PASS" || ok.target != "≤ 1.02×" {
		t.Errorf("row %+v (%v), want a pass of ≤ 1.02×", ok, err)
	}
	if _, err := pageCostRow([]pageOp{{Name: "empty"}}); err == nil {
		t.Error("an operation without samples gave a row")
	}
}
