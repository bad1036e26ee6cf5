//go:build js && wasm

// Package hostbridge runs the surface kernel inside a browser page (or Node)
// compiled with GOOS=js GOARCH=wasm, on top of a JavaScript host object.
//
//	rt := hostbridge.NewRuntime()            // {protocol, create, stats}
//	js.Global().Set("__plingSurfaceRuntime", rt)
//	// JS: const inst = rt.create(host, configJSON) // { slot, ... }
//	//     exports.pling_handle(inst.slot, n, token, flags) // reply via host.reply
//
// The host object is written by the JS runtime (js/host.js), which
// adapts a page's options to it. Every answer to an ask is one number, a
// code of answerFor (answers_js.go): a text's length in a buffer, or
// failed (-1), none (-2), timed out (-3), held (-4: host.held() answers the
// text), parked (-5: the function answered with a Promise, which the host
// keeps for the wait that follows) or the same session (-6). One string
// copy is far cheaper than reading a JS object field by field through
// syscall/js, and no Promise or object of the page reaches Go:
//
//	version()                         number | string (optional; see below)
//	actions()                         code of the JSON text of Action[]
//	view(queryJSON)                   code of the view's text, or parked
//	execute(action, argsJSON, ctxJSON) code of the result's text, or parked
//	session()                         code of a session's text, none, the same
//	                                  session, or parked (optional)
//	sessionFor(token)                 (optional) as session(), for the getter the
//	                                  call taken under token brought; never -6
//	expose(idsJSON)                   code of one boolean per id, as JSON (optional)
//	allow(key, nowMs)                 0 allowed, > 0 denied for that many ms, or
//	                                  parked (optional)
//	claim(sessionID, requestID, windowMs) 1 claimed, 2 replayed, or parked (optional)
//	audit(eventJSON)                  anything (optional); a Promise is the host's to watch
//	auditError(reason, message, eventJSON) anything (optional)
//	io, entryIO                       two Uint8Arrays of one length: the lane
//	reply(token, text, capsId?, capsText?)  answers calls that came through the
//	                                  module's exports (see exports_js.go)
//	wait(ticket, kind, limitMs)       settles the Promise parked last within
//	                                  limitMs and gives its outcome, in the same
//	                                  codes with texts in entryIO, to the
//	                                  pling_answer export once
//	held()                            the text a code of -4 stands for
//	unanswered()                      (optional) a reply call to host.unansweredToken
//	                                  failed: the host fails that call unless it
//	                                  was answered (see flight.unanswered)
//
// Texts cross as UTF-8 copied into the lane's buffers instead of as JS
// strings: a text parameter may be given as its length in io, a host
// function's text answer is its length in io, and the exports are given
// the length of a text in entryIO. See lane_js.go for the convention and
// why it cannot mix up two calls' bytes.
//
// A page enters the kernel only through functions the module exports
// (pling_handle, pling_describe, pling_answer, pling_close), which run the
// kernel's steps synchronously and call the host's functions from inside
// the export; a Promise a host function answers is parked and given to
// wait, and its outcome comes back through pling_answer. exports_js.go has the contract and
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
//   - Every JS exception and every syscall/js panic becomes a *hostError
//     (see catch), and every entry recovers, so a throwing page or a bad
//     argument can never stop the Go program.
//   - The registry's actions are parsed only when its version() changed, or,
//     without version(), when the text actions() returns changed.
//   - Numbers stay exact: JSON from the host is decoded with json.Number,
//     and requests go through the kernel's strict decoder, which refuses
//     escaped lone surrogates.
package hostbridge
