// Package transcript replays golden protocol transcripts against the kernel.
//
// A transcript is a text file in a txtar-like format. It opens with a prose
// header that must list, as "- " lines, the behaviours and past bugs the file
// pins. Then come sections, each a marker line "-- name args --" followed by
// its body:
//
//	-- page --            JSON: the fixture, surfacetest.Orders(n) plus overrides
//	                      {orders, route, remove, actions, duplicate, regions,
//	                      state, feedback, unavailable, offscreen, locked,
//	                      recordActions, viewError}
//	-- options --         JSON: surface.Options {app, expose, session,
//	                      recordLimit, maxRecordLimit, rateLimit, replay,
//	                      executeTimeoutMs, auditFails, limits, context, after}
//	-- request label --   raw request bytes, sent as they are (the newline
//	                      that ends the section is not sent); the label is prose
//	-- response --        expected response (compared as JSON)
//	-- contains --        JSON the response before it must contain: object
//	                      members present and matching, arrays element by
//	                      element, "message" strings present but not compared
//	-- calls --           expected executor calls of the scene so far,
//	                      one {action, input} per line
//	-- audit --           expected audit events since the last audit section,
//	                      time shown as "T+<ms>ms" from the clock's start
//	-- advance <ms> --    move the fake clock
//	-- revoke --          revoke the session now (the getter sees it at once)
//	-- scope <ids> --     replace the session's scope with a JSON array
//	-- session --         JSON: replace the session (same forms as options.session)
//	-- navigate <route> --  change the page's route
//	-- lock <record> --   lock an order, so its note cannot be changed
//
// Actions in a page may name a fixture handler to run ("handler") and a
// canned answer ("result"). rateLimit.limiter and replay.guard replace the
// kernel's limiter or guard with one that fails ("error", "panic", "zero",
// and for the limiter "deny0"), to pin that failures fail closed.
//
// The session in options is an object {agentId, sessionId, userId,
// expiresInMs, scope, delegationId}, null for open mode, "missing" for a
// getter that answers no session, or "error" for one that fails. A page or
// options section after any step starts a new scene with a fresh page, clock
// and surface, so one file can hold several related exchanges.
//
// Run returns the file with the response, calls and audit bodies replaced by
// what actually happened. The tests compare that with the golden file
// natively, inside a GOOS=wasip1 build run by wazero, and through the
// exports of the kernel built as a wasip1 reactor (./reactor, RunVia), where
// the host answers every step of every request; and rewrite the golden
// files with -update.
package transcript
