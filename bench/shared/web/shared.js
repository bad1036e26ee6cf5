// Three surfaces over one registry and one executor, each with a rate limit
// and a replay guard on: in the page (the default), in IndexedDB
// (shared: "indexeddb"), and asked of the backend over HTTP (Redis behind
// it). window.__benchShared.run times invokes through each, interleaved.
import { loadSurface } from "/pling/pling-surface.js";
import { httpLimiter, httpGuard } from "/pling/pling-shared.js";

const { createSurface, defineRegistry } = await loadSurface();
const registry = defineRegistry({
  actions: [{
    id: "orders.search",
    description: "Search the orders",
    inputSchema: { type: "object", properties: { query: { type: "string" } }, additionalProperties: false },
    effect: "read",
    approval: "none",
  }],
});
let executed = 0;
const base = {
  registry,
  execute: () => {
    executed += 1;
    return { title: "Searched" };
  },
  session: () => ({ agentId: "a", sessionId: "bench", userId: "u", expiresAt: Date.now() + 3_600_000, scope: ["orders.search"] }),
};
// Large enough never to refuse during the run.
const limits = { maxRequests: 1_000_000, windowMs: 60_000 };
const variants = {
  memory: createSurface({ ...base, app: "mem", rateLimit: limits, replay: { windowMs: 60_000 } }),
  indexeddb: createSurface({ ...base, app: `idb-${Date.now()}`, shared: "indexeddb", rateLimit: limits, replay: { windowMs: 60_000 } }),
  http: createSurface({ ...base, app: "http", rateLimit: { limiter: httpLimiter("/pling/state") }, replay: { windowMs: 60_000, guard: httpGuard("/pling/state") } }),
};

let seq = 0;
async function once(name) {
  seq += 1;
  const t0 = performance.now();
  const r = await variants[name].handle({ protocol: "pling.surface/0.1", id: `b-${seq}`, method: "invoke", capability: "orders.search", input: { query: "x" } });
  const dt = performance.now() - t0;
  if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.error)}`);
  return dt;
}

async function run(n, warm) {
  const names = Object.keys(variants);
  const out = Object.fromEntries(names.map((k) => [k, []]));
  for (let i = 0; i < warm; i++) for (const k of names) await once(k);
  for (let i = 0; i < n; i++) {
    // Rotate the order so that no variant always runs first.
    for (let j = 0; j < names.length; j++) {
      const k = names[(i + j) % names.length];
      out[k].push(await once(k));
    }
  }
  return out;
}

window.__benchShared = { ready: true, run, executed: () => executed };
