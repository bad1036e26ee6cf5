package schema

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// isGoRegexp reports whether regexp.Compile accepts s: the "regex" format
// keeps the verdicts of the validator the kernel used before, which checked
// Go's syntax. It reads the syntax the way regexp/syntax.Parse does with
// the Perl flags, without building the program: linking syntax.Parse would
// link the unicode package's name maps, which the runtime would then build
// at every start (see ecmaregex.go).
//
// Parse also refuses expressions that nest over 1,000 deep or would
// compile to over 3.3 million instructions, measured on its own simplified
// tree. Those two bounds are estimated here on the tree as written, so near
// them a verdict can differ; FuzzGoRegexp holds every other verdict to
// regexp.Compile's.
func isGoRegexp(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	c := goRegexpChecker{frames: []goFrame{{}}}
	return c.check(s)
}

// goNode is what the checker keeps of a parsed expression: enough for
// Parse's repeat, size and height rules.
type goNode struct {
	repeat   bool // an x{n,m}
	min, max int
	literal  bool // a run of literal runes, which Parse merges into one node
	size     int64
	height   int
	subs     []*goNode
}

// goFrame is one open group: the alternatives closed so far and the
// terms of the current one.
type goFrame struct {
	capture bool
	alts    []*goNode
	terms   []*goNode
}

type goRegexpChecker struct {
	frames   []goFrame
	captures int // capturing groups open
	bad      bool
	// noPOSIXEnd: no ":]" follows; once a search for one fails, none after
	// it can succeed, so it is not searched for again (a class of many
	// "[:" would otherwise be read in quadratic time).
	noPOSIXEnd bool
}

const (
	goMaxHeight = 1000
	goMaxSize   = 128 << 20 / 40
)

func (c *goRegexpChecker) top() *goFrame { return &c.frames[len(c.frames)-1] }

// push adds a term to the current alternative.
func (c *goRegexpChecker) push(n *goNode) {
	c.limit(n)
	f := c.top()
	f.terms = append(f.terms, n)
}

func (c *goRegexpChecker) leaf() { c.push(&goNode{size: 1, height: 1}) }

// literal adds one literal rune. As in Parse, the two literals before it
// merge first (only the last rune is a repeat's operand), so a run of text
// costs one node.
func (c *goRegexpChecker) literal() {
	f := c.top()
	if n := len(f.terms); n >= 2 && f.terms[n-1].literal && f.terms[n-2].literal {
		f.terms[n-2].size += f.terms[n-1].size
		f.terms[n-1].size = 1
		c.limit(f.terms[n-2])
		return
	}
	c.push(&goNode{literal: true, size: 1, height: 1})
}

func (c *goRegexpChecker) limit(n *goNode) {
	if n.size > goMaxSize || n.height > goMaxHeight {
		c.bad = true
	}
}

// goInner builds an inner node over subs.
func goInner(subs []*goNode, size int64) *goNode {
	n := &goNode{subs: subs, size: max(1, size)}
	for _, s := range subs {
		n.height = max(n.height, s.height+1)
	}
	return n
}

// goConcat closes the current alternative's terms into one node, merging
// adjacent literals as Parse does.
func goConcat(terms []*goNode) *goNode {
	var merged []*goNode
	var size int64
	for _, t := range terms {
		if last := len(merged) - 1; last >= 0 && t.literal && merged[last].literal {
			merged[last] = &goNode{literal: true, size: merged[last].size + t.size, height: 1}
		} else {
			merged = append(merged, t)
		}
		size += t.size
	}
	switch len(merged) {
	case 0:
		return &goNode{size: 1, height: 1}
	case 1:
		return merged[0]
	}
	return goInner(merged, size)
}

// goAlternate joins a group's alternatives.
func goAlternate(alts []*goNode) *goNode {
	if len(alts) == 1 {
		return alts[0]
	}
	var size int64
	for _, a := range alts {
		size += a.size
	}
	return goInner(alts, size+int64(len(alts))-1)
}

// repeat applies the operator op ('*', '+', '?', or '{' with lo and hi)
// to the last term. It reports whether Parse accepts it.
func (c *goRegexpChecker) repeat(op byte, lo, hi int) bool {
	f := c.top()
	if len(f.terms) == 0 {
		return false // missing argument
	}
	sub := f.terms[len(f.terms)-1]
	var n *goNode
	switch op {
	case '*':
		n = goInner([]*goNode{sub}, 2+sub.size)
	case '+', '?':
		n = goInner([]*goNode{sub}, 1+sub.size)
	default:
		var size int64
		switch {
		case hi >= 0:
			size = int64(hi)*sub.size + int64(hi-lo)
		case lo == 0:
			size = 2 + sub.size
		default:
			size = 1 + int64(lo)*sub.size
		}
		n = goInner([]*goNode{sub}, min(size, goMaxSize+1))
		n.repeat, n.min, n.max = true, lo, hi
	}
	f.terms[len(f.terms)-1] = n
	c.limit(n)
	if op == '{' && (lo >= 2 || hi >= 2) && !goRepeatIsValid(n, 1000) {
		return false
	}
	return true
}

// goRepeatIsValid is Parse's rule: nested repeats ask for at most n copies.
func goRepeatIsValid(re *goNode, n int) bool {
	if re.repeat {
		m := re.max
		if m == 0 {
			return true
		}
		if m < 0 {
			m = re.min
		}
		if m > n {
			return false
		}
		if m > 0 {
			n /= m
		}
	}
	for _, sub := range re.subs {
		if !goRepeatIsValid(sub, n) {
			return false
		}
	}
	return true
}

func (c *goRegexpChecker) open(capture bool) {
	if capture {
		// Over goMaxHeight capturing groups open at once nest too deeply
		// when they close, and are missing parentheses when they do not.
		if c.captures++; c.captures > goMaxHeight {
			c.bad = true
		}
	}
	c.frames = append(c.frames, goFrame{capture: capture})
}

func (c *goRegexpChecker) bar() {
	f := c.top()
	f.alts = append(f.alts, goConcat(f.terms))
	f.terms = nil
}

// close ends the innermost group; false for a ")" with none open.
func (c *goRegexpChecker) close() bool {
	if len(c.frames) == 1 {
		return false
	}
	f := c.top()
	inner := goAlternate(append(f.alts, goConcat(f.terms)))
	capture := f.capture
	c.frames = c.frames[:len(c.frames)-1]
	if capture {
		c.captures--
		inner = goInner([]*goNode{inner}, 2+inner.size)
	}
	c.push(inner)
	return true
}

func (c *goRegexpChecker) check(s string) bool {
	t := s
	lastRepeat := false
	for t != "" && !c.bad {
		repeat := false
		switch t[0] {
		default:
			_, n := utf8.DecodeRuneInString(t)
			t = t[n:]
			c.literal()
		case '(':
			if len(t) >= 2 && t[1] == '?' {
				var ok bool
				if t, ok = c.perlFlags(t); !ok {
					return false
				}
				break
			}
			c.open(true)
			t = t[1:]
		case '|':
			c.bar()
			t = t[1:]
		case ')':
			if !c.close() {
				return false
			}
			t = t[1:]
		case '^', '$', '.':
			c.leaf()
			t = t[1:]
		case '[':
			var ok bool
			if t, ok = c.class(t); !ok {
				return false
			}
			c.leaf()
		case '*', '+', '?', '{':
			op := t[0]
			lo, hi, after := 0, 0, t[1:]
			if op == '{' {
				var ok bool
				if lo, hi, after, ok = goRepeat(t); !ok {
					c.literal() // "{" that opens no repeat is literal
					t = t[1:]
					break
				}
				if lo < 0 || lo > 1000 || hi > 1000 || hi >= 0 && lo > hi {
					return false
				}
			}
			if after != "" && after[0] == '?' {
				after = after[1:]
			}
			if lastRepeat || !c.repeat(op, lo, hi) {
				return false
			}
			repeat = true
			t = after
		case '\\':
			var ok bool
			if t, ok = c.escape(t); !ok {
				return false
			}
		}
		lastRepeat = repeat
	}
	if c.bad || len(c.frames) != 1 {
		return false
	}
	f := c.top()
	c.limit(goAlternate(append(f.alts, goConcat(f.terms))))
	return !c.bad
}

// escape reads a backslash sequence outside a class.
func (c *goRegexpChecker) escape(t string) (string, bool) {
	if len(t) >= 2 {
		switch t[1] {
		case 'A', 'b', 'B', 'z':
			c.leaf()
			return t[2:], true
		case 'C':
			return "", false // any byte: not supported
		case 'Q':
			lit, rest, _ := strings.Cut(t[2:], `\E`)
			for range lit {
				c.literal()
			}
			return rest, true
		}
	}
	if rest, matched, ok := goUnicodeClass(t); matched || !ok {
		if ok {
			c.leaf()
		}
		return rest, ok
	}
	if rest, ok := goPerlClass(t); ok {
		c.leaf()
		return rest, true
	}
	rest, ok := goEscape(t)
	if ok {
		c.literal()
	}
	return rest, ok
}

// perlFlags reads "(?" groups: named captures, flag settings and
// non-capturing groups.
func (c *goRegexpChecker) perlFlags(t string) (string, bool) {
	startsWithP := len(t) > 4 && t[2] == 'P' && t[3] == '<'
	startsWithName := len(t) > 3 && t[2] == '<'
	if startsWithP || startsWithName {
		start := 4
		if startsWithName {
			start = 3
		}
		end := strings.IndexByte(t, '>')
		if end < 0 {
			return "", false
		}
		name := t[start:end]
		if name == "" {
			return "", false
		}
		for i := 0; i < len(name); i++ {
			if b := name[i]; b != '_' && !goAlnum(b) {
				return "", false
			}
		}
		c.open(true)
		return t[end+1:], true
	}
	t = t[2:]
	negated, sawFlag := false, false
	for t != "" {
		r, n := utf8.DecodeRuneInString(t)
		t = t[n:]
		switch r {
		case 'i', 'm', 's', 'U':
			sawFlag = true
			continue
		case '-':
			if negated {
				return "", false
			}
			negated, sawFlag = true, false
			continue
		case ':', ')':
			if negated && !sawFlag {
				return "", false
			}
			if r == ':' {
				c.open(false)
			}
			return t, true
		}
		return "", false
	}
	return "", false
}

// goRepeat reads {n}, {n,} or {n,m}; ok is false when t is not of that
// form (then "{" is a literal). A count over 10^8 reads as -1.
func goRepeat(t string) (min, max int, rest string, ok bool) {
	s := t[1:]
	var ok1 bool
	if min, s, ok1 = goInt(s); !ok1 || s == "" {
		return 0, 0, "", false
	}
	if s[0] != ',' {
		max = min
	} else {
		s = s[1:]
		switch {
		case s == "":
			return 0, 0, "", false
		case s[0] == '}':
			max = -1
		default:
			if max, s, ok1 = goInt(s); !ok1 {
				return 0, 0, "", false
			}
			if max < 0 {
				min = -1
			}
		}
	}
	if s == "" || s[0] != '}' {
		return 0, 0, "", false
	}
	return min, max, s[1:], true
}

// goInt reads a decimal count without leading zeros; -1 if too large.
func goInt(s string) (n int, rest string, ok bool) {
	if s == "" || s[0] < '0' || '9' < s[0] {
		return 0, s, false
	}
	if len(s) >= 2 && s[0] == '0' && '0' <= s[1] && s[1] <= '9' {
		return 0, s, false
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		if n >= 1e8 {
			n = -1
		} else if n >= 0 {
			n = n*10 + int(s[i]-'0')
		}
		i++
	}
	return n, s[i:], true
}

// goEscape reads a single-character escape.
func goEscape(s string) (string, bool) {
	t := s[1:]
	if t == "" {
		return "", false
	}
	c, n := utf8.DecodeRuneInString(t)
	t = t[n:]
	switch c {
	case '1', '2', '3', '4', '5', '6', '7':
		if t == "" || t[0] < '0' || t[0] > '7' {
			return "", false // a backreference
		}
		fallthrough
	case '0':
		for i := 1; i < 3 && t != "" && '0' <= t[0] && t[0] <= '7'; i++ {
			t = t[1:]
		}
		return t, true
	case 'x':
		if t == "" {
			return "", false
		}
		c, n := utf8.DecodeRuneInString(t)
		t = t[n:]
		if c == '{' {
			v, digits := 0, 0
			for {
				if t == "" {
					return "", false
				}
				c, n := utf8.DecodeRuneInString(t)
				t = t[n:]
				if c == '}' {
					return t, digits > 0
				}
				d := goUnhex(c)
				if d < 0 {
					return "", false
				}
				if v = v*16 + d; v > utf8.MaxRune {
					return "", false
				}
				digits++
			}
		}
		if t == "" || goUnhex(c) < 0 {
			return "", false
		}
		c2, n := utf8.DecodeRuneInString(t)
		return t[n:], goUnhex(c2) >= 0
	case 'a', 'f', 'n', 'r', 't', 'v':
		return t, true
	}
	if c < utf8.RuneSelf && !goAlnum(byte(c)) {
		return t, true // escaped punctuation
	}
	return "", false
}

func goUnhex(c rune) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func goAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// goPerlClass reads \d, \D, \s, \S, \w or \W.
func goPerlClass(t string) (string, bool) {
	if len(t) >= 2 && t[0] == '\\' && strings.IndexByte("dDsSwW", t[1]) >= 0 {
		return t[2:], true
	}
	return t, false
}

// goUnicodeClass reads \pX, \p{Name} or \P...; matched is false when t
// does not start with one, ok false when it starts with a bad one.
func goUnicodeClass(t string) (rest string, matched, ok bool) {
	if len(t) < 2 || t[0] != '\\' || t[1] != 'p' && t[1] != 'P' {
		return t, false, true
	}
	after := t[2:]
	c, n := utf8.DecodeRuneInString(after)
	var name string
	if c != '{' {
		name, rest = after[:n], after[n:]
	} else {
		end := strings.IndexByte(t, '}')
		if end < 0 {
			return "", true, false
		}
		name, rest = t[3:end], t[end+1:]
	}
	name = strings.TrimPrefix(name, "^")
	return rest, true, goUnicodeName(name)
}

// class reads a bracketed class.
func (c *goRegexpChecker) class(s string) (string, bool) {
	t := s[1:]
	if t != "" && t[0] == '^' {
		t = t[1:]
	}
	first := true
	for t == "" || t[0] != ']' || first {
		first = false
		if len(t) > 2 && t[0] == '[' && t[1] == ':' && !c.noPOSIXEnd {
			i := strings.Index(t[2:], ":]")
			if i >= 0 {
				if !goPOSIXClass(t[:i+4]) {
					return "", false
				}
				t = t[i+4:]
				continue
			}
			c.noPOSIXEnd = true
		}
		if rest, matched, ok := goUnicodeClass(t); !ok {
			return "", false
		} else if matched {
			t = rest
			continue
		}
		if rest, ok := goPerlClass(t); ok {
			t = rest
			continue
		}
		var lo, hi rune
		var ok bool
		if lo, t, ok = goClassChar(t); !ok {
			return "", false
		}
		if len(t) >= 2 && t[0] == '-' && t[1] != ']' {
			if hi, t, ok = goClassChar(t[1:]); !ok || hi < lo {
				return "", false
			}
		}
	}
	return t[1:], true
}

// goClassChar reads one character of a class, escaped or not.
func goClassChar(t string) (rune, string, bool) {
	if t == "" {
		return 0, "", false // missing ]
	}
	if t[0] != '\\' {
		r, n := utf8.DecodeRuneInString(t)
		return r, t[n:], true
	}
	rest, ok := goEscape(t)
	if !ok {
		return 0, "", false
	}
	return goEscapeValue(t[:len(t)-len(rest)]), rest, true
}

// goEscapeValue is the character a valid single-character escape names.
func goEscapeValue(e string) rune {
	c, n := utf8.DecodeRuneInString(e[1:])
	body := e[1+n:]
	switch c {
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := c - '0'
		for i := 0; i < len(body); i++ {
			v = v*8 + rune(body[i]-'0')
		}
		return v
	case 'x':
		body = strings.Trim(body, "{}")
		v := rune(0)
		for _, d := range body {
			v = v*16 + rune(goUnhex(d))
		}
		return v
	case 'a':
		return '\a'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	}
	return c
}

func goPOSIXClass(name string) bool {
	switch strings.Replace(name, "[:^", "[:", 1) {
	case "[:alnum:]", "[:alpha:]", "[:ascii:]", "[:blank:]", "[:cntrl:]", "[:digit:]", "[:graph:]",
		"[:lower:]", "[:print:]", "[:punct:]", "[:space:]", "[:upper:]", "[:word:]", "[:xdigit:]":
		return true
	}
	return false
}

// goUnicodeName reports whether regexp/syntax knows the class name: it
// compares names as canonicalName does (case and "_", "-", " " ignored
// after the first letter) against goUnicodeNames.
func goUnicodeName(name string) bool {
	canon := goCanonicalName(name)
	_, found := slices.BinarySearch(goUnicodeNames[:], canon)
	return found
}

// goCanonicalName is regexp/syntax's canonicalName: the first letter upper
// case, the others lower case, and "_", "-" and " " dropped.
func goCanonicalName(name string) string {
	b := make([]byte, 0, len(name))
	first := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
			continue
		case first:
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			first = false
		default:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
		}
		b = append(b, c)
	}
	return string(b)
}
