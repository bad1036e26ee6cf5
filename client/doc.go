// Package client calls a pling.surface/0.1 agent surface over any
// transport: for native hosts, tests, and facades such as an MCP server that
// turn a page's capabilities into tools.
//
//	c := client.New(transport, client.Options{App: "orders"})
//	d, err := c.Describe(ctx, client.DescribeInput{})
//	if err != nil { ... }
//	r, err := c.InvokeRecord(ctx, "update_note@order", "SO-1002",
//		map[string]any{"note": "Call Friday"}, client.InvokeOptions{})
//	var perr *client.ProtocolError
//	switch {
//	case errors.As(err, &perr): // ok: false; branch on perr.Code
//	case err != nil:            // no usable reply; see OutcomeUnknownError
//	case r.Kind == client.BusinessFailure: // r.Code, r.Message
//	case r.Approval == client.ApprovalPending: // waits for a person
//	default: // done; r.Value, r.After
//	}
//
// # Outcomes
//
// Every call ends in exactly one of:
//   - a success (a *Description, or a *Result of Kind Success; a result may
//     still report an approval that is pending, denied or unknown, see
//     Result.Completed);
//   - a business failure (a *Result of Kind BusinessFailure with the page's
//     Code and Message): the surface accepted the call and the page's
//     executor refused it;
//   - a protocol failure (a *ProtocolError with the surface's Code): the
//     surface refused the call; errors.Is matches the surface.Err* sentinels;
//   - any other error: no reply that the client could trust. A *ReplyError
//     for a reply that is malformed, answers another id, speaks another
//     protocol or comes from another app; a transport error; a timeout
//     (matching context.DeadlineExceeded); ErrClosed when the client or the
//     surface closed (ErrNavigated when the page navigated away).
//
// Replies are read strictly: exact field names, no duplicate or
// case-variant keys, ok required and boolean, an approval status only from
// the known set. Whatever does not fit is a *ReplyError, never a success.
//
// # Request ids and retries
//
// Every call gets a new, unique request id. When the transport fails (an
// error or no reply within Options.Timeout) the client sends the same bytes
// again, with the same id, up to Options.Retries times. The surface's replay
// guard therefore runs an invoke at most once however often it is retried.
//
// The price is that the client cannot always know what happened. When an
// invoke was handed to the transport and no trustworthy answer came back for
// it (every attempt failed, or a retry was refused: with REPLAY_DETECTED
// because the first attempt reached the surface and its reply was lost), the
// error is an *OutcomeUnknownError: the first attempt's effect is unknown.
// The caller should look at the page (describe the record) before deciding
// anything; repeating the call, if at all, with InvokeOptions.ID set to the
// same id so the replay guard can refuse it.
//
// # Folded templates, records and capability changes
//
// A Client remembers the last full capability list and the record ids the
// surface offered on the current route. InvokeRecord uses them to put the
// record id in the template's record parameter and to refuse, before
// sending, an id the surface never offered. Records pages through the
// record window with offset and limit, and stops at Options.MaxRecords
// (1000 by default) whatever total the page claims. SyncCapabilities asks for
// capabilities: "changed" and reports whether the list differs from the
// last one it returned, which is what a tools/list_changed notification
// needs.
package client
