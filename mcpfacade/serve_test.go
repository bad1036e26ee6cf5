package mcpfacade_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/mcpfacade"
)

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8765", true},
		{"127.0.0.2:0", true},
		{"[::1]:8765", true},
		{"localhost:8765", true},
		{":8765", false},
		{"0.0.0.0:8765", false},
		{"[::]:8765", false},
		{"192.168.1.2:8765", false},
		{"example.com:8765", false},
		{"127.0.0.1", false}, // no port
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if err := mcpfacade.CheckLoopback(tt.addr); (err == nil) != tt.ok {
				t.Errorf("CheckLoopback(%q) = %v, want ok %v", tt.addr, err, tt.ok)
			}
		})
	}
}

func TestHTTP(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	srv := httptest.NewServer(f.fac.HTTPHandler())
	defer srv.Close()

	t.Run("streamable client", func(t *testing.T) {
		ctx := context.Background()
		changed := make(chan struct{}, 8)
		c := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		awaitListening(t, f.fac.Server(), changed)
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		if !strings.Contains(strings.Join(got, " "), "update_note--order") {
			t.Fatalf("tools over HTTP: %v", got)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_note--order", Arguments: map[string]any{"record": "SO-1001", "note": "over http"}})
		if err != nil || r.IsError {
			t.Fatalf("call over HTTP: %v %v", err, r)
		}
		if got := f.page.Record("SO-1001").Fields["note"]; got != "over http" {
			t.Errorf("note %q", got)
		}
		f.grant(t, "orders.search")
		if err := f.fac.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-timeAfter():
			t.Fatal("no tools/list_changed over HTTP")
		}
	})

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`
	tests := []struct {
		name   string
		header map[string]string
		host   string
	}{
		{name: "another host name (DNS rebinding)", host: "attacker.example"},
		{name: "a cross-site browser request", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://attacker.example"}},
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		// A cross-origin GET opens the event stream: it is refused like a POST.
		tests = append(tests, struct {
			name   string
			header map[string]string
			host   string
		}{name: method + " with another Origin only", header: map[string]string{"Origin": "https://attacker.example", "X-Method": method}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if m := tt.header["X-Method"]; m != "" {
				method = m
			}
			req, err := http.NewRequest(method, srv.URL, bytes.NewBufferString(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %d, want 403", resp.StatusCode)
			}
		})
	}
}

// A malformed line on stdio is answered with a parse error and skipped: the
// server goes on, and a call in flight still gets its reply.
func TestStdioSurvivesMalformedLines(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.fac.Server().Run(ctx, mcpfacade.StdioTransport(inR, outW)) }()
	defer func() { cancel(); inW.Close(); outR.Close(); <-done }()

	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if replies.Scan() {
				_ = json.Unmarshal(replies.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			if m == nil {
				t.Fatal("the server stopped writing")
			}
			return m
		case <-timeAfter():
			t.Fatal("no reply")
		}
		return nil
	}
	// Lines go out from their own goroutine: the server answers a bad line
	// at once, and the test reads only after sending.
	lines := make(chan string, 16)
	go func() {
		for l := range lines {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				return
			}
		}
	}()
	defer close(lines)
	send := func(line string) { lines <- line }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`)
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A call, then garbage before its reply can have been written.
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"orders-search","arguments":{"query":"a"}}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":`)
	send(`not json at all`)
	send(`[]`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	var parseErrors int
	seen := map[float64]bool{}
	for len(seen) < 2 || parseErrors < 3 {
		m := next()
		if e, _ := m["error"].(map[string]any); e != nil && m["id"] == nil {
			parseErrors++
			continue
		}
		id, _ := m["id"].(float64)
		if m["result"] == nil {
			t.Fatalf("reply %v", m)
		}
		seen[id] = true
	}
	if !seen[2] || !seen[4] {
		t.Fatalf("replies for %v, want 2 and 4", seen)
	}
	select {
	case err := <-done:
		t.Fatalf("the server stopped: %v", err)
	default:
	}
}

// post sends one JSON-RPC message over streamable HTTP and returns the
// response.
func post(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// The edges of the HTTP transport: an unknown method is answered with
// JSON-RPC -32601, as on stdio, not a text/plain 400; a POST's SSE stream
// opens with a priming event that carries an id and a retry time, so a
// client can resume it; a resource that does not exist is -32602.
func TestHTTPEdges(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	srv := httptest.NewServer(f.fac.HTTPHandler())
	defer srv.Close()
	resp := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`)
	init, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("no session: %d %s", resp.StatusCode, init)
	}
	if !strings.Contains(string(init), "retry:") || !strings.Contains(string(init), "id:") {
		t.Errorf("the initialize stream has no priming event with an id and a retry time:\n%s", init)
	}
	post(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	t.Run("unknown method", func(t *testing.T) {
		resp := post(t, srv.URL, session, `{"jsonrpc":"2.0","id":"u1","method":"no/such/method","params":{}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"code":-32601`) || !strings.Contains(string(b), `"id":"u1"`) {
			t.Errorf("%d %s: %s, want a JSON-RPC -32601 answering u1", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	})
	t.Run("priming event", func(t *testing.T) {
		resp := post(t, srv.URL, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		first, _, _ := strings.Cut(string(b), "\n\n")
		if !strings.Contains(first, "id:") || !strings.Contains(first, "retry:") {
			t.Errorf("the stream's first event is not a priming event with an id and a retry time:\n%s", b)
		}
		if !strings.Contains(string(b), `"result":{}`) {
			t.Errorf("no answer to ping: %s", b)
		}
	})
	t.Run("resource not found", func(t *testing.T) {
		resp := post(t, srv.URL, session, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"pling://nothing"}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"code":-32602`) {
			t.Errorf("reading a resource that does not exist: %s, want -32602", b)
		}
	})
}
