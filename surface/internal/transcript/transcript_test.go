package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts with what the kernel does now")

// goldenDir holds the golden transcripts, relative to this package.
const goldenDir = "../../testdata/transcripts"

// required are the transcripts that must exist, so a renamed directory or a
// bad glob cannot turn the suite into a test of nothing.
var required = []string{
	"approval-audit.txt",
	"capabilities.txt",
	"changed.txt",
	"failures.txt",
	"folded-records.txt",
	"processing-order.txt",
	"rate-replay.txt",
	"sessions.txt",
	"spec-examples.txt",
}

// goldenFiles returns the golden transcript paths, sorted.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	have := map[string]bool{}
	for _, f := range files {
		have[filepath.Base(f)] = true
	}
	for _, name := range required {
		if !have[name] {
			t.Errorf("golden transcript %s is missing from %s", name, goldenDir)
		}
	}
	if len(files) == 0 {
		t.FailNow()
	}
	return files
}

// TestTranscripts replays every golden transcript natively.
func TestTranscripts(t *testing.T) {
	for _, path := range goldenFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(golden)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if !bytes.Equal(got, golden) {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if err := compare(golden, got); err != nil {
				t.Errorf("%s differs from the golden file (go test ./surface/internal/transcript -update rewrites it; review the diff):\n%v", path, err)
			}
		})
	}
}

// compare reports how actual, a replay, differs from golden: the sections
// must line up, the header and input sections be byte-equal, expected
// sections be equal as JSON, and every contains section hold against the
// actual response before it.
func compare(golden, actual []byte) error {
	g, err := Parse(golden)
	if err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	a, err := Parse(actual)
	if err != nil {
		return fmt.Errorf("actual: %w", err)
	}
	if !bytes.Equal(g.Header, a.Header) {
		return errors.New("headers differ")
	}
	if len(g.Sections) != len(a.Sections) {
		return fmt.Errorf("golden has %d sections, actual %d", len(g.Sections), len(a.Sections))
	}
	var errs []error
	var lastResponse []byte
	for i, gs := range g.Sections {
		as := a.Sections[i]
		where := fmt.Sprintf("line %d: -- %s --", gs.Line, strings.TrimSpace(gs.Name+" "+gs.Args))
		if gs.Name != as.Name || gs.Args != as.Args {
			return fmt.Errorf("%s: actual has -- %s %s --", where, as.Name, as.Args)
		}
		switch {
		case expected(gs.Name):
			if d := jsonDiff(gs.Body, as.Body); d != "" {
				errs = append(errs, fmt.Errorf("%s: %s\n--- golden\n%s+++ actual\n%s", where, d, gs.Body, as.Body))
			}
			if gs.Name == secResponse {
				lastResponse = as.Body
			}
		case !bytes.Equal(gs.Body, as.Body):
			errs = append(errs, fmt.Errorf("%s: input section changed", where))
		}
		if gs.Name == secContains {
			if err := contains(lastResponse, gs.Body); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
		}
	}
	return errors.Join(errs...)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// jsonDiff compares two JSON documents by value and describes the first
// difference ("" when equal); an invalid document equals nothing.
func jsonDiff(golden, actual []byte) string {
	g, err := decodeJSON(golden)
	if err != nil {
		return "golden is not JSON: " + err.Error()
	}
	a, err := decodeJSON(actual)
	if err != nil {
		return "actual is not JSON: " + err.Error()
	}
	return firstDiff("", g, a)
}

func firstDiff(path string, g, a any) string {
	switch gv := g.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(gv)+len(av))
		for k := range gv {
			keys = append(keys, k)
		}
		for k := range av {
			if _, ok := gv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			gk, inG := gv[k]
			ak, inA := av[k]
			switch {
			case !inG:
				return fmt.Sprintf("at %s/%s: actual has %s, golden has nothing", path, k, show(ak))
			case !inA:
				return fmt.Sprintf("at %s/%s: golden has %s, actual has nothing", path, k, show(gk))
			}
			if d := firstDiff(path+"/"+k, gk, ak); d != "" {
				return d
			}
		}
		return ""
	case []any:
		av, ok := a.([]any)
		if !ok {
			break
		}
		for i := 0; i < len(gv) && i < len(av); i++ {
			if d := firstDiff(fmt.Sprintf("%s/%d", path, i), gv[i], av[i]); d != "" {
				return d
			}
		}
		if len(gv) != len(av) {
			return fmt.Sprintf("at %s: golden has %d elements, actual %d", orRoot(path), len(gv), len(av))
		}
		return ""
	}
	if !reflect.DeepEqual(g, a) {
		return fmt.Sprintf("at %s: golden has %s, actual %s", orRoot(path), show(g), show(a))
	}
	return ""
}

// contains checks that response holds want: see the contains section.
func contains(response, want []byte) error {
	if response == nil {
		return errors.New("no response to check")
	}
	r, err := decodeJSON(response)
	if err != nil {
		return fmt.Errorf("response: %w", err)
	}
	w, err := decodeJSON(want)
	if err != nil {
		return fmt.Errorf("contains: %w", err)
	}
	return subset("", r, w)
}

func subset(path string, have, want any) error {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, have %s", orRoot(path), show(have))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			hv, ok := h[k]
			if !ok {
				return fmt.Errorf("%s/%s: missing", path, k)
			}
			if _, isText := w[k].(string); k == "message" && isText {
				if _, ok := hv.(string); !ok {
					return fmt.Errorf("%s/%s: want a string, have %s", path, k, show(hv))
				}
				continue // diagnostic text: present, not compared
			}
			if err := subset(path+"/"+k, hv, w[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return fmt.Errorf("%s: want %d elements, have %s", orRoot(path), len(w), show(have))
		}
		for i := range w {
			if err := subset(fmt.Sprintf("%s/%d", path, i), h[i], w[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(have, want) {
		return fmt.Errorf("%s: want %s, have %s", orRoot(path), show(want), show(have))
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// TestCompare checks that the comparison can fail: a changed response, a
// changed input section and a broken contains all have to be reported.
func TestCompare(t *testing.T) {
	file := func(header, request, response, contains string) string {
		return header + "\n- a describe in open mode\n-- request --\n" + request +
			"\n-- response --\n" + response + "\n-- contains --\n" + contains + "\n"
	}
	const (
		req  = `{"protocol":"pling.surface/0.1","id":"r1","method":"describe"}`
		resp = `{"id": "r1", "ok": true, "n": 1.0, "list": [1, 2], "error": {"message": "other"}}`
		cont = `{"ok": true, "error": {"message": "anything"}}`
	)
	actual := file("Pins:", req, "{\n  \"ok\": true,\n  \"id\": \"r1\",\n  \"n\": 1.0,\n  \"list\": [1, 2],\n  \"error\": {\"message\": \"other\"}\n}", cont)
	tests := []struct {
		name    string
		golden  string
		wantErr string
	}{
		{"reordered keys and whitespace are equal", file("Pins:", req, resp, cont), ""},
		{"changed value", file("Pins:", req, strings.Replace(resp, `"r1"`, `"r2"`, 1), cont), `at /id: golden has "r2", actual "r1"`},
		{"changed message in a response", file("Pins:", req, strings.Replace(resp, "other", "else", 1), cont), "at /error/message"},
		{"number spelling", file("Pins:", req, strings.Replace(resp, "1.0", "1", 1), cont), "at /n"},
		{"array order", file("Pins:", req, strings.Replace(resp, "[1, 2]", "[2, 1]", 1), cont), "at /list/0"},
		{"missing member", file("Pins:", req, strings.Replace(resp, `"n": 1.0, `, "", 1), cont), "at /n: actual has 1.0, golden has nothing"},
		{"extra element", file("Pins:", req, strings.Replace(resp, "[1, 2]", "[1, 2, 3]", 1), cont), "at /list: golden has 3 elements, actual 2"},
		{"not JSON", file("Pins:", req, "", cont), "golden is not JSON"},
		{"input section changed", file("Pins:", strings.Replace(req, "describe", "invoke", 1), resp, cont), "input section changed"},
		{"header changed", file("Pinned:", req, resp, cont), "headers differ"},
		{"contains value differs", file("Pins:", req, resp, `{"ok": false}`), "/ok: want false"},
		{"contains member missing", file("Pins:", req, resp, `{"result": {}}`), "/result: missing"},
		{"contains array length", file("Pins:", req, resp, `{"list": [1]}`), "/list: want 1 elements"},
		{"contains message must be a string", file("Pins:", req, resp, `{"id": {"message": "x"}}`), "/id: want an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The contains section is input, so both sides carry the golden one.
			act := actual
			if i := strings.Index(tt.golden, "-- contains --"); i >= 0 {
				act = actual[:strings.Index(actual, "-- contains --")] + tt.golden[i:]
			}
			if strings.HasPrefix(tt.golden, "Pinned:") {
				act = actual
			}
			err := compare([]byte(tt.golden), []byte(act))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("compare: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("compare accepted a difference (want an error mentioning %q)", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("compare: %v\nwant it to mention %q", err, tt.wantErr)
			}
		})
	}
}
