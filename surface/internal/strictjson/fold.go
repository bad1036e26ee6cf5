package strictjson

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// smallObject is the member count up to which case-variant keys are found by
// comparing with strings.EqualFold directly; beyond it a set of folded keys
// keeps the check linear in the size of the object.
const smallObject = 16

// foldRune maps r to a fixed representative of its unicode.SimpleFold orbit:
// the lowercase ASCII letter for orbits that contain one (so {K, k, U+212A
// KELVIN SIGN} -> 'k' and {S, s, U+017F LONG S} -> 's'), else the smallest
// rune of the orbit.
//
// strings.EqualFold(s, t) holds exactly when s and t have the same number of
// runes and each pair of runes lies in one SimpleFold orbit, so mapping every
// rune to a fixed member of its orbit gives a key on which byte equality is
// EqualFold. The obvious strings.ToLower(strings.ToUpper(s)) is NOT
// equivalent: for example "İ" (U+0130) lowercases to "i", yet EqualFold("İ",
// "i") is false because U+0130 is alone in its orbit.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	if 'A' <= m && m <= 'Z' { // an ASCII letter orbit: the minimum is the uppercase letter
		return m + 'a' - 'A'
	}
	return m
}

// foldKey returns the canonical folded form of a valid UTF-8 string: two
// valid UTF-8 strings have equal fold keys if and only if strings.EqualFold
// reports them equal. (For invalid UTF-8 the two could disagree, which is why
// keys are validated before they are folded.)
func foldKey(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return foldSlow(s, i)
		}
	}
	return s // already canonical: ASCII with no uppercase letters, the usual protocol key; no allocation
}

func foldSlow(s string, i int) string {
	b := make([]byte, i, len(s)+utf8.UTFMax)
	copy(b, s[:i])
	for _, r := range s[i:] {
		b = utf8.AppendRune(b, foldRune(r))
	}
	return string(b)
}

// firstCaseVariant returns the index of the first key in keys that is
// EqualFold to an earlier one, or -1. keys must be distinct valid UTF-8.
func firstCaseVariant(keys []string) int {
	if len(keys) <= smallObject {
		for j := 1; j < len(keys); j++ {
			for i := 0; i < j; i++ {
				if strings.EqualFold(keys[i], keys[j]) {
					return j
				}
			}
		}
		return -1
	}
	seen := make(map[string]struct{}, len(keys))
	for j, k := range keys {
		fk := foldKey(k)
		if _, ok := seen[fk]; ok {
			return j
		}
		seen[fk] = struct{}{}
	}
	return -1
}
