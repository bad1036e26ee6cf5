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
  const approval = typeof ev.approval === "string" ? ev.approval : "";
  const state = rowState(outcome, approval);
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
    "data-approval": approval,
    "data-state": state.name,
    "data-method": ev.method || "",
    "data-code": ev.code || "",
  },
  el("span", { class: "audit-time" }, formatTime(ev.time)),
  el("span", { class: `audit-outcome ${state.name}`, "data-testid": "audit-state", title: state.title }, state.label),
  el("span", { class: "audit-what" }, ev.method === "invoke" ? el("code", {}, what) : what),
  el("span", { class: "audit-who" }, who),
  el("span", { class: "audit-details" }, details.join(" · ")),
  );
}

// rowState is what the row says. The kernel's outcome "ok" means the
// exchange completed; whether the action took effect is in the approval
// status it reports (result.approval.status, copied into the event): a
// pending approval is not done, a denied one did not happen, and an unknown
// one is never shown as done.
function rowState(outcome, approval) {
  if (outcome === "ok") {
    switch (approval) {
      case "":
        return { name: "ok", label: "ok", title: "Done" };
      case "granted":
        return { name: "approved", label: "approved", title: "Done: a person approved it" };
      case "pending":
        return { name: "pending-approval", label: "approval pending", title: "Not done yet: waiting for a person to approve it in this page" };
      case "denied":
        return { name: "approval-denied", label: "denied", title: "Not done: a person declined it" };
      default:
        return { name: "approval-unknown", label: "approval unknown", title: "The approval status is not one the kernel knows; not done" };
    }
  }
  switch (outcome) {
    case "business_error":
      return { name: "business-error", label: "business error", title: "The page refused the action" };
    case "protocol_error":
      return { name: "protocol-error", label: "protocol error", title: "The surface refused the request; nothing ran" };
  }
  return { name: "unknown", label: outcome || "?", title: "" };
}

function formatTime(t) {
  const d = typeof t === "number" ? new Date(t) : typeof t === "string" ? new Date(t) : new Date();
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleTimeString("en-GB", { hour12: false });
}
