package schema

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON Schema patterns are ECMA-262 regular expressions, and a page's own
// JavaScript reads them with the Unicode flag's semantics (code points, not
// UTF-16 units). Go's regexp (RE2) has different meanings for some of the
// same spellings: \s is ASCII whitespace in RE2 and Unicode whitespace in
// ECMA-262, "." excludes only \n in RE2 and every line terminator in
// ECMA-262, and RE2 has no \u, \c or \v. So a pattern is parsed as
// ECMA-262 and rewritten into RE2 syntax with the same meaning; a construct
// RE2 cannot express (lookaround, backreferences, a property RE2 has no
// table for) makes the schema fail to compile, so no pattern ever means
// something its author did not write.

// errUnsupported marks ECMA-262 constructs that are valid but cannot be
// translated; other errors are ECMA-262 syntax errors.
var errUnsupported = errors.New("not supported")

// ecmaPattern translates the ECMA-262 pattern src (Unicode mode, no flags)
// into RE2 syntax.
func ecmaPattern(src string) (string, error) {
	p := ecmaParser{src: src}
	out, err := p.disjunction()
	if err != nil {
		return "", err
	}
	if p.pos < len(p.src) {
		return "", p.fail("unmatched " + strconv.QuoteRune(rune(p.src[p.pos])))
	}
	return out, nil
}

type ecmaParser struct {
	src   string
	pos   int
	depth int
	names map[string]bool
}

// fail reports a pattern that is not ECMA-262.
func (p *ecmaParser) fail(msg string) error {
	return errors.New("at offset " + strconv.Itoa(p.pos) + ": " + msg)
}

// unsupported reports a valid construct that has no RE2 equivalent; the
// error wraps errUnsupported.
func (p *ecmaParser) unsupported(what string) error {
	return &unsupportedError{"at offset " + strconv.Itoa(p.pos) + ": " + what + " is " + errUnsupported.Error() + " (no RE2 equivalent)"}
}

type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return errUnsupported }

func (p *ecmaParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *ecmaParser) eof() bool { return p.pos >= len(p.src) }

// disjunction: alternative ('|' alternative)*.
func (p *ecmaParser) disjunction() (string, error) {
	var b strings.Builder
	for {
		alt, err := p.alternative()
		if err != nil {
			return "", err
		}
		b.WriteString(alt)
		if p.peek() != '|' {
			return b.String(), nil
		}
		p.pos++
		b.WriteByte('|')
	}
}

// alternative: term* up to '|', ')' or the end.
func (p *ecmaParser) alternative() (string, error) {
	var b strings.Builder
	for !p.eof() && p.peek() != '|' && p.peek() != ')' {
		atom, quantifiable, err := p.term()
		if err != nil {
			return "", err
		}
		q, err := p.quantifier()
		if err != nil {
			return "", err
		}
		if q != "" && !quantifiable {
			return "", p.fail("nothing to repeat")
		}
		b.WriteString(atom)
		b.WriteString(q)
	}
	return b.String(), nil
}

// quantifier reads an optional quantifier and its lazy mark.
func (p *ecmaParser) quantifier() (string, error) {
	start := p.pos
	switch p.peek() {
	case '*', '+', '?':
		p.pos++
	case '{':
		lo, hi, ok := p.braces()
		if !ok {
			return "", p.fail("incomplete quantifier")
		}
		if hi >= 0 && hi < lo {
			return "", p.fail("numbers out of order in {} quantifier")
		}
	default:
		return "", nil
	}
	if p.peek() == '?' {
		p.pos++
	}
	q := p.src[start:p.pos]
	switch p.peek() {
	case '*', '+', '?', '{':
		return "", p.fail("nothing to repeat")
	}
	return q, nil
}

// braces reads {n}, {n,} or {n,m} at p.pos; hi is -1 for {n,}.
func (p *ecmaParser) braces() (lo, hi int, ok bool) {
	i := p.pos + 1
	num := func() (int, bool) {
		j := i
		for i < len(p.src) && '0' <= p.src[i] && p.src[i] <= '9' {
			i++
		}
		if i == j {
			return 0, false
		}
		n, err := strconv.Atoi(p.src[j:i])
		if err != nil {
			n = 1 << 30 // RE2 refuses anything over 1000 anyway
		}
		return n, true
	}
	lo, ok = num()
	if !ok {
		return 0, 0, false
	}
	hi = lo
	if i < len(p.src) && p.src[i] == ',' {
		i++
		hi = -1
		if i < len(p.src) && p.src[i] != '}' {
			if hi, ok = num(); !ok {
				return 0, 0, false
			}
		}
	}
	if i >= len(p.src) || p.src[i] != '}' {
		return 0, 0, false
	}
	p.pos = i + 1
	return lo, hi, true
}

// term reads one assertion or atom; quantifiable is false for assertions.
func (p *ecmaParser) term() (string, bool, error) {
	c := p.peek()
	switch c {
	case '^':
		p.pos++
		return "^", false, nil // start of input: RE2 without (?m) means the same
	case '$':
		p.pos++
		return "$", false, nil // end of input, never before a final \n: the same in RE2
	case '.':
		p.pos++
		return "[^\\n\\r\\x{2028}\\x{2029}]", true, nil
	case '(':
		return p.group()
	case '[':
		s, err := p.class()
		return s, true, err
	case '\\':
		return p.atomEscape()
	case '*', '+', '?', '{':
		return "", false, p.fail("nothing to repeat")
	case ']', '}':
		return "", false, p.fail("lone " + strconv.QuoteRune(rune(c)))
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return literal(r), true, nil
}

func (p *ecmaParser) group() (string, bool, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		return "", false, p.unsupported("nesting groups over 100 deep")
	}
	p.pos++ // (
	if strings.HasPrefix(p.src[p.pos:], "?") {
		rest := p.src[p.pos:]
		switch {
		case strings.HasPrefix(rest, "?:"):
			p.pos += 2
		case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
			return "", false, p.unsupported("a lookahead")
		case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
			return "", false, p.unsupported("a lookbehind")
		case strings.HasPrefix(rest, "?<"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return "", false, p.fail("unterminated group name")
			}
			name := rest[2:end]
			if !asciiIdentifier(name) {
				return "", false, p.unsupported("a group name outside [A-Za-z_$][A-Za-z0-9_$]*")
			}
			if p.names[name] {
				return "", false, p.fail("duplicate group name " + strconv.Quote(name))
			}
			if p.names == nil {
				p.names = map[string]bool{}
			}
			p.names[name] = true
			p.pos += end + 1
		default:
			return "", false, p.fail("invalid group")
		}
	}
	inner, err := p.disjunction()
	if err != nil {
		return "", false, err
	}
	if p.peek() != ')' {
		return "", false, p.fail("unterminated group")
	}
	p.pos++
	// Captures are never read, so every group is non-capturing in RE2.
	return "(?:" + inner + ")", true, nil
}

func asciiIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// atomEscape reads an escape outside a class.
func (p *ecmaParser) atomEscape() (string, bool, error) {
	p.pos++ // backslash
	if p.eof() {
		return "", false, p.fail("\\ at end of pattern")
	}
	switch c := p.peek(); c {
	case 'b':
		p.pos++
		return `\b`, false, nil // ASCII word boundary in both
	case 'B':
		p.pos++
		return `\B`, false, nil
	case 'k':
		return "", false, p.unsupported("a backreference")
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "", false, p.unsupported("a backreference")
	}
	set, props, err := p.classEscape(false)
	if err != nil {
		return "", false, err
	}
	return set.regexp(props, false), true, nil
}

// classEscape reads the escape after a backslash: a single character (set
// of one) or a class escape. inClass allows \b (backspace) and \-.
func (p *ecmaParser) classEscape(inClass bool) (runeSet, []string, error) {
	c := p.peek()
	p.pos++
	switch c {
	case 'd':
		return digitSet, nil, nil
	case 'D':
		return digitSet.complement(), nil, nil
	case 'w':
		return wordSet, nil, nil
	case 'W':
		return wordSet.complement(), nil, nil
	case 's':
		return spaceSet, nil, nil
	case 'S':
		return spaceSet.complement(), nil, nil
	case 'p', 'P':
		return p.property(c == 'P')
	}
	p.pos--
	r, err := p.charEscape(inClass)
	if err != nil {
		return nil, nil, err
	}
	return runeSet{{r, r}}, nil, nil
}

// charEscape reads a character escape after the backslash.
func (p *ecmaParser) charEscape(inClass bool) (rune, error) {
	c := p.peek()
	p.pos++
	switch c {
	case 't':
		return '\t', nil
	case 'n':
		return '\n', nil
	case 'v':
		return '\v', nil
	case 'f':
		return '\f', nil
	case 'r':
		return '\r', nil
	case '0':
		if d := p.peek(); '0' <= d && d <= '9' {
			return 0, p.fail("invalid decimal escape")
		}
		return 0, nil
	case 'c':
		if l := p.peek(); ('a' <= l && l <= 'z') || ('A' <= l && l <= 'Z') {
			p.pos++
			return rune(l % 32), nil
		}
		return 0, p.fail("invalid control escape")
	case 'x':
		if p.pos+2 <= len(p.src) {
			if v, err := strconv.ParseUint(p.src[p.pos:p.pos+2], 16, 8); err == nil && isHexDigits(p.src[p.pos:p.pos+2]) {
				p.pos += 2
				return rune(v), nil
			}
		}
		return 0, p.fail("invalid \\x escape")
	case 'u':
		return p.unicodeEscape()
	case 'b':
		if inClass {
			return '\b', nil
		}
	case '-':
		if inClass {
			return '-', nil
		}
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		return rune(c), nil
	}
	p.pos--
	return 0, p.fail("invalid escape \\" + string(rune(c)))
}

func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// unicodeEscape reads \uXXXX (a surrogate pair of two such escapes is one
// code point) or \u{X...} after "\u".
func (p *ecmaParser) unicodeEscape() (rune, error) {
	if p.peek() == '{' {
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end < 0 || !isHexDigits(p.src[p.pos+1:p.pos+end]) {
			return 0, p.fail("invalid \\u{} escape")
		}
		v, err := strconv.ParseUint(p.src[p.pos+1:p.pos+end], 16, 32)
		if err != nil || v > unicode.MaxRune {
			return 0, p.fail("\\u{} escape out of range")
		}
		p.pos += end + 1
		return p.scalar(rune(v))
	}
	hex4 := func() (rune, bool) {
		if p.pos+4 > len(p.src) || !isHexDigits(p.src[p.pos:p.pos+4]) {
			return 0, false
		}
		v, _ := strconv.ParseUint(p.src[p.pos:p.pos+4], 16, 16)
		p.pos += 4
		return rune(v), true
	}
	r, ok := hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if 0xd800 <= r && r <= 0xdbff && strings.HasPrefix(p.src[p.pos:], `\u`) {
		save := p.pos
		p.pos += 2
		if lo, ok := hex4(); ok && 0xdc00 <= lo && lo <= 0xdfff {
			return utf8DecodePair(r, lo), nil
		}
		p.pos = save
	}
	return p.scalar(r)
}

func utf8DecodePair(hi, lo rune) rune { return (hi-0xd800)<<10 + (lo - 0xdc00) + 0x10000 }

// scalar refuses a lone surrogate: no JSON string the kernel accepts holds
// one, and RE2 cannot name it.
func (p *ecmaParser) scalar(r rune) (rune, error) {
	if 0xd800 <= r && r <= 0xdfff {
		return 0, p.unsupported("a lone surrogate")
	}
	return r, nil
}

// class reads [...] or [^...].
func (p *ecmaParser) class() (string, error) {
	p.pos++ // [
	negate := false
	if p.peek() == '^' {
		negate = true
		p.pos++
	}
	var set runeSet
	var props []string
	for {
		if p.eof() {
			return "", p.fail("unterminated character class")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		lo, loSet, loProps, err := p.classAtom()
		if err != nil {
			return "", err
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, hiSet, hiProps, err := p.classAtom()
			if err != nil {
				return "", err
			}
			if loSet != nil || hiSet != nil || loProps != nil || hiProps != nil {
				return "", p.fail("a class escape cannot bound a range")
			}
			if hi < lo {
				return "", p.fail("range out of order in character class")
			}
			set = append(set, [2]rune{lo, hi})
			continue
		}
		switch {
		case loProps != nil:
			props = append(props, loProps...)
			set = append(set, loSet...)
		case loSet != nil:
			set = append(set, loSet...)
		default:
			set = append(set, [2]rune{lo, lo})
		}
	}
	return set.normalize().regexp(props, negate), nil
}

// classAtom reads one character of a class, or a class escape (set or
// props not nil).
func (p *ecmaParser) classAtom() (r rune, set runeSet, props []string, err error) {
	if p.peek() != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil, nil, nil
	}
	p.pos++
	switch p.peek() {
	case 0:
		if p.eof() {
			return 0, nil, nil, p.fail("\\ at end of pattern")
		}
	case 'd', 'D', 'w', 'W', 's', 'S', 'p', 'P':
		set, props, err := p.classEscape(true)
		if set == nil {
			set = runeSet{} // not nil: this atom is a set, even an empty one
		}
		return 0, set, props, err
	}
	r, err = p.charEscape(true)
	return r, nil, nil, err
}

// property reads {Name} or {Name=Value} after \p or \P.
func (p *ecmaParser) property(negate bool) (runeSet, []string, error) {
	if p.peek() != '{' {
		return nil, nil, p.fail("invalid property escape")
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		return nil, nil, p.fail("invalid property escape")
	}
	body := p.src[p.pos+1 : p.pos+end]
	p.pos += end + 1
	name, value, hasValue := strings.Cut(body, "=")
	var table string
	switch {
	case !hasValue:
		if cat, ok := generalCategories[name]; ok {
			table = cat
		} else if name == "Any" {
			return runeSet{{0, unicode.MaxRune}}.maybeComplement(negate), nil, nil
		} else if name == "ASCII" {
			return runeSet{{0, 0x7f}}.maybeComplement(negate), nil, nil
		}
	case name == "General_Category" || name == "gc":
		table = generalCategories[value]
	case name == "Script" || name == "sc":
		if _, ok := unicode.Scripts[value]; ok {
			table = value
		}
	}
	if table == "" {
		return nil, nil, p.unsupported("the property " + strconv.Quote(body))
	}
	if negate {
		return nil, []string{`\P{` + table + `}`}, nil
	}
	return nil, []string{`\p{` + table + `}`}, nil
}

// generalCategories maps the ECMA-262 names of General_Category values
// (long names, short names and aliases) to Go's table names. C and Other
// are left out: ECMA-262 includes unassigned code points (Cn) in them and
// Go has no table for those; so is LC (Cased_Letter), which Go lacks.
var generalCategories = map[string]string{
	"L": "L", "Letter": "L",
	"Lu": "Lu", "Uppercase_Letter": "Lu",
	"Ll": "Ll", "Lowercase_Letter": "Ll",
	"Lt": "Lt", "Titlecase_Letter": "Lt",
	"Lm": "Lm", "Modifier_Letter": "Lm",
	"Lo": "Lo", "Other_Letter": "Lo",
	"M": "M", "Mark": "M", "Combining_Mark": "M",
	"Mn": "Mn", "Nonspacing_Mark": "Mn",
	"Mc": "Mc", "Spacing_Mark": "Mc",
	"Me": "Me", "Enclosing_Mark": "Me",
	"N": "N", "Number": "N",
	"Nd": "Nd", "Decimal_Number": "Nd", "digit": "Nd",
	"Nl": "Nl", "Letter_Number": "Nl",
	"No": "No", "Other_Number": "No",
	"P": "P", "Punctuation": "P", "punct": "P",
	"Pc": "Pc", "Connector_Punctuation": "Pc",
	"Pd": "Pd", "Dash_Punctuation": "Pd",
	"Ps": "Ps", "Open_Punctuation": "Ps",
	"Pe": "Pe", "Close_Punctuation": "Pe",
	"Pi": "Pi", "Initial_Punctuation": "Pi",
	"Pf": "Pf", "Final_Punctuation": "Pf",
	"Po": "Po", "Other_Punctuation": "Po",
	"S": "S", "Symbol": "S",
	"Sm": "Sm", "Math_Symbol": "Sm",
	"Sc": "Sc", "Currency_Symbol": "Sc",
	"Sk": "Sk", "Modifier_Symbol": "Sk",
	"So": "So", "Other_Symbol": "So",
	"Z": "Z", "Separator": "Z",
	"Zs": "Zs", "Space_Separator": "Zs",
	"Zl": "Zl", "Line_Separator": "Zl",
	"Zp": "Zp", "Paragraph_Separator": "Zp",
	"Cc": "Cc", "Control": "Cc", "cntrl": "Cc",
	"Cf": "Cf", "Format": "Cf",
	"Co": "Co", "Private_Use": "Co",
	"Cs": "Cs", "Surrogate": "Cs",
}

// runeSet is a list of inclusive rune ranges.
type runeSet [][2]rune

var (
	digitSet = runeSet{{'0', '9'}}
	wordSet  = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// spaceSet is ECMA-262's WhiteSpace and LineTerminator: TAB, VT, FF,
	// ZWNBSP, every Space_Separator (Zs), LF, CR, LS and PS.
	spaceSet = func() runeSet {
		s := runeSet{{'\t', '\r'}, {0xfeff, 0xfeff}, {0x2028, 0x2029}}
		for _, r := range unicode.Zs.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				s = append(s, [2]rune{c, c})
			}
		}
		for _, r := range unicode.Zs.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				s = append(s, [2]rune{c, c})
			}
		}
		return s.normalize()
	}()
)

// normalize sorts and merges overlapping or adjacent ranges.
func (s runeSet) normalize() runeSet {
	if len(s) == 0 {
		return s
	}
	c := append(runeSet(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i][0] < c[j][0] })
	out := c[:1]
	for _, r := range c[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1]+1 {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// complement is every code point outside s.
func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s.normalize() {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

func (s runeSet) maybeComplement(negate bool) runeSet {
	if negate {
		return s.complement()
	}
	return s
}

// regexp writes s and the property items as one RE2 class. An empty class
// matches nothing, a negated empty one anything, as in ECMA-262.
func (s runeSet) regexp(props []string, negate bool) string {
	if len(s) == 0 && len(props) == 0 {
		if negate {
			return `[\x{0}-\x{10FFFF}]`
		}
		return `[^\x{0}-\x{10FFFF}]`
	}
	var b strings.Builder
	b.WriteByte('[')
	if negate {
		b.WriteByte('^')
	}
	for _, r := range s {
		b.WriteString(classChar(r[0]))
		if r[1] != r[0] {
			b.WriteByte('-')
			b.WriteString(classChar(r[1]))
		}
	}
	for _, p := range props {
		b.WriteString(p)
	}
	b.WriteByte(']')
	return b.String()
}

// classChar writes r for use inside an RE2 class.
func classChar(r rune) string {
	if r < utf8.RuneSelf && (('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') || r == '_') {
		return string(r)
	}
	return `\x{` + strconv.FormatInt(int64(r), 16) + `}`
}

// literal writes r for use outside a class.
func literal(r rune) string {
	if 0x20 <= r && r < 0x7f {
		return regexp.QuoteMeta(string(r))
	}
	return `\x{` + strconv.FormatInt(int64(r), 16) + `}`
}
