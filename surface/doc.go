// Package surface is the transport-neutral kernel of the pling.surface/0.1
// agent surface: it projects a page's existing action registry as
// capabilities and answers the protocol's two methods, describe and invoke,
// inside a verified session, with rate limits, replay protection, input
// validation and a metadata-only audit.
//
//	s, err := surface.New(surface.Options{
//		Registry: registry, // the page's actions and context, read on every call
//		Execute:  executor, // the page's existing execution path
//		Now:      time.Now,
//		App:      "orders",
//		Expose:   func(id string) bool { return id == "orders.search" || id == "update_note@order" },
//		Session:  verifiedSession, // evaluated on every call
//		RateLimit: &surface.RateLimitOptions{MaxRequests: 60, Window: time.Minute},
//		Replay:    &surface.ReplayOptions{},
//	})
//	if err != nil { ... }
//	reply := s.HandleJSON(ctx, requestBytes) // always a structured response
//
// The kernel imports only the standard library and this module's own
// packages (internal/jsonread reads and internal/jsonwrite writes JSON
// without reflection; internal/sprint words panic values); input schemas are compiled by its own validator
// (internal/schema), which fails closed on keywords it does not implement. It reads no clock, no file and no network of its own: time, the registry, the
// executor, the session, the limiter, the replay guard and the audit sink are
// all injected, so the same code runs natively, under GOOS=wasip1 and in a
// browser page through package hostbridge.
//
// Requests are processed in the specification's order: (1) envelope object,
// id, protocol and method; (2) session; (3) rate limit; (4) method-specific
// fields; (5) for invoke, capability, record, input schema and replay claim;
// (6) the executor, exactly once; (7) the bounded after observation and the
// audit event. Where two checks fail, the earlier step decides the code.
package surface
