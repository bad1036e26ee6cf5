// The shared-limits test page. Query parameters choose the store and the
// limits; ?fail= makes IndexedDB fail the ways browsers make it fail,
// before the surface is created.
import { loadSurface } from "/pling/pling-surface.js";
import { httpLimiter, httpGuard } from "/pling/pling-shared.js";

const params = new URLSearchParams(location.search);
const store = params.get("store") || "indexeddb";
const max = Number(params.get("max") || "5");
const windowMs = Number(params.get("window") || "60000");

switch (params.get("fail")) {
  case "absent": // a browser or mode without IndexedDB
    Object.defineProperty(globalThis, "indexedDB", { value: undefined, configurable: true });
    break;
  case "open": // opening is refused (some private modes)
    IDBFactory.prototype.open = function () {
      throw new DOMException("The user denied permission to access the database.", "SecurityError");
    };
    break;
  case "quota": // every write is over quota
    IDBObjectStore.prototype.put = function () {
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    };
    break;
}

const executed = []; // request ids this page's executor ran, in order

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

const options = {
  registry,
  app: params.get("app") || "shared-e2e",
  execute: (id, argsJson, context) => {
    executed.push(context.requestId);
    return { title: "Searched" };
  },
  session: () => ({
    agentId: "agent.e2e",
    sessionId: "ses_shared",
    userId: "u-shared",
    expiresAt: Date.now() + 3_600_000,
    scope: ["orders.search"],
  }),
};
const replay = params.get("replay") !== "off";
const limit = max > 0;
if (store === "indexeddb") {
  options.shared = "indexeddb";
  if (limit) options.rateLimit = { maxRequests: max, windowMs };
  if (replay) options.replay = { windowMs };
} else {
  // The backend knows its limits; the page only asks.
  if (limit) options.rateLimit = { limiter: httpLimiter("/pling/state", { timeoutMs: 5000 }) };
  if (replay) options.replay = { windowMs, guard: httpGuard("/pling/state", { timeoutMs: 5000 }) };
}
const surface = createSurface(options);

function invoke(id) {
  return surface.handle({ protocol: "pling.surface/0.1", id, method: "invoke", capability: "orders.search", input: { query: "x" } });
}

// mine counts this page's app's entries in a store of the shared
// database: all of them, and those whose window ended by beforeMs (now
// when omitted).
function mine(name, beforeMs) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open("pling-shared");
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      const db = req.result;
      const all = db.transaction(name).objectStore(name).getAll();
      all.onsuccess = () => {
        db.close();
        const before = beforeMs ?? Date.now();
        const ours = all.result.filter((e) => e.key[0] === options.app);
        resolve({ total: ours.length, expired: ours.filter((e) => e.expires <= before).length });
      };
      all.onerror = () => reject(all.error);
    };
  });
}

window.__shared = {
  executed,
  invoke,
  // Answers by code for ids, all sent at once.
  async burst(ids) {
    const replies = await Promise.all(ids.map(invoke));
    return replies.map((r) => (r.ok ? "ok" : r.error.code));
  },
  mine,
};
document.querySelector('[data-testid="status"]').textContent = "ready";
window.__sharedReady = true;
