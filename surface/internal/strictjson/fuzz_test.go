package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func fuzzSeeds() []string {
	return []string{
		envelopeDescribe,
		envelopeInvoke,
		`{"protocol":"pling.surface/0.1","id":"req_03","method":"invoke","method":"describe"}`,
		`{"protocol":"pling.surface/0.1","id":"req_04","ID":"req_05"}`,
		`{"k":1,"\u212a":2}`,
		`{"note":"\ud800"}`,
		`["\udc00\ud800"]`,
		"{\"note\":\"\xff\xfe\"}",
		"\xef\xbb\xbf{}",
		strings.Repeat("[", 200),
		strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100),
		`[1,2,3,]`,
		`{"a":1,}`,
		`{"a":1}/*x*/`,
		`[NaN,Infinity,-0,01,+1,.5,1.,1e,1e400,12345678901234567890123]`,
		`"` + strings.Repeat(`\u0041`, 50) + `"`,
		`{"":{"":{"":[]}}}`,
		`{"a/b":{"c~d":[0,{"e":"\u0000"}]}}`,
		"\"\u2028\u2029\"",
		`1 2`,
	}
}

// tight limits make the fuzzer exercise every limit path.
var tight = Limits{MaxBytes: 256, MaxDepth: 3, MaxString: 8, MaxArray: 3, MaxMembers: 3}

func asError(t *testing.T, err error, data []byte) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, not *Error: %v", err, err)
	}
	if e.Kind < KindSyntax || e.Kind >= KindUnsupportedValue {
		t.Fatalf("unexpected kind %v from Decode", e.Kind)
	}
	if e.Offset < 0 || e.Offset > int64(len(data)) && e.Kind != KindTooLarge {
		t.Fatalf("offset %d outside input of %d bytes", e.Offset, len(data))
	}
	if e.Msg == "" || strings.HasPrefix(e.Kind.String(), "Kind(") {
		t.Fatalf("bad error %v", e)
	}
	return e
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data, Limits{})
		sameWithWords(t, data, Limits{}, v, err)
		sameWithWords(t, data, tight, nil, nil)
		if err != nil {
			e := asError(t, err, data)
			if e.Kind != KindSyntax && e.Kind != KindDuplicateKey && e.Kind != KindCaseVariantKey && e.Kind != KindTooDeep {
				t.Fatalf("limit error %v without limits", e)
			}
		} else {
			// Sanity oracle: we are never more lenient than encoding/json,
			// and agree with it on the tree.
			want, ok := stdDecode(data)
			if !ok {
				t.Fatalf("Decode accepted what encoding/json refuses: %q", data)
			}
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("tree differs from encoding/json for %q", data)
			}
			// Round trip through encoding/json.
			enc, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			v2, err := Decode(enc, Limits{})
			if err != nil {
				t.Fatalf("re-decode of %s: %v", enc, err)
			}
			if !reflect.DeepEqual(v, v2) {
				t.Fatalf("round trip changed tree: %q -> %s", data, enc)
			}
		}
		checkTopString(t, data, v, err)
		// Limits only ever refuse; whatever passes them is the same tree.
		vt, errt := Decode(data, tight)
		if errt != nil {
			e := asError(t, errt, data)
			if err == nil && e.Kind == KindSyntax {
				t.Fatalf("syntax error only under limits: %v", e)
			}
			if e.Kind == KindTooLarge && e.Offset != int64(tight.MaxBytes) {
				t.Fatalf("TooLarge offset %d", e.Offset)
			}
		} else {
			if err != nil {
				t.Fatalf("accepted under limits but refused without: %v", err)
			}
			if !reflect.DeepEqual(vt, v) {
				t.Fatalf("tree differs under limits")
			}
		}
	})
}

// FuzzCheckValue checks CheckValue(Decode(x)) == Decode(x), and that
// CheckValue agrees with Decode on every limit.
func FuzzCheckValue(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data, Limits{})
		if err != nil {
			return
		}
		got, err := CheckValue(v, Limits{})
		if err != nil {
			t.Fatalf("CheckValue(Decode(%q)): %v", data, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("CheckValue changed the tree of %q", data)
		}
		// The encoded-size estimate never exceeds the source length.
		if _, err := CheckValue(v, Limits{MaxBytes: len(data)}); err != nil {
			t.Fatalf("MaxBytes %d refused a tree decoded from that many bytes: %v", len(data), err)
		}
		// Without MaxBytes, the other limits give the same verdict.
		noBytes := tight
		noBytes.MaxBytes = 0
		_, derr := Decode(data, noBytes)
		_, cerr := CheckValue(v, noBytes)
		if (derr == nil) != (cerr == nil) {
			t.Fatalf("Decode and CheckValue disagree on %q: %v vs %v", data, derr, cerr)
		}
	})
}

// FuzzFoldKey checks that fold keys agree with strings.EqualFold.
func FuzzFoldKey(f *testing.F) {
	for _, p := range [][2]string{{"id", "ID"}, {"k", "\u212a"}, {"İ", "i"}, {"ß", "ẞ"}, {"σ", "ς"}, {"abc", "ab"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		if strings.EqualFold(a, b) != (foldKey(a) == foldKey(b)) {
			t.Fatalf("EqualFold(%q, %q) = %v but fold keys %q %q", a, b, strings.EqualFold(a, b), foldKey(a), foldKey(b))
		}
	})
}

// checkTopString holds TopString to Decode: on a document Decode accepts it
// reads what Decode read; on one it refuses, it answers only when the
// document is JSON that encoding/json reads to the same member, and never
// when the member has a case variant or a twin at the top level.
func checkTopString(t *testing.T, data []byte, v any, err error) {
	t.Helper()
	got, ok := TopString(data, Limits{}, "id")
	if err == nil {
		want, wantOK := TopStringOf(v, "id")
		if ok != wantOK || got != want {
			t.Fatalf("TopString = %q, %v on an accepted document; Decode read %q, %v", got, ok, want, wantOK)
		}
		return
	}
	if !ok {
		return
	}
	std, valid := stdDecode(data)
	m, isObj := std.(map[string]any)
	if !valid || !isObj || m["id"] != got {
		t.Fatalf("TopString read %q from %q, which encoding/json reads as %v", got, data, std)
	}
	n := 0
	for k := range m {
		if strings.EqualFold(k, "id") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("TopString read %q from %q, which has %d keys folding to id", got, data, n)
	}
}

// fuzzWords are a few words, among them the fuzz seeds' common strings.
var fuzzWords = NewWords("a", "b", "id", "protocol", "x", "", "invoke", "pling.surface/0.1")

// sameWithWords checks that DecodeWords answers data as Decode does under
// lim: the same tree, or the same error. v and err are Decode's answer when
// the caller has it (err or v non-nil); otherwise Decode is run here.
func sameWithWords(t *testing.T, data []byte, lim Limits, v any, err error) {
	t.Helper()
	if v == nil && err == nil {
		v, err = Decode(data, lim)
	}
	vw, errw := DecodeWords(data, lim, fuzzWords)
	if (err == nil) != (errw == nil) || (err != nil && err.Error() != errw.Error()) {
		t.Fatalf("%q: Decode error %v, DecodeWords error %v", data, err, errw)
	}
	if err == nil && !reflect.DeepEqual(v, vw) {
		t.Fatalf("%q: trees differ", data)
	}
}
