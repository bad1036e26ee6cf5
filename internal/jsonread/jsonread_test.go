package jsonread

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// reference is what Value must agree with: encoding/json's Decoder with
// UseNumber into an any, nothing after the value.
func reference(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func check(t *testing.T, data []byte) {
	t.Helper()
	want, werr := reference(data)
	r := New(data)
	got := r.Value()
	if ok := r.End(); ok != (werr == nil) {
		t.Fatalf("Value(%q) read=%v; encoding/json: %v", data, ok, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("Value(%q)\n got %#v\nwant %#v", data, got, want)
	}
	if Valid(data) != json.Valid(data) {
		t.Fatalf("Valid(%q) = %v, json.Valid says %v", data, Valid(data), json.Valid(data))
	}
	var v any
	uerr := json.Unmarshal(data, &v)
	f := New(data)
	f.Floats = true
	f.Value()
	if f.End() != (uerr == nil) {
		t.Fatalf("Value with Floats(%q) read=%v; json.Unmarshal: %v", data, f.End(), uerr)
	}
}

var cases = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `1E+2`, `"x"`, `[]`, `{}`, ` [ 1 , "a" , null ] `,
	`{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`, `{"A":1,"a":2}`,
	`"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\ud800"`, `"\ud800\u0041"`, `"\ud800\"`, `"\ud800x"`,
	"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"a\tb\"", "\"\x00\"", "\"\x7f\"",
	`"\x"`, `"\u12"`, `"\u12G4"`, `"abc`, `"\`,
	`01`, `-`, `1.`, `.5`, `1e`, `+1`, `1e400`, `-1e400`, `1e-400`, `123456789012345678901234567890`, `1-2`, `1.5.3`, `0x1`,
	`tru`, `nul`, `truex`, `[1,]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `{} {}`, `[] x`, `{}]`,
	"\ufeff{}", "{}\x00", " \r\n\t{} \r\n\t",
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000),
	strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
	strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000),
	strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001),
	`{"a":[1e400]}`,
}

func TestValueAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range cases {
		check(t, []byte(c))
	}
}

func FuzzValue(f *testing.F) {
	for _, c := range cases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data) })
}

type pair struct {
	A string
	B []string
}

// readPair reads {"a":..., "b":[...]} as encoding/json reads a pair.
func readPair(r *Reader, p *pair, strict bool) {
	r.Object([]string{"a", "b"}, strict, func(f int) {
		if f == 0 {
			r.String(&p.A)
		} else {
			r.Strings(&p.B)
		}
	})
}

// TestListMergesLikeEncodingJSON pins the rule a repeated member follows:
// element i decodes into what an earlier array left at i, within the
// slice's capacity.
func TestListMergesLikeEncodingJSON(t *testing.T) {
	for _, c := range []string{
		`[{"a":"x","b":["1","2"]}]`,
		`{"l":[{"a":"x"},{"a":"y","b":["k"]}],"l":[{"b":["z"]}],"l":[{},{}]}`,
		`{"l":[{"a":"x"}],"l":null,"l":[{}]}`,
		`{"l":[{"a":"x","b":["1",null]}],"L":[{"b":[null,null,"3"]}]}`,
		`{"l":[],"l":[{"A":"y"}]}`,
		`{"l":[{"a":1}]}`, `{"l":{}}`,
	} {
		var want struct{ L []pair }
		dec := json.NewDecoder(strings.NewReader(c))
		werr := dec.Decode(&want)
		if strings.HasPrefix(c, "[") {
			var wl, gl []pair
			werr = json.Unmarshal([]byte(c), &wl)
			r := New([]byte(c))
			List(r, &gl, func(p *pair) { readPair(r, p, false) })
			if r.End() != (werr == nil) || werr == nil && !reflect.DeepEqual(gl, wl) {
				t.Fatalf("%s: got %#v (%v), want %#v (%v)", c, gl, r.End(), wl, werr)
			}
			continue
		}
		var got struct{ L []pair }
		r := New([]byte(c))
		r.Object([]string{"l"}, false, func(int) { List(r, &got.L, func(p *pair) { readPair(r, p, false) }) })
		if r.End() != (werr == nil) || werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %#v (%v), want %#v (%v)", c, got, r.End(), want, werr)
		}
	}
}

func TestStrictObjectNamesTheUnknownMember(t *testing.T) {
	var p pair
	r := New([]byte(`{"a":"x","B":[],"c":1,"d":2}`))
	readPair(r, &p, true)
	if r.End() || !r.HasUnknown || r.Unknown != "c" {
		t.Fatalf("unknown = %q (%v), want \"c\"", r.Unknown, r.HasUnknown)
	}
	dec := json.NewDecoder(strings.NewReader(`{"a":"x","B":[],"c":1,"d":2}`))
	dec.DisallowUnknownFields()
	var q struct {
		A string
		B []string
	}
	if err := dec.Decode(&q); err == nil || err.Error() != `json: unknown field "c"` {
		t.Fatalf("encoding/json: %v", err)
	}
}

func TestHasLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`"plain"`, false},
		{`"\ud83d\ude00"`, false},
		{`"\uD83D\uDE00"`, false},
		{`"\\ud800"`, false}, // an escaped backslash, then text
		{`"\ud800"`, true},
		{`"\udfff"`, true},
		{`"\ud800x"`, true},
		{`"\ud800\u0041"`, true},
		{`"\ud800\ud800"`, true},
		{`"a\\\ud800"`, true},
	} {
		if got := HasLoneSurrogate(tc.in); got != tc.want {
			t.Errorf("HasLoneSurrogate(%s) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
