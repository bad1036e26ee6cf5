//go:build js && wasm

package hostbridge

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall/js"

	"pling.dev/agent/surface"
)

// Entries: the two calls an invoke makes into the bridge (the request, and
// the executor's answer) can come through functions this package exports
// from the wasm module, instead of through js.FuncOf callbacks. A js.FuncOf
// call makes syscall/js read the call's this and arguments out of a JS
// event object, field by field, each a crossing and most a JS value Go
// tracks and finalizes, and write the result back the same way: about
// 10 µs in Node (`make bench-boundary`). An export takes numbers and costs
// nothing to enter.
//
// An export only copies the call (its numbers, and its text out of entryIO
// into memory set aside beforehand) and wakes a dispatching goroutine. It
// allocates nothing and never parks, so the Go scheduler cannot run inside
// it; an allocation could start a collection, which parks the caller while
// the collector's goroutines start. The caller then calls the Go object's
// _resume() with no event pending, which is the runtime's own event entry:
// it runs every goroutine that can run (the dispatcher first), arms a JS
// timeout for the next Go timer, and pauses, as after a js.FuncOf call.
// Running goroutines inside an export instead would be unsafe: an export
// that parked while every goroutine waited for the page would return to JS
// before its function did, and one that yielded could be resumed inside a
// js.FuncOf call that page code made meanwhile.
//
// The JS side calls an export only when no Go code is running (no host
// function or callback on the stack) and calls _resume() right after it.
// Calls made from page code that Go is running take the js.FuncOf path,
// whose nesting the runtime handles. One cost remains: since _resume()
// brings no event, the runtime takes it for its own timeout firing, and
// re-arms that timeout if a Go timer is pending (a clearTimeout and a
// setTimeout). The bridge arms none while it waits for the page; the
// runtime's own background work sometimes does, about one entry in three
// in an invoke loop in Node.
//
//	pling_handle(slot, n, token, flags) -> 0 | -1
//	    instance.handle for the instance numbered slot (instance.slot),
//	    with the request as n bytes in entryIO. The answer goes to the
//	    host's reply(token, text, capsId?, capsText?) as instance.handle
//	    gives it to a reply function; flags&1 asks for shared mode, and
//	    flags&2 says the call has a session getter of its own (a private
//	    channel's), which the host's sessionFor(token) calls. -1:
//	    refused (no such instance, n is no length in entryIO, or a call
//	    is already waiting for the runtime to run), and nothing will
//	    answer: the caller then uses instance.handle.
//	pling_settle(id, n) -> 0 | -1
//	    the executor's settle(id, true, n) with the result as n bytes in
//	    entryIO, or with n == -1 settle(id, false, undefined, true), its
//	    time limit passed. A rejection, which carries a JS reason, takes
//	    the settle callback. -1: refused (id is no call id, n no length,
//	    or a call is already waiting for the runtime to run); the caller
//	    then uses the settle callback.
const (
	entryAccepted int32 = 0
	entryRefused  int32 = -1

	flagShared  int32 = 1
	flagSession int32 = 2

	settleTimedOut int32 = -1
)

var (
	slotsMu  sync.Mutex
	slots    = map[int32]*Surface{}
	lastSlot int32

	// fastEntries counts calls taken through the exports, so that tests
	// can tell which way calls came in.
	fastEntries atomic.Int64
)

// openSlot numbers s for the exports; closeSlot forgets the number.
func (s *Surface) openSlot() int32 {
	slotsMu.Lock()
	defer slotsMu.Unlock()
	for {
		lastSlot++
		if lastSlot <= 0 {
			lastSlot = 1
		}
		if _, taken := slots[lastSlot]; !taken {
			break
		}
	}
	s.slot = lastSlot
	slots[s.slot] = s
	if len(entryText) < s.lane.size {
		// Kept, in case a call's text is waiting in it.
		entryText = append(entryText, make([]byte, s.lane.size-len(entryText))...)
	}
	return s.slot
}

func (s *Surface) closeSlot() {
	slotsMu.Lock()
	defer slotsMu.Unlock()
	if s.slot != 0 && slots[s.slot] == s {
		delete(slots, s.slot)
	}
}

// sessionFor returns the host's sessionFor bound to token: the session
// getter of the call taken under that token.
func (s *Surface) sessionFor(token int32) (fn js.Value) {
	fn = js.Undefined()
	_ = catch("bind sessionFor", func() { fn = theEnv().bind.Call("call", s.sessionForFn, js.Null(), float64(token)) })
	return fn
}

func slotSurface(slot int32) *Surface {
	slotsMu.Lock()
	defer slotsMu.Unlock()
	return slots[slot]
}

// entry is the one call taken by an export and not yet dispatched.
type entry struct {
	s      *Surface // handle: the instance; nil: a settlement
	id     float64  // settle: the waiter's id
	n      int32    // the text's length (settle: or settleTimedOut)
	token  int32
	shared bool
	// session: the call brings its own session getter, which the host's
	// sessionFor(token) calls.
	session bool
	// notText: a settlement whose length is no text of the waiter's lane;
	// the call fails as an executor answer that is not text.
	notText bool
}

// One call at a time: JS resumes the runtime right after each export, so
// the dispatcher has taken the call before another can come. The export
// copies the call's text out of entryIO into entryText at once (a copy into
// memory allocated beforehand allocates nothing), so that nothing JS writes
// afterwards can change it; a second call before the runtime ran is refused
// and takes the js.FuncOf path.
var (
	pendingEntry entry
	hasEntry     bool
	entryText    []byte // as large as the largest lane of a numbered surface
	dispatchWake = make(chan struct{}, 1)
	dispatchOnce sync.Once
)

// startDispatcher starts the goroutine that runs taken calls. JS can only
// call an export for an instance, which exists only after NewRuntime.
func startDispatcher() {
	dispatchOnce.Do(func() { go dispatch() })
}

// takeEntry records e, whose text (if any) is the first e.n bytes of l's
// entryIO, and wakes the dispatcher. It allocates nothing.
func takeEntry(e entry, l lane) bool {
	if hasEntry {
		return false
	}
	if e.n > 0 {
		if int(e.n) > l.size || int(e.n) > len(entryText) {
			return false
		}
		// l.entry is a Uint8Array (see newLane): the copy cannot fail.
		js.CopyBytesToGo(entryText[:e.n], l.entry)
	}
	pendingEntry, hasEntry = e, true
	select {
	case dispatchWake <- struct{}{}:
	default: // already woken
	}
	return true
}

func dispatch() {
	for range dispatchWake {
		if !hasEntry {
			continue
		}
		e := pendingEntry
		var text []byte
		if e.n >= 0 {
			text = append([]byte(nil), entryText[:e.n]...)
		}
		pendingEntry, hasEntry = entry{}, false
		runEntry(e, text)
	}
}

// runEntry starts the work of one call; it never parks, so the dispatcher
// is back on dispatchWake before the runtime pauses.
func runEntry(e entry, text []byte) {
	defer func() {
		if r := recover(); r != nil && e.s != nil {
			// The request was taken: it still gets its one answer.
			a := answerer{s: e.s, reply: e.s.reply, token: float64(e.token)}
			_ = catch("reply", func() { a.send([]byte(internalReply)) })
		}
	}()
	if e.s != nil {
		runHook("enter.handle")
		a := answerer{s: e.s, fallback: internalReply, reply: e.s.reply, token: float64(e.token), shared: e.shared}
		session := js.Undefined()
		if e.session {
			// A getter of the call's own: host.sessionFor bound to its token.
			session = e.s.sessionFor(e.token)
			if session.Type() != js.TypeFunction {
				a.send(e.s.failure(surface.CodeInternalError, "internal error"))
				return
			}
		}
		e.s.serve(a, text, session)
		return
	}
	runHook("enter.settle")
	w, found := take(uint64(e.id))
	switch {
	case !found:
		// Nobody waits any more: dropped, as by settle.
	case e.n == settleTimedOut:
		w.ch <- settlement{timedOut: true, v: js.Undefined()}
	case e.notText:
		w.ch <- settlement{ok: true, v: js.Undefined()}
	default:
		w.ch <- settlement{ok: true, text: text, inEntry: true, v: js.Undefined()}
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
func enterHandle(slot, n, token, flags int32) int32 {
	s := slotSurface(slot)
	if s == nil || s.closed.Load() || n < 0 {
		return entryRefused
	}
	if flags&flagSession != 0 && s.sessionForFn.Type() != js.TypeFunction {
		return entryRefused
	}
	e := entry{s: s, n: n, token: token, shared: flags&flagShared != 0, session: flags&flagSession != 0}
	if !takeEntry(e, s.lane) {
		return entryRefused
	}
	fastEntries.Add(1)
	return entryAccepted
}

//go:wasmexport pling_settle
func enterSettle(id float64, n int32) int32 {
	if !(id >= 1 && id <= 1<<53 && id == float64(uint64(id))) || n < settleTimedOut {
		return entryRefused
	}
	// The text is in the entryIO of the waiter's lane. The waiter itself is
	// taken by the dispatcher: until then a timeout may still take it.
	pendingMu.Lock()
	w, found := pending[uint64(id)]
	pendingMu.Unlock()
	if !found {
		return entryAccepted // nobody waits any more: dropped, as by settle
	}
	e := entry{id: id, n: n}
	if n >= 0 && int(n) > w.lane.size {
		// Not a text of that lane. Taken all the same, so that the call
		// fails now rather than wait for a settlement that cannot come.
		e.n, e.notText = 0, true
	}
	if !takeEntry(e, w.lane) {
		return entryRefused
	}
	fastEntries.Add(1)
	return entryAccepted
}
