package schema

import (
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// decimal is an exact JSON number: (-1)^neg × digits × 10^exp. It is kept
// normalised (no leading or trailing zeros in digits, zero is digits == ""
// and never negative), so two decimals are equal exactly when their fields
// are, and 1, 1.0 and 1e0 all read the same.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds exponents. A larger written exponent saturates: such a
// number is beyond anything a comparison with a realistic bound can tell
// apart, and saturating keeps the arithmetic below free of overflow.
const maxExp = 1e18

func (d decimal) isZero() bool { return d.digits == "" }

// isInt reports whether d has no fractional part; normalisation makes this
// a sign test on the exponent.
func (d decimal) isInt() bool { return d.digits == "" || d.exp >= 0 }

// parseDecimal reads JSON number text. It also takes a leading '+' on the
// exponent, which strconv produces for float64 values.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[intStart:i]
	if intPart == "" {
		return decimal{}, false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fs:i]
		if frac == "" {
			return decimal{}, false
		}
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			if exp <= maxExp/10 { // no int64 overflow below
				exp = min(exp*10+int64(s[i]-'0'), maxExp)
			} else {
				exp = maxExp
			}
			i++
		}
		if i == es {
			return decimal{}, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return decimal{}, false
	}
	digits := intPart
	if frac != "" {
		digits = intPart + frac
		exp -= int64(len(frac))
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return decimal{}, true // zero, and -0 is zero
	}
	t := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(t))
	d.digits = t
	d.exp = exp
	return d, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// cmpDecimal returns -1, 0 or +1 as a is less than, equal to or greater than b.
func cmpDecimal(a, b decimal) int {
	sa, sb := a.sign(), b.sign()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if sa == 0 {
		return 0
	}
	m := cmpMagnitude(a, b)
	if sa < 0 {
		return -m
	}
	return m
}

func (d decimal) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmpMagnitude compares |a| and |b| for non-zero a and b. The position of
// the leading digit decides first; at equal positions the digit strings
// compare as text, because neither has trailing zeros.
func cmpMagnitude(a, b decimal) int {
	pa := int64(len(a.digits)) + a.exp
	pb := int64(len(b.digits)) + b.exp
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return strings.Compare(a.digits, b.digits)
}

// isMultiple reports whether a is an integer multiple of m (m > 0).
//
// With a = A×10^ea and m = M×10^em in normalised form, A has no trailing
// zero, so when ea < em the quotient cannot be an integer; otherwise the
// answer is whether A×10^(ea-em) mod M is zero, computed with 64-bit
// modular arithmetic. That is exact whenever M has at most 18 significant
// digits, which covers every multipleOf anyone writes. A longer M falls back
// to float64 division (a/m must be finite and integral), which can be wrong
// for values that float64 cannot represent.
func isMultiple(a, m decimal) bool {
	if a.isZero() {
		return true
	}
	if len(m.digits) > 18 {
		fa, _ := strconv.ParseFloat(a.text(), 64)
		fm, _ := strconv.ParseFloat(m.text(), 64)
		q := fa / fm
		return !math.IsInf(q, 0) && !math.IsNaN(q) && q == math.Trunc(q)
	}
	if a.exp < m.exp {
		return false
	}
	mod, _ := strconv.ParseUint(m.digits, 10, 64)
	var r uint64
	for i := 0; i < len(a.digits); i++ {
		r = (r*10 + uint64(a.digits[i]-'0')) % mod
	}
	if r == 0 {
		return true
	}
	return mulMod(r, powMod(10, uint64(a.exp-m.exp), mod), mod) == 0
}

func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

func powMod(base, e, m uint64) uint64 {
	r := uint64(1) % m
	base %= m
	for e > 0 {
		if e&1 == 1 {
			r = mulMod(r, base, m)
		}
		base = mulMod(base, base, m)
		e >>= 1
	}
	return r
}

// text renders d back as JSON number text (digits "e" exponent).
func (d decimal) text() string {
	if d.digits == "" {
		return "0"
	}
	s := d.digits + "e" + strconv.FormatInt(d.exp, 10)
	if d.neg {
		return "-" + s
	}
	return s
}

// toInt converts a non-negative integral decimal to int, saturating at
// math.MaxInt: a count bound that large can never be reached anyway.
func (d decimal) toInt() int {
	if d.digits == "" {
		return 0
	}
	if int64(len(d.digits))+d.exp > 18 {
		return math.MaxInt
	}
	n, _ := strconv.ParseInt(d.digits, 10, 64)
	for e := d.exp; e > 0; e-- {
		n *= 10
	}
	if n > math.MaxInt || n < 0 {
		return math.MaxInt
	}
	return int(n)
}

// numberText returns the exact text of a numeric instance value, and false
// for values that are not numbers (or are NaN or infinite).
func numberText(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		return string(n), true
	case float64:
		return floatText(n, 64)
	case float32:
		return floatText(float64(n), 32)
	case int:
		return strconv.Itoa(n), true
	case int64:
		return strconv.FormatInt(n, 10), true
	case int32:
		return strconv.FormatInt(int64(n), 10), true
	case uint:
		return strconv.FormatUint(uint64(n), 10), true
	case uint64:
		return strconv.FormatUint(n, 10), true
	case uint32:
		return strconv.FormatUint(uint64(n), 10), true
	}
	return "", false
}

// floatText uses the shortest text that reads back as the same float, which
// is also what fmt prints: a float64 instance 0.1 means the decimal 0.1.
func floatText(f float64, bitSize int) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	return strconv.FormatFloat(f, 'e', -1, bitSize), true
}

// toDecimal reads a numeric instance value exactly.
func toDecimal(v any) (decimal, bool) {
	s, ok := numberText(v)
	if !ok {
		return decimal{}, false
	}
	return parseDecimal(s)
}
