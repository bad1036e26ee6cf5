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
//   - A host function that answers text may answer a number instead: the
//     length of its answer, written to io from offset 0.
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
}

// maxLaneBytes bounds the buffers a host may offer: beyond it, texts are
// large enough that a string costs little more than a copy.
const maxLaneBytes = 1 << 20

// newLane reads host.io and host.entryIO. Anything but two Uint8Arrays of
// the same length means no lane.
func newLane(host js.Value) lane {
	u8, err := getProp(js.Global(), "Uint8Array")
	if err != nil || u8.Type() != js.TypeFunction {
		return lane{}
	}
	io, err1 := getProp(host, "io")
	entry, err2 := getProp(host, "entryIO")
	if err1 != nil || err2 != nil || !isInstance(io, u8) || !isInstance(entry, u8) {
		return lane{}
	}
	var n, m int
	if catch("lane", func() { n, m = io.Length(), entry.Length() }) != nil || n != m || n <= 0 || n > maxLaneBytes {
		return lane{}
	}
	return lane{io: io, entry: entry, size: n}
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
// and answers what fn returned: with text set, a number is the length of a
// text fn wrote to io, copied out; otherwise the value. Between the copy in
// and the call, and between the call and the copy out, nothing allocates
// (see lane).
func (l lane) call(op string, fn js.Value, args []any, put [][]byte, text bool) (a answer, err error) {
	return l.callInto(op, fn, args, put, text, nil)
}

// callInto is call, except that with dst set a text answer in io is
// copied into *dst (a.inIO set, a.text empty): a caller that looks the
// text up in a cache makes no string of it unless it must.
func (l lane) callInto(op string, fn js.Value, args []any, put [][]byte, text bool, dst *[]byte) (a answer, err error) {
	var out *[]byte
	switch {
	case dst != nil:
		if cap(*dst) < l.size {
			*dst = make([]byte, l.size)
		}
		*dst = (*dst)[:cap(*dst)]
		out = dst
	case text:
		out = laneBuffer(l.size)
		defer laneBuffers.Put(out)
	}
	var in []byte
	switch {
	case l.size == 0 || len(put) == 0:
	case len(put) == 1:
		in = put[0]
	default:
		p := laneBuffer(0)
		defer laneBuffers.Put(p)
		in = (*p)[:0]
		for _, t := range put {
			in = append(in, t...)
		}
		*p = in
	}
	err = catch(op, func() {
		if len(in) > 0 {
			js.CopyBytesToJS(l.io, in)
		}
		v := fn.Invoke(args...)
		if out != nil && v.Type() == js.TypeNumber {
			n, ok := laneLength(v, l.size)
			if !ok {
				panic(newError(op, KindBadValue, "answer length is out of range"))
			}
			b := (*out)[:n]
			js.CopyBytesToGo(b, l.io)
			a.inIO = true
			if dst != nil {
				*dst = b
				return
			}
			a.text = string(b)
			return
		}
		a.v = v
	})
	return a, err
}

// putScratch returns a buffer taken with laneBuffer that a text was built
// in (the text went to io, or was copied into a JS string, by then).
func putScratch(p *[]byte) {
	if cap(*p) <= maxLaneBytes {
		laneBuffers.Put(p)
	}
}

// laneBuffer takes a pooled buffer of at least n bytes.
func laneBuffer(n int) *[]byte {
	p := laneBuffers.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	*p = (*p)[:cap(*p)]
	return p
}

// answer is what a host function returned: a text it left in io, or a
// JS value (a string, a Promise, a boolean...).
type answer struct {
	text string
	inIO bool
	v    js.Value
}

// laneLength reads a number that stands for a text's length in a buffer of
// size bytes: a whole number from 0 to size.
func laneLength(v js.Value, size int) (int, bool) {
	f := v.Float()
	if !(f >= 0 && f <= float64(size)) || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// text calls fn with texts and reads its answer, which must be text given
// at once (in io or as a string); notText is the message otherwise.
func (l lane) text(op string, fn js.Value, texts [][]byte, notText string) (string, error) {
	params, put := l.textParams(texts...)
	a, err := l.call(op, fn, params, put, true)
	switch {
	case err != nil:
		return "", err
	case a.inIO:
		return a.text, nil
	case a.v.Type() == js.TypeString:
		return a.v.String(), nil
	}
	return "", newError(op, KindBadValue, notText)
}
