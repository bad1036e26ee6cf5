package mcpfacade

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckLoopback refuses a listen address that is not on the loopback
// interface: "127.0.0.1:8765", "[::1]:0" and "localhost:8765" pass; an
// empty host (every interface), 0.0.0.0 and any other address fail. The
// tools act in a person's browser session; the network must not reach them.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		return fmt.Errorf("listen address %q listens on every interface, not only loopback", addr)
	}
	return fmt.Errorf("listen address %q is not a loopback address", addr)
}

// HTTPHandler serves the facade as MCP streamable HTTP. Requests that name
// another host than the loopback address they arrived on (DNS rebinding)
// and cross-origin browser requests are refused, so a web page the person
// visits cannot drive the tools.
func (f *Facade) HTTPHandler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, &mcp.StreamableHTTPOptions{
		Logger: f.opts.Logger,
	})
	return sameOriginOnly(http.NewCrossOriginProtection().Handler(h))
}

// sameOriginOnly refuses a browser request from another origin whatever its
// method. CrossOriginProtection checks only unsafe methods, but a GET opens
// the server's event stream, which carries replies and notifications.
func sameOriginOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
				http.Error(w, "cross-origin request refused", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// StdioTransport serves MCP as newline-delimited JSON-RPC on r and w, as
// mcp.IOTransport does, except that a line that is not a JSON-RPC message
// is answered with a JSON-RPC error (id null) and skipped: one bad line
// neither ends the server nor loses the replies still to come.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	out := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	go filterLines(r, pw, out)
	return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{out}}
}

// maxStdioLine bounds one inbound line, as the SDK's own transport does.
const maxStdioLine = mcp.DefaultMaxLineLength

// filterLines copies the JSON-RPC messages among the lines of r to pw and
// answers every other line on out.
func filterLines(r io.Reader, pw *io.PipeWriter, out io.Writer) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		if len(line)+len(chunk) <= maxStdioLine {
			line = append(line, chunk...)
		} else {
			line = append(line[:0], 0) // too long: keep reading to its end, then refuse it
		}
		if isPrefix {
			continue
		}
		msg := bytes.TrimSpace(line)
		line = line[:0]
		if len(msg) == 0 {
			continue
		}
		code, reason := int64(0), ""
		switch {
		case msg[0] == 0:
			code, reason = jsonrpc.CodeInvalidRequest, fmt.Sprintf("line longer than %d bytes", maxStdioLine)
		case !json.Valid(msg):
			code, reason = jsonrpc.CodeParseError, "not JSON"
		case msg[0] != '{':
			code, reason = jsonrpc.CodeInvalidRequest, "not a JSON-RPC message object (batches are not supported)"
		default:
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				code, reason = jsonrpc.CodeInvalidRequest, "not a JSON-RPC message"
			}
		}
		if code != 0 {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": reason}})
			if _, err := out.Write(append(b, '\n')); err != nil {
				pw.CloseWithError(err)
				return
			}
			continue
		}
		if _, err := pw.Write(append(msg, '\n')); err != nil {
			return // the server stopped reading
		}
	}
}

// lockedWriter lets the filter's error replies and the server's messages
// share one stream, a whole message per Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
