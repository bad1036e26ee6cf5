package mcpfacade_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade"
	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// A surface in the same process, served as MCP and called by the go-sdk
// client over an in-memory connection.
func Example() {
	ctx := context.Background()
	page := surfacetest.Orders(3)
	clock := surfacetest.NewClock()
	s, err := surface.New(surface.Options{
		Registry: page.View, Execute: page.Execute, Now: clock.Now, App: "orders",
		Session: surface.StaticSession(&surface.Session{
			AgentID: "agent-1", SessionID: "sess-1", UserID: "user-1",
			ExpiresAt: clock.Now().Add(time.Hour), Scope: []string{"update_note@order", "approve@order"},
		}),
	})
	if err != nil {
		panic(err)
	}
	f := mcpfacade.New(client.New(client.KernelTransport(s), client.Options{App: "orders"}), mcpfacade.Options{})
	if err := f.Sync(ctx); err != nil {
		panic(err)
	}

	st, ct := mcp.NewInMemoryTransports()
	if _, err := f.Server().Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, t := range tools.Tools {
		fmt.Println(t.Name)
	}
	for _, id := range []string{"SO-1002", "SO-1003"} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_note--order", Arguments: map[string]any{"record": id, "note": "Call Friday"}})
		if err != nil {
			panic(err)
		}
		fmt.Println(id, "isError:", r.IsError)
	}
	// Output:
	// approve--order
	// page_context
	// update_note--order
	// SO-1002 isError: false
	// SO-1003 isError: true
}
