//go:build js && wasm

// Package hostbridge runs the surface kernel inside a browser page (or Node)
// compiled with GOOS=js GOARCH=wasm, on top of a JavaScript host object.
//
//	rt := hostbridge.NewRuntime()            // {protocol, create, stats}
//	js.Global().Set("__plingSurfaceRuntime", rt)
//	// JS: const inst = rt.create(host, configJSON) // { slot, ... }
//	//     exports.pling_handle(inst.slot, n, token, flags) // reply via host.reply
//
// The host object is written by the JS runtime (js/pling-surface.js), which
// adapts a page's options to it. Every value that carries data crosses the
// boundary as one JSON string, because one string copy is far cheaper than
// reading a JS object field by field through syscall/js:
//
//	version()                         number | string (optional; see below)
//	actions()                         JSON text of Action[]
//	view(queryJSON)                   JSON text of the view, or a Promise of it
//	execute(action, argsJSON, ctxJSON) JSON text of the result, or a Promise of it
//	session()                         JSON text of a session, null, or a Promise of either (optional);
//	                                  true: the session of the text it answered last
//	expose(idsJSON)                   JSON text of one boolean per id (optional)
//	allow(key, nowMs)                 {allowed, retryAfterMs}, or a Promise of it (optional)
//	claim(sessionID, requestID, windowMs) "claimed" | "replayed", or a Promise of it (optional)
//	audit(eventJSON)                  anything (optional); a Promise is the host's to watch
//	auditError(reason, message, eventJSON) anything (optional)
//	io, entryIO                       two Uint8Arrays of one length: the lane
//	reply(token, text, capsId?, capsText?)  answers calls that came through the
//	                                  module's exports (see step_js.go)
//	sessionFor(token)                 (optional) what the session getter of the call
//	                                  taken under token answers, as session() does
//	wait(ticket, kind, promise, limitMs)  settles a Promise a host function answered,
//	                                  within limitMs, and gives the outcome to the
//	                                  pling_answer export once
//	held()                            a text too long for entryIO, given to
//	                                  pling_answer as -4
//	unanswered()                      (optional) a reply call to host.unansweredToken
//	                                  failed: the host fails that call unless it
//	                                  was answered (see answerer.unanswered)
//
// Texts cross as UTF-8 copied into the lane's buffers instead of as JS
// strings: a text parameter may be given as its length in io, a text answer
// may be its length in io, and the exports are given the length of a text
// in entryIO. See lane_js.go for the convention and why it cannot mix up two
// calls' bytes.
//
// A page enters the kernel only through functions the module exports
// (pling_handle, pling_describe, pling_answer, pling_close), which run the
// kernel's steps synchronously and call the host's functions from inside
// the export; a Promise a host function answers is handed to wait, and its
// outcome comes back through pling_answer. step_js.go has the contract and
// why. An instance is a number (its slot) for those exports, nothing to
// call: the JS runtime binds to the module through its Go object.
//
// Rules the bridge keeps at the boundary:
//
//   - Nothing is ever waited for on a goroutine: a step that gets a
//     Promise ends, and the Promise's outcome starts the next one. No
//     export parks.
//   - Every Promise the bridge waits for goes to the host's wait with a
//     time limit, under a ticket that pling_answer takes once; whatever
//     comes for it later is refused. Nothing per call needs releasing.
//   - Every JS exception and every syscall/js panic becomes an *Error
//     (see catch), and every entry recovers, so a throwing page or a bad
//     argument can never stop the Go program.
//   - The registry's actions are parsed only when its version() changed, or,
//     without version(), when the text actions() returns changed.
//   - Numbers stay exact: JSON from the host is decoded with json.Number,
//     and requests go through the kernel's strict decoder, which refuses
//     escaped lone surrogates.
package hostbridge
