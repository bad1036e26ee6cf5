package schema

import (
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// pattern is a compiled pattern keyword. The only question asked of it is
// whether it matches somewhere in a string, which a Pike VM (one pass over
// the input, every thread in step) answers in time linear in the input for
// any pattern; an agent's input can never make matching slow.
//
// The regexp package would run the same programs, but it only takes
// patterns through syntax.Parse (see ecmaregex.go), so the program is
// compiled with regexp/syntax and run here.
type pattern struct {
	prog *syntax.Prog
	// anchored: every match starts at the input's start (the pattern
	// begins with ^), so threads are started there only.
	anchored bool
	// prefix is a literal every match starts with, found with
	// strings.Index when no thread is running; complete: the pattern is
	// only that literal.
	prefix   string
	complete bool
	machines sync.Pool // *machine
}

// compilePattern parses src as ECMA-262 and compiles it.
func compilePattern(src string) (*pattern, error) {
	re, err := ecmaPattern(src)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	p := &pattern{prog: prog, anchored: prog.StartCond()&syntax.EmptyBeginText != 0}
	if !p.anchored {
		p.prefix, p.complete = prog.Prefix()
	}
	return p, nil
}

// machine is the state of one match: two thread lists and the stack that
// follows empty transitions. Pooled per pattern: matching allocates one
// after a collection has emptied the pool, or when several goroutines
// match the same pattern at once.
type machine struct {
	cur, next threads
	stack     []uint32
}

// threads is a sparse set of instruction indexes: O(1) insert, membership
// and clear, in insertion order.
type threads struct {
	sparse []uint32
	dense  []uint32
}

func newThreads(n int) threads {
	return threads{sparse: make([]uint32, n), dense: make([]uint32, 0, n)}
}

func (t *threads) has(pc uint32) bool {
	i := t.sparse[pc]
	return int(i) < len(t.dense) && t.dense[i] == pc
}

func (t *threads) insert(pc uint32) {
	t.sparse[pc] = uint32(len(t.dense))
	t.dense = append(t.dense, pc)
}

// MatchString reports whether the pattern matches anywhere in s.
func (p *pattern) MatchString(s string) bool {
	if p.complete {
		return strings.Contains(s, p.prefix)
	}
	m, _ := p.machines.Get().(*machine)
	if m == nil {
		n := len(p.prog.Inst)
		m = &machine{cur: newThreads(n), next: newThreads(n)}
	}
	found := m.run(p, s)
	p.machines.Put(m)
	return found
}

func (m *machine) run(p *pattern, s string) bool {
	m.cur.dense, m.next.dense = m.cur.dense[:0], m.next.dense[:0]
	prev := rune(-1) // the rune before pos; -1 at the start
	r, width := decode(s, 0)
	for pos := 0; ; {
		if p.prefix != "" && len(m.cur.dense) == 0 {
			// Nothing is running: skip to where a match can start.
			i := strings.Index(s[pos:], p.prefix)
			if i < 0 {
				return false
			}
			if i > 0 {
				pos += i
				prev, _ = utf8.DecodeLastRuneInString(s[:pos])
				r, width = decode(s, pos)
			}
		}
		if pos == 0 || !p.anchored {
			if m.add(&m.cur, p.prog, uint32(p.prog.Start), syntax.EmptyOpContext(prev, r)) {
				return true
			}
		}
		if len(m.cur.dense) == 0 && p.anchored {
			return false
		}
		if r < 0 {
			return false // the end: every thread still running needs more input
		}
		nextPos := pos + width
		nextR, nextWidth := decode(s, nextPos)
		ctx := syntax.EmptyOpContext(r, nextR)
		for _, pc := range m.cur.dense {
			inst := &p.prog.Inst[pc]
			var ok bool
			switch inst.Op {
			case syntax.InstRune:
				ok = inst.MatchRune(r)
			case syntax.InstRune1:
				ok = r == inst.Rune[0]
			case syntax.InstRuneAny:
				ok = true
			case syntax.InstRuneAnyNotNL:
				ok = r != '\n'
			}
			if ok && m.add(&m.next, p.prog, inst.Out, ctx) {
				return true
			}
		}
		m.cur, m.next = m.next, m.cur
		m.next.dense = m.next.dense[:0]
		prev, r, width, pos = r, nextR, nextWidth, nextPos
	}
}

// add puts pc on t with every instruction it reaches without consuming
// input, where ctx holds the empty-width conditions true here. It reports
// whether that reaches a match.
func (m *machine) add(t *threads, prog *syntax.Prog, pc uint32, ctx syntax.EmptyOp) bool {
	stack := append(m.stack[:0], pc)
	found := false
	for len(stack) > 0 && !found {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.has(pc) {
			continue
		}
		t.insert(pc)
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstMatch:
			found = true
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, inst.Arg, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^ctx == 0 {
				stack = append(stack, inst.Out)
			}
		case syntax.InstNop, syntax.InstCapture:
			stack = append(stack, inst.Out)
		}
	}
	m.stack = stack[:0]
	return found
}

// decode is the rune at pos and its width, or -1 at the end.
func decode(s string, pos int) (rune, int) {
	if pos >= len(s) {
		return -1, 0
	}
	if c := s[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[pos:])
}
