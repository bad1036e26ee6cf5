package schema

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// formats holds the check for every format name this package asserts. The
// set and the verdicts are those of the Go validator the kernel used
// before (see the package documentation), quirks included, so a string it
// accepted is still accepted and one it refused is still refused. Other
// names are annotations. Every check applies to strings only.
//
// net/url, net/mail and net are kept out of the build on purpose (they
// weigh too much in the page's WebAssembly), so the checks that leaned on
// them are written out here with the same verdicts.
var formats = map[string]func(string) bool{
	"date-time":             isDateTime,
	"date":                  isDate,
	"time":                  isTime,
	"duration":              isDuration,
	"period":                isPeriod,
	"hostname":              isHostname,
	"email":                 isEmail,
	"ip-address":            isIPv4, // the draft-03 name
	"ipv4":                  isIPv4,
	"ipv6":                  isIPv6,
	"uri":                   isURI,
	"iri":                   isURI,
	"uri-reference":         isURIReference,
	"uriref":                isURIReference, // an old name
	"iri-reference":         isURIReference,
	"uri-template":          isURITemplate,
	"regex":                 isGoRegexp,
	"json-pointer":          isJSONPointer,
	"relative-json-pointer": isRelativeJSONPointer,
	"uuid":                  isUUID,
}

// isDateTime: RFC 3339 date-time, "T" in either case.
func isDateTime(s string) bool {
	return len(s) >= 20 && (s[10] == 'T' || s[10] == 't') && isDate(s[:10]) && isTime(s[11:])
}

// isDate: RFC 3339 full-date, a real day of a real month, with the verdict
// of time.Parse("2006-01-02", s): four digits, two, two, any year from
// 0000. (time.Parse would link time's layout parser into the module.)
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDigit(s[i]) {
			return false
		}
	}
	year := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	month := int(s[5]-'0')*10 + int(s[6]-'0')
	day := int(s[8]-'0')*10 + int(s[9]-'0')
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}

// isTime: RFC 3339 full-time. The numeric fields are read the way
// strconv.Atoi reads them (so "+1" passes as an hour, as it did before);
// second 60 is allowed only at 23:59 UTC, after applying the offset.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := atoiIn(s[0:2], 23)
	m, ok2 := atoiIn(s[3:5], 59)
	sec, ok3 := atoiIn(s[6:8], 60)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	rest := s[8:]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	switch {
	case rest == "z" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		zh, ok1 := atoiIn(rest[1:3], 23)
		zm, ok2 := atoiIn(rest[4:6], 59)
		if !ok1 || !ok2 {
			return false
		}
		off := zh*60 + zm
		if rest[0] == '+' {
			off = -off
		}
		utc := h*60 + m + off
		if utc < 0 {
			utc += 24 * 60
		}
		h, m = utc/60, utc%60
	default:
		return false
	}
	return sec != 60 || (h == 23 && m == 59)
}

func atoiIn(s string, max int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= max
}

// isDuration: the ISO 8601 duration of RFC 3339 appendix A. Units come in
// order without gaps (P1Y2M, P2M3D, but not P1Y3D), weeks stand alone.
func isDuration(s string) bool {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok {
		return false
	}
	units, rest, ok := durationUnits(rest)
	if !ok {
		return false
	}
	if units == "W" {
		return rest == ""
	}
	if units != "" {
		if !strings.Contains("YMD", units) {
			return false
		}
		if rest == "" {
			return true
		}
	}
	rest, ok = strings.CutPrefix(rest, "T")
	if !ok {
		return false
	}
	units, rest, ok = durationUnits(rest)
	return ok && rest == "" && units != "" && strings.Contains("HMS", units)
}

// durationUnits reads number-unit pairs up to a "T" or the end and returns
// the unit letters in order.
func durationUnits(s string) (units, rest string, ok bool) {
	for s != "" && s[0] != 'T' {
		n := 0
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if n == 0 || n == len(s) || len(units) == 3 {
			// Over three units is never one of the orders a duration
			// allows; stopping here also keeps an agent's long string from
			// costing quadratic time in the concatenation.
			return "", "", false
		}
		units += s[n : n+1]
		s = s[n+1:]
	}
	return units, s, true
}

// isPeriod: start/end, start/duration or duration/end.
func isPeriod(s string) bool {
	start, end, ok := strings.Cut(s, "/")
	if !ok {
		return false
	}
	if isDateTime(start) {
		return isDateTime(end) || isDuration(end)
	}
	return isDuration(start) && isDateTime(end)
}

// isHostname: RFC 1123 labels of letters, digits and hyphens, 1 to 63
// bytes each, 253 in all, an optional final dot. Only the first label is
// held to not starting with a hyphen, as before.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 || s == "" || s[0] == '-' {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) < 1 || len(label) > 63 || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

// isEmail: an RFC 5322 addr-spec, at most 254 bytes with a local part of at
// most 64, whose domain is a hostname without a final dot or a bracketed
// address ([192.0.2.1], [IPv6:2001:db8::1]). As before, a bracketed domain
// is checked alone and the local part in front of it is not.
func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false
	}
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(ip)
	}
	return isHostname(domain) && !strings.HasSuffix(domain, ".") && isLocalPart(local)
}

// isLocalPart: a dot-atom or a non-empty quoted string, after optional
// leading spaces and tabs; UTF-8 is allowed (RFC 6532), broken UTF-8 is not.
func isLocalPart(s string) bool {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return false
	}
	if s[0] == '"' {
		return isQuotedLocal(s)
	}
	if s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for s != "" {
		r, size := utf8.DecodeRuneInString(s)
		if size == 1 && r == utf8.RuneError || !isAtext(r) {
			return false
		}
		s = s[size:]
	}
	return true
}

// isQuotedLocal: s is exactly one quoted string holding at least one
// character.
func isQuotedLocal(s string) bool {
	n, escaped := 0, false
	for i := 1; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case size == 1 && r == utf8.RuneError:
			return false
		case escaped:
			if !isVchar(r) && r != ' ' && r != '\t' {
				return false
			}
			n++
			escaped = false
		case r == '"':
			return i == len(s) && n > 0
		case r == '\\':
			escaped = true
		case isVchar(r) || r == ' ' || r == '\t':
			n++
		default:
			return false
		}
	}
	return false
}

// isVchar: a visible character, any non-ASCII one included.
func isVchar(r rune) bool { return '!' <= r && r <= '~' || r >= utf8.RuneSelf }

// isAtext: an RFC 5322 atom character, or a dot.
func isAtext(r rune) bool {
	return isVchar(r) && !strings.ContainsRune(`()<>[]:;@\,"`, r)
}

// isIPv4: four dot-separated decimal numbers up to 255 without leading
// zeros, each read by strconv.Atoi as before (which lets "+1", "-0" and
// "00" through).
func isIPv4(s string) bool {
	n := 0
	for group := range strings.SplitSeq(s, ".") {
		if n++; n > 4 {
			return false
		}
		v, err := strconv.Atoi(group)
		if err != nil || v < 0 || v > 255 || v != 0 && group[0] == '0' {
			return false
		}
	}
	return n == 4
}

// isIPv6: RFC 4291 text form, "::" at most once and standing for at least
// one group, an optional dotted IPv4 tail, no zone.
func isIPv6(s string) bool {
	// The text must start as an IPv6 address: a '.' before any ':' reads
	// as IPv4 and fails, as does a zone ('%').
	if i := strings.IndexAny(s, ".:%"); i < 0 || s[i] != ':' || strings.IndexByte(s, '%') >= 0 {
		return false
	}
	head, tail, ellipsis := strings.Cut(s, "::")
	groups := 0
	// count adds up the groups of one side of "::"; the dotted tail counts
	// as two and may only end the address.
	count := func(part string, tailOK bool) bool {
		if part == "" {
			return true
		}
		fields := strings.Split(part, ":")
		for i, f := range fields {
			switch {
			case tailOK && i == len(fields)-1 && strings.IndexByte(f, '.') >= 0:
				if !isStrictIPv4(f) {
					return false
				}
				groups += 2
			case len(f) >= 1 && len(f) <= 4 && isHex(f):
				groups++
			default:
				return false
			}
		}
		return true
	}
	if !ellipsis {
		return count(head, true) && groups == 8
	}
	return count(head, false) && count(tail, true) && groups <= 7
}

// isStrictIPv4 is the IPv4 tail of an IPv6 address: decimal, no signs, no
// leading zeros.
func isStrictIPv4(s string) bool {
	n := 0
	for group := range strings.SplitSeq(s, ".") {
		if n++; n > 4 || group == "" || len(group) > 3 || len(group) > 1 && group[0] == '0' {
			return false
		}
		v := 0
		for i := 0; i < len(group); i++ {
			if !isDigit(group[i]) {
				return false
			}
			v = v*10 + int(group[i]-'0')
		}
		if v > 255 {
			return false
		}
	}
	return n == 4
}

// isURI: a URI reference with a scheme.
func isURI(s string) bool {
	scheme, _, ok := readURI(s)
	return ok && scheme
}

// isURIReference: a URI or a relative reference; never a backslash.
func isURIReference(s string) bool {
	_, _, ok := readURI(s)
	return ok && strings.IndexByte(s, '\\') < 0
}

// isURITemplate: a URI reference whose path segments hold balanced,
// unnested braces (RFC 6570 checked no further).
func isURITemplate(s string) bool {
	_, path, ok := readURI(s)
	if !ok {
		return false
	}
	for seg := range strings.SplitSeq(path, "/") {
		open := false
		for i := 0; i < len(seg); i++ {
			switch seg[i] {
			case '{':
				if open {
					return false
				}
				open = true
			case '}':
				if !open {
					return false
				}
				open = false
			}
		}
		if open {
			return false
		}
	}
	return true
}

// readURI reads s as a URI reference with the leniency of Go's URL parser,
// which the previous validator used (spaces and most other characters
// pass in paths, queries and fragments), plus its demand that a host with
// a colon be a bracketed IPv6 address. It reports whether s has a scheme
// and its path ("" for the opaque "scheme:rest" form).
func readURI(s string) (scheme bool, path string, ok bool) {
	s, frag, _ := strings.Cut(s, "#")
	if !validEscapes(frag) {
		return false, "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false, "", false
		}
	}
	rest := s
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.') {
			continue
		}
		if c == ':' {
			if i == 0 {
				return false, "", false
			}
			scheme, rest = true, s[i+1:]
		}
		break
	}
	rest, _, _ = strings.Cut(rest, "?")
	if !strings.HasPrefix(rest, "/") {
		if scheme {
			return true, "", true
		}
		// A relative path's first segment cannot hold a colon: it would
		// read as a scheme.
		if seg, _, _ := strings.Cut(rest, "/"); strings.IndexByte(seg, ':') >= 0 {
			return false, "", false
		}
	}
	if strings.HasPrefix(rest, "//") && (scheme || !strings.HasPrefix(rest, "///")) {
		auth := rest[2:]
		rest = ""
		if i := strings.IndexByte(auth, '/'); i >= 0 {
			auth, rest = auth[:i], auth[i:]
		}
		if !validAuthority(auth) {
			return false, "", false
		}
	}
	return scheme, rest, validEscapes(rest)
}

// validAuthority checks [userinfo@]host[:port].
func validAuthority(auth string) bool {
	host := auth
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user := auth[:at]
		host = auth[at+1:]
		for i := 0; i < len(user); i++ {
			if c := user[i]; !isAlnum(c) && !strings.ContainsRune("-._:~!$&'()*+,;=%@", rune(c)) {
				return false
			}
		}
		if !validEscapes(user) {
			return false
		}
	}
	switch i := strings.LastIndexByte(host, '['); {
	case i > 0:
		return false
	case i == 0:
		end := strings.LastIndexByte(host, ']')
		return end > 0 && validPort(host[end+1:]) && isIPv6(host[1:end])
	}
	// Without brackets a colon can only introduce the port.
	if i := strings.IndexByte(host, ':'); i >= 0 && !validPort(host[i:]) {
		return false
	}
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c == '%':
			// Only non-ASCII bytes, and '%' itself, may be escaped.
			if i+2 >= len(host) || !isHex(host[i+1:i+3]) || host[i+1] < '8' && host[i:i+3] != "%25" {
				return false
			}
			i += 2
		case c >= utf8.RuneSelf, isAlnum(c), strings.IndexByte("-_.~!$&'()*+,;=:[]<>\"", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validPort: empty, or a colon and digits.
func validPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// validEscapes: every '%' starts a two-digit hex escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1:i+3]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// isJSONPointer: RFC 6901, "" or "/..." with "~" only in "~0" and "~1".
func isJSONPointer(s string) bool {
	if s != "" && s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || s[i+1] != '0' && s[i+1] != '1') {
			return false
		}
	}
	return true
}

// isRelativeJSONPointer: a non-negative integer without leading zeros,
// then "#" or a JSON pointer.
func isRelativeJSONPointer(s string) bool {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
		if s[0] == '0' {
			break
		}
	}
	if n == 0 {
		return false
	}
	return s[n:] == "#" || isJSONPointer(s[n:])
}

// isUUID: 8-4-4-4-12 hex digits, either case, any version.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i : i+1]) {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
