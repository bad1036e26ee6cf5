package strictjson

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestCheckValueNormalises(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"bool", true, true},
		{"string", "周五", "周五"},
		{"json.Number kept", n("1.50"), n("1.50")},
		{"int", 42, n("42")},
		{"int8", int8(-8), n("-8")},
		{"int16", int16(1600), n("1600")},
		{"int32", int32(-32), n("-32")},
		{"int64 min", int64(math.MinInt64), n("-9223372036854775808")},
		{"uint", uint(7), n("7")},
		{"uint8", uint8(255), n("255")},
		{"uint16", uint16(65535), n("65535")},
		{"uint32", uint32(1 << 31), n("2147483648")},
		{"uint64 max", uint64(math.MaxUint64), n("18446744073709551615")},
		{"float64 integer", 8.0, n("8")},
		{"float64 fraction", 0.1, n("0.1")},
		{"float64 shortest", 1.0 / 3, n("0.3333333333333333")},
		{"float64 large", 1e21, n("1e+21")},
		{"float64 just below e", 1e20, n("100000000000000000000")},
		{"float64 small", 1e-7, n("1e-7")},
		{"float64 negative zero", math.Copysign(0, -1), n("-0")},
		{"float64 max", math.MaxFloat64, n("1.7976931348623157e+308")},
		{"float32", float32(0.1), n("0.1")},
		{"float32 small", float32(1e-7), n("1e-7")},
		{"nil map is null", map[string]any(nil), nil},
		{"nil slice is null", []any(nil), nil},
		{"tree", map[string]any{"a": []any{1, 2.5, "x", nil, false}, "b": map[string]any{}},
			map[string]any{"a": []any{n("1"), n("2.5"), "x", nil, false}, "b": map[string]any{}}},
		{"empty slice", []any{}, []any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckValue(tc.in, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
			// The normalised tree encodes exactly as encoding/json encodes the input.
			a, errA := json.Marshal(tc.in)
			b, errB := json.Marshal(got)
			if errA != nil || errB != nil || string(a) != string(b) {
				t.Fatalf("encoding differs: %s (%v) vs %s (%v)", a, errA, b, errB)
			}
		})
	}
}

func TestCheckValueFloatsMatchEncodingJSON(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, 123456789, 1e-6, 9.99999e-7, 1e-300, 5e-324, 1e20, 999999999999999999999.0,
		1e21, 1.5e300, math.Pi, -math.E, 0.000001234, 100, 1e6, 12345678901234567890}
	for _, f := range vals {
		for _, v := range []any{f, float32(f)} {
			if fv, ok := v.(float32); ok && (math.IsInf(float64(fv), 0)) {
				continue
			}
			got, err := CheckValue(v, Limits{})
			if err != nil {
				t.Fatalf("%v: %v", v, err)
			}
			want, _ := json.Marshal(v)
			if string(got.(json.Number)) != string(want) {
				t.Errorf("%T %v: got %s want %s", v, v, got, want)
			}
		}
	}
}

type point struct{ X int }

func TestCheckValueErrors(t *testing.T) {
	ch := make(chan int)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cyclicSlice := make([]any, 1)
	cyclicSlice[0] = cyclicSlice
	tests := []struct {
		name string
		in   any
		lim  Limits
		kind Kind
		path string
	}{
		{"NaN", math.NaN(), Limits{}, KindUnsupportedValue, ""},
		{"+Inf", math.Inf(1), Limits{}, KindUnsupportedValue, ""},
		{"-Inf float32 nested", map[string]any{"a": []any{float32(math.Inf(-1))}}, Limits{}, KindUnsupportedValue, "/a/0"},
		{"struct", point{1}, Limits{}, KindUnsupportedValue, ""},
		{"pointer", &point{1}, Limits{}, KindUnsupportedValue, ""},
		{"typed nil pointer", (*point)(nil), Limits{}, KindUnsupportedValue, ""},
		{"func", func() {}, Limits{}, KindUnsupportedValue, ""},
		{"chan", ch, Limits{}, KindUnsupportedValue, ""},
		{"map with int keys", map[int]any{1: 1}, Limits{}, KindUnsupportedValue, ""},
		{"map of strings (not map[string]any)", map[string]string{"a": "b"}, Limits{}, KindUnsupportedValue, ""},
		{"slice of strings (not []any)", []string{"a"}, Limits{}, KindUnsupportedValue, ""},
		{"uintptr", uintptr(1), Limits{}, KindUnsupportedValue, ""},
		{"complex", complex(1, 2), Limits{}, KindUnsupportedValue, ""},
		{"nested unsupported path", map[string]any{"in/put": map[string]any{"x~": []any{1, struct{}{}}}}, Limits{}, KindUnsupportedValue, "/in~1put/x~0/1"},
		{"invalid UTF-8 string", "a\xffb", Limits{}, KindSyntax, ""},
		{"invalid UTF-8 key", map[string]any{"a\xff": 1}, Limits{}, KindSyntax, ""},
		{"encoded surrogate string", []any{"\xed\xa0\x80"}, Limits{}, KindSyntax, "/0"},
		{"bad json.Number", json.Number("01"), Limits{}, KindSyntax, ""},
		{"empty json.Number", json.Number(""), Limits{}, KindSyntax, ""},
		{"json.Number with space", json.Number("1 "), Limits{}, KindSyntax, ""},
		{"json.Number NaN", json.Number("NaN"), Limits{}, KindSyntax, ""},
		{"case variant", map[string]any{"id": 1, "ID": 2}, Limits{}, KindCaseVariantKey, "/id"},
		{"case variant Kelvin", map[string]any{"k": 1, "\u212a": 2}, Limits{}, KindCaseVariantKey, "/\u212a"},
		{"case variant nested", []any{map[string]any{"Method": 1, "method": 2}}, Limits{}, KindCaseVariantKey, "/0/method"},
		{"case variant large object", bigMapWith("ID"), Limits{}, KindCaseVariantKey, "/id"},
		{"cyclic map stopped by depth cap", cyclic, Limits{}, KindTooDeep, strings.Repeat("/self", hardMaxDepth)},
		{"cyclic slice stopped by depth", cyclicSlice, Limits{MaxDepth: 3}, KindTooDeep, "/0/0/0"},

		{"depth one over", []any{[]any{[]any{}}}, Limits{MaxDepth: 2}, KindTooDeep, "/0/0"},
		{"string one over", map[string]any{"note": "abcde"}, Limits{MaxString: 4}, KindStringTooLong, "/note"},
		{"key one over", map[string]any{"x": map[string]any{"abcde": 1}}, Limits{MaxString: 4}, KindStringTooLong, "/x"},
		{"array one over", map[string]any{"a": []any{1, 2, 3, 4}}, Limits{MaxArray: 3}, KindArrayTooLong, "/a"},
		{"members one over", map[string]any{"a": 1, "b": 2, "c": 3}, Limits{MaxMembers: 2}, KindTooManyMembers, ""},
		{"bytes one over", []any{"abc"}, Limits{MaxBytes: 6}, KindTooLarge, "/0"},
		{"bytes counts escapes", "\n\x01", Limits{MaxBytes: 9}, KindTooLarge, ""},
		{"bytes huge array refused before walking", make([]any, 1<<20), Limits{MaxBytes: 1 << 10}, KindTooLarge, ""},
		{"negative bytes", nil, Limits{MaxBytes: -1}, KindTooLarge, ""},
		{"negative string", "", Limits{MaxString: -1}, KindStringTooLong, ""},
		{"negative array", []any{}, Limits{MaxArray: -1}, KindArrayTooLong, ""},
		{"negative members", map[string]any{}, Limits{MaxMembers: -1}, KindTooManyMembers, ""},
		{"negative depth", []any{}, Limits{MaxDepth: -1}, KindTooDeep, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := CheckValue(tc.in, tc.lim)
			if v != nil {
				t.Errorf("value %#v returned alongside error", v)
			}
			e := mustKind(t, err, tc.kind)
			if e.Path != tc.path {
				t.Errorf("path = %q, want %q", e.Path, tc.path)
			}
			if e.Offset != -1 {
				t.Errorf("offset = %d, want -1", e.Offset)
			}
		})
	}
}

// bigMapWith returns a map of more than smallObject members, k0..k19, plus extra.
func bigMapWith(extra string) map[string]any {
	m := map[string]any{extra: 0}
	for i := 0; i < smallObject+4; i++ {
		m["k"+itoa(i)] = i
	}
	m["id"] = 1 // ID < id < k0 in byte order: "id" is the second of the pair
	return m
}

func TestCheckValueLimitBoundaries(t *testing.T) {
	tree := map[string]any{"ab": []any{"xyz", 1, true}, "c": nil}
	enc, _ := json.Marshal(tree) // {"ab":["xyz",1,true],"c":null}
	tests := []struct {
		name string
		lim  Limits
		ok   bool
	}{
		{"bytes at limit", Limits{MaxBytes: len(enc)}, true},
		{"bytes one under", Limits{MaxBytes: len(enc) - 1}, false},
		{"depth at limit", Limits{MaxDepth: 2}, true},
		{"depth one under", Limits{MaxDepth: 1}, false},
		{"string at limit", Limits{MaxString: 3}, true},
		{"string one under", Limits{MaxString: 2}, false},
		{"array at limit", Limits{MaxArray: 3}, true},
		{"array one under", Limits{MaxArray: 2}, false},
		{"members at limit", Limits{MaxMembers: 2}, true},
		{"members one under", Limits{MaxMembers: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckValue(tree, tc.lim)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			// Decode of the compact encoding agrees with CheckValue.
			_, derr := Decode(enc, tc.lim)
			if (derr == nil) != tc.ok {
				t.Fatalf("Decode err = %v, want ok=%v", derr, tc.ok)
			}
			if err != nil && derr.(*Error).Kind != err.(*Error).Kind {
				t.Fatalf("kinds differ: CheckValue %v, Decode %v", err, derr)
			}
		})
	}
}

func TestCheckValueDoesNotMutate(t *testing.T) {
	in := map[string]any{"a": []any{1, map[string]any{"b": 2.5}}, "c": json.Number("3")}
	before, _ := json.Marshal(in)
	inner := in["a"].([]any)
	out, err := CheckValue(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Fatalf("input changed: %s -> %s", before, after)
	}
	if _, ok := inner[0].(int); !ok {
		t.Fatalf("input element replaced: %T", inner[0])
	}
	out.(map[string]any)["a"].([]any)[0] = "changed"
	if inner[0] != 1 {
		t.Fatal("output aliases input slice")
	}
}

func TestCheckValueDeterministicError(t *testing.T) {
	// Several faults: members are visited in sorted order, so the reported
	// one never depends on map iteration order.
	in := map[string]any{"b": func() {}, "a": strings.Repeat("x", 10), "c": math.NaN()}
	for i := 0; i < 50; i++ {
		_, err := CheckValue(in, Limits{MaxString: 5})
		if e := mustKind(t, err, KindStringTooLong); e.Path != "/a" {
			t.Fatalf("path %q", e.Path)
		}
	}
}

// TestCheckValueOfDecode is the property CheckValue(Decode(x)) == Decode(x)
// under the same limits, over the table inputs and generated documents.
func TestCheckValueOfDecode(t *testing.T) {
	docs := []string{envelopeDescribe, envelopeInvoke, `[1.50,-0,1e400,"\u0000\n\"",{"":{}}]`, `"x"`, `null`}
	docs = append(docs, randomDocs(500, 1)...)
	for _, d := range docs {
		for _, lim := range []Limits{{}, {MaxBytes: len(d), MaxDepth: 4, MaxString: 16, MaxArray: 6, MaxMembers: 6}} {
			v, err := Decode([]byte(d), lim)
			if err != nil {
				continue
			}
			got, err := CheckValue(v, lim)
			if err != nil {
				t.Fatalf("CheckValue(Decode(%s)) with %+v: %v", d, lim, err)
			}
			if !reflect.DeepEqual(got, v) {
				t.Fatalf("CheckValue changed tree of %s", d)
			}
		}
	}
}
