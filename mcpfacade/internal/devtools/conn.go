//go:build !(js || wasip1)

package devtools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// Conn is a chromedp.Transport over a DevTools websocket that bounds every
// message it reads (see the package comment). It reads each message as a
// stream, so that one larger than the bound is skipped and the connection
// kept: a websocket library's own read limit would close it instead, which
// would let any page cut the connection.
type Conn struct {
	ws   *websocket.Conn
	logf func(string, ...any)

	f       frame
	decoder jsonv2.Decoder
	reader  bytes.Reader
	chunk   []byte

	writeMu sync.Mutex
	encoder jsonv2.Encoder
	wbuf    bytes.Buffer

	debugf func(string, ...any)
}

// Options are the options of Dial and NewAllocator.
type Options struct {
	// Bounds bound the messages from the browser; zero fields take the
	// defaults.
	Bounds Bounds
	// Logf receives a line for every message skipped. Default: discarded.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	o.Bounds = o.Bounds.withDefaults()
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// Dial connects to a DevTools websocket address
// (ws://127.0.0.1:9222/devtools/browser/...).
func Dial(ctx context.Context, wsURL string, opts Options) (*Conn, error) {
	opts = opts.withDefaults()
	d := websocket.Dialer{
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   32 << 10,
		WriteBufferSize:  32 << 10,
	}
	ws, resp, err := d.DialContext(ctx, wsURL, http.Header{})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	// No read limit of the library: the bound is applied here, message by
	// message, without closing the connection.
	ws.SetReadLimit(0)
	return &Conn{ws: ws, logf: opts.Logf, f: newFrame(opts.Bounds)}, nil
}

// Read reads the next message the browser sent that is within the bound,
// or the error reply that replaces a larger reply. It answers pings (the
// library does) and returns an error only when the connection ends.
func (c *Conn) Read(_ context.Context, msg *cdproto.Message) error {
	if c.chunk == nil {
		c.chunk = make([]byte, 32<<10)
	}
	for {
		typ, r, err := c.ws.NextReader()
		if err != nil {
			return err
		}
		c.f.reset()
		if err := c.collect(r); err != nil {
			return err
		}
		if typ != websocket.TextMessage {
			c.logf("devtools: dropped a binary websocket message of %d bytes", c.f.size)
			continue
		}
		if c.f.over() {
			s := c.f.skip()
			c.logf("%s", s)
			if s.Reply == nil {
				continue
			}
			*msg = *s.Reply
			return nil
		}
		if len(bytes.TrimSpace(c.f.buf)) == 0 || c.f.drop(c.f.buf) {
			continue // empty, or an event only a mirror of the page would use
		}
		if c.debugf != nil {
			c.debugf("<- %s", c.f.buf)
		}
		*msg = cdproto.Message{}
		c.reader.Reset(c.f.buf)
		c.decoder.Reset(&c.reader, chromedp.DefaultUnmarshalOptions)
		if err := jsonv2.UnmarshalDecode(&c.decoder, msg, chromedp.DefaultUnmarshalOptions); err != nil {
			// A message the browser would never send: its id, if any,
			// cannot be trusted, so it is dropped, and the connection,
			// which frames every message apart, goes on.
			c.logf("devtools: dropped an unreadable %d-byte message: %v", c.f.size, err)
			*msg = cdproto.Message{}
			continue
		}
		return nil
	}
}

// collect streams one message into c.f.
func (c *Conn) collect(r io.Reader) error {
	for {
		n, err := r.Read(c.chunk)
		c.f.write(c.chunk[:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Write sends a message as one text frame, as Chromium wants. It is safe to
// call from more than one goroutine.
func (c *Conn) Write(_ context.Context, msg *cdproto.Message) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.wbuf.Reset()
	c.encoder.Reset(&c.wbuf, chromedp.DefaultMarshalOptions)
	if err := jsonv2.MarshalEncode(&c.encoder, msg, chromedp.DefaultMarshalOptions); err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	b := bytes.TrimRight(c.wbuf.Bytes(), "\n")
	if c.debugf != nil {
		c.debugf("-> %s", b)
	}
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.ws.Close() }

// SetDebugf sets the protocol logger; chromedp.NewBrowserTransport calls it.
func (c *Conn) SetDebugf(f func(string, ...any)) { c.debugf = f }
