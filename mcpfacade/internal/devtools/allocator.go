//go:build !(js || wasip1)

package devtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// maxVersionBytes bounds the body of /json/version, a few hundred bytes
// from a real browser.
const maxVersionBytes = 64 << 10

// Allocator is a chromedp.Allocator that attaches to a running browser
// over a bounded DevTools websocket (Conn). It does what chromedp's
// remote.Allocator does, with that connection.
type Allocator struct {
	url  string
	opts Options
	wg   sync.WaitGroup
}

// NewAllocator returns a context holding an Allocator for the browser at
// devtoolsURL: its websocket address (ws://host:port/devtools/browser/...)
// or its DevTools endpoint (http://host:port or ws://host:port), whose
// /json/version names the address. Use it with chromedp.NewContext.
func NewAllocator(parent context.Context, devtoolsURL string, opts Options) (context.Context, context.CancelFunc) {
	return chromedp.NewAllocatorContext(parent, &Allocator{url: devtoolsURL, opts: opts.withDefaults()})
}

// Allocate satisfies chromedp.Allocator: it connects to the browser.
func (a *Allocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	wsURL, err := resolve(ctx, a.url)
	if err != nil {
		return nil, fmt.Errorf("find the DevTools websocket of %s: %w", a.url, err)
	}
	// The connection has its own context, so that the browser's tabs can
	// be detached over it before it closes.
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		chromedp.Cancel(ctx) // blocks until the tabs are let go
		cancel()
	})
	dctx, dcancel := context.WithTimeout(wctx, 10*time.Second)
	defer dcancel()
	conn, err := Dial(dctx, wsURL, a.opts)
	if err != nil {
		return nil, fmt.Errorf("could not dial %q: %w", wsURL, err)
	}
	return chromedp.NewBrowserTransport(wctx, conn, opts...)
}

// Wait satisfies chromedp.Allocator.
func (a *Allocator) Wait() { a.wg.Wait() }

// Attaches satisfies chromedp.Attacher: the browser runs already.
func (a *Allocator) Attaches() bool { return true }

// resolve returns the websocket address of the browser at raw. Chromium
// accepts a DevTools connection only when its Host is an IP address or
// localhost, so a host name is resolved first.
func resolve(ctx context.Context, raw string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", err
	}
	if host, err = resolveHost(ctx, host); err != nil {
		return "", err
	}
	u.Host = net.JoinHostPort(host, port)
	if strings.Contains(u.Path, "/devtools/browser/") {
		return u.String(), nil
	}
	v := url.URL{Scheme: "http", Host: u.Host, Path: "/json/version"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s", v.String(), resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxVersionBytes+1))
	if err != nil {
		return "", err
	}
	if len(body) > maxVersionBytes {
		return "", fmt.Errorf("%s answered more than %d bytes", v.String(), maxVersionBytes)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &version); err != nil {
		return "", fmt.Errorf("%s: %w", v.String(), err)
	}
	if !strings.HasPrefix(version.WebSocketDebuggerURL, "ws://") && !strings.HasPrefix(version.WebSocketDebuggerURL, "wss://") {
		return "", errors.New(v.String() + " names no websocket address")
	}
	return version.WebSocketDebuggerURL, nil
}

// resolveHost returns host as an IP address, or as it is when it is one or
// localhost.
func resolveHost(ctx context.Context, host string) (string, error) {
	if host == "localhost" || net.ParseIP(host) != nil {
		return host, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", err
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("%s has no address", host)
	}
	return addrs[0].IP.String(), nil
}
