//go:build js && wasm

package hostbridge

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
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
// Nothing in an export may park: the kernel's steps never block, the
// host's functions are synchronous, and the bridge takes no lock (there
// is one thread, and no goroutine runs while an export does). Page code that a host function runs may call the
// surface again; the JS side then enters later, from a microtask, not
// inside this export.
//
// When a host function answers with a Promise (an async session getter,
// registry, limiter, guard, or the executor), the bridge hands it to the
// host's wait(ticket, kind, promise, limitMs) and the export returns. The
// host settles it within limitMs and calls pling_answer(ticket, code) once;
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
//	    the settled value of the Promise handed to wait under ticket,
//	    encoded by kind (see answerFor). -1: no such ticket.
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

// Codes of pling_answer, beside a text's length in entryIO (>= 0).
const (
	codeFailed   = -1 // rejected, timed out, or not an answer of its kind
	codeNone     = -2 // session: no session (null)
	codeTimedOut = -3 // execute: the time limit passed
	codeHeld     = -4 // a text too long for entryIO: host.held() answers it
	// codeParked is execute's answer when the host kept the executor's
	// Promise for the wait that follows (handed to wait as undefined).
	codeParked = -5
)

// errHostFailed answers an ask whose Promise failed (pling_answer's
// codeFailed, or a code that is no answer of the ask's kind).
var errHostFailed = newError("host", KindRejected, "the host's Promise failed")

// errPending is what a host call reports when the host answered with a
// Promise that the exchange must wait for (see stepCtx).
var errPending = errors.New("hostbridge: the host answered with a Promise")

// stepCtx rides in the context of a step: a host call that gets a
// thenable parks it here instead of awaiting it.
type stepCtx struct {
	promise js.Value
	waiting bool
}

type stepKey struct{}

// sessionTokenKey carries the token whose session getter
// host.sessionFor(token) calls.
type sessionTokenKey struct{}

// pend parks v for the step in ctx, if there is one, and reports whether
// it did: the caller then answers errPending instead of awaiting v.
func pend(ctx context.Context, v js.Value) bool {
	sc, ok := ctx.Value(stepKey{}).(*stepCtx)
	if !ok {
		return false
	}
	sc.promise, sc.waiting = v, true
	return true
}

// stepContext is the context of a flight's steps: it answers stepKey with
// the flight's stepCtx and, for a call that brought its own session
// getter, sessionTokenKey with its token. It lives inside the flight, so a
// request makes no context of its own.
type stepContext struct {
	context.Context
	sc      stepCtx
	token   float64
	perCall bool
}

func (c *stepContext) Value(key any) any {
	switch key.(type) {
	case stepKey:
		return &c.sc
	case sessionTokenKey:
		if c.perCall {
			return c.token
		}
		return nil
	}
	return c.Context.Value(key)
}

// flight is one exchange in progress, taken through an export. Flights are
// pooled: one is taken per call and put back once its answer was given.
type flight struct {
	s   *Surface
	k   *surface.Surface
	x   *surface.Exchange
	ctx context.Context // &c
	c   stepContext
	sc  *stepCtx // &c.sc
	// a delivers the answer to the host's reply under the call's token.
	a answerer
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
	fastEntries atomic.Int64
)

// openSlot numbers s for the exports; closeSlot forgets the number.
func (s *Surface) openSlot() int32 {
	s.slot = freeNumber(func(n int32) bool { return slots[n] != nil })
	slots[s.slot] = s
	return s.slot
}

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

func (s *Surface) closeSlot() {
	if s.slot != 0 && slots[s.slot] == s {
		delete(slots, s.slot)
	}
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
	if !keyed(k0, k1) {
		return entryRefused
	}
	s := slots[slot]
	if s == nil || n < 0 || int(n) > s.lane.size {
		return entryRefused
	}
	if flags&flagSession != 0 && s.sessionForFn.Type() != js.TypeFunction {
		return entryRefused
	}
	fastEntries.Add(1)
	req := entryText(s, int(n))
	f := newFlight(s, answerer{s: s, token: float64(token), shared: flags&flagShared != 0})
	f.c.perCall, f.c.token = flags&flagSession != 0, float64(token)
	s.startHandle(f, req, f.c.perCall)
	return entryAccepted
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
func newFlight(s *Surface, a answerer) *flight {
	f := flights.Get().(*flight)
	*f = flight{s: s, a: a}
	f.c.Context = context.Background()
	f.ctx, f.sc = &f.c, &f.c.sc
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

// startHandle runs the request req in f until it is answered or waits.
func (s *Surface) startHandle(f *flight, req []byte, perCall bool) {
	defer f.recover()
	runHook("handle.run")
	switch {
	case s.closed.Load():
		f.send(s.failure(surface.CodeInternalError, "surface is closed"))
		return
	case req == nil:
		f.send(s.failure(surface.CodeInvalidRequest, "request must be JSON text"))
		return
	case len(req) > s.limits.MaxRequestBytes:
		f.send(s.failure(surface.CodeInvalidRequest, "request is larger than the size limit"))
		return
	}
	f.k = s.main
	f.buf = bufferPool.Get().(*[]byte)
	f.x = s.main.Begin((*f.buf)[:0], req, s.hasSession || perCall)
	f.run()
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
	if !keyed(k0, k1) {
		return entryRefused
	}
	s := slots[slot]
	if s == nil || n < -1 || int(n) > s.lane.size {
		return entryRefused
	}
	fastEntries.Add(1)
	var input []byte
	if n >= 0 {
		input = entryText(s, int(n))
	}
	s.startDescribe(newFlight(s, answerer{s: s, token: float64(token)}), input)
	return entryAccepted
}

// startDescribe runs the in-page describe with input (nil: none) in f.
func (s *Surface) startDescribe(f *flight, input []byte) {
	f.describe = true
	defer f.recover()
	runHook("describe.run")
	if s.closed.Load() {
		f.send(describeFailure(&surface.Error{Code: surface.CodeInternalError, Message: "surface is closed"}))
		return
	}
	f.k = s.main
	f.x = s.main.BeginDescribe(input, s.hasSession)
	f.run()
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
	fastEntries.Add(1)
	defer f.recover()
	runHook("answer")
	a := f.x.Ask()
	ans := f.answerFor(a, code)
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

// send gives the caller its answer.
func (f *flight) send(text []byte) { f.a.send(text) }

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
		ans := f.answerNow(a)
		if f.sc.waiting {
			f.wait(a)
			return
		}
		if _, err := f.x.Answer(ans); err != nil {
			panic(err) // cannot happen: ans answers a
		}
	}
}

// answerNow answers a through the host's functions, or parks the Promise
// one of them answered in f.sc.
func (f *flight) answerNow(a surface.Ask) surface.Answer {
	if a.Kind == surface.AskExecute {
		return f.execute(a)
	}
	ans := f.k.AnswerAsk(f.ctx, a)
	if errors.Is(ans.Err, errPending) && !f.sc.waiting {
		ans.Err = newError(a.Kind.String(), KindBadValue, "no Promise was parked")
	}
	return ans
}

// execute runs the call through host.execute(action, argsJSON, ctxJSON),
// texts through the lane: its answer is the result's text, or a Promise.
func (f *flight) execute(a surface.Ask) surface.Answer {
	ans := surface.Answer{Kind: a.Kind, Step: a.Step}
	scratch := laneBuffer(0)
	defer putScratch(scratch)
	cb, err := surface.AppendJSON((*scratch)[:0], a.Call.Context)
	*scratch = cb
	if err != nil {
		ans.Err = err
		return ans
	}
	l := f.s.lane
	params, put := l.textParams([]byte(a.Call.Action), a.Call.Input, cb)
	r, err := l.call("execute", f.s.execFn, params, put, false)
	switch {
	case err != nil:
		ans.Err = err
	case r.v.Type() == js.TypeNumber && r.v.Float() == codeParked:
		// The host kept the Promise for the wait that follows.
		f.sc.promise, f.sc.waiting = js.Undefined(), true
	case r.v.Type() == js.TypeNumber:
		n, ok := laneLength(r.v, l.size)
		if !ok {
			ans.Err = newError("execute", KindBadValue, "answer length is out of range")
			break
		}
		b := make([]byte, n)
		js.CopyBytesToGo(b, l.io)
		ans.Result = b
	case r.v.Type() == js.TypeString:
		ans.Result = []byte(r.v.String())
	case isThenable(r.v) && pend(f.ctx, r.v):
	default:
		ans.Err = newError("execute", KindBadValue, "execute() must answer JSON text")
	}
	return ans
}

// wait hands the parked Promise to host.wait under a new ticket.
func (f *flight) wait(a surface.Ask) {
	p := f.sc.promise
	f.sc.promise, f.sc.waiting = js.Undefined(), false
	t := freeNumber(func(n int32) bool { return tickets[n] != nil })
	tickets[t] = f
	limit := f.s.hostTimeout
	if a.Kind == surface.AskExecute {
		limit = a.Timeout
	}
	ms := math.Max(1, float64(limit.Milliseconds()))
	if err := catch("wait", func() { f.s.waitFn.Invoke(float64(t), int(a.Kind), p, ms) }); err != nil {
		// Nothing will settle it: fail the ask now.
		delete(tickets, t)
		ans := surface.Answer{Kind: a.Kind, Step: a.Step, Err: err}
		if _, aerr := f.x.Answer(ans); aerr != nil {
			panic(aerr)
		}
		f.run()
	}
}

// answerFor decodes pling_answer's code for the ask a: a text's length
// in entryIO, or one of the codes above.
func (f *flight) answerFor(a surface.Ask, code float64) surface.Answer {
	ans := surface.Answer{Kind: a.Kind, Step: a.Step}
	var failed error = errHostFailed
	text, isText := f.text(code)
	switch a.Kind {
	case surface.AskSession:
		switch {
		case isText:
			ans.Session, ans.Err = parseSession(text)
		case code == codeNone:
		default:
			ans.Err = failed
		}
	case surface.AskView:
		if !isText {
			ans.Err = failed
			break
		}
		ans.View, ans.Err = f.s.reg.viewFrom(string(text))
	case surface.AskLimit:
		// 0: allowed; > 0: denied, retry after that many milliseconds;
		// anything else leaves the zero Decision, which is illegal.
		switch {
		case code == 0:
			ans.Decision = surface.Decision{Verdict: surface.Allow}
		case code > 0 && !math.IsInf(code, 0):
			ans.Decision = surface.Decision{Verdict: surface.Deny, RetryAfter: durationFromMillis(code)}
		}
	case surface.AskClaim:
		switch code {
		case 1:
			ans.Replay = surface.Claimed
		case 2:
			ans.Replay = surface.Replayed
		}
	case surface.AskExecute:
		switch {
		case isText:
			ans.Result = text
		case code == codeTimedOut:
			ans.Err = surface.ErrExecuteTimeout
		default:
			ans.Err = failed
		}
	default:
		ans.Err = failed
	}
	return ans
}

// text reads the text code stands for: a length in entryIO, or codeHeld.
func (f *flight) text(code float64) ([]byte, bool) {
	l := f.s.lane
	if code == codeHeld {
		var v js.Value
		if catch("held", func() { v = f.s.heldFn.Invoke() }) != nil || v.Type() != js.TypeString {
			return nil, false
		}
		return []byte(v.String()), true
	}
	n, ok := laneLength(js.ValueOf(code), l.size)
	if !ok {
		return nil, false
	}
	b := make([]byte, n)
	js.CopyBytesToGo(b, l.entry)
	return b, true
}

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
	if f.a.shared && shared.ID != 0 {
		b = f.a.replyShared(b, shared)
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
