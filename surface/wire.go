package surface

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the JSON encoding of v to dst and returns the extended
// buffer. The bytes are exactly what encoding/json.Marshal(v) produces (the
// same field order, omissions, sorted map keys, number forms and escapes,
// including \u003c, \u003e, \u0026, \u2028 and \u2029), and it fails where
// Marshal fails.
//
// It exists because encoding/json works by reflection, which costs about
// five times more under WebAssembly than natively, and the kernel encodes a
// response on every request. The wire types of this package (Response,
// Description, Error, Observation, AuditEvent, CallContext, ViewQuery) and
// plain JSON trees (map[string]any, []any, string, json.Number, bool, nil,
// numbers, json.RawMessage) are written directly; any other value is handed
// to encoding/json. Under js/wasm, where encoding/json is not linked (see
// stdjson.go), such a value is an error instead.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	w := wire{b: dst}
	w.value(v)
	if w.err != nil {
		return dst, w.err
	}
	if w.slow {
		// Something the direct path does not reproduce exactly (an invalid
		// json.RawMessage, a time outside RFC 3339): let encoding/json decide.
		b, err := marshalStd(v)
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	return w.b, nil
}

// wire is an append-only JSON writer. err is a failure encoding/json also
// reports; slow means the value needs encoding/json to be encoded exactly.
type wire struct {
	b    []byte
	err  error
	slow bool
	// shared is where a cached capability list was spliced in, if one was.
	shared SharedCaps
}

func (w *wire) raw(s string) { w.b = append(w.b, s...) }

func (w *wire) str(s string) { w.b = appendQuoted(w.b, s) }

func (w *wire) int(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }

func (w *wire) bool(v bool) {
	if v {
		w.raw("true")
	} else {
		w.raw("false")
	}
}

// optStr writes ,"name":"s" unless s is empty (omitempty after a first field).
func (w *wire) optStr(key, s string) {
	if s != "" {
		w.raw(key)
		w.str(s)
	}
}

func (w *wire) optInt(key string, n int64) {
	if n != 0 {
		w.raw(key)
		w.int(n)
	}
}

func (w *wire) strings(list []string) {
	if list == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '[')
	for i, s := range list {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.str(s)
	}
	w.b = append(w.b, ']')
}

// value writes one value of any type.
func (w *wire) value(v any) {
	switch x := v.(type) {
	case nil:
		w.raw("null")
	case string:
		w.str(x)
	case bool:
		w.bool(x)
	case json.Number:
		w.number(x)
	case float64:
		w.float(x, 64)
	case float32:
		w.float(float64(x), 32)
	case int:
		w.int(int64(x))
	case int64:
		w.int(x)
	case int32:
		w.int(int64(x))
	case uint64:
		w.b = strconv.AppendUint(w.b, x, 10)
	case map[string]any:
		w.object(x)
	case []any:
		w.array(x)
	case []string:
		w.strings(x)
	case json.RawMessage:
		w.rawMessage(x)
	case *Response:
		if x == nil {
			w.raw("null")
		} else {
			w.response(x)
		}
	case *Description:
		if x == nil {
			w.raw("null")
		} else {
			w.description(x)
		}
	case *Error:
		if x == nil {
			w.raw("null")
		} else {
			w.error(x)
		}
	case *Observation:
		if x == nil {
			w.raw("null")
		} else {
			w.observation(x)
		}
	case AuditEvent:
		w.auditEvent(&x)
	case *AuditEvent:
		if x == nil {
			w.raw("null")
		} else {
			w.auditEvent(x)
		}
	case CallContext:
		w.callContext(&x)
	case ViewQuery:
		w.viewQuery(&x)
	default:
		b, err := marshalStd(v)
		if err != nil {
			w.err = err
			return
		}
		w.b = append(w.b, b...)
	}
}

func (w *wire) object(m map[string]any) {
	if m == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '{')
	if len(m) == 1 {
		for k, v := range m {
			w.str(k)
			w.b = append(w.b, ':')
			w.value(v)
		}
		w.b = append(w.b, '}')
		return
	}
	// encoding/json sorts keys; small objects sort on the stack.
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.str(k)
		w.b = append(w.b, ':')
		w.value(m[k])
	}
	w.b = append(w.b, '}')
}

func (w *wire) array(list []any) {
	if list == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '[')
	for i, v := range list {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.value(v)
	}
	w.b = append(w.b, ']')
}

// number writes a json.Number as its text; encoding/json writes "" as 0 and
// refuses text that is not a JSON number.
func (w *wire) number(n json.Number) {
	s := string(n)
	if s == "" {
		s = "0"
	}
	if !validNumber(s) {
		w.slow = true
		return
	}
	w.raw(s)
}

// float writes f as encoding/json does (like an ECMAScript number to string
// conversion); NaN and infinities are not JSON.
func (w *wire) float(f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.slow = true
		return
	}
	if bits == 64 && f > 0 && f < maxThousandths {
		// A whole number of thousandths (a duration in milliseconds
		// measured in microseconds, as every audit event has) is written
		// from its integer: the shortest text that reads back as f is then
		// that decimal (see maxThousandths), and strconv's search for it
		// costs more under WebAssembly than the rest of the event.
		if m := math.Round(f * 1000); m/1000 == f {
			w.b = appendThousandths(w.b, int64(m))
			return
		}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, bits)
	if format == 'e' {
		// e-09 -> e-9
		n := len(w.b)
		if n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

// rawMessage writes embedded JSON compacted, as encoding/json does. Input
// the compactor is not sure of is left to encoding/json.
func (w *wire) rawMessage(m json.RawMessage) {
	if m == nil {
		w.raw("null")
		return
	}
	b, ok := appendCompact(w.b, m)
	if !ok {
		w.slow = true
		return
	}
	w.b = b
}

func (w *wire) response(r *Response) {
	w.raw(`{"protocol":`)
	w.str(r.Protocol)
	w.raw(`,"id":`)
	w.str(r.ID)
	w.raw(`,"ok":`)
	w.bool(r.OK)
	if r.Result != nil {
		w.raw(`,"result":`)
		w.value(r.Result)
	}
	if r.After != nil {
		w.raw(`,"after":`)
		w.observation(r.After)
	}
	if r.Error != nil {
		w.raw(`,"error":`)
		w.error(r.Error)
	}
	w.b = append(w.b, '}')
}

func (w *wire) description(d *Description) {
	w.raw(`{"protocol":`)
	w.str(d.Protocol)
	w.optStr(`,"app":`, d.App)
	w.raw(`,"capabilities":`)
	if d.capsJSON != nil && len(d.Capabilities) == d.capsLen {
		start := len(w.b)
		w.b = append(w.b, d.capsJSON...)
		if d.capsID != 0 {
			w.shared = SharedCaps{ID: d.capsID, Start: start, End: len(w.b)}
		}
	} else {
		w.capabilities(d.Capabilities)
	}
	w.optInt(`,"capabilitiesTotal":`, int64(d.CapabilitiesTotal))
	if d.CapabilitiesUnchanged {
		w.raw(`,"capabilitiesUnchanged":true`)
	}
	w.raw(`,"context":`)
	w.context(&d.Context)
	w.b = append(w.b, '}')
}

func (w *wire) capabilities(caps []Capability) {
	if caps == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '[')
	for i := range caps {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.capability(&caps[i])
	}
	w.b = append(w.b, ']')
}

func (w *wire) capability(c *Capability) {
	w.raw(`{"id":`)
	w.str(c.ID)
	w.optStr(`,"description":`, c.Description)
	if len(c.InputSchema) > 0 {
		w.raw(`,"inputSchema":`)
		w.rawMessage(c.InputSchema)
	}
	w.optStr(`,"effect":`, c.Effect)
	w.optStr(`,"approval":`, c.Approval)
	w.optStr(`,"fidelity":`, c.Fidelity)
	w.optStr(`,"source":`, c.Source)
	if len(c.ScopePath) > 0 {
		w.raw(`,"scopePath":`)
		w.strings(c.ScopePath)
	}
	w.optStr(`,"handoff":`, c.Handoff)
	if len(c.FlowSteps) > 0 {
		w.raw(`,"flowSteps":`)
		w.strings(c.FlowSteps)
	}
	if c.Offscreen {
		w.raw(`,"offscreen":true`)
	}
	if r := c.Record; r != nil {
		w.raw(`,"record":{"param":`)
		w.str(r.Param)
		w.raw(`,"total":`)
		w.int(int64(r.Total))
		w.optInt(`,"offscreen":`, int64(r.Offscreen))
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, '}')
}

func (w *wire) context(c *Context) {
	w.b = append(w.b, '{')
	if c.Route != "" {
		w.raw(`"route":`)
		w.str(c.Route)
		w.b = append(w.b, ',')
	}
	w.raw(`"regions":`)
	if c.Regions == nil {
		w.raw("null")
	} else {
		w.b = append(w.b, '[')
		for i := range c.Regions {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			r := &c.Regions[i]
			w.raw(`{"id":`)
			w.str(r.ID)
			w.optStr(`,"label":`, r.Label)
			w.optStr(`,"description":`, r.Description)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.optInt(`,"regionsTotal":`, int64(c.RegionsTotal))
	w.raw(`,"records":`)
	if c.Records == nil {
		w.raw("null")
	} else {
		w.b = append(w.b, '[')
		for i := range c.Records {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			r := &c.Records[i]
			w.raw(`{"id":`)
			w.str(r.ID)
			w.optStr(`,"kind":`, r.Kind)
			if len(r.Fields) > 0 {
				w.raw(`,"fields":`)
				w.object(r.Fields)
			}
			if r.Offscreen {
				w.raw(`,"offscreen":true`)
			}
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.raw(`,"recordIds":`)
	w.strings(c.RecordIDs)
	w.raw(`,"recordIdsTotal":`)
	w.int(int64(c.RecordIDsTotal))
	w.raw(`,"state":`)
	w.object(c.State)
	w.optInt(`,"stateTotal":`, int64(c.StateTotal))
	w.raw(`,"feedback":`)
	if c.Feedback == nil {
		w.raw("null")
	} else {
		w.b = append(w.b, '[')
		for i := range c.Feedback {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			f := &c.Feedback[i]
			w.b = append(w.b, '{')
			if f.Level != "" {
				w.raw(`"level":`)
				w.str(f.Level)
				w.b = append(w.b, ',')
			}
			w.raw(`"message":`)
			w.str(f.Message)
			w.optStr(`,"record":`, f.Record)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.raw(`,"unavailable":`)
	if c.Unavailable == nil {
		w.raw("null")
	} else {
		w.b = append(w.b, '[')
		for i := range c.Unavailable {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			u := &c.Unavailable[i]
			w.raw(`{"id":`)
			w.str(u.ID)
			w.optStr(`,"reason":`, u.Reason)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.raw(`,"recordsTotal":`)
	w.int(int64(c.RecordsTotal))
	w.raw(`,"feedbackTotal":`)
	w.int(int64(c.FeedbackTotal))
	w.raw(`,"unavailableTotal":`)
	w.int(int64(c.UnavailableTotal))
	w.b = append(w.b, '}')
}

func (w *wire) error(e *Error) {
	w.raw(`{"code":`)
	w.str(string(e.Code))
	w.raw(`,"message":`)
	w.str(e.Message)
	w.optInt(`,"retryAfterMs":`, e.RetryAfterMs)
	if len(e.Violations) > 0 {
		w.raw(`,"violations":[`)
		for i := range e.Violations {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			v := &e.Violations[i]
			w.raw(`{"instancePath":`)
			w.str(v.InstancePath)
			w.raw(`,"keyword":`)
			w.str(v.Keyword)
			w.raw(`,"message":`)
			w.str(v.Message)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, '}')
}

func (w *wire) observation(o *Observation) {
	// Every member may be omitted, so commas are placed as members come.
	w.b = append(w.b, '{')
	sep := ""
	if len(o.Records) > 0 {
		w.raw(`"records":[`)
		for i := range o.Records {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			r := &o.Records[i]
			w.raw(`{"id":`)
			w.str(r.ID)
			if len(r.Fields) > 0 {
				w.raw(`,"fields":`)
				w.object(r.Fields)
			}
			w.optInt(`,"fieldsOmitted":`, int64(r.FieldsOmitted))
			if r.Removed {
				w.raw(`,"removed":true`)
			}
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
		sep = ","
	}
	if o.RecordsOmitted != 0 {
		w.raw(sep + `"recordsOmitted":`)
		w.int(int64(o.RecordsOmitted))
		sep = ","
	}
	if len(o.State) > 0 {
		w.raw(sep + `"state":`)
		w.object(o.State)
		sep = ","
	}
	if o.StateOmitted != 0 {
		w.raw(sep + `"stateOmitted":`)
		w.int(int64(o.StateOmitted))
	}
	w.b = append(w.b, '}')
}

func (w *wire) auditEvent(ev *AuditEvent) {
	w.raw(`{"requestId":`)
	w.str(ev.RequestID)
	w.raw(`,"method":`)
	w.str(ev.Method)
	w.optStr(`,"capability":`, ev.Capability)
	w.optStr(`,"recordId":`, ev.RecordID)
	w.optStr(`,"sessionId":`, ev.SessionID)
	w.optStr(`,"agentId":`, ev.AgentID)
	w.optStr(`,"userId":`, ev.UserID)
	w.optStr(`,"delegationId":`, ev.DelegationID)
	w.raw(`,"outcome":`)
	w.str(string(ev.Outcome))
	w.optStr(`,"code":`, ev.Code)
	w.optStr(`,"approval":`, ev.Approval)
	w.raw(`,"durationMs":`)
	w.float(ev.DurationMs, 64)
	w.raw(`,"time":`)
	w.time(ev.Time)
	w.b = append(w.b, '}')
}

// time writes t as time.Time.MarshalJSON does: RFC 3339 with nanoseconds.
// Years outside 0-9999 and offsets of a day or more are not RFC 3339, and
// encoding/json refuses them.
func (w *wire) time(t time.Time) {
	_, offset := t.Zone()
	s := stampOf(t, offset)
	if !s.ok {
		w.slow = true
		return
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s.clock[:]...)
	w.b = appendNanos(w.b, t.Nanosecond())
	w.b = append(w.b, s.zone...)
	w.b = append(w.b, '"')
}

// stamp is the text of one second in one zone: the date and clock, and the
// zone's suffix. Every audit event carries its time, and requests come many
// to a second, so the last stamp is kept and only the nanoseconds are
// written for each: working out the date (twice, with the year check) cost
// about as much, under WebAssembly, as the rest of the event together.
type stamp struct {
	unix   int64
	offset int
	ok     bool     // a year of 0-9999 and an offset under a day
	clock  [19]byte // 2006-01-02T15:04:05
	zone   string   // Z or -07:00
}

var lastStamp atomic.Pointer[stamp]

// stampOf answers the stamp of t's second in a zone offset seconds east of
// UTC (t.Zone's), reusing the last one when it is that second's.
func stampOf(t time.Time, offset int) *stamp {
	unix := t.Unix()
	if s := lastStamp.Load(); s != nil && s.unix == unix && s.offset == offset {
		return s
	}
	s := &stamp{unix: unix, offset: offset}
	if y := t.Year(); y >= 0 && y <= 9999 && offset > -24*3600 && offset < 24*3600 {
		s.ok = true
		appendDateClock(s.clock[:0], t)
		s.zone = string(appendZone(nil, offset))
	}
	lastStamp.Store(s)
	return s
}

// appendDateClock appends 2006-01-02T15:04:05, as t.AppendFormat does for
// years 0 to 9999, which would bring time's whole layout formatter.
func appendDateClock(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	b = appendPadded(b, year, 4)
	b = append(b, '-')
	b = appendPadded(b, int(month), 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	b = append(b, 'T')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, min, 2)
	b = append(b, ':')
	return appendPadded(b, sec, 2)
}

// appendNanos appends .999999999 without its trailing zeros; nothing for 0.
func appendNanos(b []byte, ns int) []byte { return appendFraction(b, ns, 9) }

// appendFraction appends n (0 <= n < 10^digits) as the digits after a
// decimal point, without trailing zeros; nothing for 0.
func appendFraction(b []byte, n, digits int) []byte {
	if n == 0 {
		return b
	}
	b = append(b, '.')
	b = appendPadded(b, n, digits)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// appendZone appends Z or -07:00 for an offset in seconds east of UTC;
// seconds of an offset are not written.
func appendZone(b []byte, offset int) []byte {
	if offset == 0 {
		return append(b, 'Z')
	}
	zone := offset / 60
	if zone < 0 {
		b = append(b, '-')
		zone = -zone
	} else {
		b = append(b, '+')
	}
	b = appendPadded(b, zone/60, 2)
	b = append(b, ':')
	return appendPadded(b, zone%60, 2)
}

// maxThousandths bounds the floats float writes from their thousandths.
// Below it, half a float64's spacing (f times 2^-53) is far under 0.001, so
// no other decimal with as few significant digits as m/1000 reads back as
// the same float: m/1000 is the shortest text, as strconv would find.
const maxThousandths = 1e12

// appendThousandths appends m/1000 in decimal, without trailing zeros.
func appendThousandths(b []byte, m int64) []byte {
	b = strconv.AppendInt(b, m/1000, 10)
	return appendFraction(b, int(m%1000), 3)
}

// appendPadded appends n (not negative) in decimal, zero-padded to width.
func appendPadded(b []byte, n, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for n >= 10 || width > 1 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	i--
	buf[i] = byte('0' + n)
	return append(b, buf[i:]...)
}

func (w *wire) callContext(c *CallContext) {
	w.raw(`{"requestId":`)
	w.str(c.RequestID)
	w.raw(`,"capability":`)
	w.str(c.Capability)
	w.optStr(`,"record":`, c.Record)
	w.optStr(`,"sessionId":`, c.SessionID)
	w.optStr(`,"agentId":`, c.AgentID)
	w.optStr(`,"userId":`, c.UserID)
	w.optStr(`,"delegationId":`, c.DelegationID)
	w.b = append(w.b, '}')
}

func (w *wire) viewQuery(q *ViewQuery) {
	w.b = append(w.b, '{')
	if len(q.IDs) > 0 {
		w.raw(`"ids":`)
		w.strings(q.IDs)
		w.b = append(w.b, ',')
	}
	w.raw(`"offset":`)
	w.int(int64(q.Offset))
	w.raw(`,"limit":`)
	w.int(int64(q.Limit))
	w.raw(`,"maxRecordIds":`)
	w.int(int64(q.MaxRecordIDs))
	w.b = append(w.b, '}')
}

// plainASCII marks the ASCII bytes a JSON string can hold as they are under
// encoding/json's HTML-safe escaping: printable, and not ", \, <, > or &.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// plainInString marks the bytes a string literal in embedded JSON is
// copied with unchanged and without a closer look: not ", \, a control
// character, <, >, &, or 0xE2 (which may start U+2028 or U+2029).
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string, escaped as encoding/json escapes
// it: control characters, ", \, <, > and & escaped, U+2028 and U+2029 as
// \u2028 and \u2029, and each byte of invalid UTF-8 as \ufffd. JSON.parse
// reads the result back as exactly s (for valid UTF-8).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// validNumber reports whether s is a JSON number (RFC 8259 grammar).
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// maxCompactDepth bounds the nesting appendCompact follows; deeper input is
// left to encoding/json, which has its own limit.
const maxCompactDepth = 512

// appendCompact appends the JSON text src without insignificant whitespace,
// with <, >, &, U+2028 and U+2029 escaped, as encoding/json writes a
// json.RawMessage. It reports false, leaving the caller to fall back, for
// anything that is not one well-formed JSON value.
func appendCompact(dst, src []byte) ([]byte, bool) {
	c := compactor{dst: dst, src: src}
	c.space()
	if !c.value(0) {
		return dst, false
	}
	c.space()
	if c.pos != len(src) {
		return dst, false
	}
	return c.dst, true
}

type compactor struct {
	dst, src []byte
	pos      int
	// checkTop, when set, makes rewritten report whether a member name
	// of the outermost object is one the result conventions rewrite.
	checkTop, rewritten bool
}

func (c *compactor) space() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *compactor) value(depth int) bool {
	if c.pos >= len(c.src) || depth > maxCompactDepth {
		return false
	}
	switch ch := c.src[c.pos]; {
	case ch == '{':
		if c.open('{', '}') {
			return true
		}
		for {
			keyAt := c.pos + 1
			if c.pos >= len(c.src) || c.src[c.pos] != '"' || !c.string() {
				return false
			}
			if depth == 0 && c.checkTop && !c.rewritten {
				c.rewritten = rewrittenKey(c.src[keyAt : c.pos-1])
			}
			c.space()
			if c.pos >= len(c.src) || c.src[c.pos] != ':' {
				return false
			}
			c.dst = append(c.dst, ':')
			c.pos++
			c.space()
			if !c.value(depth + 1) {
				return false
			}
			if done, ok := c.after('}'); done {
				return ok
			}
		}
	case ch == '[':
		if c.open('[', ']') {
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			if done, ok := c.after(']'); done {
				return ok
			}
		}
	case ch == '"':
		return c.string()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-' || ('0' <= ch && ch <= '9'):
		start := c.pos
		for c.pos < len(c.src) && numberByte(c.src[c.pos]) {
			c.pos++
		}
		if !validNumber(string(c.src[start:c.pos])) {
			return false
		}
		c.dst = append(c.dst, c.src[start:c.pos]...)
		return true
	}
	return false
}

// open copies the opening bracket at pos and reports whether the container
// is empty, in which case its closing bracket is copied too.
func (c *compactor) open(opening, closing byte) (empty bool) {
	c.dst = append(c.dst, opening)
	c.pos++
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == closing {
		c.dst = append(c.dst, closing)
		c.pos++
		return true
	}
	return false
}

// after reads what follows a container's element: a comma (not done, so
// the next element follows), the closing bracket (done, ok), or anything
// else (done, not ok).
func (c *compactor) after(closing byte) (done, ok bool) {
	c.space()
	if c.pos >= len(c.src) {
		return true, false
	}
	switch c.src[c.pos] {
	case ',':
		c.dst = append(c.dst, ',')
		c.pos++
		c.space()
		return false, false
	case closing:
		c.dst = append(c.dst, closing)
		c.pos++
		return true, true
	}
	return true, false
}

func numberByte(b byte) bool {
	return '0' <= b && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

func (c *compactor) literal(lit string) bool {
	if len(c.src)-c.pos < len(lit) || string(c.src[c.pos:c.pos+len(lit)]) != lit {
		return false
	}
	c.dst = append(c.dst, lit...)
	c.pos += len(lit)
	return true
}

// string copies one string literal, escaping <, >, &, U+2028 and U+2029 as
// encoding/json's compaction does; other bytes, invalid UTF-8 included, are
// kept as they are.
func (c *compactor) string() bool {
	c.dst = append(c.dst, '"')
	c.pos++
	start := c.pos
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		if plainInString[ch] {
			c.pos++
			continue
		}
		switch {
		case ch == '"':
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '"')
			c.pos++
			return true
		case ch < 0x20:
			return false
		case ch == '\\':
			if c.pos+1 >= len(c.src) {
				return false
			}
			switch c.src[c.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.pos += 2
			case 'u':
				if c.pos+6 > len(c.src) {
					return false
				}
				for _, h := range c.src[c.pos+2 : c.pos+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				c.pos += 6
			default:
				return false
			}
		case ch == '<' || ch == '>' || ch == '&':
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
			c.pos++
			start = c.pos
		case ch == 0xE2 && c.pos+2 < len(c.src) && c.src[c.pos+1] == 0x80 && c.src[c.pos+2]&^1 == 0xA8:
			c.dst = append(c.dst, c.src[start:c.pos]...)
			c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[c.src[c.pos+2]&0xF])
			c.pos += 3
			start = c.pos
		default:
			c.pos++
		}
	}
	return false
}
