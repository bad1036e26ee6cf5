package schema

import (
	"math/big"
	"math/rand"
	"strconv"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want decimal
		ok   bool
	}{
		{"0", decimal{}, true},
		{"-0", decimal{}, true},
		{"0.000e5", decimal{}, true},
		{"1", decimal{digits: "1"}, true},
		{"1.0", decimal{digits: "1"}, true},
		{"1e0", decimal{digits: "1"}, true},
		{"10", decimal{digits: "1", exp: 1}, true},
		{"1E+1", decimal{digits: "1", exp: 1}, true},
		{"0.10", decimal{digits: "1", exp: -1}, true},
		{"-12.5e-3", decimal{neg: true, digits: "125", exp: -4}, true},
		{"1e999999999999999999999", decimal{digits: "1", exp: maxExp}, true},
		{"1e9999999999999999999", decimal{digits: "1", exp: maxExp}, true},    // 19 digits
		{"1e999999999999999999", decimal{digits: "1", exp: maxExp - 1}, true}, // 18 nines
		{"1e1000000000000000000", decimal{digits: "1", exp: maxExp}, true},    // exactly the bound
		{"1e1000000000000000001", decimal{digits: "1", exp: maxExp}, true},    // just past it
		{"-5e-9223372036854775808", decimal{neg: true, digits: "5", exp: -maxExp}, true},
		{"1.5e1000000000000000000", decimal{digits: "15", exp: maxExp - 1}, true},
		{"1e-999999999999999999999", decimal{digits: "1", exp: -maxExp}, true},
		{"", decimal{}, false},
		{"-", decimal{}, false},
		{"1.", decimal{}, false},
		{".5", decimal{}, false},
		{"1e", decimal{}, false},
		{"1e+", decimal{}, false},
		{"0x10", decimal{}, false},
		{"1 ", decimal{}, false},
		{"NaN", decimal{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseDecimal(tc.in)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Fatalf("parseDecimal(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// randomNumber makes JSON number text over a wide range of shapes, with
// exponents small enough for math/big to check it.
func randomNumber(r *rand.Rand) string {
	s := ""
	if r.Intn(3) == 0 {
		s = "-"
	}
	n := r.Intn(25) + 1
	for i := 0; i < n; i++ {
		s += strconv.Itoa(r.Intn(10))
	}
	if r.Intn(2) == 0 {
		s += "."
		for i := r.Intn(10) + 1; i > 0; i-- {
			s += strconv.Itoa(r.Intn(10))
		}
	}
	if r.Intn(3) == 0 {
		s += "e" + strconv.Itoa(r.Intn(80)-40)
	}
	return s
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	q, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("big.Rat cannot read %q", s)
	}
	return q
}

// TestDecimalAgainstBig: comparison, integrality and multipleOf agree with
// exact rational arithmetic on many random numbers.
func TestDecimalAgainstBig(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		a, b := randomNumber(r), randomNumber(r)
		switch i % 5 {
		case 0:
			b = a
		case 1:
			d, _ := parseDecimal(a)
			b = d.text() // the same value written differently
		}
		da, ok1 := parseDecimal(a)
		db, ok2 := parseDecimal(b)
		if !ok1 || !ok2 {
			t.Fatalf("parse %q %q", a, b)
		}
		qa, qb := rat(t, a), rat(t, b)
		if got, want := cmpDecimal(da, db), qa.Cmp(qb); got != want {
			t.Fatalf("cmp(%s, %s) = %d, want %d", a, b, got, want)
		}
		if got, want := da.isInt(), qa.IsInt(); got != want {
			t.Fatalf("isInt(%s) = %v, want %v", a, got, want)
		}
		if qb.Sign() > 0 && len(db.digits) <= 18 {
			want := new(big.Rat).Quo(qa, qb).IsInt()
			if got := isMultiple(da, db); got != want {
				t.Fatalf("isMultiple(%s, %s) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestIsMultiple(t *testing.T) {
	tests := []struct {
		a, m string
		want bool
	}{
		{"10", "5", true},
		{"10", "3", false},
		{"0", "7", true},
		{"1.5", "0.5", true},
		{"1.55", "0.5", false},
		{"0.3", "0.1", true},
		{"4.5", "1.5", true},
		{"1e30", "7", false},
		{"7e30", "7", true},
		{"1e400", "0.3", false},
		{"3e400", "0.3", true},
		{"123456789012345678901234567890", "10", true},
		{"123456789012345678901234567891", "10", false},
		{"-14", "3.5", true},
		{"1", "1e-400", true},
		{"1e-400", "1", false},
		{"999999999999999999", "999999999999999999", true},
		{"1999999999999999998", "999999999999999999", true},
		{"2.0000000000000000002", "1.0000000000000000001", true}, // float64 fallback
	}
	for _, tc := range tests {
		t.Run(tc.a+"/"+tc.m, func(t *testing.T) {
			a, _ := parseDecimal(tc.a)
			m, _ := parseDecimal(tc.m)
			if got := isMultiple(a, m); got != tc.want {
				t.Fatalf("isMultiple(%s, %s) = %v, want %v", tc.a, tc.m, got, tc.want)
			}
		})
	}
}

func TestToInt(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "7": 7, "1e3": 1000, "3.0": 3, "999999999999999999": 999999999999999999, "1e19": int(^uint(0) >> 1), "1e400": int(^uint(0) >> 1)} {
		d, _ := parseDecimal(in)
		if got := d.toInt(); got != want {
			t.Errorf("toInt(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestAppendKey: equal values share a key and unequal values do not.
func TestAppendKey(t *testing.T) {
	vals := []string{`1`, `1.0`, `1e0`, `"1"`, `[1]`, `[1.0]`, `{"a":1}`, `{"a":1.00}`, `{"a":"1"}`, `null`, `true`, `false`,
		`"s1:a"`, `["s1:a"]`, `["s", "1:a"]`, `{"a":{"b":[]}}`, `{"a":{"b":{}}}`, `0`, `-0`, `[]`, `{}`, `""`}
	for _, x := range vals {
		for _, y := range vals {
			vx, vy := mustDecode(t, x), mustDecode(t, y)
			kx, okx := appendKey(nil, vx, 0)
			ky, oky := appendKey(nil, vy, 0)
			if !okx || !oky {
				t.Fatalf("no key for %s or %s", x, y)
			}
			if (string(kx) == string(ky)) != equal(vx, vy) {
				t.Errorf("%s vs %s: same key %v, equal %v", x, y, string(kx) == string(ky), equal(vx, vy))
			}
		}
	}
}
