package nativehost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"pling.dev/agent/client"
)

// Codes of the extension's answers that mean nothing reached the page.
var notSentCodes = map[string]bool{
	"NOT_CONNECTED":     true, // no host on the socket: the browser or its extension is not running
	"CUT_OFF":           true, // the person cut desktop agents off in the panel
	"NOT_OPTED_IN":      true, // the person has not let desktop agents use this site
	"NO_TAB":            true, // no tab of the origin that the person gave the extension
	"REQUEST_TOO_LARGE": true, // larger than one message to the browser
	"BAD_REQUEST":       true, // the extension could not read the request
}

// NotSentError is an answer that says the request never reached the page:
// nothing ran there. It matches client.ErrClosed, so it is not retried.
type NotSentError struct {
	Code    string // NOT_CONNECTED, CUT_OFF, NOT_OPTED_IN, NO_TAB, REQUEST_TOO_LARGE, BAD_REQUEST
	Message string
}

func (e *NotSentError) Error() string { return e.Code + ": " + e.Message }

// Unwrap makes it match client.ErrClosed.
func (e *NotSentError) Unwrap() error { return client.ErrClosed }

// OtherOriginError: the tab holds a document of another origin, checked in
// the page just before posting; nothing was posted.
type OtherOriginError struct{ Found string }

func (e *OtherOriginError) Error() string { return "the tab shows " + e.Found }

// PageError is any other failure the extension reports: the request may
// have reached the page.
type PageError struct{ Code, Message string }

func (e *PageError) Error() string { return e.Code + ": " + e.Message }

// ErrLost: the connection to the host dropped while a request waited (the
// browser, its extension or the host stopped). The page may have run it. It
// matches client.ErrClosed: sending again would find no host.
var ErrLost = fmt.Errorf("nativehost: the connection to the browser was lost while waiting for the page's answer: %w", client.ErrClosed)

// LinkOptions configures a Link.
type LinkOptions struct {
	// Dir is the rendezvous directory. Default Dir().
	Dir string
	// Origin is the origin the Link is bound to; URL the page it names
	// (the extension prefers a tab showing exactly it); App the surface's
	// app, "" for any.
	Origin, URL, App string
	// Client names the MCP client for the person's panel (its
	// clientInfo.name), when known. May be nil.
	Client func() string
	// MaxReplyBytes bounds a page's reply, enforced in the page. Default
	// client.DefaultMaxReplyBytes.
	MaxReplyBytes int
	// OnChange is called (it must not block) when what the page offers may
	// have changed: the host came or went, the person opted in or out, the
	// tab navigated or closed.
	OnChange func()
	// Redial is how often a missing host is looked for again. Default 1s.
	Redial time.Duration
	// Logf receives what the Link does. Default: nothing.
	Logf func(format string, a ...any)
}

// Link is a client.Transport to a page in the person's browser, through the
// native host on the rendezvous socket. It dials again whenever the host
// goes (the browser restarted, the extension reloaded), and answers
// NOT_CONNECTED at once while there is none.
type Link struct {
	opts   LinkOptions
	closed chan struct{}
	once   sync.Once

	mu      sync.Mutex
	conn    *net.UnixConn
	why     string // why there is no connection
	next    uint64
	waiters map[uint64]chan linkReply
	wmu     sync.Mutex
	named   string // the client name last sent
}

type linkReply struct {
	reply []byte
	err   error
}

// Dial returns a Link and tries to connect once before returning; it keeps
// trying in the background until Close.
func Dial(opts LinkOptions) *Link {
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = client.DefaultMaxReplyBytes
	}
	if opts.Redial <= 0 {
		opts.Redial = time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.OnChange == nil {
		opts.OnChange = func() {}
	}
	l := &Link{opts: opts, closed: make(chan struct{}), waiters: map[uint64]chan linkReply{}, why: "not connected yet"}
	l.dialOnce()
	go l.redial()
	return l
}

// Close ends the Link: calls waiting fail, and no more dials are made.
func (l *Link) Close() error {
	l.once.Do(func() {
		close(l.closed)
		l.mu.Lock()
		c := l.conn
		l.mu.Unlock()
		if c != nil {
			c.Close()
		}
	})
	return nil
}

// Connected reports whether a host is on the other end now, and why not.
func (l *Link) Connected() (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn != nil, l.why
}

func (l *Link) redial() {
	t := time.NewTicker(l.opts.Redial)
	defer t.Stop()
	for {
		select {
		case <-l.closed:
			return
		case <-t.C:
		}
		l.mu.Lock()
		have := l.conn != nil
		l.mu.Unlock()
		if !have {
			l.dialOnce()
		}
	}
}

// dialOnce connects when the directory is private and a host of this user
// listens, and says why not otherwise.
func (l *Link) dialOnce() {
	c, err := l.dial()
	l.mu.Lock()
	if err != nil {
		changed := l.why != err.Error()
		l.why = err.Error()
		l.mu.Unlock()
		if changed {
			l.opts.Logf("no browser connection: %v", err)
		}
		return
	}
	select {
	case <-l.closed:
		l.mu.Unlock()
		c.Close()
		return
	default:
	}
	l.conn, l.why, l.named = c, "", ""
	l.mu.Unlock()
	l.opts.Logf("connected to the browser")
	l.hello()
	go l.read(c)
	l.opts.OnChange()
}

func (l *Link) dial() (*net.UnixConn, error) {
	dir := l.opts.Dir
	if dir == "" {
		d, err := Dir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := CheckDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("the browser has not started the Pling extension's host: is the browser running with the extension, and was `pling-mcp install` run?")
		}
		return nil, err
	}
	path, err := SocketPath(dir)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, errors.New("the browser has not started the Pling extension's host: is the browser running with the extension, and was `pling-mcp install` run?")
	}
	if err := CheckPeer(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (l *Link) clientName() string {
	if l.opts.Client == nil {
		return ""
	}
	n := l.opts.Client()
	if len(n) > 100 {
		n = n[:100]
	}
	return n
}

// hello tells the extension who is here, and again whenever the client's
// name becomes known.
func (l *Link) hello() {
	name := l.clientName()
	l.mu.Lock()
	l.named = name
	l.mu.Unlock()
	l.write(map[string]any{"type": "hello", "client": name, "origin": l.opts.Origin, "url": l.opts.URL, "app": l.opts.App, "pid": os.Getpid()})
}

func (l *Link) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxRequestLine {
		return &NotSentError{Code: "REQUEST_TOO_LARGE", Message: fmt.Sprintf("the request is %d bytes; the browser takes at most %d from its host", len(b), maxRequestLine)}
	}
	l.mu.Lock()
	c := l.conn
	l.mu.Unlock()
	if c == nil {
		return &NotSentError{Code: "NOT_CONNECTED", Message: l.whyNot()}
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return &NotSentError{Code: "NOT_CONNECTED", Message: "the connection to the browser failed: " + err.Error()}
	}
	return nil
}

func (l *Link) whyNot() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.why == "" {
		return "not connected to the browser"
	}
	return l.why
}

// read delivers the host's lines until the connection drops; then every
// waiting call fails with ErrLost.
func (l *Link) read(c *net.UnixConn) {
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		line, err := readLine(r, maxReplyLine)
		if err != nil {
			break
		}
		var m struct {
			Type  string  `json:"type"`
			ID    *uint64 `json:"id"`
			Reply *string `json:"reply"`
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Found   string `json:"found"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "changed":
			l.opts.OnChange()
		case "reply":
			if m.ID == nil {
				continue
			}
			var out linkReply
			switch {
			case m.Reply != nil:
				out.reply = []byte(*m.Reply)
			case m.Error != nil:
				out.err = l.refusal(m.Error.Code, m.Error.Message, m.Error.Found)
			default:
				out.err = &client.ReplyError{Err: client.ErrBadReply, Detail: "the extension answered neither a reply nor an error"}
			}
			l.mu.Lock()
			w := l.waiters[*m.ID]
			delete(l.waiters, *m.ID)
			l.mu.Unlock()
			if w != nil {
				w <- out
			}
		}
	}
	c.Close()
	l.mu.Lock()
	if l.conn == c {
		l.conn, l.why = nil, "the browser's host went away (the browser closed, or its extension stopped or reloaded)"
	}
	ws := l.waiters
	l.waiters = map[uint64]chan linkReply{}
	l.mu.Unlock()
	for _, w := range ws {
		w <- linkReply{err: ErrLost}
	}
	l.opts.Logf("the browser's host went away")
	l.opts.OnChange()
}

// refusal turns the extension's error into the error the client and the
// facade classify.
func (l *Link) refusal(code, msg, found string) error {
	if len(msg) > 500 {
		msg = msg[:500]
	}
	switch {
	case code == "OTHER_ORIGIN":
		if len(found) > 200 {
			found = found[:200]
		}
		return &OtherOriginError{Found: found}
	case code == "REPLY_TOO_LARGE":
		return client.ReplyTooLarge(l.opts.MaxReplyBytes)
	case code == "REPLY_UNREADABLE":
		return &client.ReplyError{Err: client.ErrBadReply, Detail: "the page's answer is not JSON"}
	case code == "NAVIGATED":
		return fmt.Errorf("%w (%s)", client.ErrNavigated, msg)
	case notSentCodes[code]:
		return &NotSentError{Code: code, Message: msg}
	}
	if len(code) > 64 {
		code = code[:64]
	}
	return &PageError{Code: code, Message: msg}
}

// RoundTrip implements client.Transport: one request to the page, through
// the host and the extension.
func (l *Link) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	timeout := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl) + time.Second // the page gives up after the caller
	}
	if name := l.clientName(); name != "" {
		l.mu.Lock()
		renamed := l.conn != nil && name != l.named
		l.mu.Unlock()
		if renamed {
			l.hello()
		}
	}
	ch := make(chan linkReply, 1)
	l.mu.Lock()
	l.next++
	id := l.next
	l.waiters[id] = ch
	l.mu.Unlock()
	drop := func() {
		l.mu.Lock()
		delete(l.waiters, id)
		l.mu.Unlock()
	}
	err := l.write(map[string]any{
		"type": "request", "id": id, "request": string(request),
		"origin": l.opts.Origin, "url": l.opts.URL, "app": l.opts.App,
		"timeoutMs": max(timeout.Milliseconds(), 1), "maxBytes": l.opts.MaxReplyBytes,
	})
	if err != nil {
		drop()
		return nil, err
	}
	select {
	case r := <-ch:
		return r.reply, r.err
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	case <-l.closed:
		drop()
		return nil, client.ErrClosed
	}
}
