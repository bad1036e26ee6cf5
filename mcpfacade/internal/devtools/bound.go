//go:build !(js || wasip1)

// Package devtools bounds the DevTools messages a browser sends to this
// process before they are buffered. It serves both ways pling-mcp reaches a
// browser: a started browser's pipe (see BoundPipe) and a running browser's
// DevTools websocket (see NewAllocator and Dial).
//
// Every message up to its bound is passed on and decoded as chromedp does.
// Replies to commands have one bound, events (which a page can make the
// browser send without end) a smaller one; see Bounds. A larger message is
// never held: a few bytes of its start and end are kept, the
// rest is discarded as it streams. When its start shows a reply to a
// command ({"id":N,...}), an error reply for that id is delivered instead, so
// the command fails at once with an error naming the bound; any other
// message (an event, or one whose id cannot be read) is dropped and logged.
package devtools

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/target"
)

// Bounds are the sizes, in bytes, past which a message from the browser is
// not held.
type Bounds struct {
	// Reply bounds a reply to a command. Default DefaultMaxReplyBytes.
	Reply int
	// Event bounds any other message: events, which a page can make the
	// browser send any number of. Default DefaultMaxEventBytes; never more
	// than Reply.
	Event int
}

func (b Bounds) withDefaults() Bounds {
	if b.Reply <= 0 {
		b.Reply = DefaultMaxReplyBytes
	}
	if b.Event <= 0 {
		b.Event = DefaultMaxEventBytes
	}
	// An event bound shorter than the start of a reply could not tell
	// replies apart.
	b.Event = max(min(b.Event, b.Reply), headKeep)
	b.Reply = max(b.Reply, b.Event)
	return b
}

// DefaultMaxReplyBytes is the default bound on a reply.
//
// The largest reply pling-mcp asks for carries a page's answer, which the
// facade's caller in the page (mcpfacade/caller.js) bounds at
// client.DefaultMaxReplyBytes (2 MiB of UTF-8) before it leaves the page.
// DevTools writes it as a JSON string, escaping every character outside
// ASCII as \uXXXX: six bytes for a character of two UTF-8 bytes, at most
// three times the UTF-8 length, so about 6 MiB for a 2 MiB answer
// (TestMCPLargeReplyPassesDevToolsBound sends one). 16 MiB leaves room
// for the envelope and for escaping Chromium may change. Replies come one
// per command this process sends, so a page cannot multiply them.
const DefaultMaxReplyBytes = 16 << 20

// DefaultMaxEventBytes is the default bound on an event.
//
// A page can make the browser send events without end (console output,
// errors), and each one read is held several times over while chromedp
// decodes and dispatches it: a flood of events just under 16 MiB took
// pling-mcp to 162 MB. The events pling-mcp and chromedp follow are
// small but for the URLs they carry, which Chromium caps at 2 MiB; 4 MiB
// holds any of them whole.
const DefaultMaxEventBytes = 4 << 20

// ErrorCode is the code of the error reply delivered for a reply that was
// larger than the bound (in JSON-RPC's range for server errors).
const ErrorCode = -32070

const (
	headKeep = 64  // bytes kept from the start of an oversized message
	tailKeep = 128 // and from its end, where Chromium writes "sessionId"
)

// frame collects one message as it streams in. While the message fits its
// bound it is kept whole in buf; past the bound only its first headKeep and
// last tailKeep bytes are kept. The bound is b.Event until the message's
// start shows a reply, then b.Reply.
type frame struct {
	mirror
	b     Bounds
	limit int // the bound of the message being read
	buf   []byte
	size  int64
	head  [headKeep]byte
	tail  [tailKeep]byte // a ring: byte i of the message is at i%tailKeep
}

func newFrame(b Bounds) frame {
	b = b.withDefaults()
	return frame{b: b, limit: b.Event}
}

// reset readies f for the next message. A buffer within the event bound is
// kept: a page that sends one large event after another then costs one
// buffer, not a new one, grown step by step, per event. A larger one, which
// only a reply can need, is let go.
func (f *frame) reset() {
	if cap(f.buf) > f.b.Event {
		f.buf = nil
	}
	f.buf = f.buf[:0]
	f.size = 0
	f.limit = f.b.Event
}

// over reports whether the message has grown past its bound.
func (f *frame) over() bool { return f.size > int64(f.limit) }

func (f *frame) write(p []byte) {
	if len(p) == 0 {
		return
	}
	end := f.size + int64(len(p))
	if end > int64(f.limit) && !f.over() && f.limit < f.b.Reply {
		// Past the event bound: only a reply may grow on.
		var h [headKeep]byte
		n := copy(h[:], f.buf)
		n += copy(h[n:], p)
		if _, ok := replyID(h[:n]); ok {
			f.limit = f.b.Reply
		}
	}
	if end <= int64(f.limit) {
		if int(end) > cap(f.buf) {
			// Grow by doubling, never past the bound.
			grown := make([]byte, len(f.buf), min(max(2*cap(f.buf), int(end), 4<<10), f.limit))
			copy(grown, f.buf)
			f.buf = grown
		}
		f.buf = append(f.buf, p...)
		f.size = end
		return
	}
	if !f.over() {
		// Crossing the bound: keep what matters of buf.
		copy(f.head[:], f.buf)
		f.ring(f.buf, 0)
		f.buf = f.buf[:0]
	}
	if f.size < headKeep {
		copy(f.head[f.size:], p)
	}
	f.ring(p, f.size)
	f.size = end
}

// ring records the last bytes of p, which starts at offset at in the
// message, in the tail ring.
func (f *frame) ring(p []byte, at int64) {
	if len(p) > tailKeep {
		at += int64(len(p) - tailKeep)
		p = p[len(p)-tailKeep:]
	}
	for i, b := range p {
		f.tail[(at+int64(i))%tailKeep] = b
	}
}

// ends returns the kept start and end of an oversized message.
func (f *frame) ends() (head, tail []byte) {
	head = f.head[:min(f.size, headKeep)]
	n := min(f.size, tailKeep)
	tail = make([]byte, 0, n)
	for i := f.size - n; i < f.size; i++ {
		tail = append(tail, f.tail[i%tailKeep])
	}
	return head, tail
}

// Skipped describes a message larger than the bound.
type Skipped struct {
	Size  int64 // its size in bytes
	Bound int   // the bound it passed
	// Reply is the error reply delivered in its place, or nil when it was
	// dropped.
	Reply *cdproto.Message
	// Kind says what it was, for the log: "reply to 12", "event
	// Runtime.consoleAPICalled", "unreadable".
	Kind string
}

// skip decides what becomes of an oversized message from its ends.
func (f *frame) skip() Skipped {
	head, tail := f.ends()
	s := Skipped{Size: f.size, Bound: f.limit, Kind: "unreadable"}
	if id, ok := replyID(head); ok {
		s.Kind = "reply to " + strconv.FormatInt(id, 10)
		s.Reply = &cdproto.Message{
			ID:        id,
			SessionID: sessionID(tail),
			Error: &cdproto.Error{
				Code: ErrorCode,
				Message: fmt.Sprintf("DevTools reply of %d bytes is larger than the bound of %d bytes; skipped unread",
					f.size, f.limit),
			},
		}
	} else if m, ok := eventMethod(head); ok {
		s.Kind = "event " + m
	}
	return s
}

// String is the log line for a skipped message.
func (s Skipped) String() string {
	what := "dropped"
	if s.Reply != nil {
		what = "answered with an error"
	}
	return fmt.Sprintf("devtools: skipped a %d-byte message (%s), larger than the bound of %d bytes; %s", s.Size, s.Kind, s.Bound, what)
}

// replyID reads the id of a reply from the start of a message. Chromium
// writes a reply as {"id":N,"result":...} or {"id":N,"error":...}: the id
// comes first. Anything else is not read as a reply, so that an error is
// never delivered to a command it is not about.
func replyID(head []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(`{"id":`))
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && n < 19 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != ',' || n > 1 && rest[0] == '0' {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// eventMethod reads the method of an event from the start of a message,
// {"method":"Domain.event",...}, for the log.
func eventMethod(head []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(`{"method":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return "", false
	}
	for _, c := range rest[:end] {
		if !isNameByte(c) {
			return "", false
		}
	}
	return string(rest[:end]), true
}

// sessionID reads the session a message belongs to from its end. Chromium
// appends it to a message of a flat session: ...,"sessionId":"HEX"}. A
// page's text cannot end a message this way, since Chromium writes it inside
// escaped strings and closes them. No match: a message of the browser
// itself.
func sessionID(tail []byte) target.SessionID {
	rest, ok := bytes.CutSuffix(bytes.TrimRight(tail, " \t\r\n"), []byte(`"}`))
	if !ok {
		return ""
	}
	start := len(rest)
	for start > 0 && isNameByte(rest[start-1]) && rest[start-1] != '.' {
		start--
	}
	if start == len(rest) || !bytes.HasSuffix(rest[:start], []byte(`,"sessionId":"`)) {
		return ""
	}
	return target.SessionID(rest[start:])
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
