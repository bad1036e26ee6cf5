//go:build wasip1

package main

import (
	"runtime"
	"time"
	"unsafe"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/internal/transcript"
)

// The host's functions (module "pling").
//
//	now() -> nanoseconds since the epoch, the scene's clock
//	reply(token, ptr, len)       the reply of the request taken under token
//	wait(ticket, kind, ptr, len) an ask (transcript.EncodeAsk) for the host
//	                             to answer through pling_answer(ticket, n)
//
//go:wasmimport pling now
func hostNow() int64

//go:wasmimport pling reply
func hostReply(token int32, ptr, n uint32)

//go:wasmimport pling wait
func hostWait(ticket, kind int32, ptr, n uint32)

func addr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func now() time.Time { return time.Unix(0, hostNow()).UTC() }

// in is where the host writes a call's text (pling_buf reserves it).
var in []byte

//go:wasmexport pling_buf
func reserve(n int32) uint32 {
	if n < 0 {
		return 0
	}
	if cap(in) < int(n) {
		in = make([]byte, n)
	}
	in = in[:n]
	if n == 0 {
		return 0
	}
	return addr(in)
}

func text(n int32) ([]byte, bool) {
	if n < 0 || int(n) > len(in) {
		return nil, false
	}
	return append([]byte(nil), in[:n]...), true
}

var (
	kernels = map[int32]*surface.Surface{}
	// withSession: the scene has a session source, so the kernel's
	// exchanges ask for the session, as Handle's do.
	withSession = map[int32]bool{}
	lastSlot    int32
	tickets     = map[int32]*flight{}
	lastTicket  int32
)

type flight struct {
	x     *surface.Exchange
	token int32
}

// pling_new(n) -> slot | -1: a kernel for the options section of n bytes.
//
//go:wasmexport pling_new
func newKernel(n int32) int32 {
	opts, ok := text(n)
	if !ok {
		return -1
	}
	o, session, err := transcript.GuestOptions(opts, now)
	if err != nil {
		return -1
	}
	s, err := surface.New(o)
	if err != nil {
		return -1
	}
	lastSlot++
	kernels[lastSlot] = s
	withSession[lastSlot] = session
	return lastSlot
}

// pling_handle(slot, n, token, flags) -> 0 | -1, as in the page.
//
//go:wasmexport pling_handle
func handle(slot, n, token, _ int32) int32 {
	s := kernels[slot]
	req, ok := text(n)
	if s == nil || !ok {
		return -1
	}
	run(&flight{x: s.Begin(nil, req, withSession[slot]), token: token})
	return 0
}

// pling_answer(ticket, n) -> 0 | -1: the answer (n bytes) to the ask
// handed to wait under ticket; a ticket is good once.
//
//go:wasmexport pling_answer
func answer(ticket, n int32) int32 {
	f := tickets[ticket]
	b, ok := text(n)
	if f == nil || !ok {
		return -1
	}
	delete(tickets, ticket)
	if _, err := f.x.Answer(transcript.DecodeAnswer(b, f.x.Ask())); err != nil {
		return -1
	}
	run(f)
	return 0
}

// run hands f's ask to the host, or its reply once it is over.
func run(f *flight) {
	a := f.x.Ask()
	if a.Kind == surface.AskDone {
		out, _, _ := f.x.Reply()
		hostReply(f.token, addr(out), uint32(len(out)))
		runtime.KeepAlive(out)
		return
	}
	b, err := transcript.EncodeAsk(a)
	if err != nil {
		panic(err)
	}
	lastTicket++
	tickets[lastTicket] = f
	hostWait(lastTicket, int32(a.Kind), addr(b), uint32(len(b)))
	runtime.KeepAlive(b)
}
