//go:build !(js || wasip1)

// Command pling-mcp serves the agent surface of a web page open in Chromium
// as an MCP server, over stdio or streamable HTTP on loopback. See
// mcpfacade/README.md for the flags and for registering it with an MCP client.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"pling.dev/agent/mcpfacade"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mcpfacade.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
