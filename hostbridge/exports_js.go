//go:build js && wasm

package hostbridge

import (
	"math/rand/v2"
	"sync"
	"syscall/js"

	"pling.dev/agent/surface"
)

// Steps: the page enters the kernel only through functions this package
// exports from the wasm module, and each export runs the kernel's steps
// (surface.Exchange) synchronously, on the caller's stack, until the
// exchange is over or waits for something truly asynchronous. Asks the page
// answers at once (the session getter, registry reads, an in-memory or
// synchronous limiter and guard, audit, an executor that returns a value)
// are answered inside the same export by calling the host's plain JS
// functions through syscall/js. No js.FuncOf callback, no goroutine, no
// channel and no _resume() is on the path: an invoke whose executor answers
// at once is one export call, and one whose executor answers with a Promise
// is two (the request, then the executor's answer).
//
// Why: every way into Go that goes through the scheduler (a js.FuncOf
// callback, or an export that wakes a goroutine and then _resume()) cost
// about 60 µs more per trip in Chromium than an export that runs the work
// and returns (180 vs 120 µs for the same work, a pure-JS echo 90 µs;
// RATIONALE.md, "Why is the kernel a step machine behind wasm exports?").
//
// Nothing in an export may block: the kernel's steps never do, the host's
// functions are synchronous, and the bridge takes no lock (there is one
// thread, and no goroutine runs while an export does). Page code that a
// host function runs may call the surface again, through the exports,
// nested on the same stack (see lane_js.go).
//
// When a host function answers with a Promise (an async session getter,
// registry, limiter, guard, or the executor), the host keeps it and
// answers parked; the bridge calls the host's wait(ticket, kind, limitMs)
// and the export returns. The host settles the Promise within limitMs and
// calls pling_answer(ticket, code) once, in the codes a host function
// answers in (see answerFor);
// the ticket is good for that one answer, so a repeated or late answer is
// refused, and the kernel itself refuses an answer to an ask it is not
// waiting for.
//
//	pling_init(a, b) -> 0 | -1
//	    sets the per-load secret (two random words the loader draws from
//	    crypto.getRandomValues), once: every other export takes it as its
//	    first two arguments and refuses a call without it, changing
//	    nothing. A script that got hold of an export without the secret
//	    can neither answer a wait nor enter a call.
//	pling_handle(a, b, slot, n, token, flags) -> 0 | -1
//	    a request of n bytes in entryIO for the instance numbered slot;
//	    the reply goes to host.reply(token, text, capsId?, capsText?)
//	    (flags&1: shared mode), now or after a wait; when that call fails,
//	    to host.unanswered(). flags&2: the call
//	    brings its own session getter, which host.sessionFor(token) calls.
//	    -1: refused (no such instance, n no length in entryIO): nothing
//	    will answer.
//	pling_describe(a, b, slot, n, token) -> 0 | -1
//	    an in-page describe, its input n bytes in entryIO (-1: none),
//	    answered to host.reply(token, text) as instance.describe answers.
//	pling_answer(a, b, ticket, code) -> 0 | -1
//	    the settled value of the Promise waited for under ticket, a code
//	    of answerFor (a text in entryIO). -1: no such ticket.
//	pling_close(a, b, slot) -> 0 | -1
//	    closes the instance: later calls under slot are refused. -1: no
//	    such instance.
//	pling_entry_key() -> key
//	    tells this module's runtime objects from another module's.
const (
	entryAccepted int32 = 0
	entryRefused  int32 = -1

	flagShared  int32 = 1
	flagSession int32 = 2
)

// flight is one exchange in progress, taken through an export. Flights are
// pooled: one is taken per call and put back once its answer was given.
type flight struct {
	s *Surface
	x *surface.Exchange
	// token names the call to the host's reply function.
	token float64
	// shared: the caller keeps shared capability lists (see replyShared).
	shared bool
	// perCall: the call brought its own session getter (host.sessionFor).
	perCall bool
	// The actions in force when a view was asked for, read before the
	// host's view() as the registry's generation demands.
	acts     []surface.Action
	gen      string
	haveActs bool
	// describe: an in-page describe, answered as instance.describe.
	describe bool
	buf      *[]byte // the pooled buffer the reply is built in
}

var (
	// Slots and tickets are drawn at random (math/rand/v2's generator is
	// seeded from crypto.getRandomValues), so that neither can be guessed
	// from the last one seen.
	slots = map[int32]*Surface{}
	// tickets are the flights waiting for a Promise, by ticket.
	tickets = map[int32]*flight{}

	// fastEntries counts export calls, so that tests can tell which way
	// calls came in.
	fastEntries int
)

// freeNumber draws a positive int32 that taken does not report.
func freeNumber(taken func(int32) bool) int32 {
	for {
		if n := rand.Int32(); n > 0 && !taken(n) {
			return n
		}
	}
}

// The per-load secret (see pling_init).
var (
	secret    [2]int32
	secretSet bool
)

//go:wasmexport pling_init
func enterInit(a, b int32) int32 {
	if secretSet || (a == 0 && b == 0) {
		return entryRefused
	}
	secret, secretSet = [2]int32{a, b}, true
	return entryAccepted
}

// keyed reports whether a call brought the per-load secret.
func keyed(a, b int32) bool {
	return secretSet && a == secret[0] && b == secret[1]
}

// entryKey tells this module's runtime objects from another module's: the
// JS side uses the exports of a Go object only for a runtime whose
// entryKey the module's pling_entry_key answers, since slot numbers mean
// nothing to another module.
var entryKey = int32(rand.Uint32() >> 1)

//go:wasmexport pling_entry_key
func enterKey() int32 { return entryKey }

//go:wasmexport pling_handle
func enterHandle(k0, k1, slot, n, token, flags int32) int32 {
	s, req, ok := enter(k0, k1, slot, n, 0)
	if !ok || (flags&flagSession != 0 && s.sessionForFn.Type() != js.TypeFunction) {
		return entryRefused
	}
	fastEntries++
	f := newFlight(s, float64(token))
	f.shared = flags&flagShared != 0
	f.perCall = flags&flagSession != 0
	defer f.recover()
	runHook("handle.run")
	switch {
	case s.closed:
		f.send(s.failure(surface.CodeInternalError, "surface is closed"))
	case len(req) > s.limits.MaxRequestBytes:
		f.send(s.failure(surface.CodeInvalidRequest, "request is larger than the size limit"))
	default:
		f.buf = bufferPool.Get().(*[]byte)
		f.x = s.main.Begin((*f.buf)[:0], req, s.hasSession() || f.perCall)
		f.run()
	}
	return entryAccepted
}

// enter checks a call into an entry export (the secret, an open slot, a
// text that fits entryIO: n bytes, from min on, -1 for none) and copies the
// text out.
func enter(k0, k1, slot, n, min int32) (s *Surface, text []byte, ok bool) {
	if s = slots[slot]; !keyed(k0, k1) || s == nil || n < min || int(n) > s.lane.size {
		return nil, nil, false
	}
	if n >= 0 {
		text = entryText(s, int(n))
	}
	return s, text, true
}

var (
	flights = sync.Pool{New: func() any { return new(flight) }}
	// entryBuf takes the text an export was given: the kernel copies what
	// it keeps while the call begins, before any host function runs, so
	// one buffer serves every call, a nested one included.
	entryBuf []byte
)

// entryText copies the n bytes in s's entryIO into entryBuf.
func entryText(s *Surface, n int) []byte {
	if cap(entryBuf) < n {
		entryBuf = make([]byte, s.lane.size)
	}
	b := entryBuf[:n]
	js.CopyBytesToGo(b, s.lane.entry)
	return b
}

// newFlight takes a flight from the pool, ready for one call.
func newFlight(s *Surface, token float64) *flight {
	f := flights.Get().(*flight)
	*f = flight{s: s, token: token}
	return f
}

// release puts f, and its exchange, back in their pools once its answer
// was given.
func (f *flight) release() {
	if f.x != nil {
		f.x.Release()
	}
	*f = flight{}
	flights.Put(f)
}

//go:wasmexport pling_close
func enterClose(k0, k1, slot int32) int32 {
	if !keyed(k0, k1) {
		return entryRefused
	}
	s := slots[slot]
	if s == nil || !s.close() {
		return entryRefused
	}
	return entryAccepted
}

//go:wasmexport pling_describe
func enterDescribe(k0, k1, slot, n, token int32) int32 {
	s, input, ok := enter(k0, k1, slot, n, -1)
	if !ok {
		return entryRefused
	}
	fastEntries++
	f := newFlight(s, float64(token))
	f.describe = true
	defer f.recover()
	runHook("describe.run")
	if s.closed {
		f.send(describeFailure(&surface.Error{Code: surface.CodeInternalError, Message: "surface is closed"}))
		return entryAccepted
	}
	f.x = s.main.BeginDescribe(input, s.hasSession())
	f.run()
	return entryAccepted
}

//go:wasmexport pling_answer
func enterAnswer(k0, k1, ticket int32, code float64) int32 {
	if !keyed(k0, k1) {
		return entryRefused
	}
	f := tickets[ticket]
	if f == nil {
		return entryRefused
	}
	delete(tickets, ticket)
	fastEntries++
	defer f.recover()
	runHook("answer")
	ans := f.answerFor(f.x.Ask(), code, f.s.lane.entry)
	if _, err := f.x.Answer(ans); err != nil {
		panic(err) // cannot happen: the ticket named this ask
	}
	f.run()
	return entryAccepted
}

// recover answers a flight whose step broke, so that its caller always
// gets its one answer and the program keeps running.
func (f *flight) recover() {
	if r := recover(); r != nil {
		fallback := internalReply
		if f.describe {
			fallback = internalDescribe
		}
		_ = catch("reply", func() { f.send([]byte(fallback)) })
	}
}

// run answers the exchange's asks until it is over, or waits: then the
// Promise goes to host.wait under a new ticket, and run returns.
func (f *flight) run() {
	for {
		a := f.x.Ask()
		if a.Kind == surface.AskDone {
			f.deliver()
			f.release()
			return
		}
		ans, parked := f.ask(a)
		if parked {
			f.wait(a)
			return
		}
		if _, err := f.x.Answer(ans); err != nil {
			panic(err) // cannot happen: ans answers a
		}
	}
}
