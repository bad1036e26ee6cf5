// The baseline of the describe benchmark: a describe responder written in
// plain JavaScript that does the surface's work for a describe with the
// default window and nothing else. It takes the same messages, applies the
// same sender checks, reads the same registry, the same session, the same
// page-level exposure and session scope, and replies with a description of
// the same JSON shape. The benchmark checks that both descriptions are equal
// (apart from the app name) before it times either.

import { PROTOCOL } from "./fixture.js";

const CHANNEL = "pling.surface";
const LIMITS = { regions: 32, recordIds: 200, feedback: 20, unavailable: 50, stateKeys: 64 };

function capList(list, n) {
  const all = Array.isArray(list) ? list : [];
  return [all.length > n ? all.slice(0, n) : all, all.length];
}

function capState(state, n) {
  if (state === null || typeof state !== "object") return [{}, 0];
  const keys = Object.keys(state);
  if (keys.length <= n) return [state, 0];
  const out = {};
  for (const k of keys.sort().slice(0, n)) out[k] = state[k];
  return [out, keys.length];
}

function project(a) {
  const c = { id: a.id };
  if (a.description) c.description = a.description;
  if (a.inputSchema !== undefined) c.inputSchema = a.inputSchema;
  if (a.effect) c.effect = a.effect;
  if (a.approval) c.approval = a.approval;
  if (a.fidelity) c.fidelity = a.fidelity;
  if (a.source) c.source = a.source;
  if (a.scopePath && a.scopePath.length) c.scopePath = a.scopePath;
  if (a.handoff) c.handoff = a.handoff;
  if (a.flowSteps && a.flowSteps.length) c.flowSteps = a.flowSteps;
  if (a.offscreen) c.offscreen = true;
  if (a.record) {
    c.record = { param: a.record.param || "record", total: a.record.total };
    if (a.record.offscreen) c.record.offscreen = a.record.offscreen;
  }
  return c;
}

function recordView(r) {
  const v = { id: r.id };
  if (r.kind) v.kind = r.kind;
  if (r.fields && Object.keys(r.fields).length) v.fields = r.fields;
  if (r.offscreen) v.offscreen = true;
  return v;
}

function failure(id, code, message) {
  return { protocol: PROTOCOL, id, ok: false, error: { code, message } };
}

// describe answers one describe envelope with the default window.
function describe(envelope, { registry, session, exposed, app, recordLimit }) {
  const id = envelope && typeof envelope.id === "string" ? envelope.id : "";
  if (envelope === null || typeof envelope !== "object") return failure(id, "INVALID_REQUEST", "request must be an object");
  if (envelope.protocol !== PROTOCOL) return failure(id, "PROTOCOL_VERSION_UNSUPPORTED", "unsupported protocol");
  if (id === "") return failure(id, "INVALID_REQUEST", "id is required");
  if (envelope.method !== "describe") return failure(id, "METHOD_NOT_SUPPORTED", "method not supported");
  const s = session();
  if (!s) return failure(id, "SESSION_REQUIRED", "session required");
  const now = Date.now();
  if (s.revokedAt !== undefined && s.revokedAt <= now) return failure(id, "SESSION_REVOKED", "session revoked");
  if (!(s.expiresAt > now)) return failure(id, "SESSION_EXPIRED", "session expired");

  const actions = registry.actions();
  const view = registry.view({ offset: 0, limit: recordLimit, ids: undefined, maxRecordIds: LIMITS.recordIds });

  // The session's capabilities: exposed by the page, named by the scope,
  // declared once.
  const scope = new Set(s.scope);
  const counts = new Map();
  for (const a of actions) counts.set(a.id, (counts.get(a.id) || 0) + 1);
  const capabilities = [];
  const withheld = [];
  for (const a of actions) {
    if (!a.id || !exposed.has(a.id) || !scope.has(a.id)) continue;
    if (counts.get(a.id) > 1) {
      if (!withheld.some((w) => w.id === a.id)) withheld.push({ id: a.id, reason: "capability id is declared more than once" });
      continue;
    }
    capabilities.push(project(a));
  }

  const context = {};
  if (view.route) context.route = view.route;
  const [regions, regionsTotal] = capList(view.regions, LIMITS.regions);
  context.regions = regions;
  if (regionsTotal > regions.length) context.regionsTotal = regionsTotal;
  const records = (view.records || []).slice(0, recordLimit).map(recordView);
  context.records = records;
  const [recordIds, idsTotal] = capList(view.recordIds, LIMITS.recordIds);
  context.recordIds = recordIds;
  context.recordIdsTotal = Math.max(idsTotal, view.recordIdsTotal || 0);
  const [state, stateTotal] = capState(view.state, LIMITS.stateKeys);
  context.state = state;
  if (stateTotal) context.stateTotal = stateTotal;
  const [feedback, feedbackTotal] = capList(view.feedback, LIMITS.feedback);
  context.feedback = feedback;
  const [unavailable, unavailableTotal] = capList(withheld.concat(view.unavailable || []), LIMITS.unavailable);
  context.unavailable = unavailable;
  context.recordsTotal = records.length > 0 ? Math.max(view.recordsTotal || 0, records.length) : view.recordsTotal || 0;
  context.feedbackTotal = feedbackTotal;
  context.unavailableTotal = unavailableTotal;

  const result = { protocol: PROTOCOL, capabilities, context };
  if (app) result.app = app;
  return { protocol: PROTOCOL, id, ok: true, result };
}

// listenResponder answers describe requests addressed to app on this window,
// from the page's own origin, as surface.listen() does.
export function listenResponder(options) {
  const o = { recordLimit: 8, ...options, exposed: new Set(options.expose) };
  const own = location.origin;
  const onMessage = (event) => {
    if (!event.isTrusted) return;
    const d = event.data;
    if (d === null || typeof d !== "object" || d.channel !== CHANNEL || d.kind !== "request") return;
    if (event.source !== window || event.origin !== own) return;
    if (d.app !== o.app) return;
    const msg = { channel: CHANNEL, kind: "response", app: o.app };
    msg.envelope = describe(d.envelope, o);
    event.source.postMessage(msg, event.origin);
  };
  addEventListener("message", onMessage);
  return () => removeEventListener("message", onMessage);
}
