//go:build !js

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// runGoBench runs one `go test -bench` command with output to the terminal
// and to file, exactly as go test prints it, so that benchstat reads the
// file as it is.
func runGoBench(file string, env []string, args ...string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.MultiWriter(os.Stdout, f)
	cmd.Stderr = io.MultiWriter(os.Stderr, f)
	fmt.Printf("$ %s go %s\n", strings.Join(env, " "), strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w (output in %s)", strings.Join(args, " "), err, file)
	}
	return f.Close()
}

// benchLine matches a result line: name, iterations, then value/unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// goBenchMedians reads a go test -bench output and returns, per package and
// benchmark, the median ns/op over its runs.
func goBenchMedians(file string) (map[string]float64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	runs := map[string][]float64{}
	pkg := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(p, "pling.dev/agent/")
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			if f[i+1] == "ns/op" {
				v, err := strconv.ParseFloat(f[i], 64)
				if err == nil {
					runs[pkg+" "+m[1]] = append(runs[pkg+" "+m[1]], v)
				}
			}
		}
	}
	out := map[string]float64{}
	for k, v := range runs {
		sort.Float64s(v)
		out[k] = quantile(v, 0.5)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no benchmark results", file)
	}
	return out, nil
}
