//go:build js && wasm

package hostbridge

import (
	"sync"
	"syscall/js"
)

// lane carries text between the bridge and a host that offers two byte
// buffers, host.io and host.entryIO (Uint8Arrays of the same length),
// instead of as JS strings. A string crossing syscall/js costs a JS value
// that Go must track and finalize, plus a TextEncoder or TextDecoder call
// and one or two more crossings; a copy into a buffer the other side
// already holds costs one crossing and no value. `make bench-boundary`
// times a host call that takes and answers a view-sized text: about 13 µs
// as strings, 0.6 µs through the buffers (Node). An invoke makes about ten
// such crossings.
//
// The convention (every host has a lane):
//
//   - Text parameters of host functions may be numbers: the lengths of
//     texts laid out one after another in io from offset 0, in parameter
//     order. A text that does not fit is passed as a string instead.
//   - A host function answers a number, a code of answerFor: a text is its
//     length, written to io from offset 0, or codeHeld when it does not
//     fit (host.held() then answers it as a string).
//   - The JS side calls the exports with the length of a text it wrote to
//     entryIO (a request, a describe input, a settled Promise's text).
//
// Each side reads what it was given before doing anything else: the host
// reads its parameters before running page code (which may call the
// surface again and reuse io), an export copies its text out of entryIO
// before it runs a step, and the bridge copies a host function's answer
// out of io before it calls anything else. entryIO is kept apart from io
// so that a call into an export made by page code inside a host function
// cannot overwrite the texts of the host call in progress.
type lane struct {
	io    js.Value // Go -> JS parameters, JS -> Go answers of host calls
	entry js.Value // JS -> Go texts of calls into the bridge
	size  int      // length of each buffer; 0: no lane, texts are strings
	held  js.Value // host.held: a text too long for the buffers
}

// maxLaneBytes bounds the buffers a host may offer: beyond it, texts are
// large enough that a string costs little more than a copy.
const maxLaneBytes = 1 << 20

// newLane reads host.io and host.entryIO. Anything but two Uint8Arrays of
// the same length means no lane.
func newLane(host js.Value) lane {
	// A read that fails answers undefined, which is no instance.
	u8, _ := getProp(js.Global(), "Uint8Array")
	io, _ := getProp(host, "io")
	entry, _ := getProp(host, "entryIO")
	if !isInstance(io, u8) || !isInstance(entry, u8) {
		return lane{}
	}
	var n, m int
	if catch("lane", func() { n, m = io.Length(), entry.Length() }) != nil || n != m || n <= 0 || n > maxLaneBytes {
		return lane{}
	}
	return lane{io: io, entry: entry, size: n, held: hostFunc(host, "held")}
}

func isInstance(v, class js.Value) (ok bool) {
	if v.Type() != js.TypeObject {
		return false
	}
	_ = catch("instanceof", func() { ok = v.InstanceOf(class) })
	return ok
}

// laneBuffers hold texts on their way into io and answers copied out of
// it. Each call takes its own, so that a nested call (page code calling the
// surface from a host function) cannot write into it before the caller is
// done.
var laneBuffers = sync.Pool{New: func() any { return new([]byte) }}

// textParams returns the parameters that stand for texts in a host call:
// their lengths when a lane carries them all, else the texts as strings.
// put is what call must copy into io, nil when the texts went as strings.
func (l lane) textParams(texts ...[]byte) (params []any, put [][]byte) {
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	params = make([]any, len(texts))
	if l.size == 0 || total > l.size {
		for i, t := range texts {
			params[i] = string(t)
		}
		return params, nil
	}
	for i, t := range texts {
		params[i] = len(t)
	}
	return params, texts
}

// call calls fn with args, after copying put (from textParams) into io,
// and answers the code fn returned (see answerFor): codeFailed when it
// answered no number. Between the copy in and the call nothing allocates
// (see lane).
func (l lane) call(op string, fn js.Value, args []any, put [][]byte) (code float64, err error) {
	var in []byte
	switch {
	case l.size == 0 || len(put) == 0:
	case len(put) == 1:
		in = put[0]
	default:
		p := laneBuffer()
		defer laneBuffers.Put(p)
		in = (*p)[:0]
		for _, t := range put {
			in = append(in, t...)
		}
		*p = in
	}
	code = codeFailed
	err = catch(op, func() {
		if len(in) > 0 {
			js.CopyBytesToJS(l.io, in)
		}
		if v := fn.Invoke(args...); v.Type() == js.TypeNumber {
			code = v.Float()
		}
	})
	return code, err
}

// read appends to dst the text code stands for: its length in buf (io for
// a host function's answer, entryIO for pling_answer's), or, for codeHeld,
// what host.held() answers.
func (l lane) read(code float64, buf js.Value, dst []byte) ([]byte, bool) {
	if code == codeHeld {
		var v js.Value
		if catch("held", func() { v = l.held.Invoke() }) != nil || v.Type() != js.TypeString {
			return nil, false
		}
		return append(dst, v.String()...), true
	}
	n, ok := laneLength(code, l.size)
	if !ok {
		return nil, false
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	js.CopyBytesToGo(dst, buf)
	return dst, true
}

// putScratch returns a buffer taken with laneBuffer that a text was built
// in (the text went to io, or was copied into a JS string, by then).
func putScratch(p *[]byte) {
	if cap(*p) <= maxLaneBytes {
		laneBuffers.Put(p)
	}
}

// laneBuffer takes a pooled buffer.
func laneBuffer() *[]byte {
	p := laneBuffers.Get().(*[]byte)
	*p = (*p)[:cap(*p)]
	return p
}

// laneLength reads a number that stands for a text's length in a buffer of
// size bytes: a whole number from 0 to size.
func laneLength(f float64, size int) (int, bool) {
	if !(f >= 0 && f <= float64(size)) || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// text calls fn with texts and reads the text it answered.
func (l lane) text(op string, fn js.Value, texts ...[]byte) (string, error) {
	params, put := l.textParams(texts...)
	code, err := l.call(op, fn, params, put)
	if err != nil {
		return "", err
	}
	p := laneBuffer()
	defer putScratch(p)
	b, ok := l.read(code, l.io, (*p)[:0])
	if !ok {
		return "", newError(op, "the host answered no text")
	}
	*p = b
	return string(b), nil
}
