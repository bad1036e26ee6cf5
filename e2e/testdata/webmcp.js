// The WebMCP test page. Its session is changed behind the bridge's back
// (revoke() does not call refresh()), so a test can show that a tool still
// registered in the browser is refused by the surface itself.
import { loadSurface } from "/pling/pling-surface.js";

// The page counts what the bridge says on the console.
const infos = [];
const consoleInfo = console.info.bind(console);
console.info = (...args) => {
  infos.push(args.map(String).join(" "));
  consoleInfo(...args);
};

const orders = [
  { id: "W-1", note: "" },
  { id: "W-2", note: "" },
];
const state = { calls: 0, audit: [], bridges: [], surface: null };
let session = newSession();

function newSession() {
  return {
    agentId: "agent.webmcp",
    sessionId: "ses_webmcp",
    userId: "u-webmcp",
    expiresAt: Date.now() + 3_600_000,
    scope: ["update_note@order"],
    delegationId: `dlg_${Math.random().toString(36).slice(2)}`,
  };
}

function render() {
  document.querySelector('[data-testid="notes"]').replaceChildren(
    ...orders.map((o) => {
      const li = document.createElement("li");
      li.dataset.testid = `note-${o.id}`;
      li.textContent = o.note;
      return li;
    }),
  );
}

// ?rate=N limits the session to N requests a minute.
const rate = Number(new URLSearchParams(location.search).get("rate")) || 0;

const { createSurface, defineRegistry } = await loadSurface();
state.surface = createSurface({
  ...(rate > 0 ? { rateLimit: { maxRequests: rate, windowMs: 60_000 } } : {}),
  registry: defineRegistry({
    actions: [
      {
        id: "update_note@order",
        description: "Replace the note of one order",
        inputSchema: {
          type: "object",
          properties: { note: { type: "string", maxLength: 100 } },
          required: ["note"],
          additionalProperties: false,
        },
        effect: "write",
        approval: "none",
        record: { kind: "order", total: orders.length },
      },
    ],
    records: () => orders.map((o) => ({ id: o.id, kind: "order", fields: { note: o.note } })),
    route: "/webmcp",
  }),
  execute: (id, argsJson) => {
    state.calls += 1;
    const o = orders.find((x) => `update_note@order:${x.id}` === id);
    if (!o) return { error: { code: "NOT_FOUND", message: id } };
    o.note = JSON.parse(argsJson).note;
    render();
    return { title: `Note on ${o.id} updated` };
  },
  app: "webmcp-test",
  session: () => session,
  replay: true,
  onAudit: (event) => state.audit.push(JSON.parse(JSON.stringify(event))),
});
render();

window.__wm = {
  hasModelContext: () => typeof document.modelContext === "object" && document.modelContext !== null,
  // Starts one more bridge; answers what it registered.
  start: async (options) => {
    const b = await state.surface.webmcp(options);
    state.bridges.push(b);
    return { supported: b.supported, tools: b.tools.map((x) => x.name) };
  },
  revokeQuietly: () => {
    session = { ...session, revokedAt: Date.now() };
    return true;
  },
  grantQuietly: () => {
    session = newSession();
    return true;
  },
  refresh: () => Promise.all(state.bridges.map((b) => b.refresh())).then(() => true),
  close: () => (state.surface.close(), true),
  infos: () => [...infos],
  calls: () => state.calls,
  audit: () => state.audit,
  note: (id) => document.querySelector(`[data-testid="note-${id}"]`).textContent,
  ready: true,
};
