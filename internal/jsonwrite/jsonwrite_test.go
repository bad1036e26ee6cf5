package jsonwrite

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// same checks that what w wrote is json.Marshal(v), or that both refused:
// Marshal's error comes with w.Slow. Slow on a value Marshal writes would
// only be slower (a caller hands Slow values to encoding/json), and only
// nesting deeper than the compactor follows may cause it.
func same(t *testing.T, v any, w *Writer) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		if !w.Slow {
			t.Fatalf("%.200q: encoding/json refuses it (%v), the writer wrote %.200s", v, err, w.B)
		}
		return
	}
	if w.Slow && bytes.Count(want, []byte("[")) > maxCompactDepth {
		return
	}
	if w.Slow || !bytes.Equal(w.B, want) {
		t.Fatalf("%.200q:\n got %.200s (slow %v)\nwant %.200s", v, w.B, w.Slow, want)
	}
}

func writeString(s string) *Writer      { w := &Writer{}; w.Str(s); return w }
func writeNumber(n json.Number) *Writer { w := &Writer{}; w.Number(n); return w }
func writeRaw(m json.RawMessage) *Writer {
	w := &Writer{}
	w.RawMessage(m)
	return w
}
func writeFloat(f float64, bits int) *Writer { w := &Writer{}; w.Float(f, bits); return w }

var (
	testStrings = []string{
		"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnl\ncr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "é ü 中文 🙂", "line\u2028para\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate bytes",
		"\ufeffbom", "\ufffd replacement", "\xe2\x80", "\xe2\x80\xa9\xe2",
	}
	testRaws = []string{
		`{"a": 1, "b" : [true, false, null, "x<y>&z"], "c": {"d": -1.5e+10}}`, " \t\n 42 \r\n", `"\u2028 \ud800 \/ \" \\"`,
		"\"raw \xe2\x80\xa8 sep\"", "[]", "{}", `[ [ ] , { } ]`, `0`, `-0.0e-0`, `1E5`, "\"\xff\"",
		``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.5`, `+1`, `1e`, `tru`, `nul`, `"\x01"`, `"\q"`, `"\u12g4"`, `1 2`, `"abc`,
		`{"a":1,}`, `[1 2]`, `{1:2}`, `NaN`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
	}
	testNumbers = []string{"0", "-0", "12", "1.50", "1e400", "-12.5E-7", "", "01", "1.", "abc", "+1", "0x10", " 1", "-", "1e+"}
	testFloats  = []float64{0, math.Copysign(0, -1), 1, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.123, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 1.0 / 3, 0.001, 12.345, 1e12, 1e12 - 0.001, math.NaN(), math.Inf(1), math.Inf(-1)}
)

func TestStrMatchesMarshal(t *testing.T) {
	for _, s := range testStrings {
		same(t, s, writeString(s))
	}
}

func TestNumberMatchesMarshal(t *testing.T) {
	for _, n := range testNumbers {
		same(t, json.Number(n), writeNumber(json.Number(n)))
	}
}

func TestRawMessageMatchesMarshal(t *testing.T) {
	for _, r := range testRaws {
		same(t, json.RawMessage(r), writeRaw(json.RawMessage(r)))
	}
	same(t, json.RawMessage(nil), writeRaw(nil))
}

func TestFloatMatchesMarshal(t *testing.T) {
	for _, f := range testFloats {
		same(t, f, writeFloat(f, 64))
		same(t, float32(f), writeFloat(float64(float32(f)), 32))
	}
}

func TestStringsMatchesMarshal(t *testing.T) {
	for _, list := range [][]string{nil, {}, testStrings} {
		w := &Writer{}
		w.Strings(list)
		same(t, list, w)
	}
}

// CompactTop compacts as AppendCompact does and stops asking after the
// first yes.
func TestCompactTop(t *testing.T) {
	var asked []string
	top := func(name []byte) bool { asked = append(asked, string(name)); return string(name) == "b" }
	out, ok, hit := CompactTop(nil, []byte(` {"a": {"b": 1}, "b" : 2, "c": 3} `), top)
	if !ok || !hit || string(out) != `{"a":{"b":1},"b":2,"c":3}` || strings.Join(asked, ",") != "a,b" {
		t.Fatalf("CompactTop = %s ok %v hit %v, asked %q", out, ok, hit, asked)
	}
	if _, ok, _ := CompactTop(nil, []byte(`{"a":1} x`), top); ok {
		t.Fatal("CompactTop accepted text after the value")
	}
	asked = nil
	if _, ok, hit := CompactTop(nil, []byte(`{"a":1,"c":[{"b":2}]}`), top); !ok || hit {
		t.Fatalf("a nested b counted as a top member: ok %v hit %v", ok, hit)
	}
}

// FuzzWriter compares each writer with encoding/json on the same input
// read as a string, a json.Number, a json.RawMessage and a float.
func FuzzWriter(f *testing.F) {
	for _, s := range append(append(testStrings, testRaws...), testNumbers...) {
		f.Add([]byte(s), 0.0)
	}
	for _, v := range testFloats {
		f.Add([]byte("1"), v)
	}
	f.Fuzz(func(t *testing.T, data []byte, v float64) {
		same(t, string(data), writeString(string(data)))
		same(t, json.Number(data), writeNumber(json.Number(data)))
		same(t, json.RawMessage(data), writeRaw(json.RawMessage(data)))
		same(t, v, writeFloat(v, 64))
		same(t, float32(v), writeFloat(float64(float32(v)), 32))
		if out, ok := AppendCompact([]byte("x"), data); ok && !json.Valid(data) {
			t.Fatalf("AppendCompact(%q) ok %v (%s), json.Valid %v", data, ok, out, json.Valid(data))
		}
	})
}
