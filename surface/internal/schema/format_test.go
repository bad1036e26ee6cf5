package schema

import (
	"encoding/json"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	v5 "github.com/santhosh-tekuri/jsonschema/v5"
)

// formatCase lists strings a format accepts and refuses. The verdicts are
// the reference implementation's (TestFormatTables checks they still are),
// edge cases mostly from the JSON-Schema-Test-Suite; "quirk" marks the ones
// where the reference departs from the RFC and this package follows it.
type formatCase struct {
	format         string
	valid, invalid []string
}

var formatCases = []formatCase{
	{"date-time",
		[]string{"1963-06-19T08:30:06.283185Z", "1963-06-19T08:30:06Z", "1937-01-01T12:00:27.87+00:20",
			"1990-12-31T15:59:50.123-08:00", "1998-12-31T23:59:60Z", "1998-12-31T15:59:60.123-08:00",
			"1963-06-19t08:30:06.283185z", "2020-02-29T00:00:00+00:00"},
		[]string{"1990-02-31T15:59:59.123-08:00", "1990-12-31T15:59:59-24:00", "1998-12-31T23:58:60Z",
			"1998-12-31T22:59:60Z", "06/19/1963 08:30:06 PST", "2013-350T01:01:01", "1963-6-19T08:30:06.283185Z",
			"1963-06-1T08:30:06.283185Z", "1963-06-1৪T00:00:00Z", "1963-06-11T0৪:00:00Z",
			"2026-05-01 10:00:00Z", "2026-05-01T10:00:00", "2026-05-01", ""}},
	{"date",
		[]string{"1963-06-19", "2020-01-31", "2020-02-29", "2021-12-31", "0001-01-01"},
		[]string{"2021-02-29", "2020-02-30", "2020-13-01", "2020-00-01", "1998-04-31", "06/19/1963", "2013-350",
			"1998-1-20", "1998-01-1", "1963-06-1৪", "20230328", "2023-W13-2", "2020-01-01T00:00:00Z", " 2020-01-01", ""}},
	{"time",
		[]string{"08:30:06Z", "08:30:06z", "23:59:60Z", "23:59:60+00:00", "22:59:60-01:00", "08:30:06.283185Z",
			"08:30:06+00:20", "08:30:06-08:00", "00:29:60+00:30", "00:00:60-23:59",
			"+1:00:00Z"}, // quirk: hours are read with strconv.Atoi
		[]string{"08:30:06 PST", "01:01:01,1111", "008:030:006Z", "8:3:6Z", "8:0030:6Z", "22:59:60Z",
			"23:59:60+01:00", "24:00:00Z", "00:60:00Z", "00:00:61Z", "01:02:03+24:00", "01:02:03+00:60",
			"01:02:03Z+00:30", "08:30:06.Z", "08:30:06", "12:00:00.52", "1২:00:00Z", "-1:00:00Z", ""}},
	{"duration",
		[]string{"P4DT12H30M5S", "P4Y", "PT0S", "P0D", "P1M", "PT1M", "PT36H", "P2W", "P1Y2M3D", "PT1H30M", "P1DT1S", "P1Y2M3DT4H5M6S"},
		[]string{"PT1D", "P", "P1YT", "PT", "P2D1Y", "P1D2H", "P2S", "P1Y2W", "P1W1D", "P1", "PT1.5S", "P৪Y",
			"P1Y2M3D4D", "PT1H2M3S4S", "P" + strings.Repeat("0:", 8<<10), "P1Y" + strings.Repeat("1D", 8<<10),
			"4DT12H30M5S", "p1d", "P1Y3D", // quirk: ISO 8601 allows a gap between units
			""}},
	{"period",
		[]string{"2026-01-01T00:00:00Z/2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z/P1M", "P1D/2026-01-01T00:00:00Z"},
		[]string{"P1D/P2D", "2026-01-01/2026-02-01", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z/", "/P1D", ""}},
	{"hostname",
		[]string{"www.example.com", "xn--4gbwdl.xn--wgbh1c", "example.com.", "a", "1host", "hostname-with-hyphen",
			strings.Repeat("a", 63) + ".com", strings.Repeat("a.", 126) + "a",
			"a.-b.com"}, // quirk: only the first label is checked for a leading hyphen
		[]string{"-a-host-name-that-starts-with--", "not_a_valid_host_name", strings.Repeat("a", 64) + ".com",
			"host-.example", "", ".", "example..com", "ex ample.com", "ümlaut.example", strings.Repeat("a.", 127) + "a",
			"example.com..", ".example.com"}},
	{"email",
		[]string{"joe.bloggs@example.com", "te~st@example.com", "~test@example.com", "test~@example.com",
			`"joe bloggs"@example.com`, `"joe..bloggs"@example.com`, `"a\"b"@example.com`, "joe.bloggs@[127.0.0.1]",
			"joe.bloggs@[IPv6:::1]", "用户@example.com", "a+tag@sub.example.co", "!#$%&'*+-/=?^_`{|}~@example.com",
			" a@example.com", // quirk: leading blanks are skipped
			"x y@[1.2.3.4]"}, // quirk: with a bracketed domain the local part is not checked
		[]string{"2962", ".test@example.com", "test.@example.com", "te..st@example.com", "joe.bloggs@invalid=domain.com",
			"joe.bloggs@[127.0.0.300]", "a@example.com.", `""@example.com`, "a b@example.com", "a@b@example.com",
			"@example.com", "a@", "Joe <joe@example.com>", strings.Repeat("a", 65) + "@example.com",
			"a@-example.com", "a(b)@example.com", "a\xff@example.com", `"a@example.com`, `"a"b@example.com`,
			"a@example.com (Joe)", "a\t@example.com", "joe.bloggs@[IPv6:1.2.3.4]", ""}},
	{"ipv4",
		[]string{"192.168.0.1", "0.0.0.0", "255.255.255.255", "87.10.0.1",
			"+1.2.3.4", "00.1.2.3"}, // quirk: octets are read with strconv.Atoi
		[]string{"127.0.0.0.1", "256.256.256.256", "127.0", "0x7f000001", "2130706433", "087.10.0.1", "1.2.3.4\n",
			"1২7.0.0.1", "192.168.1.0/24", "", "1..2.3", "1.2.3.", " 1.2.3.4", "-1.2.3.4"}},
	{"ipv6",
		[]string{"::1", "::", "::abef", "1:2:3:4:5:6:7:8", "::ffff:192.168.0.1", "1::", "1:2:3:4:5:6::8",
			"1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:d6::42", "1::d6:192.168.0.1", "1:2::192.168.0.1", "::42:ff:1",
			"FF::", "100:100::100:100", "1:2:3:4:5:6:1.2.3.4", "0:0:0:0:0:0:0:0"},
		[]string{"12345::", "::abcef", "1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1", "::laptop", ":2:3:4:5:6:7:8",
			"1:2:3:4:5:6:7:", "1::2::3", "::1.2.3", "::1.2.3.04", "1:2:3:4:5:6:7:8:1.2.3.4", "1.2.3.4",
			"fe80::1%eth0", "fe80::a%", " ::1", "::1 ", "1:2:3:4:5:6:7:8::", "1:2:3:4:5:6:7::8", ":::",
			"1:::2", "1:2:3:4:5:6:7", "1:2:3:4:5:1.2.3.4", "1.2.3.4::", "::1.2.3.4:1", "::ffff:1.2.3.4.5", ""}},
	{"uri",
		[]string{"http://foo.bar/?baz=qux#quux", "http://foo.com/blah_(wiki)#cite-1",
			"http://foo.bar/?q=Test%20URL-encoded%20stuff", "http://xn--nw2a.xn--j6w193g/",
			"http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com", "http://223.255.255.254",
			"ftp://ftp.is.co.za/rfc/rfc1808.txt", "ldap://[2001:db8::7]/c=GB?objectClass?one",
			"mailto:John.Doe@example.com", "news:comp.infosystems.www.servers.unix", "tel:+1-816-555-1212",
			"urn:oasis:names:specification:docbook:dtd:xml:4.1.2", "http://[::1]:8080/", "https://例え.テスト/パス",
			"file:///etc/hosts", "http://user@host:/", "http://h%C3%A9.example/", "http://h%25.example/",
			"http://example.com/a b"}, // quirk: the reader is lenient about characters in paths
		[]string{"//foo.bar/?baz=qux#quux", "/abc", `\\WINDOWS\fileshare`, "abc", "http:// shouldfail.com",
			":// should fail", "bar,baz:foo", "http://[::1", "http://[1.2.3.4]/", "http://[fe80::1%25en0]/",
			"http://a:b:c/", "http://a:1:2/", "foo://a:b:80/", "http://example.com:8x/", "http://exa%mple.com/",
			"http://example.com/%zz", "http://example.com/\x01", "http://h%41.example/", "http://a[b/",
			"http://us er@host/", "http://x/#%zz", ""}},
	{"uri-reference",
		[]string{"http://foo.bar/?baz=qux#quux", "//foo.bar/?baz=qux#quux", "/abc", "abc", "#fragment", "", "?query",
			"*", "a/b:c", "///a", "#\x01",
			"a b"}, // quirk: spaces pass
		[]string{`\\WINDOWS\fileshare`, `#frag\ment`, "http://[::1", ":abc", "1a:b", "#%zz", "a\x7f", "//[::1]x/"}},
	{"uri-template",
		[]string{"http://example.com/dictionary/{term:1}/{term}", "http://example.com/dictionary",
			"dictionary/{term:1}/{term}", "", "mailto:{user}", "http://example.com/a?{b}"},
		[]string{"http://example.com/dictionary/{term:1}/{term", "http://example.com/{{x}}", "http://example.com/}x{",
			"http://example.com/x{/y}", "http://{host}/", "http://example.com/{?query}", "{a"}},
	{"regex",
		[]string{`([abc])+\s+$`, `^\p{L}+$`, "", "a{1,3}", `(?i)x`},
		[]string{"^(abc]", "(?<=x)y", `\`, "a**", "[z-a]"}},
	{"json-pointer",
		[]string{"/foo/bar~0/baz~1/%a", "", "/", "/foo//bar", "/~0~1", "/a~01", "/ü"},
		[]string{"/foo/bar~", "#", "#/", "a", "/~2", "/~-1", "~0", "/a~"}},
	{"relative-json-pointer",
		[]string{"1", "0/foo/bar", "2/0/baz/1/zip", "0#", "120/foo/bar", "0"},
		[]string{"/foo/bar", "-1/foo/bar", "+1/foo/bar", "0##", "01/a", "01#", "", "#", "0 #", "1~"}},
	{"uuid",
		[]string{"2EB8AA08-AA98-11EA-B4AA-73B441D16380", "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
			"00000000-0000-0000-0000-000000000000", "98d80576-482e-427f-8434-7f86890ab222"},
		[]string{"2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8-aa08-aa98-11ea-b4aa73b441d16380",
			"2eb8aa08aa9811eab4aa73b441d16380", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
			"2eb8aa08-aa98-11ea-b4aa-73b441d1638g", "2eb8aa08-aa98-11ea-b4aa-73b441d163800", ""}},
}

// formatAliases share a check with the format named next to them.
var formatAliases = map[string]string{
	"ip-address": "ipv4", "iri": "uri", "uriref": "uri-reference", "iri-reference": "uri-reference",
}

// TestFormatTables: each format accepts and refuses what its table says,
// through Compile and Validate with the reference's message, and the
// reference agrees with every row.
func TestFormatTables(t *testing.T) {
	byName := map[string]formatCase{}
	for _, fc := range formatCases {
		byName[fc.format] = fc
	}
	for alias, name := range formatAliases {
		byName[alias] = formatCase{alias, byName[name].valid, byName[name].invalid}
	}
	for name, fc := range byName {
		s := mustCompile(t, `{"format":`+strconv.Quote(name)+`}`)
		check := func(str string, want bool) {
			t.Run(name+"/"+strconv.Quote(str), func(t *testing.T) {
				if ref := v5.Formats[name](str); ref != want {
					t.Fatalf("table says %v, the reference says %v", want, ref)
				}
				vs := checkBothModes(t, s, str)
				if want {
					if len(vs) != 0 {
						t.Fatalf("refused: %s", fmtViolations(vs))
					}
					return
				}
				wantMsg := quote(str) + " is not valid " + quote(name)
				if len(vs) != 1 || vs[0].Keyword != "format" || vs[0].InstancePath != "" || vs[0].Message != wantMsg {
					t.Fatalf("got %s, want one format violation %q", fmtViolations(vs), wantMsg)
				}
			})
		}
		for _, str := range fc.valid {
			check(str, true)
		}
		for _, str := range fc.invalid {
			check(str, false)
		}
	}
}

// TestFormatNames: exactly the reference's format names are asserted.
func TestFormatNames(t *testing.T) {
	var ours, ref []string
	for name := range formats {
		ours = append(ours, name)
	}
	for name := range v5.Formats {
		ref = append(ref, name)
	}
	sort.Strings(ours)
	sort.Strings(ref)
	if !slices.Equal(ours, ref) {
		t.Fatalf("asserted formats %q, the reference asserts %q", ours, ref)
	}
	tabled := map[string]bool{}
	for _, fc := range formatCases {
		tabled[fc.format] = true
	}
	for _, name := range ours {
		if !tabled[name] && formatAliases[name] == "" {
			t.Errorf("format %q has no table", name)
		}
	}
}

// formatCorpus is every table string plus values of other types.
func formatCorpus() []string {
	seen := map[string]bool{}
	var out []string
	for _, fc := range formatCases {
		for _, list := range [][]string{fc.valid, fc.invalid} {
			for _, s := range list {
				if !seen[s] {
					seen[s] = true
					b, _ := json.Marshal(s)
					out = append(out, string(b))
				}
			}
		}
	}
	return append(out, `1`, `1.5`, `-0`, `true`, `null`, `[]`, `["a@b.example"]`, `{"a":"::1"}`)
}

// TestFormatDifferential: every format name (and a few the reference does
// not know) in every dialect, over the whole corpus: same verdict and
// message as the reference configured as the kernel used it.
func TestFormatDifferential(t *testing.T) {
	corpus := formatCorpus()
	if len(corpus) < 80 {
		t.Fatalf("corpus has %d strings", len(corpus))
	}
	names := []string{"idn-email", "idn-hostname", "iri", "x-unknown"}
	for name := range formats {
		names = append(names, name)
	}
	sort.Strings(names)
	dialects := []string{"", `"$schema":"https://json-schema.org/draft/2020-12/schema",`,
		`"$schema":"https://json-schema.org/draft/2019-09/schema",`, `"$schema":"http://json-schema.org/draft-07/schema#",`}
	compared, failed := 0, 0
	for _, d := range dialects {
		for _, name := range names {
			src := `{` + d + `"format":` + strconv.Quote(name) + `}`
			ours := mustCompile(t, src)
			ref, err := refCompile(src)
			if err != nil {
				t.Fatalf("reference refuses %s: %v", src, err)
			}
			for _, instSrc := range corpus {
				inst := mustDecode(t, instSrc)
				got := checkBothModes(t, ours, inst)
				want, ok := refValidate(ref, inst)
				if !ok {
					t.Fatalf("reference panicked on %s with %s", src, instSrc)
				}
				compared++
				var gm, wm []string
				for _, v := range got {
					gm = append(gm, v.InstancePath+" "+v.Keyword+" "+v.Message)
				}
				for _, l := range want {
					wm = append(wm, l.path+" "+l.keyword+" "+l.message)
				}
				if !slices.Equal(gm, wm) {
					failed++
					t.Errorf("%s with %s\nours: %q\nref:  %q", src, instSrc, gm, wm)
					if failed > 20 {
						t.FailNow()
					}
				}
			}
		}
	}
	t.Logf("%d comparisons over %d values", compared, len(corpus))
}

// TestFormatNonStrings: formats judge strings only.
func TestFormatNonStrings(t *testing.T) {
	for name := range formats {
		s := mustCompile(t, `{"format":`+strconv.Quote(name)+`}`)
		for _, inst := range []any{nil, true, json.Number("1"), 2.5, 7, []any{"x"}, map[string]any{"a": "x"}} {
			if vs := checkBothModes(t, s, inst); len(vs) != 0 {
				t.Errorf("%s refuses %#v: %s", name, inst, fmtViolations(vs))
			}
		}
	}
}

// TestDraft07Content: draft-07 asserts base64 and application/json content;
// other dialects do not.
func TestDraft07Content(t *testing.T) {
	const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	tests := []struct {
		name, schema, inst string
		want               []string // "keyword message"
	}{
		{"base64 ok", `{` + d7 + `"contentEncoding":"base64"}`, `"aGVsbG8="`, nil},
		{"base64 bad", `{` + d7 + `"contentEncoding":"base64"}`, `"aGVsbG8"`, []string{"contentEncoding value is not base64 encoded"}},
		{"base64 skips numbers", `{` + d7 + `"contentEncoding":"base64"}`, `5`, nil},
		{"json ok", `{` + d7 + `"contentMediaType":"application/json"}`, `"[1,2]"`, nil},
		{"json bad", `{` + d7 + `"contentMediaType":"application/json"}`, `"[1,"`, []string{"contentMediaType value is not of mediatype 'application/json'"}},
		{"json number out of float range", `{` + d7 + `"contentMediaType":"application/json"}`, `"1e400"`, []string{"contentMediaType value is not of mediatype 'application/json'"}},
		{"base64 then json ok", `{` + d7 + `"contentEncoding":"base64","contentMediaType":"application/json"}`, `"eyJhIjoxfQ=="`, nil},
		{"base64 then json bad", `{` + d7 + `"contentEncoding":"base64","contentMediaType":"application/json"}`, `"bm90IGpzb24="`, []string{"contentMediaType value is not of mediatype 'application/json'"}},
		{"undecodable: only the encoding fails", `{` + d7 + `"contentEncoding":"base64","contentMediaType":"application/json"}`, `"!!"`, []string{"contentEncoding value is not base64 encoded"}},
		{"unknown encoding skips the media type", `{` + d7 + `"contentEncoding":"quoted-printable","contentMediaType":"application/json"}`, `"["`, nil},
		{"unknown media type", `{` + d7 + `"contentMediaType":"text/csv"}`, `"a,\"b"`, nil},
		{"2020-12 annotation", `{"contentEncoding":"base64","contentMediaType":"application/json"}`, `"!!"`, nil},
		{"2019-09 annotation", `{"$schema":"https://json-schema.org/draft/2019-09/schema","contentMediaType":"application/json"}`, `"["`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			vs := checkBothModes(t, s, mustDecode(t, tc.inst))
			var got []string
			for _, v := range vs {
				got = append(got, v.Keyword+" "+v.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			ref, err := refCompile(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := refValidate(ref, mustDecode(t, tc.inst))
			var rm []string
			for _, l := range want {
				rm = append(rm, l.keyword+" "+l.message)
			}
			if !slices.Equal(got, rm) {
				t.Fatalf("reference says %q, ours %q", rm, got)
			}
		})
	}
}

// compareFormats checks every asserted format against the reference's own
// check for one string (FuzzValidate feeds it arbitrary bytes).
func compareFormats(t *testing.T, s string) {
	t.Helper()
	for name, check := range formats {
		if got, want := check(s), v5.Formats[name](s); got != want {
			t.Fatalf("format %s of %q: %v, reference says %v", name, s, got, want)
		}
	}
}

// formatPieces are fragments that random strings are assembled from, chosen
// so that the assembled strings land near the edges of the format grammars.
var formatPieces = []string{
	"a", "Z", "0", "1", "9", "255", "256", "01", "+1", "-0", "ff", "FFFF", "12345", "g", "é", "日", "\xff",
	".", "..", ":", "::", "/", "//", "///", "?", "#", "@", "[", "]", "%", "%25", "%41", "%C3%A9", "%zz", "%",
	"{", "}", "~", "~0", "~2", "-", "_", "!", "'", "(", ")", "*", ",", ";", "=", "<", ">", `"`, `\`, " ", "\t",
	"\x01", "\x7f", "http", "https", "mailto", "T", "Z", "P", "W", "Y", "M", "D", "H", "S", "IPv6:",
	"1.2.3.4", "::1", "fe80::1", "example.com", "x.example.", "2026-05-01", "10:00:00", "23:59:60", "+01:00",
	"2eb8aa08-aa98-11ea-b4aa-73b441d16380",
}

// TestFormatRandom: assembled strings, fixed seed; every format agrees with
// the reference's own check.
func TestFormatRandom(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	r := rand.New(rand.NewSource(20260502))
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.Reset()
		for k := r.Intn(8) + 1; k > 0; k-- {
			b.WriteString(formatPieces[r.Intn(len(formatPieces))])
		}
		compareFormats(t, b.String())
	}
}

// FuzzFormats: every format agrees with the reference's own check on any
// string.
func FuzzFormats(f *testing.F) {
	for _, fc := range formatCases {
		for _, list := range [][]string{fc.valid, fc.invalid} {
			for _, s := range list {
				f.Add(s)
			}
		}
	}
	f.Fuzz(compareFormats)
}
