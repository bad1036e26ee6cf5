package devtools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const testMax = 1 << 10

// testBounds bound replies and events alike at testMax.
var testBounds = Bounds{Reply: testMax, Event: testMax}

// bigEvent is a console event of n bytes in all, as Chromium writes it.
func bigEvent(n int, session string) string {
	pre := `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"`
	post := `"}]}`
	if session != "" {
		post += `,"sessionId":"` + session + `"`
	}
	post += `}`
	return pre + strings.Repeat("x", n-len(pre)-len(post)) + post
}

// bigReply is a reply of n bytes in all to id, as Chromium writes it.
func bigReply(n int, id int, session string) string {
	pre := fmt.Sprintf(`{"id":%d,"result":{"result":{"type":"string","value":"`, id)
	post := `"}}`
	if session != "" {
		post += `,"sessionId":"` + session + `"`
	}
	post += `}`
	return pre + strings.Repeat(`\"`, (n-len(pre)-len(post))/2) + strings.Repeat("y", (n-len(pre)-len(post))%2) + post
}

// filtered runs Filter over msgs (each ended by a zero byte), read through
// wrap, and returns the messages it passed on and its log.
func filtered(t *testing.T, b Bounds, wrap func(io.Reader) io.Reader, msgs ...string) ([]string, []string) {
	t.Helper()
	var in bytes.Buffer
	for _, m := range msgs {
		in.WriteString(m)
		in.WriteByte(0)
	}
	var out bytes.Buffer
	var log []string
	err := Filter(&out, wrap(&in), b, func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() > 0 && out.Bytes()[out.Len()-1] != 0 {
		t.Fatalf("output does not end with a zero byte: %q", out.String())
	}
	var got []string
	for m := range bytes.SplitSeq(bytes.TrimSuffix(out.Bytes(), []byte{0}), []byte{0}) {
		if out.Len() > 0 {
			got = append(got, string(m))
		}
	}
	return got, log
}

func identity(r io.Reader) io.Reader { return r }

func TestFilter(t *testing.T) {
	const session = "8A1B2C3D4E5F60718293A4B5C6D7E8F9"
	small := `{"id":7,"result":{}}`
	smallEvent := `{"method":"Page.frameNavigated","params":{"frame":{"id":"F","url":"https://a.example/"}},"sessionId":"` + session + `"}`
	errorFor := func(id int, session string, size int) string {
		s := fmt.Sprintf(`{"id":%d,`, id)
		if session != "" {
			s += `"sessionId":"` + session + `",`
		}
		return s + fmt.Sprintf(`"error":{"code":%d,"message":"DevTools reply of %d bytes is larger than the bound of %d bytes; skipped unread"}}`, ErrorCode, size, testMax)
	}
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantLog []string
	}{
		{"small messages pass as they are", []string{small, smallEvent}, []string{small, smallEvent}, nil},
		{"a message exactly at the bound passes", []string{bigEvent(testMax, session), small}, []string{bigEvent(testMax, session), small}, nil},
		{"a reply exactly at the bound passes", []string{bigReply(testMax, 3, session)}, []string{bigReply(testMax, 3, session)}, nil},
		{
			"an event one byte over is dropped, the next passes",
			[]string{bigEvent(testMax+1, session), small},
			[]string{small},
			[]string{"skipped a 1025-byte message (event Runtime.consoleAPICalled), larger than the bound of 1024 bytes; dropped"},
		},
		{
			"a huge event is dropped, the next passes",
			[]string{bigEvent(1<<20, ""), smallEvent},
			[]string{smallEvent},
			[]string{"(event Runtime.consoleAPICalled)"},
		},
		{
			"a reply over the bound becomes an error for its id in its session",
			[]string{bigReply(5000, 42, session), small},
			[]string{errorFor(42, session, 5000), small},
			[]string{"skipped a 5000-byte message (reply to 42), larger than the bound of 1024 bytes; answered with an error"},
		},
		{
			"a reply of the browser itself over the bound",
			[]string{bigReply(5001, 9, "")},
			[]string{errorFor(9, "", 5001)},
			[]string{"(reply to 9)"},
		},
		{
			"an oversized message whose id cannot be read is dropped",
			[]string{`{"result":{"id":5,` + strings.Repeat("z", 2000) + `}}`, small},
			[]string{small},
			[]string{"(unreadable), larger than the bound of 1024 bytes; dropped"},
		},
		{
			"garbage over the bound is dropped",
			[]string{strings.Repeat("\xff\x01", 1500), small},
			[]string{small},
			[]string{"(unreadable)"},
		},
		{"empty messages are skipped", []string{"", small, ""}, []string{small}, nil},
	}
	for _, tc := range tests {
		for _, wrap := range []struct {
			name string
			f    func(io.Reader) io.Reader
		}{{"whole", identity}, {"byte by byte", iotest.OneByteReader}, {"half reads", iotest.HalfReader}} {
			t.Run(tc.name+"/"+wrap.name, func(t *testing.T) {
				got, log := filtered(t, testBounds, wrap.f, tc.in...)
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("passed on\n%.300q\nwant\n%.300q", got, tc.want)
				}
				if len(log) != len(tc.wantLog) {
					t.Fatalf("log %q, want %d lines", log, len(tc.wantLog))
				}
				for i, l := range tc.wantLog {
					if !strings.Contains(log[i], l) {
						t.Errorf("log line %q, want it to contain %q", log[i], l)
					}
				}
				for _, m := range got {
					if !json.Valid([]byte(m)) {
						t.Errorf("not JSON: %.200q", m)
					}
				}
			})
		}
	}
}

// A message cut off by the end of the pipe is not passed on.
func TestFilterCutOff(t *testing.T) {
	var out bytes.Buffer
	var log []string
	in := strings.NewReader(`{"id":1,"result":{}}` + "\x00" + `{"id":2,"res`)
	if err := Filter(&out, in, testBounds, func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	if out.String() != `{"id":1,"result":{}}`+"\x00" {
		t.Errorf("passed on %q", out.String())
	}
	if len(log) != 1 || !strings.Contains(log[0], "cut off") {
		t.Errorf("log %q", log)
	}
}

// Read and write errors end Filter with that error.
func TestFilterErrors(t *testing.T) {
	boom := errors.New("boom")
	if err := Filter(io.Discard, iotest.ErrReader(boom), testBounds, nil); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	w := failWriter{boom}
	if err := Filter(w, strings.NewReader(`{"id":1,"result":{}}`+"\x00"), testBounds, nil); !errors.Is(err, boom) {
		t.Errorf("write error: %v", err)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// Only a reply's id at its very start, as Chromium writes it, is read.
func TestReplyID(t *testing.T) {
	tests := []struct {
		head string
		id   int64
		ok   bool
	}{
		{`{"id":12,"result":{`, 12, true},
		{` {"id":1,"error":{`, 1, true},
		{`{"id":9223372036854775807,"result"`, 9223372036854775807, true},
		{`{"id":9223372036854775808,"result"`, 0, false},
		{`{"id":012,"result":{`, 0, false},
		{`{"id":0,"result":{`, 0, false},
		{`{"id":-3,"result":{`, 0, false},
		{`{"id":12`, 0, false}, // the head ends before the id does
		{`{"id":1.5,`, 0, false},
		{`{"id": 12,`, 0, false},
		{`{"method":"Runtime.consoleAPICalled","params":{"id":3,`, 0, false},
		{`{"sessionId":"A","id":5,`, 0, false},
		{`{"result":{"id":5,`, 0, false},
		{``, 0, false},
	}
	for _, tc := range tests {
		id, ok := replyID([]byte(tc.head))
		if id != tc.id || ok != tc.ok {
			t.Errorf("replyID(%q) = %d, %v; want %d, %v", tc.head, id, ok, tc.id, tc.ok)
		}
	}
}

// The session is read only from the very end of a message.
func TestSessionID(t *testing.T) {
	tests := []struct{ tail, want string }{
		{`...,"sessionId":"8A1B2C3D"}`, "8A1B2C3D"},
		{`...,"sessionId":"8A1B2C3D"}` + "\n", "8A1B2C3D"},
		{`..."value":"x"}}}`, ""},
		{`{"id":3,"result":{"sessionId":"B25748A984E76EAC"}}`, ""}, // a result naming a session
		{`..."value":"\",\"sessionId\":\"EVIL\"}"}}`, ""},
		{`...,"sessionId":""}`, ""},
		{`...,"sessionId":"A\"B"}`, ""},
		{`...,"sessionId":"A B"}`, ""},
		{`"sessionId":"AB"}`, ""},
		{`"}`, ""},
	}
	for _, tc := range tests {
		if got := sessionID([]byte(tc.tail)); string(got) != tc.want {
			t.Errorf("sessionID(%q) = %q, want %q", tc.tail, got, tc.want)
		}
	}
}

// The frame keeps a bounded amount whatever it is fed.
func TestFrameHoldsAtMostTheBound(t *testing.T) {
	f := newFrame(testBounds)
	chunk := bytes.Repeat([]byte("a"), 700)
	for range 10_000 {
		f.write(chunk)
		if cap(f.buf) > testMax {
			t.Fatalf("holds %d bytes after %d", cap(f.buf), f.size)
		}
	}
	if !f.over() || f.size != 7_000_000 {
		t.Fatalf("size %d over %v", f.size, f.over())
	}
	// The next message reuses the buffer.
	f.reset()
	if cap(f.buf) != testMax {
		t.Fatalf("the buffer was not kept: cap %d", cap(f.buf))
	}
	f.write(bytes.Repeat([]byte("b"), testMax))
	if f.over() || len(f.buf) != testMax || cap(f.buf) != testMax {
		t.Fatalf("a message at the bound after a large one: len %d cap %d over %v", len(f.buf), cap(f.buf), f.over())
	}
	// A buffer grown for a reply past the event bound is let go after it.
	f = newFrame(Bounds{Reply: 4 * testMax, Event: testMax})
	f.write([]byte(bigReply(3*testMax, 1, "")))
	if f.over() || cap(f.buf) <= testMax {
		t.Fatalf("a reply under its bound: cap %d over %v", cap(f.buf), f.over())
	}
	f.reset()
	if cap(f.buf) > testMax {
		t.Fatalf("the reply's buffer was kept: cap %d", cap(f.buf))
	}
}

// FuzzFilter feeds any bytes, read in pieces of any size, through Filter:
// it never fails on them, every message it passes on is within the reply
// bound or is an error reply it made, and every message within its bound
// passes unchanged, in order.
func FuzzFilter(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{}}`+"\x00"+bigEvent(300, "AB")+"\x00"), uint8(7), uint16(256))
	f.Add([]byte(bigReply(400, 77, "S1")+"\x00"+`{"id":2,"result":{}}`), uint8(1), uint16(128))
	f.Add([]byte("\x00\x00{\"id\":3,"+strings.Repeat("\\", 600)+"\x00"), uint8(3), uint16(64))
	f.Fuzz(func(t *testing.T, data []byte, step uint8, max uint16) {
		m := int(max%2048) + headKeep
		e := min(m, headKeep+int(step)*4)
		var out bytes.Buffer
		err := Filter(&out, &stepReader{data: data, step: int(step) + 1}, Bounds{Reply: m, Event: e}, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := bytes.Split(data, []byte{0})
		if len(data) > 0 && data[len(data)-1] == 0 {
			in = in[:len(in)-1]
		} else if len(in) > 0 {
			in = in[:len(in)-1] // cut off by the end: dropped
		}
		var want bytes.Buffer
		for _, msg := range in {
			if _, reply := replyID(msg[:min(len(msg), headKeep)]); len(msg) > 0 && (len(msg) <= e || reply && len(msg) <= m) {
				want.Write(msg)
				want.WriteByte(0)
			}
		}
		got := out.Bytes()
		if len(got) > 0 && got[len(got)-1] != 0 {
			t.Fatalf("output does not end with a zero byte")
		}
		var kept bytes.Buffer
		for msg := range bytes.SplitSeq(got, []byte{0}) {
			if len(msg) == 0 {
				continue
			}
			if len(msg) > m {
				var reply struct {
					ID    int64 `json:"id"`
					Error struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(msg, &reply); err != nil || reply.ID <= 0 || reply.Error.Code != ErrorCode {
					t.Fatalf("passed on %d bytes over the bound of %d that are not its error reply: %.200q", len(msg), m, msg)
				}
				continue
			}
			kept.Write(msg)
			kept.WriteByte(0)
		}
		// Error replies made for oversized messages may be within the
		// bound too; every message within the bound is passed in order.
		if !subsequence(kept.Bytes(), want.Bytes()) {
			t.Fatalf("messages within the bound changed:\n got %.300q\nwant %.300q", kept.Bytes(), want.Bytes())
		}
	})
}

// subsequence reports whether the zero-ended messages of want appear in got
// in order.
func subsequence(got, want []byte) bool {
	g := bytes.SplitAfter(got, []byte{0})
	i := 0
	for w := range bytes.SplitAfterSeq(want, []byte{0}) {
		if len(w) == 0 {
			continue
		}
		for i < len(g) && !bytes.Equal(g[i], w) {
			i++
		}
		if i == len(g) {
			return false
		}
		i++
	}
	return true
}

// stepReader returns data step bytes at a time.
type stepReader struct {
	data []byte
	step int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// Events, which a page can make the browser send without end, have the
// smaller bound; a reply to a command may grow to the larger one.
func TestFilterSeparateBounds(t *testing.T) {
	b := Bounds{Reply: 4 * testMax, Event: testMax}
	reply := bigReply(2*testMax, 5, "S1")
	for _, wrap := range []func(io.Reader) io.Reader{identity, iotest.OneByteReader} {
		got, log := filtered(t, b, wrap, bigEvent(2*testMax, "S1"), reply, bigReply(4*testMax+1, 6, "S1"), `{"id":7,"result":{}}`)
		want := []string{
			reply,
			fmt.Sprintf(`{"id":6,"sessionId":"S1","error":{"code":%d,"message":"DevTools reply of %d bytes is larger than the bound of %d bytes; skipped unread"}}`, ErrorCode, 4*testMax+1, 4*testMax),
			`{"id":7,"result":{}}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("passed on\n%.300q\nwant\n%.300q", got, want)
		}
		if len(log) != 2 || !strings.Contains(log[0], "(event Runtime.consoleAPICalled), larger than the bound of 1024 bytes") ||
			!strings.Contains(log[1], "(reply to 6), larger than the bound of 4096 bytes") {
			t.Errorf("log %q", log)
		}
	}
}

func TestBoundsDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want Bounds }{
		{Bounds{}, Bounds{Reply: DefaultMaxReplyBytes, Event: DefaultMaxEventBytes}},
		{Bounds{Reply: 1 << 20}, Bounds{Reply: 1 << 20, Event: 1 << 20}},
		{Bounds{Reply: 1 << 20, Event: 10}, Bounds{Reply: 1 << 20, Event: headKeep}},
		{Bounds{Reply: 10, Event: 10}, Bounds{Reply: headKeep, Event: headKeep}},
	} {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("%+v with defaults: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
