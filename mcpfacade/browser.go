//go:build !(js || wasip1)

package mcpfacade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade/nativehost"
)

// notSentError carries the reason with ErrNotSent.
type notSentError struct{ err *nativehost.NotSentError }

func (e *notSentError) Error() string   { return e.err.Error() }
func (e *notSentError) Is(t error) bool { return t == ErrNotSent || t == client.ErrClosed }

// BrowserPage is the page transport of browser mode: requests go through
// the native messaging host and the Pling extension to a tab of the bound
// origin that the person opted in, with the same bounds and errors as a
// Page reached through DevTools.
type BrowserPage struct {
	link   *nativehost.Link
	origin string
}

// BrowserOptions configures OpenBrowserPage.
type BrowserOptions struct {
	URL, App      string
	Dir           string // the rendezvous directory; default nativehost.Dir()
	MaxReplyBytes int
	Client        func() string // the MCP client's name, for the person's panel
	OnChange      func()
	Logf          func(format string, a ...any)
}

// OpenBrowserPage binds to the origin of opts.URL and connects to the
// person's browser, now or whenever it comes.
func OpenBrowserPage(opts BrowserOptions) (*BrowserPage, error) {
	origin, err := originOf(opts.URL)
	if err != nil || origin == "null" {
		return nil, fmt.Errorf("mcpfacade: %q has no origin to bind to", opts.URL)
	}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = client.DefaultMaxReplyBytes
	}
	l := nativehost.Dial(nativehost.LinkOptions{
		Dir: opts.Dir, Origin: origin, URL: opts.URL, App: opts.App,
		Client: opts.Client, MaxReplyBytes: opts.MaxReplyBytes,
		OnChange: opts.OnChange, Logf: opts.Logf,
	})
	return &BrowserPage{link: l, origin: origin}, nil
}

// Origin is the bound origin.
func (p *BrowserPage) Origin() string { return p.origin }

// Connected reports whether the browser's host is connected, and why not.
func (p *BrowserPage) Connected() (bool, string) { return p.link.Connected() }

// Close stops dialing the browser.
func (p *BrowserPage) Close() error { return p.link.Close() }

// RoundTrip implements client.Transport.
func (p *BrowserPage) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	reply, err := p.link.RoundTrip(ctx, request)
	var oe *nativehost.OtherOriginError
	var ns *nativehost.NotSentError
	switch {
	case errors.As(err, &oe):
		return nil, &OriginError{Want: p.origin, Found: oe.Found}
	case errors.As(err, &ns):
		return nil, &notSentError{err: ns}
	}
	return reply, err
}

// clientNames names the MCP clients connected to s, for the person's panel.
func clientNames(f *Facade) string {
	var names []string
	for ss := range f.Server().Sessions() {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
			names = append(names, ip.ClientInfo.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// hostMain is the native messaging host: the browser started this binary
// with its caller's origin. stdout is the browser's; what the host has to
// say goes to stderr, which the browser keeps in its log.
func hostMain(origin string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := nativehost.RunHost(origin, stdin, stdout, nativehost.HostOptions{Log: stderr}); err != nil {
		fmt.Fprintf(stderr, "pling-mcp host: %v\n", err)
		return 1
	}
	return 0
}

type browserConfig struct {
	url, app, httpAddr string
	poll, timeout      time.Duration
	enumLimit          int
}

// browserMain serves the facade over a BrowserPage: the same tools, results
// and bounds as with DevTools, reached through the extension.
func browserMain(ctx context.Context, cfg browserConfig, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	var fac atomic.Pointer[Facade]
	page, err := OpenBrowserPage(BrowserOptions{
		URL: cfg.url, App: cfg.app, MaxReplyBytes: client.DefaultMaxReplyBytes,
		Client: func() string {
			if f := fac.Load(); f != nil {
				return clientNames(f)
			}
			return ""
		},
		OnChange: func() {
			if f := fac.Load(); f != nil {
				f.Kick()
			}
		},
		Logf: func(format string, a ...any) { logger.Info(fmt.Sprintf(format, a...)) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "pling-mcp: %v\n", err)
		return 2
	}
	defer page.Close()
	pollEvery := cfg.poll
	if pollEvery == 0 {
		pollEvery = -1
	}
	enum := cfg.enumLimit
	if enum == 0 {
		enum = -1
	}
	f := New(client.New(page, client.Options{App: cfg.app, Timeout: cfg.timeout}), Options{
		PollInterval:    pollEvery,
		RecordEnumLimit: enum,
		Logger:          logger,
	})
	fac.Store(f)
	if ok, why := page.Connected(); !ok {
		fmt.Fprintf(stderr, "pling-mcp: serving; no page tools until the browser connects: %s\n", why)
	} else if err := firstSync(ctx, f); err != nil {
		logger.Warn("serving before the page's capabilities could be read; tools appear when they can", "err", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go f.Run(ctx)
	if cfg.httpAddr != "" {
		err = serveHTTP(ctx, f, cfg.httpAddr, stderr)
	} else {
		err = f.Server().Run(ctx, StdioTransport(stdin, stdout))
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "pling-mcp: %v\n", err)
		return 1
	}
	return 0
}
