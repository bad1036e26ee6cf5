package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	envelopeDescribe = `{"protocol":"pling.surface/0.1","id":"req_01","method":"describe","input":{"limit":8,"capabilities":"full"}}`
	envelopeInvoke   = `{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","capability":"order.update_note@order","input":{"record":"SO-1002","note":"周五前回电"}}`
)

// mustKind asserts err is a *Error of kind k and returns it.
func mustKind(t *testing.T, err error, k Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error of kind %v", err, err, k)
	}
	if e.Kind != k {
		t.Fatalf("kind = %v, want %v (err: %v)", e.Kind, k, e)
	}
	return e
}

func TestDecodeValid(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"null", `null`, nil},
		{"true", `true`, true},
		{"false", `false`, false},
		{"empty string", `""`, ""},
		{"string", `"abc"`, "abc"},
		{"empty object", `{}`, map[string]any{}},
		{"empty array", `[]`, []any{}},
		{"whitespace all four kinds", " \t\r\n[ 1 ,\t2 ]\n\r\t ", []any{n("1"), n("2")}},
		{"number kept exact 1.50", `1.50`, n("1.50")},
		{"number negative zero", `-0`, n("-0")},
		{"number huge exponent", `1e400`, n("1e400")},
		{"number big integer", `12345678901234567890123`, n("12345678901234567890123")},
		{"number forms", `[0,-1,0.5,1E5,1e+5,1e-5,-0.0e-0]`, []any{n("0"), n("-1"), n("0.5"), n("1E5"), n("1e+5"), n("1e-5"), n("-0.0e-0")}},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"unicode escape", `"\u00e9\u4E2D"`, "é中"},
		{"nul escape", `"\u0000"`, "\x00"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"surrogate pair upper hex", `"\uD834\uDD1E"`, "𝄞"},
		{"raw utf8", `"周五前回电 😀"`, "周五前回电 😀"},
		{"raw U+FFFD is fine", "\"\xef\xbf\xbd\"", "\uFFFD"},
		{"raw DEL and U+2028", "\"\x7f\u2028\"", "\x7f\u2028"},
		{"escape then raw", `"a\nb周c"`, "a\nb周c"},
		{"nested", `{"a":[1,{"b":null}],"c":{"d":"e"}}`, map[string]any{
			"a": []any{n("1"), map[string]any{"b": nil}},
			"c": map[string]any{"d": "e"},
		}},
		{"same key in different objects", `{"a":{"a":1},"b":{"a":2}}`, map[string]any{
			"a": map[string]any{"a": n("1")}, "b": map[string]any{"a": n("2")},
		}},
		{"dotless i and capital dotted I are not EqualFold", `{"i":1,"İ":2,"ı":3}`, map[string]any{
			"i": n("1"), "İ": n("2"), "ı": n("3"),
		}},
		{"describe envelope", envelopeDescribe, map[string]any{
			"protocol": "pling.surface/0.1", "id": "req_01", "method": "describe",
			"input": map[string]any{"limit": n("8"), "capabilities": "full"},
		}},
		{"invoke envelope", envelopeInvoke, map[string]any{
			"protocol": "pling.surface/0.1", "id": "req_02", "method": "invoke",
			"capability": "order.update_note@order",
			"input":      map[string]any{"record": "SO-1002", "note": "周五前回电"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in), Limits{})
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

// errCase is one refused document. path and off are checked unless noPath /
// off < -1 say otherwise.
type errCase struct {
	name string
	in   string
	lim  Limits
	kind Kind
	path string
	off  int64 // -2: do not check
}

func runErrCases(t *testing.T, tests []errCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decode([]byte(tc.in), tc.lim)
			if err == nil {
				t.Fatalf("Decode(%q) = %#v, want error %v", tc.in, v, tc.kind)
			}
			if v != nil {
				t.Errorf("value %#v returned alongside error", v)
			}
			e := mustKind(t, err, tc.kind)
			if e.Path != tc.path {
				t.Errorf("path = %q, want %q", e.Path, tc.path)
			}
			if tc.off != -2 && e.Offset != tc.off {
				t.Errorf("offset = %d, want %d", e.Offset, tc.off)
			}
			if e.Error() == "" || e.Msg == "" {
				t.Errorf("empty message")
			}
		})
	}
}

func TestDecodeSyntax(t *testing.T) {
	const S = KindSyntax
	runErrCases(t, []errCase{
		{"empty input", ``, Limits{}, S, "", 0},
		{"only whitespace", "  \n", Limits{}, S, "", 3},
		{"BOM is not whitespace", "\xef\xbb\xbf{}", Limits{}, S, "", 0},
		{"non-JSON whitespace NBSP", "\u00a0{}", Limits{}, S, "", 0},
		{"vertical tab", "\v1", Limits{}, S, "", 0},
		{"form feed", "\f1", Limits{}, S, "", 0},
		{"trailing data", `{} x`, Limits{}, S, "", 3},
		{"two values", `1 2`, Limits{}, S, "", 2},
		{"trailing comma array", `[1,]`, Limits{}, S, "/1", 3},
		{"trailing comma object", `{"a":1,}`, Limits{}, S, "", 7},
		{"leading comma", `[,1]`, Limits{}, S, "/0", 1},
		{"missing comma", `[1 2]`, Limits{}, S, "", 3},
		{"missing colon", `{"a" 1}`, Limits{}, S, "/a", 5},
		{"unquoted key", `{a:1}`, Limits{}, S, "", 1},
		{"single quotes", `['a']`, Limits{}, S, "/0", 1},
		{"line comment", "[1]//c", Limits{}, S, "", 3},
		{"block comment", "/*c*/[1]", Limits{}, S, "", 0},
		{"NaN", `NaN`, Limits{}, S, "", 0},
		{"Infinity", `[Infinity]`, Limits{}, S, "/0", 1},
		{"negative Infinity", `-Infinity`, Limits{}, S, "", 1},
		{"leading zero", `01`, Limits{}, S, "", 1},
		{"negative leading zero", `-01`, Limits{}, S, "", 2},
		{"leading plus", `+1`, Limits{}, S, "", 0},
		{"bare minus", `-`, Limits{}, S, "", 1},
		{"bare dot", `.5`, Limits{}, S, "", 0},
		{"trailing dot", `1.`, Limits{}, S, "", 2},
		{"dot exponent", `1.e5`, Limits{}, S, "", 2},
		{"empty exponent", `1e`, Limits{}, S, "", 2},
		{"signed empty exponent", `1e+`, Limits{}, S, "", 3},
		{"hex number", `0x10`, Limits{}, S, "", 1},
		{"number then letter", `[1x]`, Limits{}, S, "", 2},
		{"bad literal", `tru`, Limits{}, S, "", 0},
		{"literal case", `True`, Limits{}, S, "", 0},
		{"literal with suffix", `nullx`, Limits{}, S, "", 4},
		{"unterminated string", `"abc`, Limits{}, S, "", 4},
		{"unterminated array", `[1`, Limits{}, S, "", 2},
		{"unterminated object", `{"a":1`, Limits{}, S, "", 6},
		{"unterminated after key", `{"a"`, Limits{}, S, "/a", 4},
		{"unterminated after colon", `{"a":`, Limits{}, S, "/a", 5},
		{"mismatched close", `[1}`, Limits{}, S, "", 2},
		{"mismatched close object", `{"a":1]`, Limits{}, S, "", 6},
		{"stray close", `]`, Limits{}, S, "", 0},
		{"raw newline in string", "\"a\nb\"", Limits{}, S, "", 2},
		{"raw tab in string", "[\"a\tb\"]", Limits{}, S, "/0", 3},
		{"raw NUL in key", "{\"a\x00\":1}", Limits{}, S, "", 3},
		{"control char after escape", "\"\\n\x01\"", Limits{}, S, "", 3},
		{"bad escape", `"\x"`, Limits{}, S, "", 1},
		{"escaped single quote", `"\'"`, Limits{}, S, "", 1},
		{"short unicode escape", `"\u12"`, Limits{}, S, "", 1},
		{"non-hex unicode escape", `"\u12g4"`, Limits{}, S, "", 1},
		{"truncated escape", `"\`, Limits{}, S, "", 2},
		{"lone high surrogate", `"\ud800"`, Limits{}, S, "", 1},
		{"lone high surrogate then text", `"\ud800abc"`, Limits{}, S, "", 1},
		{"high surrogate then non-low escape", `"\ud800\u0041"`, Limits{}, S, "", 1},
		{"high surrogate then high", `"\ud800\ud800"`, Limits{}, S, "", 1},
		{"high surrogate then other escape", `"\ud800\n"`, Limits{}, S, "", 1},
		{"lone low surrogate", `"\udc00"`, Limits{}, S, "", 1},
		{"reversed pair", `"\ude00\ud83d"`, Limits{}, S, "", 1},
		{"lone surrogate in key", `{"\udfff":1}`, Limits{}, S, "", 2},
		{"lone surrogate in nested value", `{"a":["x","\ud800"]}`, Limits{}, S, "/a/1", 11},
		{"invalid UTF-8 byte", "\"\xff\"", Limits{}, S, "", 1},
		{"invalid UTF-8 continuation", "\"a\x80\"", Limits{}, S, "", 2},
		{"overlong encoding", "\"\xc0\xaf\"", Limits{}, S, "", 1},
		{"encoded surrogate", "\"\xed\xa0\x80\"", Limits{}, S, "", 1},
		{"truncated multibyte", "\"\xe4\xb8\"", Limits{}, S, "", 1},
		{"beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", Limits{}, S, "", 1},
		{"invalid UTF-8 after escape", "\"\\n\xff\"", Limits{}, S, "", 3},
		{"invalid UTF-8 in key", "{\"\xff\":1}", Limits{}, S, "", 2},
		{"invalid UTF-8 outside string", "[\xff]", Limits{}, S, "/0", 1},
	})
}

func TestDecodeKeys(t *testing.T) {
	runErrCases(t, []errCase{
		{"duplicate", `{"a":1,"a":2}`, Limits{}, KindDuplicateKey, "/a", 7},
		{"duplicate with different values", `{"method":"describe","method":"invoke"}`, Limits{}, KindDuplicateKey, "/method", 21},
		{"duplicate via escape", `{"a":1,"\u0061":2}`, Limits{}, KindDuplicateKey, "/a", 7},
		{"duplicate nested", `{"x":{"input":{"n":1,"n":2}}}`, Limits{}, KindDuplicateKey, "/x/input/n", 21},
		{"duplicate empty key", `{"":1,"":2}`, Limits{}, KindDuplicateKey, "/", 6},
		{"duplicate key path escaping", `{"a/b~c":1,"a/b~c":2}`, Limits{}, KindDuplicateKey, "/a~1b~0c", 11},
		{"case variant id ID", `{"id":"a","ID":"b"}`, Limits{}, KindCaseVariantKey, "/ID", 10},
		{"case variant method METHOD", `{"method":"describe","METHOD":"invoke"}`, Limits{}, KindCaseVariantKey, "/METHOD", 21},
		{"case variant mixed", `{"Protocol":1,"proTOCOL":2}`, Limits{}, KindCaseVariantKey, "/proTOCOL", 14},
		{"case variant Kelvin sign", `{"k":1,"\u212a":2}`, Limits{}, KindCaseVariantKey, "/\u212a", 7},
		{"case variant long s", `{"s":1,"ſ":2}`, Limits{}, KindCaseVariantKey, "/ſ", 7},
		{"case variant greek", `{"σ":1,"ς":2}`, Limits{}, KindCaseVariantKey, "/ς", 8},
		{"case variant nested in array", `[{"a":1},{"b":1,"B":2}]`, Limits{}, KindCaseVariantKey, "/1/B", 16},
	})
	t.Run("key lists of nested objects stay separate", func(t *testing.T) {
		for _, inner := range []string{`{"A":1,"B":2}`, "{" + manyKeys(smallObject+5) + "}"} {
			ok := `{"a":1,"inner":` + inner + `,"b":{"x":1,"X0":{"k0":1}},"c":2}`
			if _, err := Decode([]byte(ok), Limits{}); err != nil {
				t.Fatalf("%s: %v", ok, err)
			}
			_, err := Decode([]byte(`{"a":1,"inner":`+inner+`,"b":{"x":1},"A":2}`), Limits{})
			if e := mustKind(t, err, KindCaseVariantKey); e.Path != "/A" {
				t.Fatalf("path %q", e.Path)
			}
			_, err = Decode([]byte(`{"a":1,"inner":`+inner+`,"b":{"x":1},"inner":2}`), Limits{})
			if e := mustKind(t, err, KindDuplicateKey); e.Path != "/inner" {
				t.Fatalf("path %q", e.Path)
			}
			_, err = Decode([]byte(`{"a":1,"inner":`+inner+`,"b":{"x":1,"X":2}}`), Limits{})
			if e := mustKind(t, err, KindCaseVariantKey); e.Path != "/b/X" {
				t.Fatalf("path %q", e.Path)
			}
		}
	})
	t.Run("large object duplicate uses fold set", func(t *testing.T) {
		for _, n := range []int{smallObject - 1, smallObject, smallObject + 1, 200} {
			base := manyKeys(n)
			_, err := Decode([]byte("{"+base+"}"), Limits{})
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			_, err = Decode([]byte("{"+base+`,"k0":0}`), Limits{})
			if e := mustKind(t, err, KindDuplicateKey); e.Path != "/k0" {
				t.Fatalf("n=%d: path %q", n, e.Path)
			}
			_, err = Decode([]byte("{"+base+`,"K0":0}`), Limits{})
			if e := mustKind(t, err, KindCaseVariantKey); e.Path != "/K0" {
				t.Fatalf("n=%d: path %q", n, e.Path)
			}
			_, err = Decode([]byte("{"+base+`,"k`+itoa(n-1)+`":0}`), Limits{})
			mustKind(t, err, KindDuplicateKey)
			_, err = Decode([]byte("{"+base+`,"\u212a`+itoa(n-1)+`":0}`), Limits{})
			mustKind(t, err, KindCaseVariantKey)
			_, err = Decode([]byte("{"+base+`,"İ":0,"i":1}`), Limits{})
			if err != nil {
				t.Fatalf("n=%d: İ and i are not EqualFold: %v", n, err)
			}
		}
	})
}

func itoa(i int) string { return json.Number(strings.TrimSpace(string(mustMarshal(i)))).String() }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// manyKeys returns `"k0":0,"k1":1,...` with n members.
func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(i))
	}
	return b.String()
}

// nested returns depth arrays (open "[") or objects (open `{"a":`), the
// innermost one empty.
func nested(depth int, open, close string) string {
	if depth == 0 {
		return ""
	}
	inner := "[]"
	if open != "[" {
		inner = "{}"
	}
	return strings.Repeat(open, depth-1) + inner + strings.Repeat(close, depth-1)
}

func TestDecodeLimits(t *testing.T) {
	type tc struct {
		name string
		in   string
		lim  Limits
		kind Kind // 0: must pass
		path string
		off  int64
	}
	tests := []tc{
		// MaxBytes: exact length passes, one byte over fails, and is checked
		// before parsing (garbage that is too large is TooLarge, not Syntax).
		{"bytes at limit", `[1,2]`, Limits{MaxBytes: 5}, 0, "", 0},
		{"bytes one over", `[1,2] `, Limits{MaxBytes: 5}, KindTooLarge, "", 5},
		{"bytes checked before syntax", `!!!!!!`, Limits{MaxBytes: 5}, KindTooLarge, "", 5},
		{"bytes negative refuses everything", ``, Limits{MaxBytes: -1}, KindTooLarge, "", 0},

		{"depth scalar with depth 1", `1`, Limits{MaxDepth: 1}, 0, "", 0},
		{"depth array at limit", nested(3, "[", "]"), Limits{MaxDepth: 3}, 0, "", 0},
		{"depth array one over", nested(4, "[", "]"), Limits{MaxDepth: 3}, KindTooDeep, "/0/0/0", 3},
		{"depth object at limit", `{"a":{"b":{}}}`, Limits{MaxDepth: 3}, 0, "", 0},
		{"depth object one over", `{"a":{"b":{"c":{}}}}`, Limits{MaxDepth: 3}, KindTooDeep, "/a/b/c", 15},
		{"depth empty containers count", `[[[]]]`, Limits{MaxDepth: 2}, KindTooDeep, "/0/0", 2},
		{"depth stops before unterminated tail", "[[[[[[[[", Limits{MaxDepth: 2}, KindTooDeep, "/0/0", 2},
		{"depth negative refuses containers", `[]`, Limits{MaxDepth: -1}, KindTooDeep, "", 0},
		{"depth negative allows scalars", `"x"`, Limits{MaxDepth: -1}, 0, "", 0},

		{"string at limit", `"abcd"`, Limits{MaxString: 4}, 0, "", 0},
		{"string one over", `"abcde"`, Limits{MaxString: 4}, KindStringTooLong, "", 5},
		{"string stops before syntax error", "\"abcde\x01", Limits{MaxString: 4}, KindStringTooLong, "", 5},
		{"string multibyte at limit", `"周五"`, Limits{MaxString: 6}, 0, "", 0},
		{"string multibyte one over", `"周五a"`, Limits{MaxString: 6}, KindStringTooLong, "", 7},
		{"string multibyte split by limit", `"周五"`, Limits{MaxString: 5}, KindStringTooLong, "", 4},
		{"string escaped counts decoded bytes at limit", `"\u0041\u0042\n\ud83d\ude00"`, Limits{MaxString: 7}, 0, "", 0},
		{"string escaped counts decoded bytes one over", `"\u0041\u0042\n\ud83d\ude00x"`, Limits{MaxString: 7}, KindStringTooLong, "", 27},
		{"string escape crossing limit", `"abc\u00e9"`, Limits{MaxString: 4}, KindStringTooLong, "", 4},
		{"string raw after escape one over", `"\nabcd"`, Limits{MaxString: 4}, KindStringTooLong, "", 6},
		{"string value path", `{"input":{"note":"abcdef"}}`, Limits{MaxString: 5}, KindStringTooLong, "/input/note", 23},
		{"key at limit", `{"abcd":1}`, Limits{MaxString: 4}, 0, "", 0},
		{"key one over reports object path", `{"x":{"abcde":1}}`, Limits{MaxString: 4}, KindStringTooLong, "/x", 11},
		{"string empty with negative", `""`, Limits{MaxString: -1}, KindStringTooLong, "", 0},

		{"array at limit", `[1,2,3]`, Limits{MaxArray: 3}, 0, "", 0},
		{"array one over", `[1,2,3,4]`, Limits{MaxArray: 3}, KindArrayTooLong, "", 7},
		{"array one over stops before garbage", `[1,2,3, !!!`, Limits{MaxArray: 3}, KindArrayTooLong, "", 8},
		{"array nested path", `{"a":[[],[1,2]]}`, Limits{MaxArray: 1}, KindArrayTooLong, "/a", 9},
		{"array inner path", `{"a":[[1,2]]}`, Limits{MaxArray: 1}, KindArrayTooLong, "/a/0", 9},
		{"array empty with negative", `[]`, Limits{MaxArray: -1}, KindArrayTooLong, "", 0},

		{"members at limit", `{"a":1,"b":2}`, Limits{MaxMembers: 2}, 0, "", 0},
		{"members one over", `{"a":1,"b":2,"c":3}`, Limits{MaxMembers: 2}, KindTooManyMembers, "", 13},
		{"members nested path", `{"in":{"a":1,"b":2}}`, Limits{MaxMembers: 1}, KindTooManyMembers, "/in", 13},
		{"members empty with negative", `{}`, Limits{MaxMembers: -1}, KindTooManyMembers, "", 0},

		{"all limits at once pass", envelopeInvoke, Limits{MaxBytes: len(envelopeInvoke), MaxDepth: 2, MaxString: len("order.update_note@order"), MaxArray: 1, MaxMembers: 5}, 0, "", 0},
		{"envelope string one short", envelopeInvoke, Limits{MaxString: len("order.update_note@order") - 1}, KindStringTooLong, "/capability", -2},
		{"envelope depth one short", envelopeInvoke, Limits{MaxDepth: 1}, KindTooDeep, "/input", -2},
		{"envelope members one short", envelopeInvoke, Limits{MaxMembers: 4}, KindTooManyMembers, "", -2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decode([]byte(tc.in), tc.lim)
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("Decode(%q, %+v): %v", tc.in, tc.lim, err)
				}
				// A document within limits also passes CheckValue with the same limits.
				if _, err := CheckValue(v, tc.lim); err != nil {
					t.Fatalf("CheckValue: %v", err)
				}
				return
			}
			e := mustKind(t, err, tc.kind)
			if e.Path != tc.path {
				t.Errorf("path = %q, want %q", e.Path, tc.path)
			}
			if tc.off != -2 && e.Offset != tc.off {
				t.Errorf("offset = %d, want %d", e.Offset, tc.off)
			}
		})
	}
}

func TestDecodeHardDepthCap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int
		lim   int
		ok    bool
	}{
		{"zero limit at cap", hardMaxDepth, 0, true},
		{"zero limit over cap", hardMaxDepth + 1, 0, false},
		{"large limit clamped", hardMaxDepth + 1, 1 << 30, false},
		{"large limit at cap", hardMaxDepth, 1 << 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, oc := range [][2]string{{"[", "]"}, {`{"a":`, "}"}} {
				in := []byte(nested(tc.depth, oc[0], oc[1]))
				_, err := Decode(in, Limits{MaxDepth: tc.lim})
				if tc.ok && err != nil {
					t.Fatalf("%s: %v", oc[0], err)
				}
				if !tc.ok {
					mustKind(t, err, KindTooDeep)
				}
				// encoding/json has the same cap, so there is no differential here.
				if json.Valid(in) != tc.ok {
					t.Fatalf("encoding/json disagrees at depth %d", tc.depth)
				}
			}
		})
	}
	t.Run("hostile brackets stop at the limit", func(t *testing.T) {
		in := []byte(strings.Repeat("[", 1<<20))
		_, err := Decode(in, Limits{MaxDepth: 64})
		if e := mustKind(t, err, KindTooDeep); e.Offset != 64 {
			t.Fatalf("offset %d, want 64", e.Offset)
		}
		_, err = Decode(in, Limits{})
		if e := mustKind(t, err, KindTooDeep); e.Offset != hardMaxDepth {
			t.Fatalf("offset %d, want %d", e.Offset, hardMaxDepth)
		}
	})
}

func TestDecodeDoesNotAliasInput(t *testing.T) {
	in := []byte(`{"k":"value","e":"a\nb","n":123}`)
	v, err := Decode(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x'
	}
	want := map[string]any{"k": "value", "e": "a\nb", "n": json.Number("123")}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("result changed with input: %#v", v)
	}
}

func TestDecodeScratchReuse(t *testing.T) {
	// Escaped strings share a scratch buffer; results must not alias it.
	v, err := Decode([]byte(`["a\nbbbbbbbb","c\td","\u00e9"]`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"a\nbbbbbbbb", "c\td", "é"}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v", v)
	}
}

func TestKindAndError(t *testing.T) {
	names := map[Kind]string{
		KindSyntax:           "syntax",
		KindTooLarge:         "too_large",
		KindTooDeep:          "too_deep",
		KindStringTooLong:    "string_too_long",
		KindArrayTooLong:     "array_too_long",
		KindTooManyMembers:   "too_many_members",
		KindDuplicateKey:     "duplicate_key",
		KindCaseVariantKey:   "case_variant_key",
		KindUnsupportedValue: "unsupported_value",
		0:                    "Kind(0)",
		200:                  "Kind(200)",
	}
	for k, want := range names {
		t.Run(want, func(t *testing.T) {
			if got := k.String(); got != want {
				t.Fatalf("Kind(%d).String() = %q, want %q", k, got, want)
			}
		})
	}
	t.Run("Error format", func(t *testing.T) {
		e := &Error{Kind: KindDuplicateKey, Offset: 7, Path: "/a\n", Msg: "duplicate key"}
		if got, want := e.Error(), `strictjson: duplicate_key at "/a\n" (offset 7): duplicate key`; got != want {
			t.Fatalf("got %q want %q", got, want)
		}
		e = &Error{Kind: KindUnsupportedValue, Offset: -1, Msg: "x"}
		if got, want := e.Error(), `strictjson: unsupported_value: x`; got != want {
			t.Fatalf("got %q want %q", got, want)
		}
		var nilErr *Error
		if nilErr.Error() == "" {
			t.Fatal("nil *Error must not panic")
		}
	})
	t.Run("Error does not echo input", func(t *testing.T) {
		_, err := Decode([]byte(`{"a":"SECRET`+"\x01"+`"}`), Limits{})
		if strings.Contains(err.Error(), "SECRET") {
			t.Fatalf("message echoes input: %v", err)
		}
	})
}

func TestFoldKeyNoAllocForLowercaseASCII(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = foldKey("capability_id") }); n != 0 {
		t.Fatalf("foldKey allocated %v times", n)
	}
	if foldKey("Method") != "method" || foldKey("\u212a") != "k" || foldKey("ſ") != "s" {
		t.Fatal("unexpected fold keys")
	}
}

func TestFoldKeyMatchesEqualFold(t *testing.T) {
	// Every rune shares its fold key with every member of its SimpleFold
	// orbit, and with nothing that EqualFold separates from it. Together
	// with EqualFold being per-rune, this makes fold keys exact.
	for r := rune(0); r <= 0x10FFFF; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		fr := foldRune(r)
		if !strings.EqualFold(string(r), string(fr)) {
			t.Fatalf("EqualFold(%U, fold %U) = false", r, fr)
		}
		if foldRune(fr) != fr {
			t.Fatalf("fold of %U not idempotent", r)
		}
		// Candidates most likely to break a naive fold: case mappings.
		for _, o := range []rune{r + 1, r - 1, toUpper(r), toLower(r), toTitle(r)} {
			if o < 0 || o > 0x10FFFF || (0xD800 <= o && o <= 0xDFFF) {
				continue
			}
			if strings.EqualFold(string(r), string(o)) != (foldRune(o) == fr) {
				t.Fatalf("disagree on %U %U", r, o)
			}
		}
	}
	for _, p := range [][2]string{
		{"id", "ID"}, {"İ", "i"}, {"ı", "I"}, {"ß", "ẞ"}, {"ß", "ss"}, {"ǅ", "ǆ"}, {"ǅ", "Ǆ"},
		{"\u212a", "k"}, {"ſ", "S"}, {"θ", "ϑ"}, {"Ω", "\u2126"}, {"aé", "AÉ"}, {"ab", "a"},
	} {
		if strings.EqualFold(p[0], p[1]) != (foldKey(p[0]) == foldKey(p[1])) {
			t.Errorf("foldKey disagrees with EqualFold on %q %q", p[0], p[1])
		}
	}
}

func TestTopString(t *testing.T) {
	tests := []struct {
		name, doc string
		lim       Limits
		want      string
		ok        bool
	}{
		{"plain", `{"id":"a"}`, Limits{}, "a", true},
		{"escaped", `{"id":"\u0061\u00e9"}`, Limits{}, "aé", true},
		{"case variant elsewhere", `{"id":"a","method":1,"Method":2}`, Limits{}, "a", true},
		{"duplicate elsewhere", `{"m":1,"id":"a","m":2}`, Limits{}, "a", true},
		{"conflicts in a large object", `{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"B6":6,"b6":7,"id":"a"}`, Limits{}, "a", true},
		{"id in a large object beside a variant", `{"a0":0,"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"b0":0,"b1":1,"b2":2,"b3":3,"b4":4,"b5":5,"b6":6,"id":"a","ID":"b"}`, Limits{}, "", false},
		{"conflicts nested", `{"x":{"id":1,"ID":2},"id":"a"}`, Limits{}, "a", true},
		{"other bounds ignored", `{"id":"a","s":"` + strings.Repeat("x", 100) + `"}`, Limits{MaxString: 10, MaxDepth: 1, MaxMembers: 1}, "a", true},
		{"size bound kept", `{"id":"a"}`, Limits{MaxBytes: 5}, "", false},
		{"duplicate id", `{"id":"a","id":"a"}`, Limits{}, "", false},
		{"case variant id", `{"id":"a","ID":"b"}`, Limits{}, "", false},
		{"case variant id first", `{"iD":1,"id":"a"}`, Limits{}, "", false},
		{"escaped case variant id", `{"id":"a","\u0049d":"b"}`, Limits{}, "", false},
		{"no exact id", `{"Id":"a"}`, Limits{}, "", false},
		{"id not a string", `{"id":1}`, Limits{}, "", false},
		{"not an object", `["id","a"]`, Limits{}, "", false},
		{"syntax error later", `{"id":"a","x":tru}`, Limits{}, "", false},
		{"trailing data", `{"id":"a"} 1`, Limits{}, "", false},
		{"lone surrogate elsewhere", `{"id":"a","x":"\ud800"}`, Limits{}, "", false},
		{"invalid UTF-8 elsewhere", "{\"id\":\"a\",\"x\":\"\xff\"}", Limits{}, "", false},
		{"nesting over the hard cap", `{"id":"a","x":` + strings.Repeat("[", hardMaxDepth) + strings.Repeat("]", hardMaxDepth) + `}`, Limits{}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TopString([]byte(tc.doc), tc.lim, "id")
			if got != tc.want || ok != tc.ok {
				t.Errorf("TopString = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestDecodeAfterFailureStartsClean checks that a decode that fails with
// objects open (their keys recorded, frames on the stack) leaves nothing
// for the next one: the parse stack and key list are kept between calls.
func TestDecodeAfterFailureStartsClean(t *testing.T) {
	failing := []string{
		`{"a":{"b":{"c":1,"d":`,      // ends inside nested objects
		`{"a":1,"b":{"x":1,"x":2}}`,  // duplicate key two levels down
		`{"id":1,"ID":2}`,            // case variant at the top
		`[{"k":[{"k":{"k":` + "\x01", // control character, deep
		strings.Repeat(`{"k":`, 200), // a stack larger than is kept
	}
	for _, bad := range failing {
		if _, err := Decode([]byte(bad), Limits{}); err == nil {
			t.Fatalf("%q: want an error", bad)
		}
		// Same key names as the failed input: a key list left over would
		// report them as duplicates or case variants.
		v, err := Decode([]byte(`{"a":{"b":{"c":1,"d":2}},"b":{"x":1},"id":1,"k":[{"k":{}}]}`), Limits{})
		if err != nil {
			t.Fatalf("after %q: %v", bad, err)
		}
		m := v.(map[string]any)
		if len(m) != 4 || len(m["a"].(map[string]any)) != 1 || len(m["b"].(map[string]any)) != 1 {
			t.Fatalf("after %q: decoded %v", bad, v)
		}
	}
}

// TestDecodeWords checks that a decode with words returns the tree Decode
// returns, under every limit, whether or not a string is one of the words
// or is written with escapes.
func TestDecodeWords(t *testing.T) {
	words := NewWords("protocol", "id", "pling.surface/0.1", "invoke", "")
	inputs := []string{
		`{"protocol":"pling.surface/0.1","id":"x","method":"invoke"}`,
		`{"prot\u006fcol":"pling.surface\/0.1","id":"invoke"}`, // escaped: read as usual
		`{"protocol":"pling.surface/0.1x","id":"protocolx"}`,   // a word's prefix
		`{"id":"","":"id"}`,
		`["invoke","invoke",{"id":"id"}]`,
		`{"id":1,"id":2}`,                    // duplicate word key
		`{"id":1,"ID":2}`,                    // case variant of a word
		`{"protocol":"pling.surface/0.1`,     // unterminated at a word
		`{"protocol":"pling.surface/0.1"`,    // unterminated object
		"{\"id\":\"inv\x01oke\"}",            // control character
		`{"protocol":"pling.surface/0.1"} x`, // trailing data
	}
	limits := []Limits{{}, {MaxString: 5}, {MaxString: 16}, {MaxMembers: 1}, {MaxBytes: 20}}
	for _, in := range inputs {
		for _, lim := range limits {
			want, werr := Decode([]byte(in), lim)
			got, gerr := DecodeWords([]byte(in), lim, words)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%q %+v: Decode error %v, DecodeWords error %v", in, lim, werr, gerr)
			}
			if werr != nil {
				if werr.Error() != gerr.Error() {
					t.Fatalf("%q %+v: errors differ: %v / %v", in, lim, werr, gerr)
				}
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q %+v: trees differ: %v / %v", in, lim, got, want)
			}
		}
	}
}
