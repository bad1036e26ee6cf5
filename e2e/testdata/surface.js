// The configurable test page. The page's own JavaScript (the tests reach it
// through window.__e2e, in the page's world) builds a surface over a small
// orders registry; the agent talks to it only through messages. The page
// does not wait for the kernel: it starts when an agent first speaks, so
// every attack a test plants before its first message is planted before
// the kernel was fetched, compiled and started.
import { createSurface, defineRegistry } from "/pling/pling-surface.js";

const orders = [
  { id: "T-1", status: "open", note: "" },
  { id: "T-2", status: "open", note: "call first" },
  { id: "T-3", status: "open", note: "" },
];

const state = {
  config: {},
  calls: 0, // executor calls, whoever asked
  audit: [], // every audit event, as delivered
  authenticated: [], // origins the page's authenticate() accepted
  surface: null,
  stop: null,
};

function render() {
  const body = document.querySelector('[data-testid="orders"]');
  body.replaceChildren(
    ...orders.map((o) => {
      const tr = document.createElement("tr");
      const id = document.createElement("td");
      id.textContent = o.id;
      const note = document.createElement("td");
      note.dataset.testid = `note-${o.id}`;
      note.textContent = o.note;
      tr.append(id, note);
      return tr;
    }),
  );
}

const actions = [
  {
    id: "orders.search",
    description: "Search the orders",
    inputSchema: {
      type: "object",
      properties: { query: { type: "string", maxLength: 80 } },
      required: ["query"],
      additionalProperties: false,
    },
    effect: "read",
    approval: "none",
  },
  {
    id: "update_note@order",
    description: "Replace the note of one order",
    inputSchema: {
      type: "object",
      properties: { note: { type: "string", maxLength: 280 } },
      required: ["note"],
      additionalProperties: false,
    },
    effect: "write",
    approval: "none",
    record: { kind: "order", total: orders.length },
  },
  {
    // No length bound in its schema: only the transport's size limit
    // stands between a huge message and the executor.
    id: "orders.import",
    description: "Import orders from text",
    inputSchema: {
      type: "object",
      properties: { data: { type: "string" } },
      required: ["data"],
      additionalProperties: false,
    },
    effect: "write",
    approval: "none",
  },
];

const toRecord = (o) => ({ id: o.id, kind: "order", fields: { status: o.status, note: o.note } });

function session() {
  return {
    agentId: "agent.e2e",
    sessionId: "ses_e2e",
    userId: "u-e2e",
    expiresAt: Date.now() + 3_600_000,
    scope: ["orders.search", "update_note@order", "orders.import"],
    delegationId: "dlg_e2e",
  };
}

// execute is the page's executor; the test decides how it behaves.
async function execute(id, argsJson) {
  state.calls += 1;
  switch (state.config.execute || "ok") {
    case "hang":
      return new Promise(() => {});
    case "throw":
      throw new Error("the executor broke");
    case "slow": // answers after 200 ms, as a call to a backend would
      await new Promise((resolve) => setTimeout(resolve, 200));
      break;
    case "held": // answers when the test calls window.__e2e.release()
      await new Promise((resolve) => {
        state.release = resolve;
      });
      state.release = undefined;
  }
  const args = typeof argsJson === "string" && argsJson !== "" ? JSON.parse(argsJson) : argsJson || {};
  const m = /^update_note@order:(.+)$/.exec(id);
  if (m) {
    const o = orders.find((x) => x.id === m[1]);
    if (!o) return { error: { code: "NOT_FOUND", message: `no order ${m[1]}` } };
    o.note = args.note;
    render();
    return { title: `Note on ${o.id} updated` };
  }
  if (id === "orders.import") {
    return { imported: args.data.length };
  }
  if (id === "orders.search") {
    return { matches: orders.filter((o) => o.id.includes(args.query) || o.note.includes(args.query)).length };
  }
  return { error: { code: "UNKNOWN_ACTION", message: String(id) } };
}

// Shared services that fail, in each way a shared store can fail.
function failing(kind, valid) {
  switch (kind) {
    case "throw":
      return () => {
        throw new Error("the shared store is down");
      };
    case "reject":
      return () => Promise.reject(new Error("the shared store is down"));
    case "invalid":
      return () => valid;
  }
  return undefined;
}

const registry = defineRegistry({
  actions,
  records: {
    count: () => orders.length,
    slice: (offset, limit) => orders.slice(offset, offset + limit).map(toRecord),
    get: (id) => {
      const o = orders.find((x) => x.id === id);
      return o ? toRecord(o) : undefined;
    },
  },
  route: "/orders",
  regions: [{ id: "orders", label: "Orders" }],
  state: () => ({ rows: orders.length }),
});

function setup(config = {}) {
  if (state.stop) state.stop();
  if (state.surface) state.surface.close();
  state.config = config;
  const options = {
    registry,
    execute,
    app: "orders",
    onAudit: (event) => {
      state.audit.push({ ...event }); // a copy made without JSON: a test may patch it
    },
  };
  switch (config.session) {
    case "open": // no session option at all: open mode
      break;
    case "none":
      options.session = () => null;
      break;
    case "malformed": // no userId, no scope
      options.session = () => ({ agentId: "agent.e2e", sessionId: "ses_bad", expiresAt: Date.now() + 60_000 });
      break;
    case "throws":
      options.session = () => {
        throw new Error("the session store is down");
      };
      break;
    case "revoked": // every call must fail SESSION_REVOKED
      options.session = () => ({ ...session(), revokedAt: Date.now() - 1000 });
      break;
    case "async": // answered through a Promise
      options.session = async () => session();
      break;
    case "asyncRevoked":
      options.session = async () => ({ ...session(), revokedAt: Date.now() - 1000 });
      break;
    default:
      options.session = session;
  }
  if (config.executeTimeoutMs) options.executeTimeoutMs = config.executeTimeoutMs;
  if (config.rateLimit || config.limiter) {
    options.rateLimit = { maxRequests: 100, windowMs: 60_000, ...config.rateLimit };
    const allow = failing(config.limiter, { allowed: "yes" });
    if (allow) options.rateLimit.limiter = { allow };
  }
  if (config.replay || config.guard) {
    options.replay = {};
    const claim = failing(config.guard, "maybe");
    if (claim) options.replay.guard = { claim };
  }
  state.surface = createSurface(options);
  const listen = { allowedOrigins: config.allowedOrigins || [] };
  if (config.channelIdleMs) listen.channelIdleMs = config.channelIdleMs;
  if (config.maxChannelsPerOrigin) listen.maxChannelsPerOrigin = config.maxChannelsPerOrigin;
  if (config.credential) {
    // The page verifies the credential itself; the surface only ever sees
    // the session it answers.
    listen.authenticate = ({ credential, origin }) => {
      if (credential !== config.credential) return null;
      state.authenticated.push(origin);
      return session;
    };
  }
  state.stop = state.surface.listen(listen);
  return true;
}

render();
window.__e2e = {
  setup,
  calls: () => state.calls,
  held: () => state.release !== undefined,
  release: () => state.release(),
  audit: () => state.audit,
  authenticated: () => state.authenticated,
  // private channels the surface holds now (open or being authenticated)
  channels: () => state.stop.channels(),
  note: (id) => document.querySelector(`[data-testid="note-${id}"]`).textContent,
  ready: true,
};
