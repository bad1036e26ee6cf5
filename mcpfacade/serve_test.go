package mcpfacade_test

import (
	"bytes"
	"context"
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewBufferString(body))
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
