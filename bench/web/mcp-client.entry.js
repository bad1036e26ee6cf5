// Bundled by esbuild into mcp-client.js, a classic script that the driver
// evaluates in the caller's isolated world: the official MCP client and
// MCP-B's tab transport, as an extension's content script would ship them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { TabClientTransport } from "@mcp-b/transports";

globalThis.__benchMcpClient = { Client, TabClientTransport };
