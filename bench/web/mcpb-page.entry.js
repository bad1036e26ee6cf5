// Bundled by esbuild into mcpb-page.js for bench.html: MCP-B's global
// WebMCP runtime, which the page initialises itself.
export { initializeWebModelContext, cleanupWebModelContext } from "@mcp-b/global";
