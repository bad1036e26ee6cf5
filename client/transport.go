package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"pling.dev/agent/surface"
)

// Transport carries one encoded request envelope to a surface and returns
// the encoded reply. It must honour ctx (the client also stops waiting when
// ctx ends) and must not keep or change request after it returns.
//
// The reply is either the response envelope or, for transports that carry
// the page's window messages, the whole response message
// {"channel":"pling.surface","kind":"response","app":...,"envelope":{...}};
// the client then also checks its app.
//
// An error means no reply arrived; the client may retry it with the same
// request id. Errors matching ErrClosed (ErrNavigated among them) say the
// surface is gone for good and are not retried. A *ReplyError (ReplyTooLarge
// among them) says a reply arrived and was refused before it was read
// whole: it is the call's outcome, and is not retried either.
type Transport interface {
	RoundTrip(ctx context.Context, request []byte) ([]byte, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, request []byte) ([]byte, error)

// RoundTrip implements Transport.
func (f TransportFunc) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	return f(ctx, request)
}

// KernelTransport carries requests to an in-process surface through
// HandleJSON: for tests and for native hosts that embed the kernel.
func KernelTransport(s *surface.Surface) Transport {
	return TransportFunc(func(ctx context.Context, request []byte) ([]byte, error) {
		return s.HandleJSON(ctx, request), nil
	})
}

var (
	// ErrClosed is matched by every error that means the surface can no
	// longer answer: the client was closed, or the transport reports that
	// the surface or its channel closed. A pending call fails with it at
	// once, and it is never retried.
	ErrClosed = errors.New("client: surface closed")
	// ErrNavigated is what a transport returns when the page navigated
	// away while a call was pending. It matches ErrClosed too: the next page
	// is another surface, and a retry there could run the action again.
	ErrNavigated = fmt.Errorf("client: page navigated away: %w", ErrClosed)
)

// ReplyTooLarge is what a transport returns when the reply is larger than
// limit bytes and it stopped reading it: a *ReplyError naming the bound.
// Transports that read from a page should enforce the bound themselves,
// before holding the whole reply.
func ReplyTooLarge(limit int) error {
	return badReply("larger than " + strconv.Itoa(limit) + " bytes")
}
