// Boots the orders page, then projects its registry and executor as an agent
// surface. The page's own UI works without the surface runtime; the surface
// is added on top and never replaces anything.

import { createSurface, defineRegistry } from "./boot.js";
import * as store from "./store.js";
import { $ } from "./dom.js";
import { mountOrders } from "./orders-ui.js";
import { mountDelegation, currentSession, isOpenMode, onDelegationChange, sessionState } from "./delegation.js";
import { mountConsole } from "./console.js";
import { addAuditEvent, auditEvents } from "./audit.js";

let surfaces = null; // { delegated, open } once made
let active = null; // { surface, stop } of the surface listening now

mountOrders();
mountDelegation(store.ACTION_IDS);
mountConsole();

const ready = startSurface();
// Tests await __demo.ready; the page itself must not report an unhandled
// rejection when the surface cannot be made.
ready.catch(() => {});

window.__demo = Object.freeze({
  ready,
  get surface() {
    return active ? active.surface : null;
  },
  get executorCalls() {
    return store.executorCallCount();
  },
  get openMode() {
    return isOpenMode();
  },
  state: () => store.pageState(),
  order: (id) => store.order(id),
  visibleOrderIds: () => store.view().visible.map((o) => o.id),
  pendingApprovals: () => store.pendingApprovals().map((a) => a.orderId),
  session: () => currentSession(),
  sessionState: () => sessionState(),
  auditEvents: () => auditEvents(),
  actionIds: () => [...store.ACTION_IDS],
  registryVersion: () => store.actionsVersion(),
});

async function startSurface() {
  // The surfaces are made now; the kernel behind them starts when an agent
  // first speaks, and says here if it cannot (see watchKernel).
  // The registry is the page's own: the same actions, records and state the
  // table renders from. version() lets the runtime skip re-reading actions
  // that did not change.
  const registry = defineRegistry({
    version: () => store.actionsVersion(),
    actions: () => store.actions(),
    records: store.records,
    route: () => store.route(),
    regions: store.REGIONS,
    state: () => store.pageState(),
    feedback: () => store.feedback(),
    unavailable: () => store.unavailable(),
  });

  const common = {
    registry,
    // The page's one executor; the surface hands it the business input as
    // JSON text and the call's identity (agent, session, request id).
    execute: (id, argsJson, context) => store.execute(id, parseArgs(argsJson), context || {}),
    app: "orders",
    expose: [...store.ACTION_IDS],
    rateLimit: { maxRequests: 30, windowMs: 60_000 },
    replay: true,
    // When the server keeps them (cmd/demo -redis), the rate budget and the
    // replay claims are its: every tab and replica of the user shares one.
    ...(await serverState()),
    onAudit: (event) => addAuditEvent(event),
  };
  let delegated;
  try {
    delegated = createSurface({ ...common, session: () => currentSession() });
  } catch (err) {
    runtimeUnavailable(err);
    throw err;
  }
  let open = null;
  surfaces = {
    delegated,
    // Open mode has no session at all, which a session getter cannot express
    // (a getter answering null means "no session: refuse"). It is a second
    // surface over the same registry and executor, created on first use.
    get open() {
      if (!open) open = createSurface(common);
      return open;
    },
  };
  switchSurface();
  onDelegationChange(switchSurface);
  // Where the browser has WebMCP, the same capabilities are browser tools
  // too, following every grant, revocation and mode switch of the panel.
  if (document.modelContext) {
    followWebMCP();
    onDelegationChange(followWebMCP);
  }
  return active.surface;
}

let webmcp = null; // { surface, bridge } of the listening surface's WebMCP tools

function followWebMCP() {
  const surface = active && active.surface;
  if (webmcp && webmcp.surface === surface) {
    webmcp.bridge.then((b) => b.refresh(), () => {});
    return;
  }
  // The previous surface's tools go first: they hold the same names.
  const previous = webmcp ? webmcp.bridge.then((b) => b.stop(), () => {}) : Promise.resolve();
  // Notes are free text typed by people and agents: the output is marked untrusted.
  const bridge = previous.then(() => surface.webmcp({
    untrustedContent: true,
    onChange: (tools) => {
      if (webmcp && webmcp.surface === surface) showWebMCP(tools.length);
    },
  }));
  bridge.then(
    (b) => b.ready.then(() => {
      if (webmcp && webmcp.surface === surface) showWebMCP(b.tools.length);
    }),
    (err) => console.warn("orders: WebMCP tools unavailable:", err),
  );
  webmcp = { surface, bridge };
}

// showWebMCP puts the number of browser tools registered now in the top bar,
// so a person can see that the page's capabilities reached WebMCP.
function showWebMCP(count) {
  const pill = $("webmcp-status");
  pill.dataset.state = "on";
  pill.dataset.count = String(count);
  pill.textContent = `WebMCP: ${count} ${count === 1 ? "tool" : "tools"}`;
  pill.title = "The capabilities this session may use are registered as browser tools (document.modelContext), plus page_context to read the page.";
}

function switchSurface() {
  if (!surfaces) return;
  const want = isOpenMode() ? surfaces.open : surfaces.delegated;
  if (active && active.surface === want) return;
  if (active) active.stop();
  // No extra origins: only this window (and scripts in it) may talk to it.
  const stop = want.listen({ allowedOrigins: [] });
  active = { surface: want, stop: typeof stop === "function" ? stop : () => {} };
  if (isOpenMode()) setRuntimeStatus("open", "Agent surface: listening (OPEN MODE)");
  else setRuntimeStatus("listening", "Agent surface: listening");
}

// serverState reads the server's /config.json: when it names a state
// endpoint, the limiter and guard ask it (js/pling-shared.js httpAdapter) and
// refuse calls when it cannot answer. No config keeps both in the page.
async function serverState() {
  let url;
  try {
    const res = await fetch("./config.json", { cache: "no-store" });
    url = res.ok ? (await res.json()).sharedState : undefined;
  } catch {
    url = undefined;
  }
  if (typeof url !== "string") return {};
  const { httpLimiter, httpGuard } = await import("./pling/pling-shared.js");
  return { rateLimit: { limiter: httpLimiter(url) }, replay: { guard: httpGuard(url) } };
}

function parseArgs(argsJson) {
  if (argsJson === undefined || argsJson === null || argsJson === "") return {};
  if (typeof argsJson === "object") return argsJson;
  try {
    return JSON.parse(argsJson);
  } catch {
    return {};
  }
}

function runtimeUnavailable(err) {
  setRuntimeStatus("unavailable", "Agent surface: runtime not loaded");
  $("runtime-status").title = String(err && err.message ? err.message : err);
  console.warn("orders: agent surface runtime unavailable:", err);
}

function setRuntimeStatus(state, text) {
  const pill = $("runtime-status");
  pill.dataset.state = state;
  pill.textContent = text;
}
