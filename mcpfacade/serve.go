package mcpfacade

import (
	"fmt"
	"net"
	"net/http"
	"strings"

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
	return http.NewCrossOriginProtection().Handler(h)
}
