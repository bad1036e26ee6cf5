// The caller of the round-trip benchmarks. The driver evaluates it in an
// isolated world of bench.html, as a browser extension's content script
// runs: it shares the window and its message events with the page, not the
// page's JavaScript. Every variant is timed from here, with the same clock,
// from the moment the request is posted to the moment its reply arrives.
(() => {
  if (globalThis.benchAgent) return;
  const CHANNEL = "pling.surface";
  const PROTOCOL = "pling.surface/0.1";
  const waiters = new Map(); // "app id" -> resolve
  let seq = 0;

  addEventListener("message", (ev) => {
    const d = ev.data;
    if (!d || typeof d !== "object" || d.channel !== CHANNEL || d.kind !== "response") return;
    if (ev.source !== window) return;
    const key = d.app + " " + (d.envelope && d.envelope.id);
    const w = waiters.get(key);
    if (w) {
      waiters.delete(key);
      w(d.envelope);
    }
  });

  // request posts one request to app and resolves with the reply envelope.
  function request(app, envelope) {
    return new Promise((resolve, reject) => {
      const key = app + " " + envelope.id;
      const timer = setTimeout(() => {
        waiters.delete(key);
        reject(new Error(`no reply from ${app} to ${envelope.id} within 20 s`));
      }, 20000);
      waiters.set(key, (env) => {
        clearTimeout(timer);
        resolve(env);
      });
      postMessage({ channel: CHANNEL, kind: "request", app, envelope }, location.origin);
    });
  }

  const nextId = (p) => `${p}-${++seq}`;
  const describeEnv = () => ({ protocol: PROTOCOL, id: nextId("d"), method: "describe" });
  const invokeEnv = () => ({
    protocol: PROTOCOL,
    id: nextId("i"),
    method: "invoke",
    capability: "update_note@order",
    input: { record: "SO-1002", note: `note ${seq % 2}` },
  });

  function expectDescription(env, caps, records) {
    if (!env || env.ok !== true) throw new Error("describe failed: " + JSON.stringify(env));
    const r = env.result;
    if (r.capabilities.length !== caps || r.context.records.length !== records) {
      throw new Error(`describe answered ${r.capabilities.length} capabilities and ${r.context.records.length} records`);
    }
  }

  let mcp = null; // { client }

  // Each variant makes one call and throws on a wrong answer; the runner
  // times it.
  const variants = {
    "describe-js": async () => expectDescription(await request("orders-js", describeEnv()), 50, 8),
    "describe-surface": async () => expectDescription(await request("orders", describeEnv()), 50, 8),
    "table-100": async () => expectDescription(await request("table-100", describeEnv()), 50, 8),
    "table-100000": async () => expectDescription(await request("table-100000", describeEnv()), 50, 8),
    "invoke-surface": async () => {
      const env = await request("orders-invoke", invokeEnv());
      if (!env.ok || env.result.title !== "Note updated") throw new Error("invoke failed: " + JSON.stringify(env));
    },
    // The least a surface answer costs: a request the kernel refuses at
    // the first step (unknown protocol), so one trip into Go and back and
    // nothing else. Compared with MCP-B and with a pure-JS echo, it shows
    // how much of row 2 no amount of kernel work can remove.
    "floor-surface": async () => {
      const env = await request("orders-invoke", { protocol: "pling.surface/9", id: nextId("f"), method: "invoke" });
      if (env.ok !== false || env.error.code !== "PROTOCOL_VERSION_UNSUPPORTED") throw new Error("floor: " + JSON.stringify(env));
    },
    "echo-js": async () => {
      const env = await request("echo", invokeEnv());
      if (env.ok !== true) throw new Error("echo: " + JSON.stringify(env));
    },
    "invoke-mcpb": async () => {
      const r = await mcp.client.callTool({ name: "update_note", arguments: { record: "SO-1002", note: `note ${++seq % 2}` } });
      if (r.isError || !r.content || !String(r.content[0].text).includes("Note updated")) {
        throw new Error("MCP-B call failed: " + JSON.stringify(r));
      }
    },
  };

  // canonical encodes v with object keys sorted, to compare two values.
  function canonical(v) {
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    if (v && typeof v === "object") {
      return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
    }
    return JSON.stringify(v);
  }

  // alternate runs warm untimed calls of variants a and b, then n calls of
  // each in the order A B, B A, A B, ..., and returns each call's start
  // and end, by variant.
  async function alternate(a, b, n, warm) {
    const fa = variants[a];
    const fb = variants[b];
    if (!fa || !fb) throw new Error(`unknown variant ${a} or ${b}`);
    for (let i = 0; i < warm; i++) {
      await fa();
      await fb();
    }
    const out = { [a]: [], [b]: [] };
    const span = async (v, f) => {
      const t0 = performance.now();
      await f();
      out[v].push(t0, performance.now());
    };
    for (let i = 0; i < n; i++) {
      if (i % 2 === 0) {
        await span(a, fa);
        await span(b, fb);
      } else {
        await span(b, fb);
        await span(a, fa);
      }
    }
    return out;
  }

  globalThis.benchAgent = {
    isolated: () => globalThis.crossOriginIsolated === true,
    pageGlobalsVisible: () => typeof globalThis.__bench !== "undefined",

    // connectMCP connects the official MCP client over MCP-B's tab
    // transport (both from the bundle injected beside this file).
    async connectMCP() {
      const { Client, TabClientTransport } = globalThis.__benchMcpClient;
      const client = new Client({ name: "bench-agent", version: "1.0.0" });
      await client.connect(new TabClientTransport({ targetOrigin: location.origin }));
      const { tools } = await client.listTools();
      mcp = { client };
      return tools.map((t) => t.name);
    },

    // sameDescription checks that the pure-JS responder answers what the
    // surface answers (the app name aside), so the two do the same work.
    async sameDescription() {
      const a = await request("orders", describeEnv());
      const b = await request("orders-js", describeEnv());
      if (!a.ok || !b.ok) return { equal: false, surface: a, js: b };
      const strip = (r) => ({ ...r, app: undefined });
      const ca = canonical(strip(a.result));
      const cb = canonical(strip(b.result));
      return { equal: ca === cb, bytes: ca.length, surface: ca === cb ? null : ca, js: ca === cb ? null : cb };
    },

    // time runs variant v n times, one after the other, and returns each
    // call's duration in ms (the first-contact rows: the first call of a
    // page, then warm ones).
    async time(v, n) {
      const f = variants[v];
      if (!f) throw new Error(`unknown variant ${v}`);
      const out = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await f();
        out.push(performance.now() - t0);
      }
      return out;
    },

    // loop runs variant v n times untimed (for the CPU profiler).
    async loop(v, n) {
      const f = variants[v];
      if (!f) throw new Error(`unknown variant ${v}`);
      for (let i = 0; i < n; i++) await f();
      return n;
    },

    // trace runs variants a and b as compare does and returns for each
    // when its calls were made and when their replies came, as start,
    // end, start, end, ...: the page's marks (make bench-trace) fall
    // between.
    trace: alternate,

    // compare times variants a and b alternately: warm untimed calls of
    // each, then n timed calls of each in the order A B, B A, A B, ...
    async compare(a, b, n, warm) {
      const spans = await alternate(a, b, n, warm);
      const out = {};
      for (const v of [a, b]) {
        out[v] = [];
        for (let i = 0; i < spans[v].length; i += 2) out[v].push(spans[v][i + 1] - spans[v][i]);
      }
      return out;
    },
  };
})();
