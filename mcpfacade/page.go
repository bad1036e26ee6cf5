//go:build !(js || wasip1)

package mcpfacade

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade/internal/devtools"
)

// pageJS is what the facade evaluates in the page's isolated world: the
// client library's classic build (generated from js/client/pling-client.js
// and the modules it imports; TestClassicClientIsGenerated holds the copy
// to it), then caller.js, which adds the facade's origin check and reply
// bound and leaves the request function on the world's global.
var pageJS = classicClient + "\n" + callerJS

//go:generate sh -c "node ../js/client/classic.mjs ../js/client/pling-client.js > pling-client.classic.js"

//go:embed pling-client.classic.js
var classicClient string

//go:embed caller.js
var callerJS string

// worldName names the facade's isolated world in DevTools.
const worldName = "pling-mcp"

// Kinds of start-up failure, for the command's hints.
var (
	errStart   = errors.New("mcpfacade: start the browser")
	errConnect = errors.New("mcpfacade: connect to the browser")
	errOpen    = errors.New("mcpfacade: open the page")
)

// Rejections of caller.js that mean the page answered and the answer was
// refused.
const (
	markerTooLarge   = "pling-mcp: reply larger than the bound"
	markerUnreadable = "pling-mcp: reply not readable as JSON"
	// markerOtherOrigin is followed by the origin found; nothing was posted.
	markerOtherOrigin = "pling-mcp: the page is on another origin: "
)

// DefaultRequestTimeout bounds how long the page script waits for one
// response when the caller's context has no deadline.
const DefaultRequestTimeout = 30 * time.Second

// PageOptions says which page to talk to and how to reach it.
type PageOptions struct {
	// URL is the page. Without DevTools a browser is started and opens it.
	// With DevTools it picks the first tab whose URL starts with it, and
	// opens it in a new tab when no tab does. Required unless DevTools is
	// set and the browser has exactly one tab.
	URL string
	// DevTools is the DevTools endpoint of a running browser
	// (ws://127.0.0.1:9222/devtools/browser/..., or http://127.0.0.1:9222).
	// Empty: start a browser. The tab is left open when the page closes.
	DevTools string
	// ExecPath is the browser to start. Default: chromedp's search
	// (chromium, google-chrome, ...).
	ExecPath string
	// Headless starts the browser without a window. Default false: approvals
	// are a person's clicks in the page, so the person needs to see it.
	Headless bool
	// NoSandbox starts the browser with --no-sandbox (needed as root in
	// most containers).
	NoSandbox bool
	// App is put in every request message, so only that app's surface
	// answers. Default "": every surface on the page may.
	App string
	// MaxReplyBytes bounds a reply, enforced in the page before the reply
	// crosses to this process: a larger one is refused with
	// client.ReplyTooLarge. Default client.DefaultMaxReplyBytes.
	MaxReplyBytes int
	// MaxDevToolsReplyBytes and MaxDevToolsEventBytes bound one DevTools
	// message from the browser, a reply to a command and anything else,
	// enforced as it is read, before it is held whole: a larger event (a
	// page's console output, say) is dropped, a larger reply fails its
	// command with an error naming the bound. Defaults 16 MiB (a
	// MaxReplyBytes reply as DevTools escapes it fits) and 4 MiB (any
	// event carrying a URL fits). Not enforced for a started browser on
	// Windows.
	MaxDevToolsReplyBytes, MaxDevToolsEventBytes int
	// OnNavigated is called (on the browser's event goroutine: it must not
	// block) after the main frame navigated to another document.
	OnNavigated func()
	// BrowserOutput receives what a started browser prints. Default:
	// discarded. Never the MCP stdout.
	BrowserOutput io.Writer
	// Logf receives chromedp's log lines. Default: discarded.
	Logf func(format string, args ...any)
}

// Page is a client.Transport to the surface of one page in Chromium,
// reached the way a browser extension's content script reaches it: the
// facade evaluates a small script in an isolated world of the page's main
// frame, which posts the request on the window and awaits the response
// with the request's id.
//
// A navigation to another document destroys that world: calls pending on it
// fail with client.ErrNavigated (their outcome is unknown), and the next
// call creates a new world in the new document.
type Page struct {
	opts   PageOptions
	tab    context.Context // the chromedp context of the tab
	cancel func()          // closes the browser or detaches from the tab
	done   chan struct{}   // closed when the tab is gone, for whatever reason

	createMu sync.Mutex // one world creation at a time

	mu     sync.Mutex
	origin string // the bound origin, scheme://host:port
	docURL string // the main frame's URL, from the latest navigation
	cur    *world // nil: none yet, or the last one is gone
	gen    int    // counts documents: bumped by every navigation
	closed bool
	// unique maps the ids of the facade's worlds to their system-unique
	// ids, from the creation events: only those say which world a
	// destruction event is about.
	unique map[runtime.ExecutionContextID]string
}

// world is one isolated world; gone closes when its document goes away.
type world struct {
	id       runtime.ExecutionContextID
	unique   string // "" when the creation event was not seen
	gone     chan struct{}
	goneOnce sync.Once
}

func (w *world) end() { w.goneOnce.Do(func() { close(w.gone) }) }

// OpenPage starts a browser on opts.URL, or attaches to a tab of the
// browser at opts.DevTools, and returns the transport to its surface. Close
// it when done: a started browser is closed; an attached tab stays open.
func OpenPage(ctx context.Context, opts PageOptions) (*Page, error) {
	if opts.URL == "" && opts.DevTools == "" {
		return nil, errors.New("mcpfacade: a page URL or a DevTools endpoint is required")
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ctxOpts := []chromedp.ContextOption{chromedp.WithLogf(logf), chromedp.WithErrorf(logf)}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = client.DefaultMaxReplyBytes
	}
	p := &Page{opts: opts, unique: map[runtime.ExecutionContextID]string{}}
	if opts.URL != "" {
		o, err := originOf(opts.URL)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", errOpen, opts.URL, err)
		}
		p.origin = o
	}
	var err error
	if opts.DevTools != "" {
		err = p.attach(ctx, ctxOpts)
	} else {
		err = p.launch(ctx, ctxOpts)
	}
	if err != nil {
		return nil, err
	}
	p.watch()
	return p, nil
}

// originOf is the origin of an absolute URL as a browser writes it
// (location.origin): scheme://host, with :port unless it is the scheme's
// default. A URL without a host has an opaque origin, "null".
func originOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "null", nil // about:blank, data:, an error page
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return scheme + "://" + host, nil
	}
	return scheme + "://" + host + ":" + port, nil
}

// Origin is the origin the page is bound to: that of PageOptions.URL, or of
// the only tab when no URL was given.
func (p *Page) Origin() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.origin
}

// CheckOrigin returns an *OriginError when the tab's latest document is of
// another origin than the bound one. Every request is checked again in the
// page itself, just before it is posted; this check only spares the round
// trip and tells a sync that the page's tools are not to be listed.
func (p *Page) CheckOrigin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.docURL == "" || p.origin == "" {
		return nil
	}
	found, err := originOf(p.docURL)
	if err != nil {
		found = "null"
	}
	if found != p.origin {
		return &OriginError{Want: p.origin, Found: found}
	}
	return nil
}

// watch closes p.done when the tab's context ends, the browser detaches the
// tab (it was closed) or the connection to the browser drops.
func (p *Page) watch() {
	p.done = make(chan struct{})
	detached, err := chromedp.Detached(p.tab)
	if err != nil {
		detached = nil
	}
	var lost chan struct{}
	if c := chromedp.FromContext(p.tab); c != nil && c.Browser != nil {
		lost = c.Browser.LostConnection
	}
	go func() {
		defer close(p.done)
		select {
		case <-p.tab.Done():
		case <-detached:
		case <-lost:
		}
	}()
}

// launch starts a browser whose life is the page's.
func (p *Page) launch(ctx context.Context, ctxOpts []chromedp.ContextOption) error {
	out := p.opts.BrowserOutput
	if out == nil {
		out = io.Discard
	}
	allocOpts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.CombinedOutput(out),
		devtools.BoundPipe(p.devtoolsBounds(), p.opts.Logf))
	if !p.opts.Headless {
		allocOpts = append(allocOpts, chromedp.VisibleWindow)
	}
	if p.opts.NoSandbox {
		allocOpts = append(allocOpts, chromedp.NoSandbox)
	}
	if p.opts.ExecPath != "" {
		allocOpts = append(allocOpts, chromedp.ExecPath(p.opts.ExecPath))
	}
	// The browser lives as long as the page, not as long as ctx, which
	// only bounds the start.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	tab, cancelTab := chromedp.NewContext(allocCtx, ctxOpts...)
	p.tab, p.cancel = tab, func() { cancelTab(); cancelAlloc() }
	// The first Run binds the browser's life to its context: the tab's.
	if err := chromedp.Do(tab); err != nil {
		p.cancel()
		if errors.Is(err, chromedp.ErrNoDisplay) {
			return fmt.Errorf("%w: no display for a window (start it headless, or attach to a running one)", errStart)
		}
		return fmt.Errorf("%w: %w", errStart, err)
	}
	if err := chromedp.Listen(tab, p.onEvent); err != nil {
		p.cancel()
		return err
	}
	if err := p.navigate(ctx); err != nil {
		p.cancel()
		return err
	}
	p.quiet(ctx)
	return nil
}

// quiet turns off the DevTools domains chromedp enables and pling-mcp does
// not use once the page is open: DOM and CSS (whose events chromedp
// mirrors, see devtools' mirror), Network and Log (whose events carry a
// page's requests and console to every listener). The browser then stops
// sending their events; what it sends anyway is dropped as it is read. A
// failure only leaves them on: the drop still holds.
func (p *Page) quiet(ctx context.Context) {
	rctx, cancel := context.WithTimeout(p.tab, 10*time.Second)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	for _, c := range []cdp.Command[cdp.Empty, cdp.Empty]{dom.Disable, css.Disable, network.Disable, log.Disable} {
		if _, err := chromedp.Call(rctx, c, cdp.Empty{}); err != nil && p.opts.Logf != nil {
			p.opts.Logf("mcpfacade: could not turn off a DevTools domain: %v", err)
		}
	}
}

func (p *Page) devtoolsBounds() devtools.Bounds {
	return devtools.Bounds{Reply: p.opts.MaxDevToolsReplyBytes, Event: p.opts.MaxDevToolsEventBytes}
}

// navigate opens the page's URL in the tab, waiting at most as long as ctx.
func (p *Page) navigate(ctx context.Context) error {
	rctx, cancel := context.WithCancel(p.tab)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	if err := chromedp.Do(rctx, chromedp.Navigate(p.opts.URL)); err != nil {
		return fmt.Errorf("%w %s: %w", errOpen, p.opts.URL, err)
	}
	return nil
}

// attach connects to a running browser and to the page's tab in it.
func (p *Page) attach(ctx context.Context, ctxOpts []chromedp.ContextOption) error {
	allocCtx, cancelAlloc := devtools.NewAllocator(context.Background(), p.opts.DevTools, devtools.Options{
		Bounds: p.devtoolsBounds(),
		Logf:   p.opts.Logf,
	})
	browser, cancelBrowser := chromedp.NewContext(allocCtx, ctxOpts...)
	stop := func() { cancelBrowser(); cancelAlloc() }
	// The first call connects; the connection lives as long as browser.
	targets, err := chromedp.Targets(browser)
	if err != nil {
		stop()
		return fmt.Errorf("%w at %s: %w", errConnect, p.opts.DevTools, err)
	}
	id, tabURL, err := pickTab(targets, p.opts.URL)
	if err != nil {
		stop()
		return err
	}
	if p.origin == "" {
		// No -url: bound to the only tab's origin.
		if p.origin, err = originOf(tabURL); err != nil || p.origin == "null" {
			stop()
			return fmt.Errorf("%w: the only tab shows %q, which has no origin to bind to: name the page with a URL", errOpen, tabURL)
		}
	}
	p.docURL = tabURL
	// The tab is the person's: leave it open when the facade goes.
	tabOpts := []chromedp.ContextOption{chromedp.WithDetachOnCancel()}
	if id != "" {
		tabOpts = append(tabOpts, chromedp.WithTargetID(id))
	}
	tab, cancelTab := chromedp.NewContext(browser, tabOpts...)
	p.tab, p.cancel = tab, func() { cancelTab(); stop() }
	if err := chromedp.Do(tab); err != nil {
		p.cancel()
		return fmt.Errorf("mcpfacade: attach to the tab: %w", err)
	}
	if err := chromedp.Listen(tab, p.onEvent); err != nil {
		p.cancel()
		return err
	}
	if id == "" {
		if err := p.navigate(ctx); err != nil {
			p.cancel()
			return err
		}
	}
	p.quiet(ctx)
	return nil
}

// pickTab returns the page tab to use and its URL: the first whose URL is
// pageURL, else the first on pageURL's origin (compared exactly, scheme,
// host and port: a string prefix would let http://127.0.0.1:80 match
// http://127.0.0.1:8080), else "" (the caller opens one). Without pageURL,
// the only page tab.
func pickTab(targets []*target.Info, pageURL string) (target.ID, string, error) {
	var pages []*target.Info
	for _, t := range targets {
		if t.Type == "page" {
			pages = append(pages, t)
		}
	}
	if pageURL == "" {
		if len(pages) == 1 {
			return pages[0].TargetID, pages[0].URL, nil
		}
		urls := make([]string, 0, len(pages))
		for _, t := range pages {
			urls = append(urls, t.URL)
		}
		return "", "", fmt.Errorf("mcpfacade: %d tabs are open (%s): name the page with a URL", len(pages), strings.Join(urls, ", "))
	}
	for _, t := range pages {
		if t.URL == pageURL {
			return t.TargetID, t.URL, nil
		}
	}
	want, err := originOf(pageURL)
	if err != nil {
		return "", "", err
	}
	for _, t := range pages {
		if o, err := originOf(t.URL); err == nil && o == want {
			return t.TargetID, t.URL, nil
		}
	}
	return "", "", nil
}

// onEvent runs on the tab's event goroutine: it only records and signals.
func (p *Page) onEvent(ev any) {
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame == nil || ev.Frame.ParentID != "" {
			return // a subframe: the main frame's world is untouched
		}
		p.mu.Lock()
		p.docURL = ev.Frame.URL
		p.mu.Unlock()
		p.lose(nil)
		if p.opts.OnNavigated != nil {
			p.opts.OnNavigated()
		}
	case *runtime.EventExecutionContextCreated:
		if ev.Context != nil && ev.Context.Name == worldName {
			p.mu.Lock()
			if len(p.unique) > 64 {
				clear(p.unique) // only the newest world matters
			}
			p.unique[ev.Context.ID] = ev.Context.UniqueID
			p.mu.Unlock()
		}
	case *runtime.EventExecutionContextDestroyed:
		p.mu.Lock()
		if w := p.cur; w != nil && w.unique != "" && w.unique == ev.ExecutionContextUniqueID {
			p.dropLocked(w)
		}
		p.mu.Unlock()
	case *runtime.EventExecutionContextsCleared:
		p.lose(nil)
	}
}

// lose ends w (nil: whatever world is current, because the document went).
func (p *Page) lose(w *world) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w == nil {
		p.gen++ // a world being created now belongs to the old document
		clear(p.unique)
		if p.cur != nil {
			p.dropLocked(p.cur)
		}
		return
	}
	if p.cur == w {
		p.dropLocked(w)
	}
}

func (p *Page) dropLocked(w *world) {
	w.end()
	if p.cur == w {
		p.cur = nil
	}
}

// Close closes a browser the page started, or detaches from the tab of a
// running one. Pending calls fail with client.ErrClosed.
func (p *Page) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.cur != nil {
		p.cur.end()
		p.cur = nil
	}
	p.mu.Unlock()
	p.cancel()
	return nil
}

// Done is closed when the tab's connection ends: the browser or the tab was
// closed, or Close was called.
func (p *Page) Done() <-chan struct{} { return p.done }

// RoundTrip implements client.Transport.
func (p *Page) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	w, err := p.world(ctx)
	if err != nil {
		return nil, err
	}
	timeout := DefaultRequestTimeout
	if dl, ok := ctx.Deadline(); ok {
		// A little past the caller's deadline, so the script never gives
		// up first on an answer the caller still waits for.
		timeout = time.Until(dl) + time.Second
	}
	app, _ := json.Marshal(p.opts.App)
	req, _ := json.Marshal(string(request))
	origin, _ := json.Marshal(p.Origin())
	expr := fmt.Sprintf("globalThis.__plingMCPFacade.request(%s, %s, %d, %d, %s)", req, app, max(timeout.Milliseconds(), 1), p.opts.MaxReplyBytes, origin)

	type answer struct {
		reply string
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.reply, a.err = p.eval(ctx, w, expr)
		done <- a
	}()
	select {
	case a := <-done:
		if a.err == nil {
			return []byte(a.reply), nil
		}
		if err := devtoolsRefusal(a.err); err != nil {
			return nil, err
		}
		// The page answered, and the script refused the answer.
		switch s := a.err.Error(); {
		case strings.Contains(s, markerOtherOrigin):
			found := s[strings.Index(s, markerOtherOrigin)+len(markerOtherOrigin):]
			if i := strings.IndexAny(found, " \n\"'"); i >= 0 {
				found = found[:i]
			}
			return nil, &OriginError{Want: p.Origin(), Found: found}
		case strings.Contains(s, markerTooLarge):
			return nil, client.ReplyTooLarge(p.opts.MaxReplyBytes)
		case strings.Contains(s, markerUnreadable):
			return nil, &client.ReplyError{Err: client.ErrBadReply, Detail: "the page's answer is not JSON"}
		}
		if gone(w) || contextLost(a.err) {
			p.lose(w)
			return nil, fmt.Errorf("%w (%v)", client.ErrNavigated, a.err)
		}
		if err := p.closedErr(); err != nil {
			return nil, err
		}
		return nil, a.err
	case <-w.gone:
		if err := p.closedErr(); err != nil {
			return nil, err
		}
		return nil, client.ErrNavigated
	case <-p.done:
		return nil, p.closedErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// devtoolsRefusal is the *client.ReplyError for an evaluation whose
// DevTools reply was larger than its bound, which the transport skipped
// unread: the page answered, and the answer was refused. Nil for any other
// error.
func devtoolsRefusal(err error) error {
	var cerr *cdproto.Error
	if errors.As(err, &cerr) && cerr.Code == devtools.ErrorCode {
		return &client.ReplyError{Err: client.ErrBadReply, Detail: cerr.Message}
	}
	return nil
}

func gone(w *world) bool {
	select {
	case <-w.gone:
		return true
	default:
		return false
	}
}

// contextLost reports an evaluation error that means the world went away
// under the call (the events saying so may arrive just after it).
func contextLost(err error) bool {
	s := err.Error()
	for _, m := range []string{
		"Execution context was destroyed",
		"Cannot find context with specified id",
		"Inspected target navigated or closed",
		"Promise was collected",
	} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func (p *Page) closedErr() error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	select {
	case <-p.done:
		closed = true
	default:
	}
	if closed || p.tab.Err() != nil {
		return fmt.Errorf("mcpfacade: the page is closed: %w", client.ErrClosed)
	}
	return nil
}

// eval evaluates expr in w, awaiting its promise, and returns the string
// it resolves to.
func (p *Page) eval(ctx context.Context, w *world, expr string) (string, error) {
	// Commands go through the tab's context; ctx only bounds the wait.
	rctx, cancel := context.WithCancel(p.tab)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	return chromedp.Run(rctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise, inWorld(w.id, w.unique)))
}

// inWorld targets an evaluation at one world: by its system-unique id when
// known, which can never name a context of another document.
func inWorld(id runtime.ExecutionContextID, unique string) chromedp.EvaluateOption {
	return func(e *runtime.EvaluateParams) {
		if unique != "" {
			e.UniqueContextID = unique
		} else {
			e.ContextID = id
		}
	}
}

// world returns the live isolated world, creating it when there is none.
func (p *Page) world(ctx context.Context) (*world, error) {
	if err := p.closedErr(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	w := p.cur
	p.mu.Unlock()
	if w != nil && !gone(w) {
		return w, nil
	}
	p.createMu.Lock()
	defer p.createMu.Unlock()
	// A navigation while creating makes the new world the old document's;
	// nothing was sent yet, so try again in the new one.
	for range 3 {
		p.mu.Lock()
		w, gen := p.cur, p.gen
		p.mu.Unlock()
		if w != nil && !gone(w) {
			return w, nil
		}
		id, unique, err := p.createWorld(ctx)
		if err != nil {
			if cerr := p.closedErr(); cerr != nil {
				return nil, cerr
			}
			return nil, fmt.Errorf("mcpfacade: cannot reach the page's main frame: %w", err)
		}
		p.mu.Lock()
		if p.gen == gen && !p.closed {
			w = &world{id: id, unique: unique, gone: make(chan struct{})}
			p.cur = w
			p.mu.Unlock()
			return w, nil
		}
		p.mu.Unlock()
	}
	return nil, errors.New("mcpfacade: the page keeps navigating; no world could be made in it")
}

// createWorld makes an isolated world in the main frame and installs the
// request script in it.
func (p *Page) createWorld(ctx context.Context) (runtime.ExecutionContextID, string, error) {
	rctx, cancel := context.WithCancel(p.tab)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	tree, err := chromedp.Call(rctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return 0, "", err
	}
	res, err := chromedp.Call(rctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:   tree.FrameTree.Frame.ID,
		WorldName: worldName,
	})
	if err != nil {
		return 0, "", err
	}
	id := res.ExecutionContextID
	// The creation event comes before the command's reply.
	p.mu.Lock()
	unique := p.unique[id]
	p.mu.Unlock()
	if _, err := chromedp.Run(rctx, chromedp.Evaluate[bool](pageJS, inWorld(id, unique))); err != nil {
		return 0, "", err
	}
	return id, unique, nil
}
