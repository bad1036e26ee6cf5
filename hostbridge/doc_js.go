//go:build js && wasm

// Package hostbridge runs the surface kernel inside a browser page (or Node)
// compiled with GOOS=js GOARCH=wasm, on top of a JavaScript host object.
//
//	rt := hostbridge.NewRuntime()            // {protocol, create, stats}
//	js.Global().Set("__plingSurfaceRuntime", rt)
//	// JS: const inst = rt.create(host, configJSON)
//	//     const replyJSON = await inst.handle(requestJSON)
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
//	audit(eventJSON)                  anything, or a Promise (optional)
//	auditError(reason, message, eventJSON) anything (optional)
//	io, entryIO                       two Uint8Arrays of one length (optional): the lane
//	reply(token, text, capsId?, capsText?)  (optional, with a lane) answers calls that
//	                                  came through the module's exports (see step_js.go)
//	sessionFor(token)                 (optional, with reply) what the session getter of the call
//	                                  taken under token answers, as session() does
//	wait(ticket, kind, promise, limitMs)  (optional) settles a Promise a host function
//	                                  answered, within limitMs, and gives the outcome to the
//	                                  pling_answer export once; without it the bridge waits
//	                                  itself, through its settle callback and a JS timeout
//	held()                            (with wait) a text too long for entryIO, given to
//	                                  pling_answer as -4
//
// With a lane, texts cross as UTF-8 copied into those buffers instead of as
// JS strings: a text parameter may be given as its length in io, a text
// answer may be its length in io, and instance.handle and the exports may
// be given the length of a text in entryIO. The JS runtime's
// host always offers one; see lane_js.go for the convention and why it
// cannot mix up two calls' bytes.
//
// A page enters the kernel through functions the module exports
// (pling_handle, pling_describe, pling_answer), which run the kernel's steps
// synchronously and call the host's functions from inside the export; a
// Promise a host function answers is handed to wait, and its outcome comes
// back through pling_answer. step_js.go has the contract and why. The
// js.FuncOf methods of an instance (handle, describe), for a runtime bound
// without its Go object, run the same steps inside the callback.
//
// Rules the bridge keeps at the boundary:
//
//   - Nothing is ever waited for on a goroutine: a step that gets a
//     Promise ends, and the Promise's outcome starts the next one. No
//     export and no callback parks.
//   - Every Promise the bridge waits for is wired for both fulfilment and
//     rejection and is bounded by a time limit. A ticket is answered once;
//     whatever comes for it later is dropped without a trace. The settle
//     callbacks are bound copies of one long-lived function, so nothing per
//     call needs releasing.
//   - Every JS exception and every syscall/js panic becomes an *Error
//     (see catch), and every entry recovers, so a throwing page or a bad
//     argument can never stop the Go program.
//   - The registry's actions are parsed only when its version() changed, or,
//     without version(), when the text actions() returns changed.
//   - Numbers stay exact: JSON from the host is decoded with json.Number,
//     and requests go through the kernel's strict decoder, which refuses
//     escaped lone surrogates.
package hostbridge
