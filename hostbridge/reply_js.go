//go:build js && wasm

package hostbridge

import (
	"errors"
	"sync"
	"syscall/js"

	"pling.dev/agent/surface"
)

// The reply: each call taken through an export gets one answer, given to
// the host's reply(token, ...) function, which serves every call and tells
// them apart by the token.

// deliver gives the caller the exchange's answer.
func (f *flight) deliver() {
	if f.describe {
		// {"ok":true,"result":...} or {"ok":false,"error":...}.
		b, _, err := f.x.Reply()
		if err != nil {
			var perr *surface.Error
			if !errors.As(err, &perr) {
				perr = &surface.Error{Code: surface.CodeInternalError, Message: "description could not be encoded"}
			}
			f.send(describeFailure(perr))
			return
		}
		out := make([]byte, 0, len(b)+len(`{"ok":true,"result":}`))
		out = append(append(append(out, `{"ok":true,"result":`...), b...), '}')
		f.send(out)
		return
	}
	b, shared, _ := f.x.Reply()
	if f.shared && shared.ID != 0 {
		b = f.replyShared(b, shared)
	} else {
		f.send(b)
	}
	putBuffer(f.buf, b)
	f.buf = nil
}

func describeFailure(perr *surface.Error) []byte {
	b, err := surface.AppendJSON([]byte(`{"ok":false,"error":`), perr)
	if err != nil {
		return []byte(internalDescribe)
	}
	return append(b, '}')
}

// internalReply and internalDescribe answer a call whose handling broke.
const internalReply = `{"protocol":"` + surface.Protocol + `","id":"","ok":false,"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`
const internalDescribe = `{"ok":false,"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`

// send calls the host's reply with text, through the lane when it fits.
func (f *flight) send(text []byte) {
	params, put := f.s.lane.textParams(text)
	if _, err := f.s.lane.call("reply", f.s.reply, []any{f.token, params[0]}, put); err != nil {
		f.unanswered()
	}
}

// unanswered tells the host that a reply call failed, so that it fails the
// call itself if it was not answered. Usually the reply ran and threw
// after answering, and this finds nothing to do; but a call that fails
// before the reply runs would leave the caller with no answer at all. So
// this call has no arguments, the fewest that can fail: the token goes as
// a property of the host, which has no prototype.
func (f *flight) unanswered() {
	s := f.s
	if s.unansweredFn.Type() != js.TypeFunction {
		return
	}
	_ = catch("unanswered", func() {
		s.host.Set("unansweredToken", f.token)
		s.unansweredFn.Invoke()
	})
}

// replyShared answers b without the shared capability list when the caller
// holds it already (the one sent last), and with it, separately, otherwise.
// The text without the list is built after b, in the same buffer, which it
// returns.
func (f *flight) replyShared(b []byte, shared surface.SharedCaps) []byte {
	n := len(b)
	b = append(b, b[:shared.Start]...)
	b = append(b, "[]"...)
	b = append(b, b[shared.End:n]...)
	id := float64(shared.ID)
	l := f.s.lane

	s := f.s
	known := s.sentCaps == shared.ID
	s.sentCaps = 0 // until the caller has taken what is sent now
	var err error
	if known {
		params, put := l.textParams(b[n:])
		_, err = l.call("reply", s.reply, []any{f.token, params[0], id}, put)
	} else {
		params, put := l.textParams(b[n:], b[shared.Start:shared.End])
		_, err = l.call("reply", s.reply, []any{f.token, params[0], id, params[1]}, put)
	}
	if err == nil {
		s.sentCaps = shared.ID
	} else {
		f.unanswered()
	}
	return b
}

// Answers are built in pooled buffers: a description is kilobytes, and
// under WebAssembly allocating it, and collecting it later, costs about as
// much as encoding it. Buffers that grew past maxPooledBuffer (a huge
// answer) are left to the collector rather than kept.
var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

const maxPooledBuffer = 256 << 10

// putBuffer returns p to the pool holding b, which was appended to *p.
func putBuffer(p *[]byte, b []byte) {
	if cap(b) <= maxPooledBuffer {
		*p = b[:0]
		bufferPool.Put(p)
	}
}
