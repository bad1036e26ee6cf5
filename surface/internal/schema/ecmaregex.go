package schema

import (
	"errors"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON Schema patterns are ECMA-262 regular expressions, and a page's own
// JavaScript reads them with the Unicode flag's semantics (code points, not
// UTF-16 units). So a pattern is parsed here as ECMA-262, straight into the
// syntax tree of Go's regexp/syntax, and run by the linear-time matcher in
// match.go. Nothing reads a pattern with RE2's own parser: its spellings
// mean other things (\s is ASCII whitespace in RE2 and Unicode whitespace in
// ECMA-262, "." excludes only \n in RE2 and every line terminator in
// ECMA-262), and linking syntax.Parse links the unicode package's name
// maps, whose initialisation is a measurable part of the runtime's start.
// A construct a finite automaton cannot express (lookaround,
// backreferences) or a property with no table here makes the schema fail to
// compile, so no pattern ever means something its author did not write.

// errUnsupported marks ECMA-262 constructs that are valid but cannot be
// translated; other errors are ECMA-262 syntax errors.
var errUnsupported = errors.New("not supported")

// ecmaPattern parses the ECMA-262 pattern src (Unicode mode, no flags)
// into a regexp/syntax tree with the same meaning.
func ecmaPattern(src string) (*syntax.Regexp, error) {
	p := ecmaParser{src: src}
	out, err := p.disjunction()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.fail("unmatched " + strconv.QuoteRune(rune(p.src[p.pos])))
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

// unsupported reports a valid construct this matcher cannot run; the
// error wraps errUnsupported.
func (p *ecmaParser) unsupported(what string) error {
	return &unsupportedError{"at offset " + strconv.Itoa(p.pos) + ": " + what + " is " + errUnsupported.Error()}
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
func (p *ecmaParser) disjunction() (*syntax.Regexp, error) {
	var alts []*syntax.Regexp
	for {
		alt, err := p.alternative()
		if err != nil {
			return nil, err
		}
		alts = append(alts, alt)
		if p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &syntax.Regexp{Op: syntax.OpAlternate, Sub: alts}, nil
}

// alternative: term* up to '|', ')' or the end.
func (p *ecmaParser) alternative() (*syntax.Regexp, error) {
	var terms []*syntax.Regexp
	for !p.eof() && p.peek() != '|' && p.peek() != ')' {
		atom, quantifiable, err := p.term()
		if err != nil {
			return nil, err
		}
		if atom, err = p.quantifier(atom, quantifiable); err != nil {
			return nil, err
		}
		terms = append(terms, atom)
	}
	switch len(terms) {
	case 0:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}, nil
	case 1:
		return terms[0], nil
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: terms}, nil
}

// Bounds on repetition, RE2's own: a count over maxRepeat, nested repeats
// whose product exceeds it, or a repeat whose program would exceed
// maxProgSize instructions is refused, so a pattern can never make the
// matcher's program (which Simplify writes out copy by copy) huge.
const (
	maxRepeat   = 1000
	maxProgSize = 128 << 20 / 40 // RE2's: 128 MB of 40-byte instructions
)

// quantifier applies an optional quantifier, and its lazy mark, to atom.
// Laziness is kept in the tree although only a match's existence is ever
// asked.
func (p *ecmaParser) quantifier(atom *syntax.Regexp, quantifiable bool) (*syntax.Regexp, error) {
	re := &syntax.Regexp{Sub: []*syntax.Regexp{atom}}
	switch p.peek() {
	case '*':
		re.Op = syntax.OpStar
		p.pos++
	case '+':
		re.Op = syntax.OpPlus
		p.pos++
	case '?':
		re.Op = syntax.OpQuest
		p.pos++
	case '{':
		lo, hi, ok := p.braces()
		if !ok {
			return nil, p.fail("incomplete quantifier")
		}
		if hi >= 0 && hi < lo {
			return nil, p.fail("numbers out of order in {} quantifier")
		}
		if lo > maxRepeat || hi > maxRepeat {
			return nil, p.unsupported("a repeat count over 1000")
		}
		re.Op, re.Min, re.Max = syntax.OpRepeat, lo, hi
	default:
		return atom, nil
	}
	if !quantifiable {
		return nil, p.fail("nothing to repeat")
	}
	if p.peek() == '?' {
		p.pos++
		re.Flags |= syntax.NonGreedy
	}
	switch p.peek() {
	case '*', '+', '?', '{':
		return nil, p.fail("nothing to repeat")
	}
	if re.Op == syntax.OpRepeat && !repeatIsValid(re, maxRepeat) {
		return nil, p.unsupported("nested repeats of over 1000 copies")
	}
	if progSize(re) > maxProgSize {
		return nil, p.unsupported("a pattern this large")
	}
	return re, nil
}

// repeatIsValid reports whether re, with the repeats inside it, asks for at
// most n copies of anything (regexp/syntax's rule).
func repeatIsValid(re *syntax.Regexp, n int) bool {
	if re.Op == syntax.OpRepeat {
		m := re.Max
		if m == 0 {
			return true
		}
		if m < 0 {
			m = re.Min
		}
		if m > n {
			return false
		}
		if m > 0 {
			n /= m
		}
	}
	for _, sub := range re.Sub {
		if !repeatIsValid(sub, n) {
			return false
		}
	}
	return true
}

// progSize estimates the instructions re compiles to, as regexp/syntax
// does before it refuses an expression as too large.
func progSize(re *syntax.Regexp) int64 {
	var size int64
	switch re.Op {
	case syntax.OpLiteral:
		size = int64(len(re.Rune))
	case syntax.OpStar:
		size = 2 + progSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + progSize(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			size += progSize(sub)
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			size += progSize(sub)
		}
		size += int64(len(re.Sub)) - 1
	case syntax.OpRepeat:
		sub := progSize(re.Sub[0])
		switch {
		case re.Max >= 0:
			size = int64(re.Max)*sub + int64(re.Max-re.Min)
		case re.Min == 0:
			size = 2 + sub
		default:
			size = 1 + int64(re.Min)*sub
		}
	}
	return max(1, min(size, maxProgSize+1))
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
func (p *ecmaParser) term() (*syntax.Regexp, bool, error) {
	c := p.peek()
	switch c {
	case '^':
		p.pos++
		return &syntax.Regexp{Op: syntax.OpBeginText}, false, nil // no m flag: the input's start
	case '$':
		p.pos++
		return &syntax.Regexp{Op: syntax.OpEndText}, false, nil // the input's end, never before a final \n
	case '.':
		p.pos++
		return lineTerminators.complement().regexp(), true, nil
	case '(':
		return p.group()
	case '[':
		s, err := p.class()
		return s, true, err
	case '\\':
		return p.atomEscape()
	case '*', '+', '?', '{':
		return nil, false, p.fail("nothing to repeat")
	case ']', '}':
		return nil, false, p.fail("lone " + strconv.QuoteRune(rune(c)))
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}}, true, nil
}

func (p *ecmaParser) group() (*syntax.Regexp, bool, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		return nil, false, p.unsupported("nesting groups over 100 deep")
	}
	p.pos++ // (
	if strings.HasPrefix(p.src[p.pos:], "?") {
		rest := p.src[p.pos:]
		switch {
		case strings.HasPrefix(rest, "?:"):
			p.pos += 2
		case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
			return nil, false, p.unsupported("a lookahead")
		case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
			return nil, false, p.unsupported("a lookbehind")
		case strings.HasPrefix(rest, "?<"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, false, p.fail("unterminated group name")
			}
			name := rest[2:end]
			if !asciiIdentifier(name) {
				return nil, false, p.unsupported("a group name outside [A-Za-z_$][A-Za-z0-9_$]*")
			}
			if p.names[name] {
				return nil, false, p.fail("duplicate group name " + strconv.Quote(name))
			}
			if p.names == nil {
				p.names = map[string]bool{}
			}
			p.names[name] = true
			p.pos += end + 1
		default:
			return nil, false, p.fail("invalid group")
		}
	}
	inner, err := p.disjunction()
	if err != nil {
		return nil, false, err
	}
	if p.peek() != ')' {
		return nil, false, p.fail("unterminated group")
	}
	p.pos++
	// Captures are never read, so a group is only its contents.
	return inner, true, nil
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
func (p *ecmaParser) atomEscape() (*syntax.Regexp, bool, error) {
	p.pos++ // backslash
	if p.eof() {
		return nil, false, p.fail("\\ at end of pattern")
	}
	switch c := p.peek(); c {
	case 'b':
		p.pos++
		// Without the i flag ECMA-262's word characters are
		// [A-Za-z0-9_], as regexp/syntax's are.
		return &syntax.Regexp{Op: syntax.OpWordBoundary}, false, nil
	case 'B':
		p.pos++
		return &syntax.Regexp{Op: syntax.OpNoWordBoundary}, false, nil
	case 'k':
		return nil, false, p.unsupported("a backreference")
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return nil, false, p.unsupported("a backreference")
	}
	set, err := p.classEscape(false)
	if err != nil {
		return nil, false, err
	}
	if len(set) == 1 && set[0][0] == set[0][1] {
		return &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{set[0][0]}}, true, nil
	}
	return set.regexp(), true, nil
}

// classEscape reads the escape after a backslash: a single character (set
// of one) or a class escape. inClass allows \b (backspace) and \-.
func (p *ecmaParser) classEscape(inClass bool) (runeSet, error) {
	c := p.peek()
	p.pos++
	switch c {
	case 'd':
		return digitSet, nil
	case 'D':
		return digitSet.complement(), nil
	case 'w':
		return wordSet, nil
	case 'W':
		return wordSet.complement(), nil
	case 's':
		return spaceSet, nil
	case 'S':
		return spaceSet.complement(), nil
	case 'p', 'P':
		return p.property(c == 'P')
	}
	p.pos--
	r, err := p.charEscape(inClass)
	if err != nil {
		return nil, err
	}
	return runeSet{{r, r}}, nil
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
// one, and a UTF-8 matcher cannot name it.
func (p *ecmaParser) scalar(r rune) (rune, error) {
	if 0xd800 <= r && r <= 0xdfff {
		return 0, p.unsupported("a lone surrogate")
	}
	return r, nil
}

// class reads [...] or [^...].
func (p *ecmaParser) class() (*syntax.Regexp, error) {
	p.pos++ // [
	negate := false
	if p.peek() == '^' {
		negate = true
		p.pos++
	}
	var set runeSet
	for {
		if p.eof() {
			return nil, p.fail("unterminated character class")
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		lo, loSet, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, hiSet, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if loSet != nil || hiSet != nil {
				return nil, p.fail("a class escape cannot bound a range")
			}
			if hi < lo {
				return nil, p.fail("range out of order in character class")
			}
			set = append(set, [2]rune{lo, hi})
			continue
		}
		if loSet != nil {
			set = append(set, loSet...)
		} else {
			set = append(set, [2]rune{lo, lo})
		}
	}
	return set.normalize().maybeComplement(negate).regexp(), nil
}

// classAtom reads one character of a class, or a class escape (set not
// nil, even when empty).
func (p *ecmaParser) classAtom() (r rune, set runeSet, err error) {
	if p.peek() != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil, nil
	}
	p.pos++
	switch p.peek() {
	case 0:
		if p.eof() {
			return 0, nil, p.fail("\\ at end of pattern")
		}
	case 'd', 'D', 'w', 'W', 's', 'S', 'p', 'P':
		set, err := p.classEscape(true)
		if set == nil {
			set = runeSet{}
		}
		return 0, set, err
	}
	r, err = p.charEscape(true)
	return r, nil, err
}

// property reads {Name} or {Name=Value} after \p or \P.
func (p *ecmaParser) property(negate bool) (runeSet, error) {
	if p.peek() != '{' {
		return nil, p.fail("invalid property escape")
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		return nil, p.fail("invalid property escape")
	}
	body := p.src[p.pos+1 : p.pos+end]
	p.pos += end + 1
	name, value, hasValue := strings.Cut(body, "=")
	var table *unicode.RangeTable
	switch {
	case !hasValue:
		switch name {
		case "Any":
			return runeSet{{0, unicode.MaxRune}}.maybeComplement(negate), nil
		case "ASCII":
			return runeSet{{0, 0x7f}}.maybeComplement(negate), nil
		}
		table = generalCategory(name)
	case name == "General_Category" || name == "gc":
		table = generalCategory(value)
	case name == "Script" || name == "sc":
		table = script(value)
	}
	if table == nil {
		return nil, p.unsupported("the property " + strconv.Quote(body))
	}
	return tableSet(table).maybeComplement(negate), nil
}

// generalCategory is the table for an ECMA-262 name of a General_Category
// value (long name, short name or alias), or nil. C and Other are left
// out: ECMA-262 includes unassigned code points (Cn) in them and Go has no
// table for those; so is LC (Cased_Letter), which Go lacks. A switch, not a
// map, so that nothing is built when the runtime starts.
func generalCategory(name string) *unicode.RangeTable {
	switch name {
	case "L", "Letter":
		return unicode.L
	case "Lu", "Uppercase_Letter":
		return unicode.Lu
	case "Ll", "Lowercase_Letter":
		return unicode.Ll
	case "Lt", "Titlecase_Letter":
		return unicode.Lt
	case "Lm", "Modifier_Letter":
		return unicode.Lm
	case "Lo", "Other_Letter":
		return unicode.Lo
	case "M", "Mark", "Combining_Mark":
		return unicode.M
	case "Mn", "Nonspacing_Mark":
		return unicode.Mn
	case "Mc", "Spacing_Mark":
		return unicode.Mc
	case "Me", "Enclosing_Mark":
		return unicode.Me
	case "N", "Number":
		return unicode.N
	case "Nd", "Decimal_Number", "digit":
		return unicode.Nd
	case "Nl", "Letter_Number":
		return unicode.Nl
	case "No", "Other_Number":
		return unicode.No
	case "P", "Punctuation", "punct":
		return unicode.P
	case "Pc", "Connector_Punctuation":
		return unicode.Pc
	case "Pd", "Dash_Punctuation":
		return unicode.Pd
	case "Ps", "Open_Punctuation":
		return unicode.Ps
	case "Pe", "Close_Punctuation":
		return unicode.Pe
	case "Pi", "Initial_Punctuation":
		return unicode.Pi
	case "Pf", "Final_Punctuation":
		return unicode.Pf
	case "Po", "Other_Punctuation":
		return unicode.Po
	case "S", "Symbol":
		return unicode.S
	case "Sm", "Math_Symbol":
		return unicode.Sm
	case "Sc", "Currency_Symbol":
		return unicode.Sc
	case "Sk", "Modifier_Symbol":
		return unicode.Sk
	case "So", "Other_Symbol":
		return unicode.So
	case "Z", "Separator":
		return unicode.Z
	case "Zs", "Space_Separator":
		return unicode.Zs
	case "Zl", "Line_Separator":
		return unicode.Zl
	case "Zp", "Paragraph_Separator":
		return unicode.Zp
	case "Cc", "Control", "cntrl":
		return unicode.Cc
	case "Cf", "Format":
		return unicode.Cf
	case "Co", "Private_Use":
		return unicode.Co
	case "Cs", "Surrogate":
		return unicode.Cs
	}
	return nil
}

// runeSet is a list of inclusive rune ranges.
type runeSet [][2]rune

var (
	digitSet = runeSet{{'0', '9'}}
	wordSet  = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	// spaceSet is ECMA-262's WhiteSpace and LineTerminator: TAB, VT, FF,
	// ZWNBSP, every Space_Separator (Zs), LF, CR, LS and PS.
	spaceSet = append(tableSet(unicode.Zs), [2]rune{'\t', '\r'}, [2]rune{0xfeff, 0xfeff}, [2]rune{0x2028, 0x2029}).normalize()
	// lineTerminators are what "." does not match: LF, CR, LS and PS.
	lineTerminators = runeSet{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}
)

// normalize sorts and merges overlapping or adjacent ranges.
func (s runeSet) normalize() runeSet {
	if len(s) == 0 {
		return s
	}
	c := append(runeSet(nil), s...)
	slices.SortFunc(c, func(a, b [2]rune) int { return int(a[0] - b[0]) })
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

// regexp is the class of s. An empty class matches nothing, as in
// ECMA-262.
func (s runeSet) regexp() *syntax.Regexp {
	if len(s) == 0 {
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	flat := make([]rune, 0, 2*len(s))
	for _, r := range s {
		flat = append(flat, r[0], r[1])
	}
	return &syntax.Regexp{Op: syntax.OpCharClass, Rune: flat}
}

// tableSet is the code points of t.
func tableSet(t *unicode.RangeTable) runeSet {
	var s runeSet
	add := func(lo, hi, stride rune) {
		if stride == 1 {
			s = append(s, [2]rune{lo, hi})
			return
		}
		for c := lo; c <= hi; c += stride {
			s = append(s, [2]rune{c, c})
		}
	}
	for _, r := range t.R16 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return s.normalize()
}
