package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdDecode is the oracle: encoding/json with exact numbers. ok is false if
// encoding/json refuses the bytes.
func stdDecode(data []byte) (v any, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// canonical renders a tree through json.Marshal, with json.Number converted
// to its text; used to show differences readably.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// checkAgainstStd asserts the differential properties for one document:
//   - anything encoding/json refuses, Decode refuses;
//   - where both accept, the trees are equal (numbers compared as text);
//   - where only encoding/json accepts, Decode's reason is one of the
//     deliberate refusals (duplicate/case-variant key, invalid UTF-8, lone
//     surrogate).
func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	got, err := Decode(data, Limits{})
	want, stdOK := stdDecode(data)
	switch {
	case err == nil && !stdOK:
		t.Fatalf("Decode accepted what encoding/json refuses: %q", data)
	case err == nil:
		if !reflect.DeepEqual(got, want) || canonical(got) != canonical(want) {
			t.Fatalf("trees differ for %q:\n got  %s\n want %s", data, canonical(got), canonical(want))
		}
	case stdOK:
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("non-*Error %T", err)
		}
		switch e.Kind {
		case KindDuplicateKey, KindCaseVariantKey:
		case KindSyntax:
			if utf8.Valid(data) && !surrogateEscape.Match(data) {
				t.Fatalf("Decode refused valid JSON %q: %v", data, err)
			}
		default:
			t.Fatalf("Decode refused valid JSON %q with %v", data, err)
		}
	}
}

func TestDifferentialCorpus(t *testing.T) {
	corpus := []string{
		envelopeDescribe, envelopeInvoke,
		`{}`, `[]`, `""`, `0`, `-0`, `1.50`, `1e400`, `-1E-400`, `12345678901234567890123`, `[0.0e+0]`,
		`{"a":[1,2,{"b":"c"}],"d":{"e":null,"f":true,"g":false}}`, ` { "a" : [ ] } `,
		`"\ud83d\ude00"`, `"\u00e9"`, `"\/\b\f\n\r\t\"\\"`, `"\u0000"`, "\"\u2028\u2029\"", "\"\x7f\"",
		`{"__proto__":1}`, `{"constructor":{"prototype":1}}`, `{"a":1,"b":2,"A1":3}`,
		// refused by both
		``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `01`, `+1`, `.1`, `1.`, `1e`, `NaN`, `Infinity`, `nul`, `'a'`,
		`{"a"}`, `{"a":}`, `{:1}`, `[1 2]`, `{} {}`, `"\x"`, `"\u12"`, "\"\x01\"", "[1]\x00", "/**/1", `1//`,
		"\xef\xbb\xbf1", "\u00a01",
		// accepted by encoding/json, refused here on purpose
		`{"a":1,"a":2}`, `{"id":1,"ID":2}`, `{"k":1,"\u212a":2}`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`,
		"\"\xff\"", "\"\xed\xa0\x80\"", "\"\xc0\x80\"",
	}
	for _, d := range corpus {
		t.Run(d, func(t *testing.T) { checkAgainstStd(t, []byte(d)) })
	}
}

func TestDifferentialRandom(t *testing.T) {
	docs := randomDocs(3000, 7)
	r := rand.New(rand.NewPCG(7, 8))
	for i, d := range docs {
		checkAgainstStd(t, []byte(d))
		// Single-byte mutations of valid documents explore the error paths.
		for j := 0; j < 4; j++ {
			checkAgainstStd(t, mutate(r, []byte(d)))
		}
		if t.Failed() {
			t.Fatalf("doc %d", i)
		}
	}
}

func mutate(r *rand.Rand, d []byte) []byte {
	b := bytes.Clone(d)
	if len(b) == 0 {
		return []byte{byte(r.IntN(256))}
	}
	i := r.IntN(len(b))
	interesting := []byte(`{}[],:"\ -+.eE0123456789tfnu` + "\x00\x80\xff")
	switch r.IntN(4) {
	case 0:
		b[i] = interesting[r.IntN(len(interesting))]
	case 1:
		b = append(b[:i], b[i+1:]...)
	case 2:
		b = append(b[:i], append([]byte{interesting[r.IntN(len(interesting))]}, b[i:]...)...)
	default:
		b[i] = byte(r.IntN(256))
	}
	return b
}

// randomDocs generates n JSON texts from a fixed seed. They use every
// escape, surrogate pairs, raw non-ASCII, exotic number forms, all four
// whitespace bytes, and keys drawn from a small pool that includes case
// variants, so some documents hit the duplicate and case-variant rules.
func randomDocs(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		genValue(r, &b, 0)
		out[i] = b.String()
	}
	return out
}

func ws(r *rand.Rand, b *strings.Builder) {
	for r.IntN(4) == 0 {
		b.WriteByte(" \t\n\r"[r.IntN(4)])
	}
}

func genValue(r *rand.Rand, b *strings.Builder, depth int) {
	ws(r, b)
	k := r.IntN(10)
	if depth > 5 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	case 1, 2:
		genNumber(r, b)
	case 3, 4, 5:
		genString(r, b)
	case 6, 7:
		b.WriteByte('[')
		for j, m := 0, r.IntN(5); j < m; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			genValue(r, b, depth+1)
		}
		ws(r, b)
		b.WriteByte(']')
	default:
		keys := []string{`"a"`, `"b"`, `"id"`, `"ID"`, `"Id"`, `"method"`, `"note"`, `"\u0061"`, `"k"`, `"\u212a"`, `"x/y~z"`, `""`, `"周"`}
		b.WriteByte('{')
		for j, m := 0, r.IntN(4); j < m; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			ws(r, b)
			if r.IntN(3) == 0 {
				b.WriteString(keys[r.IntN(len(keys))])
			} else {
				genString(r, b)
			}
			ws(r, b)
			b.WriteByte(':')
			genValue(r, b, depth+1)
		}
		ws(r, b)
		b.WriteByte('}')
	}
	ws(r, b)
}

func genNumber(r *rand.Rand, b *strings.Builder) {
	digits := func(min int) {
		for j, m := 0, min+r.IntN(4); j < m; j++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(4) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + r.IntN(9)))
		if r.IntN(8) == 0 {
			b.WriteString("2345678901234567890123") // beyond float64 precision
		}
		digits(0)
	}
	if r.IntN(3) == 0 {
		b.WriteByte('.')
		digits(1)
	}
	if r.IntN(4) == 0 {
		b.WriteByte("eE"[r.IntN(2)])
		if r.IntN(2) == 0 {
			b.WriteByte("+-"[r.IntN(2)])
		}
		digits(1)
		if r.IntN(6) == 0 {
			b.WriteString("400")
		}
	}
}

func genString(r *rand.Rand, b *strings.Builder) {
	pieces := []string{"a", "Z", " ", "~", "/", "周五前回电", "é", "😀", "\u2028", "\x7f", "\uFFFD",
		`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0000`, `\u001f`, `\u00E9`, `\u4e2d`, `\ud83d\ude00`, `\uDBFF\uDFFF`}
	b.WriteByte('"')
	for j, m := 0, r.IntN(6); j < m; j++ {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	b.WriteByte('"')
}
