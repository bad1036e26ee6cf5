// A line-driven harness around the official TypeScript MCP client, for the
// browser tests of pling-mcp. The Go test writes one JSON command a line on
// stdin and reads one JSON answer a line on stdout; notifications from the
// server come as event lines. The client launches the facade over stdio
// exactly as an MCP host does.
//
//   {"id":1,"op":"connect","command":"/path/pling-mcp","args":[...],"env":{...}}
//   {"id":2,"op":"list"}
//   {"id":3,"op":"call","name":"orders.search","arguments":{...}}
//   {"id":4,"op":"read","uri":"pling://context"}
//   {"id":5,"op":"close"}
//
// Answers: {"id":n,"ok":true,"result":...} or {"id":n,"ok":false,"error":{"code","message","data"}}.
// Events:  {"event":"tools/list_changed","count":n}
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

let client = null;
let listChanged = 0;

async function run(cmd) {
  switch (cmd.op) {
    case "connect": {
      client = new Client({ name: cmd.name || "pling-e2e-tsclient", version: "0.0.0" });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged += 1;
        out({ event: "tools/list_changed", count: listChanged });
      });
      // env adds to what the SDK passes a server by default (HOME, PATH, ...).
      const env = cmd.env ? { ...getDefaultEnvironment(), ...cmd.env } : undefined;
      const transport = new StdioClientTransport({ command: cmd.command, args: cmd.args || [], env, stderr: "inherit" });
      await client.connect(transport);
      return {
        server: client.getServerVersion(),
        capabilities: client.getServerCapabilities(),
        instructions: client.getInstructions(),
      };
    }
    case "list":
      return (await client.listTools()).tools;
    case "call":
      return await client.callTool({ name: cmd.name, arguments: cmd.arguments || {} });
    case "read":
      return await client.readResource({ uri: cmd.uri });
    case "resources":
      return (await client.listResources()).resources;
    case "close":
      await client.close();
      client = null;
      return null;
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line);
  try {
    out({ id: cmd.id, ok: true, result: await run(cmd) });
  } catch (err) {
    out({ id: cmd.id, ok: false, error: { name: err && err.name, code: err && err.code, message: String(err && err.message), data: err && err.data } });
  }
}
if (client) await client.close();
