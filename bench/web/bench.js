// The page of the round-trip benchmarks. Everything the caller compares
// lives here, on one page, over one registry and one executor:
//
//   app "orders"          surface for describe: session, scope, expose
//   app "orders-js"       the pure-JS describe responder (baseline of 1)
//   app "orders-invoke"   surface for invoke: session, scope, expose,
//                         replay guard, rate limit, schema, audit
//   MCP-B tool            update_note through @mcp-b/global (baseline of 2)
//   app "table-100000"    describe over a lazy 100,000-row table
//   app "table-100"       the same over 100 rows (baseline of 3)
//   app "echo"            a pure-JS echo on the same transport (floor rows)
//
// window.__bench is what the driver reads in the page's own world.
import { loadSurface } from "/pling/pling-surface.js";
import { makePage, makeSession, NOTE_TEMPLATE, PROTOCOL } from "./fixture.js";
import { listenResponder } from "./js-responder.js";

const { createSurface, defineRegistry } = await loadSurface();

// With ?trace (make bench-trace), the page marks when its own code runs
// during a round trip, through the hooks every page has: its registry,
// executor, session getter and audit sink. The gaps between the marks are
// the time spent outside the page's code. Without ?trace nothing is wrapped.
const TRACE = new URLSearchParams(location.search).has("trace");
const marks = [];
const mark = (name) => {
  if (TRACE) marks.push(name, performance.now());
};
const traced = (name, f) => (TRACE ? (...args) => {
  mark(name);
  try {
    return f(...args);
  } finally {
    mark(name + " returned");
  }
} : f);

// And when a reply reaches the page's window, before the caller's world
// sees it: the page's own listener, after the surface's.
if (TRACE) {
  addEventListener("message", (event) => {
    const d = event.data;
    if (d === null || typeof d !== "object") return;
    // The surfaces' and the echo's replies, and MCP-B's JSON-RPC responses.
    const p = d.payload;
    if (d.kind === "response" || (d.type === "mcp" && p && typeof p === "object" && ("result" in p || "error" in p))) mark("reply event");
  });
}

const page = makePage(48);
const pageRegistry = defineRegistry(page.parts);
const registry = TRACE
  ? { actions: () => pageRegistry.actions(), view: traced("view", (q) => pageRegistry.view(q)), version: pageRegistry.version }
  : pageRegistry;
const session = traced("session", makeSession(page.ids));
// The executor's Promise is marked as it settles, before the caller's
// reactions to it run.
const execute = TRACE ? (id, argsJson) => {
  mark("execute");
  const p = page.execute(id, argsJson);
  p.then(() => mark("settled"), () => mark("settled"));
  return p;
} : page.execute;

createSurface({ registry, execute, app: "orders", expose: page.ids, session }).listen();
listenResponder({ registry, session, expose: page.ids, app: "orders-js", recordLimit: 8 });

const audit = { count: 0, last: null };
const invokeSurface = createSurface({
  registry,
  execute,
  app: "orders-invoke",
  expose: page.ids,
  session,
  // Large enough never to refuse during the run; the window keeps it bounded.
  rateLimit: { maxRequests: 100_000, windowMs: 60_000 },
  replay: { windowMs: 60_000 },
  onAudit: (event) => {
    mark("audit");
    audit.count += 1;
    audit.last = event;
  },
});
invokeSurface.listen();

// app "echo": the cheapest possible responder on the same transport, for the
// floor rows. It checks what every listener here checks and answers at once.
addEventListener("message", (event) => {
  const d = event.data;
  if (event.source !== window || event.origin !== location.origin) return;
  if (!d || d.channel !== "pling.surface" || d.kind !== "request" || d.app !== "echo") return;
  const envelope = { protocol: PROTOCOL, id: d.envelope.id, ok: true, result: { title: "echo" } };
  event.source.postMessage({ channel: "pling.surface", kind: "response", app: "echo", envelope }, event.origin);
});

const tables = {};
for (const n of [100_000, 100]) {
  const p = makePage(n, { lazy: true });
  createSurface({
    registry: defineRegistry(p.parts),
    execute: p.execute,
    app: `table-${n}`,
    expose: p.ids,
    session: makeSession(p.ids),
  }).listen();
  tables[n] = p;
}

// MCP-B: @mcp-b/global installs document.modelContext and serves its tools
// over its tab transport; the tool calls the same executor.
window.__webModelContextOptions = { autoInitialize: false };
const { initializeWebModelContext } = await import("./mcpb-page.js");
initializeWebModelContext({ transport: { tabServer: { allowedOrigins: [location.origin] } } });
let mcpCalls = 0;
await document.modelContext.registerTool({
  name: "update_note",
  description: "Replace the note of one order",
  inputSchema: {
    type: "object",
    properties: { record: { type: "string" }, note: { type: "string", maxLength: 280 } },
    required: ["record", "note"],
    additionalProperties: false,
  },
  async execute(args) {
    mcpCalls += 1;
    const result = await execute(`${NOTE_TEMPLATE}:${args.record}`, JSON.stringify({ note: args.note }));
    return { content: [{ type: "text", text: JSON.stringify(result) }] };
  },
});

// overhead compares an invoke through the surface's handle() with a direct
// call of the executor it ends in (target 7). The direct call is too short
// for the clock, so each of its samples times a batch and divides.
async function overhead(n, warm, batch = 100) {
  let seq = 0;
  const envelope = () => {
    seq += 1;
    return {
      protocol: PROTOCOL,
      id: `ovh-${seq}`,
      method: "invoke",
      capability: NOTE_TEMPLATE,
      input: { record: "SO-1003", note: `n${seq % 2}` },
    };
  };
  const direct = async () => {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) {
      seq += 1;
      await page.execute(`${NOTE_TEMPLATE}:SO-1003`, JSON.stringify({ note: `n${seq % 2}` }));
    }
    return (performance.now() - t0) / batch;
  };
  const viaSurface = async () => {
    const env = envelope();
    const t0 = performance.now();
    const r = await invokeSurface.handle(env);
    const dt = performance.now() - t0;
    if (!r.ok || !r.result || r.result.title !== "Note updated") throw new Error("invoke failed: " + JSON.stringify(r));
    return dt;
  };
  const out = { executor: [], surface: [] };
  for (let i = 0; i < warm; i++) {
    await direct();
    await viaSurface();
  }
  for (let i = 0; i < n; i++) {
    // A/B then B/A, so that neither always runs first.
    if (i % 2 === 0) {
      out.executor.push(await direct());
      out.surface.push(await viaSurface());
    } else {
      out.surface.push(await viaSurface());
      out.executor.push(await direct());
    }
  }
  return out;
}

// Row 8: sixteen invokes in flight on one surface, every control on, their
// executors answering in a shuffled order once all sixteen wait. Each reply
// must be its own request's. A sample is one round's time over its width.
const held = [];
const concurrentSurface = createSurface({
  registry,
  execute: (id, argsJson) => new Promise((resolve, reject) => {
    held.push(() => page.execute(id, argsJson).then(resolve, reject));
  }),
  app: "orders-concurrent",
  expose: page.ids,
  session,
  rateLimit: { maxRequests: 100_000, windowMs: 60_000 },
  replay: { windowMs: 60_000 },
  onAudit: () => {},
});

async function concurrent(n, warm, width = 16) {
  let seq = 0;
  let seed = 1;
  const round = async () => {
    const t0 = performance.now();
    const ids = [];
    const calls = [];
    for (let i = 0; i < width; i++) {
      seq += 1;
      ids.push(`cc-${seq}`);
      calls.push(concurrentSurface.handle({
        protocol: PROTOCOL, id: `cc-${seq}`, method: "invoke", capability: NOTE_TEMPLATE,
        input: { record: "SO-1004", note: `c${seq % 3}` },
      }));
    }
    for (let k = 0; held.length < width; k++) {
      if (k > 1000) throw new Error(`only ${held.length} of ${width} executors were called`);
      await new Promise((r) => setTimeout(r, 0));
    }
    while (held.length > 0) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      held.splice(seed % held.length, 1)[0]();
    }
    const replies = await Promise.all(calls);
    const dt = performance.now() - t0;
    for (let i = 0; i < width; i++) {
      const r = replies[i];
      if (!r.ok || r.id !== ids[i] || !r.result || r.result.title !== "Note updated") {
        throw new Error(`concurrent invoke ${ids[i]} answered ${JSON.stringify(r)}`);
      }
    }
    return dt / width;
  };
  for (let i = 0; i < warm; i++) await round();
  const out = [];
  for (let i = 0; i < n; i++) out.push(await round());
  return { surface: out };
}

window.__bench = {
  concurrent,
  ready: true,
  isolated: globalThis.crossOriginIsolated === true,
  overhead,
  counts: () => ({ executed: page.executed(), audit: audit.count, mcpCalls }),
  // The marks made since the last call, as name, time, name, time, ...
  takeMarks: () => marks.splice(0, marks.length),
  lastAudit: () => audit.last,
  note: (id) => page.orders.find((o) => o.id === id).note,
};
