package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = "Pins:\n- something\n\n"

func TestParseRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		header + "-- advance 10 --\n-- request a label --\n{}\n-- response --\n",
		header + "-- request --\nno newline at the end\n-- response --\n{}\n-- audit --\n[]\n",
		header + "-- request --\n--not a marker--\n- -- x --\n-- response --\n{}\n",
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}
	for i, in := range inputs {
		f, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if got := f.Format(); !bytes.Equal(got, []byte(in)) {
			t.Errorf("input %d: Format(Parse(x)) != x:\n%s", i, got)
		}
	}
}

func TestParseSections(t *testing.T) {
	f, err := Parse([]byte(header + "-- request  spaced   label --\n{\"a\":1}\n\n-- response --\n-- scope [\"a\", \"b\"] --\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{
		{Name: "request", Args: "spaced   label", Body: []byte("{\"a\":1}\n\n"), Line: 4},
		{Name: "response", Line: 7},
		{Name: "scope", Args: `["a", "b"]`, Line: 8},
	}
	if len(f.Sections) != len(want) {
		t.Fatalf("got %d sections, want %d", len(f.Sections), len(want))
	}
	for i, w := range want {
		g := f.Sections[i]
		if g.Name != w.Name || g.Args != w.Args || !bytes.Equal(g.Body, w.Body) || g.Line != w.Line {
			t.Errorf("section %d = %+v (body %q), want %+v (body %q)", i, g, g.Body, w, w.Body)
		}
	}
	if got := requestBytes(f.Sections[0].Body); string(got) != "{\"a\":1}\n" {
		t.Errorf("requestBytes = %q, want the body less its final newline", got)
	}
	if string(f.Header) != header {
		t.Errorf("header = %q", f.Header)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no header list", "Just prose.\n-- revoke --\n", "prose list"},
		{"empty header", "-- revoke --\n", "prose list"},
		{"no sections", header, "no sections"},
		{"unknown section", header + "-- click #note-42 --\n", `unknown section "click"`},
		{"advance needs a number", header + "-- advance soon --\n", "whole number"},
		{"advance needs an argument", header + "-- advance --\n", "whole number"},
		{"revoke takes no argument", header + "-- revoke now --\n", "no arguments"},
		{"navigate needs one argument", header + "-- navigate --\n", "one argument"},
		{"lock takes one argument", header + "-- lock SO-1 SO-2 --\n", "one argument"},
		{"scope needs an array", header + "-- scope orders.search --\n", "JSON array"},
		{"scope null", header + "-- scope null --\n", "JSON array"},
		{"page needs JSON", header + "-- page --\n{orders: 3}\n", "one JSON value"},
		{"response needs JSON", header + "-- request --\n{}\n-- response --\n{\"ok\":\n", "one JSON value"},
		{"request without response", header + "-- request --\n{}\n-- advance 1 --\n", "followed by its response"},
		{"request at the end", header + "-- request --\n{}\n", "followed by its response"},
		{"response without request", header + "-- response --\n{}\n", "must follow a request"},
		{"contains without response", header + "-- contains --\n{}\n", "must follow a response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
