// The audit panel: one line per request the surface handled. The surface's
// events carry metadata only (who, what, outcome, timing), never input,
// results or credentials, and the panel shows exactly what it receives.

import { $, el } from "./dom.js";

const MAX_EVENTS = 200;
const events = [];

export function auditEvents() {
  return events.map((e) => ({ ...e }));
}

export function addAuditEvent(ev) {
  const copy = { ...ev };
  events.push(copy);
  if (events.length > MAX_EVENTS) events.shift();
  const list = $("audit-list");
  list.prepend(renderEvent(copy));
  while (list.children.length > MAX_EVENTS) list.lastElementChild.remove();
  $("audit-count").textContent = `${events.length} ${events.length === 1 ? "event" : "events"} · metadata only`;
}

function renderEvent(ev) {
  const outcome = String(ev.outcome || "");
  const what = ev.method === "invoke" ? ev.capability || "(no capability)" : ev.method || "(unparsed)";
  const who = ev.agentId ? `${ev.agentId} · ${ev.sessionId || ""}` : "no session";
  const details = [
    ev.recordId ? `record ${ev.recordId}` : "",
    ev.code ? ev.code : "",
    typeof ev.durationMs === "number" ? `${ev.durationMs < 10 ? ev.durationMs.toFixed(2) : Math.round(ev.durationMs)} ms` : "",
    ev.requestId ? `id ${ev.requestId}` : "",
  ].filter(Boolean);
  return el("li", {
    class: `audit-entry outcome-${outcome}`,
    "data-testid": "audit-entry",
    "data-outcome": outcome,
    "data-method": ev.method || "",
    "data-code": ev.code || "",
  },
  el("span", { class: "audit-time" }, formatTime(ev.time)),
  el("span", { class: `audit-outcome ${outcome}` }, outcomeLabel(outcome)),
  el("span", { class: "audit-what" }, ev.method === "invoke" ? el("code", {}, what) : what),
  el("span", { class: "audit-who" }, who),
  el("span", { class: "audit-details" }, details.join(" · ")),
  );
}

function outcomeLabel(outcome) {
  switch (outcome) {
    case "ok":
      return "ok";
    case "business_error":
      return "business error";
    case "protocol_error":
      return "protocol error";
  }
  return outcome || "?";
}

function formatTime(t) {
  const d = typeof t === "number" ? new Date(t) : typeof t === "string" ? new Date(t) : new Date();
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleTimeString("en-GB", { hour12: false });
}
