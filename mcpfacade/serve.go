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
	store := mcp.NewMemoryEventStore(nil)
	store.SetMaxBytes(httpEventStoreBytes)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, &mcp.StreamableHTTPOptions{
		Logger:     f.opts.Logger,
		EventStore: store, // a POST's stream opens with a priming event a client can resume from
	})
	return sameOriginOnly(http.NewCrossOriginProtection().Handler(jsonrpcEdges(h)))
}

// httpEventStoreBytes bounds the events kept for clients to resume streams
// from, over all sessions.
const httpEventStoreBytes = 4 << 20

// maxHTTPBody bounds a POST body the facade reads before the SDK does.
const maxHTTPBody = 16 << 20

// sseRetryMs is the retry time a POST's priming event tells a client to
// wait before it resumes a stream that broke.
const sseRetryMs = 1000

// jsonrpcEdges answers what the SDK's HTTP layer answers in plain text as
// stdio answers it, in JSON-RPC: a call of a method the server does not
// have gets -32601 with the call's id (the SDK answers a text/plain 400).
// It also gives a POST's priming event a retry time, which the SDK leaves
// out.
func jsonrpcEdges(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBody))
		if err != nil {
			http.Error(w, "request body larger than the bound or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		ew := &edgeWriter{ResponseWriter: w}
		if json.Unmarshal(body, &call) == nil && len(call.ID) > 0 && string(call.ID) != "null" && call.Method != "" {
			ew.id = call.ID
		}
		h.ServeHTTP(ew, r)
		ew.finish()
	})
}

// edgeWriter holds back a 400 to a call, to answer an unknown method in
// JSON-RPC, and adds a retry time to a priming event.
type edgeWriter struct {
	http.ResponseWriter
	id      json.RawMessage // the call's id; nil: not a call
	held    bool            // a 400 to a call is being held
	body    bytes.Buffer
	started bool
}

func (w *edgeWriter) WriteHeader(code int) {
	if code == http.StatusBadRequest && w.id != nil && !w.started {
		w.held = true
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *edgeWriter) Write(b []byte) (int, error) {
	if w.held {
		return w.body.Write(b)
	}
	if !w.started && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") && bytes.HasPrefix(b, []byte("event: prime\n")) {
		w.started = true
		primed := bytes.Replace(b, []byte("\ndata: "), fmt.Appendf(nil, "\nretry: %d\ndata: ", sseRetryMs), 1)
		if _, err := w.ResponseWriter.Write(primed); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Flush lets the SDK stream through the wrapper.
func (w *edgeWriter) Flush() {
	if !w.held {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *edgeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held 400: as JSON-RPC -32601 when the SDK said the
// method is not handled, else as it was.
func (w *edgeWriter) finish() {
	if !w.held {
		return
	}
	if strings.Contains(w.body.String(), "not handled") {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.id, "error": map[string]any{
			"code": jsonrpc.CodeMethodNotFound, "message": "method not found: " + strings.TrimSpace(w.body.String()),
		}})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Del("X-Content-Type-Options")
		w.ResponseWriter.WriteHeader(http.StatusOK)
		w.ResponseWriter.Write(b)
		return
	}
	w.ResponseWriter.WriteHeader(http.StatusBadRequest)
	w.ResponseWriter.Write(w.body.Bytes())
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
