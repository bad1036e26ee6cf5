// The tripwire page (TestTripwires). The surface's first script loads
// first; then the test plants an accessor on every configurable property of
// the page's built-ins, and an agent (in an isolated world, with built-ins
// of its own) drives every kind of call, the first of which starts the
// kernel (fetch, compile, Go's start). Any accessor that fires was looked up
// by the surface after its first script ran: a place where a later script
// could stand.
//
// So the page's own handlers touch no built-in once the wires are planted:
// they answer with literals made now, objects without prototype (which an
// async function resolves without looking up then) and strings.
import { createSurface, defineRegistry } from "/pling/pling-surface.js";
import { httpLimiter, httpGuard } from "/pling/pling-shared.js";

const expiresAt = Date.now() + 3_600_000;
const scope = Object.freeze(["orders.search", "update_note@order", "secret.read"]);
const sessionOf = (agentId) => ({ __proto__: null, agentId, sessionId: "ses_" + agentId, userId: "u-trip", expiresAt, scope });
const pageSession = sessionOf("agent.page");
const channelSession = sessionOf("agent.channel");
const records = Object.freeze([
  Object.freeze({ id: "T-1", kind: "order", fields: Object.freeze({ status: "open", note: "" }) }),
  Object.freeze({ id: "T-2", kind: "order", fields: Object.freeze({ status: "open", note: "call first" }) }),
]);
const noRecords = Object.freeze([]);
const channelGetter = async () => channelSession;
const registry = defineRegistry({
  actions: [
    { id: "orders.search", description: "Search the orders", effect: "read", approval: "none",
      inputSchema: { type: "object", properties: { query: { type: "string", maxLength: 80 } }, required: ["query"], additionalProperties: false } },
    { id: "update_note@order", description: "Replace the note of one order", effect: "write", approval: "none",
      inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"], additionalProperties: false },
      record: { kind: "order", total: 2 } },
    { id: "secret.read", description: "Read the secret", effect: "read", approval: "none",
      inputSchema: { type: "object", additionalProperties: false } },
  ],
  records: {
    count: () => 2,
    slice: (offset) => (offset === 0 ? records : noRecords),
    get: (id) => (id === "T-1" ? records[0] : id === "T-2" ? records[1] : undefined),
    ids: () => ["T-1", "T-2"],
  },
});
let calls = 0;
const execute = async (id) => {
  calls++;
  return { __proto__: null, title: "done " + id };
};

// Filled by assignment, without prototype: no index accessor sees it.
const stops = Object.setPrototypeOf([], null);
function open(app, options) {
  const s = createSurface({ registry, execute, app, session: async () => pageSession, rateLimit: { maxRequests: 1000, windowMs: 60_000 }, replay: true, ...options });
  stops[stops.length] = s.listen({
    allowedOrigins: [],
    // Synchronous, as js/README advises: an async function answering a
    // function would itself look up then on it (the language does).
    authenticate: ({ credential }) => (credential === "cred-trip" ? channelGetter : null),
  });
  return true;
}

// The first surface, made before the wires: its shared state is IndexedDB.
open("orders", { shared: "indexeddb" });
window.__trip = {
  ready: true,
  calls: () => calls,
  // A second surface, made once the wires are planted, as a page that
  // creates one lazily would: its shared state is the backend's.
  second: () => open("other", { rateLimit: { limiter: httpLimiter("/trip-state") }, replay: { guard: httpGuard("/trip-state") } }),
};
