// Package mcpfacade serves a page's Pling agent surface as an MCP server,
// built on the official Go SDK: each effective capability is a tool, the
// page's context is a resource and a read-only tool, and every call is an
// invoke that the page's surface decides on.
//
//	page, err := mcpfacade.OpenPage(ctx, mcpfacade.PageOptions{
//		DevTools: "http://127.0.0.1:9222", URL: "http://127.0.0.1:8080/", App: "orders",
//	})
//	if err != nil { ... }
//	defer page.Close()
//	f := mcpfacade.New(client.New(page, client.Options{App: "orders"}), mcpfacade.Options{})
//	_ = f.Sync(ctx)  // so the first tools/list is complete
//	go f.Run(ctx)    // follows the page: polls while idle, syncs after navigations and refusals
//	// f.Navigated() on every navigation (PageOptions.OnNavigated)
//	err = f.Server().Run(ctx, &mcp.StdioTransport{})
//
// Page is the client.Transport to a page in Chromium, reached through the
// DevTools protocol from an isolated world of the page's main frame, as a
// browser extension's content script would reach it. Any other
// client.Transport works too (client.KernelTransport for a surface in the
// same process). Main is the pling-mcp command; README.md describes the
// tools, the results and what the facade does not do.
package mcpfacade
