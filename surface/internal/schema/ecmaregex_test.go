package schema

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pling.dev/agent/surface/internal/strictjson"
)

// ecmaCases are patterns with strings ECMA-262 (Unicode mode) matches and
// strings it does not: the vectors of the JSON Schema Test Suite's
// ecmascript-regex tests, the whitespace an ASCII \s misses, and each
// construct the translation rewrites. TestECMAPatternAgainstNode holds the
// same table to V8's own RegExp.
var ecmaCases = []struct {
	pattern     string
	match, miss []string
}{
	{`^\S+$`, []string{"abc", "a\u2013b", "\u0001"}, []string{"a\u00a0b", "a\u2003b", "a\ufeffb", "a\u2029b", "a\u000bb", "a b", "a\tb", "a\u3000b", "a\u1680b", "a\u202fb", "a\u205fb", "a\u2028b"}},
	{`^\s$`, []string{" ", "\t", "\u000b", "\f", "\u00a0", "\ufeff", "\n", "\r", "\u2028", "\u2029", "\u2003", "\u3000", "\u1680"}, []string{"\u0001", "\u2013", "\u180e", "\u200b", "a"}},
	{`^[\s]+$`, []string{"\u00a0 \u2003"}, []string{"\u00a0x"}},
	{`^[^\s]+$`, []string{"ab"}, []string{"a\u00a0", "\ufeff"}},
	{`^[\S]+$`, []string{"ab"}, []string{"a\u00a0"}},
	{`^[^\S]+$`, []string{"\u00a0\u2029"}, []string{"a"}},
	{`^[a\S]$`, []string{"a", "b"}, []string{"\u00a0"}},
	{`^[^a\s]$`, []string{"b"}, []string{"a", "\u2003"}},
	{`^\d+$`, []string{"0123456789"}, []string{"\u09ea\u09e8", "\u0660", "\uff11"}},
	{`^\D$`, []string{"\u07c0", "a"}, []string{"0"}},
	{`^\w+$`, []string{"aZ09_"}, []string{"\u00e9", "\u212a", "\u017f", "-"}},
	{`^\W$`, []string{"\u00e9", "-"}, []string{"a", "_"}},
	{`\bcole`, []string{"l'cole", "cole", "\u00e9cole"}, []string{"ecole", "_cole"}},
	{`\Bcole`, []string{"ecole", "_cole"}, []string{"l'cole", "\u00e9cole"}},
	{`^.$`, []string{"a", "\u00e9", "\U0001F600", "\t", "\u0085"}, []string{"\n", "\r", "\u2028", "\u2029", ""}},
	{`^[^]$`, []string{"\n", "a", "\u2028"}, []string{"", "ab"}},
	{`^[]?$`, []string{""}, []string{"a"}},
	{`^abc$`, []string{"abc"}, []string{"abc\n", "\nabc", "xabc"}},
	{`^\t\n\v\f\r$`, []string{"\t\n\v\f\r"}, []string{`\t\n\v\f\r`}},
	{`^\cC\cc$`, []string{"\u0003\u0003"}, []string{"cCcc"}},
	{`^\0$`, []string{"\u0000"}, []string{"0"}},
	{`^\x41\u0042\u{43}\u{1F600}\uD83D\uDE00$`, []string{"ABC\U0001F600\U0001F600"}, []string{"ABC"}},
	{`^[\u{1F600}-\u{1F64F}]+$`, []string{"\U0001F600\U0001F64F"}, []string{"\U0001F650"}},
	{`^\p{Letter}cole`, []string{"\u00e9cole"}, []string{"\u00c9COLE", "1cole"}},
	{`^\p{L}+$`, []string{"\u00e9\u4e2d"}, []string{"1"}},
	{`^\P{L}+$`, []string{"12"}, []string{"a"}},
	{`^\p{digit}+$`, []string{"42", "\u09ea\u09e8"}, []string{"-%#"}},
	{`^\p{Nd}$`, []string{"\u0660"}, []string{"a"}},
	{`^\p{gc=Lu}\p{General_Category=Ll}$`, []string{"Ab"}, []string{"aB"}},
	{`^\p{Script=Greek}+$`, []string{"\u03b1\u03b2"}, []string{"a"}},
	{`^\p{sc=Latin}$`, []string{"a"}, []string{"\u03b1"}},
	{`^[\p{Lu}\d]+$`, []string{"A1"}, []string{"a"}},
	{`^[^\p{Lu}]$`, []string{"a"}, []string{"A"}},
	{`^\p{Any}$`, []string{"\n", "\U0010FFFF"}, []string{""}},
	{`^\p{ASCII}+$`, []string{"abc~"}, []string{"\u0080"}},
	{`^[\b]$`, []string{"\b"}, []string{"b"}},
	{`^[a-]$`, []string{"a", "-"}, []string{"b"}},
	{`^[-a]$`, []string{"a", "-"}, []string{"b"}},
	{`^[\-z]$`, []string{"-", "z"}, []string{"a"}},
	{`^[.*+?()|{}$^/]+$`, []string{".*+?()|{}$^/"}, []string{"a"}},
	{`^\.\*\+\?\(\)\[\]\{\}\|\/\\\^\$$`, []string{`.*+?()[]{}|/\^$`}, []string{"a"}},
	{`^(?:ab|cd)+$`, []string{"abcdab"}, []string{"abc"}},
	{`^(?<year>\d{4})-(\d{2})$`, []string{"2026-12"}, []string{"26-12"}},
	{`^a{2,3}?$`, []string{"aa", "aaa"}, []string{"a", "aaaa"}},
	{`^a{2,}$`, []string{"aa", "aaaaa"}, []string{"a"}},
	{`^a{0}b$`, []string{"b"}, []string{"ab"}},
	{`^a{01}b{0,02}$`, []string{"a", "abb"}, []string{"a{01}", "abbb"}},
	{`^$`, []string{""}, []string{"\n"}},
	{`é`, []string{"café"}, []string{"cafe"}},
	{` `, []string{"a b"}, []string{"ab"}},
	{``, []string{"", "a"}, nil},
}

// ecmaRefused are patterns that are not ECMA-262 (in Unicode mode) or that
// RE2 cannot express; each refuses the schema.
var ecmaRefused = []string{
	`(?=a)`, `(?!a)`, `(?<=a)b`, `(?<!a)b`, `(a)\1`, `(?<n>a)\k<n>`,
	`\a`, `\e`, `\z`, `\A`, `\Z`, `\Q.\E`, `\pL`, `\p{Letter`, `\p{Cn}`, `\p{C}`, `\p{LC}`, `\p{Emoji}`,
	`\p{Script_Extensions=Greek}`, `\p{sc=Grek}`, `\p{scx=Latin}`, `\p{letter}`,
	`(?i)abc`, `(?i:abc)`, `(?P<n>a)`, `(?#c)a`, `(?<n>a)(?<n>b)`, `(?<é>a)`,
	`[[:alpha:]]`, `a{`, `a{1`, `a{,2}`, `a{2,1}`, `{1}`, `*a`, `a**`, `a+*`, `^*`, `\b+`, `]`, `}`, `(`, `)`, `a)`, `[a`,
	`[z-a]`, `[\d-z]`, `[a-\w]`, `[\B]`, `\B[`, `\c1`, `\c`, `\x4`, `\xGG`, `\u12`, `\u{110000}`, `\u{}`, `\uD800`, `[\uDC00]`,
	`\00`, `\01`, `\-`, `\`, `a{1001}`, `\c_`,
	strings.Repeat("(", 101) + strings.Repeat(")", 101),
}

func TestECMAPattern(t *testing.T) {
	for _, tc := range ecmaCases {
		t.Run(tc.pattern, func(t *testing.T) {
			s, err := Compile([]byte(`{"pattern":` + strconv.Quote(tc.pattern) + `}`))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			for _, m := range tc.match {
				if vs := s.Validate(m); len(vs) != 0 {
					t.Errorf("%+q: %s, want a match", m, fmtViolations(vs))
				}
			}
			for _, m := range tc.miss {
				if vs := s.Validate(m); len(vs) == 0 {
					t.Errorf("%+q matched, want no match", m)
				} else if want := "does not match pattern " + quote(tc.pattern); vs[0].Message != want {
					t.Errorf("message %q, want %q", vs[0].Message, want)
				}
			}
		})
	}
	for _, p := range ecmaRefused {
		t.Run("refused "+p, func(t *testing.T) {
			for _, doc := range []string{`{"pattern":` + strconv.Quote(p) + `}`, `{"patternProperties":{` + strconv.Quote(p) + `:false}}`} {
				if _, err := Compile([]byte(doc)); err == nil {
					t.Errorf("compiled %s", doc)
				}
			}
		})
	}
}

// TestECMAPatternAgainstNode runs every table case, and every refused
// pattern, through V8's RegExp with the u flag: the table says what
// ECMA-262 says, and a pattern V8 accepts is refused here only as one RE2
// cannot express.
func TestECMAPatternAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node is needed to compare patterns with V8: %v", err)
		}
		t.Skip("node is not on PATH; make test requires it")
	}
	type probe struct {
		Pattern string   `json:"pattern"`
		Inputs  []string `json:"inputs"`
	}
	var probes []probe
	for _, tc := range ecmaCases {
		probes = append(probes, probe{tc.pattern, append(append([]string{}, tc.match...), tc.miss...)})
	}
	for _, p := range ecmaRefused {
		probes = append(probes, probe{p, nil})
	}
	in, _ := json.Marshal(probes)
	script := `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
		const out=JSON.parse(s).map(({pattern,inputs})=>{
			let re; try { re=new RegExp(pattern,"u"); } catch { return null; }
			return (inputs||[]).map(x=>re.test(x));
		});
		process.stdout.write(JSON.stringify(out));
	});`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	var got [][]bool
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(probes) {
		t.Fatalf("node answered %s", out)
	}
	for i, tc := range ecmaCases {
		if got[i] == nil {
			t.Errorf("V8 refuses %q", tc.pattern)
			continue
		}
		for j, m := range tc.match {
			if !got[i][j] {
				t.Errorf("V8: %q does not match %+q; the table says it does", tc.pattern, m)
			}
		}
		for j, m := range tc.miss {
			if got[i][len(tc.match)+j] {
				t.Errorf("V8: %q matches %+q; the table says it does not", tc.pattern, m)
			}
		}
	}
	for i, p := range ecmaRefused {
		_, err := compilePattern(p)
		valid := got[len(ecmaCases)+i] != nil
		untranslatable := errors.Is(err, errUnsupported)
		// A pattern V8 accepts must be refused as untranslatable, never as
		// invalid; one V8 refuses may be refused either way (property
		// names are not all known here).
		if valid && !untranslatable {
			t.Errorf("%q: V8 accepts it, refused here as invalid: %v", p, err)
		}
	}
}

// TestJSONSchemaTestSuitePatterns runs the suite's pattern,
// patternProperties and optional ecmascript-regex tests: every schema
// compiles and every verdict is the suite's.
func TestJSONSchemaTestSuitePatterns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "jsts", "*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("suite files: %v %v", files, err)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(raw, &groups); err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			s, err := Compile(g.Schema)
			if err != nil {
				t.Errorf("%s: %s: Compile: %v", filepath.Base(f), g.Description, err)
				continue
			}
			for _, tc := range g.Tests {
				inst, err := strictjson.Decode(tc.Data, strictjson.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if valid := len(checkBothModes(t, s, inst)) == 0; valid != tc.Valid {
					t.Errorf("%s: %s: %s: valid = %v, want %v", filepath.Base(f), g.Description, tc.Description, valid, tc.Valid)
				}
				n++
			}
		}
	}
	if n < 80 {
		t.Errorf("only %d suite tests ran", n)
	}
}

// FuzzECMAPattern: parsing never panics and is deterministic; every
// pattern that compiles matches exactly the strings Go's regexp matches
// with the same tree (printed as RE2 syntax), so the matcher in match.go
// agrees with regexp's; and on patterns written only with constructs whose
// meaning is the same in RE2 and in ECMA-262 (no ".", \s, \S, \v, escapes
// of code points, property classes, empty classes or group syntax), both
// match exactly what Go's regexp matches with the pattern as written.
func FuzzECMAPattern(f *testing.F) {
	for _, tc := range ecmaCases {
		f.Add(tc.pattern, strings.Join(tc.match, ""))
	}
	for _, p := range ecmaRefused {
		f.Add(p, "a")
	}
	f.Add(`^[a-c]+\d{2,3}(x|yz)*$`, "ab12xyz")
	f.Add(`\bfoo\B`, "a fooo")
	f.Add(`[^a-z0-9_]`, "A")
	f.Add(`(a|ab)(c|bcd)(d*)$`, "abcd")
	f.Add(`x*$`, "xxy")
	f.Add(`\b`, "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 512 || !utf8.ValidString(s) {
			return
		}
		tree, err := ecmaPattern(pattern)
		tree2, err2 := ecmaPattern(pattern)
		if (err == nil) != (err2 == nil) || (err == nil && !tree.Equal(tree2)) {
			t.Fatalf("parsing %q is not deterministic", pattern)
		}
		if err != nil {
			return
		}
		p, err := compilePattern(pattern)
		if err != nil {
			t.Fatalf("%q parses but does not compile: %v", pattern, err)
		}
		re, err := regexp.Compile(tree.String())
		if err != nil {
			t.Fatalf("%q prints as %q, which RE2 refuses: %v", pattern, tree, err)
		}
		got := p.MatchString(s)
		if want := re.MatchString(s); got != want {
			t.Fatalf("%q (as %q) matches %q: %v; regexp: %v", pattern, tree, s, got, want)
		}
		for _, divergent := range []string{".", `\s`, `\S`, `\v`, `\p`, `\P`, `\u`, `\x`, `\c`, `\0`, `\f`, `\t`, `\n`, `\r`, "(?", "[]", "[^]", `\b`, "{0"} {
			// RE2 reads {01} as text, ECMA-262 as a count.
			if strings.Contains(pattern, divergent) {
				return
			}
		}
		if strings.ContainsFunc(pattern, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
			return
		}
		orig, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		if want := orig.MatchString(s); got != want {
			t.Fatalf("%q (as %q) matches %q: %v; RE2 on the pattern as written: %v", pattern, tree, s, got, want)
		}
	})
}
