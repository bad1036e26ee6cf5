// The delegation panel: the person grants an agent a session (agent id,
// scope, expiry) and can revoke it. The surface reads currentSession() on
// every call, so a grant, a revocation or an expiry applies to the very next
// request without reloading anything.

import { $, el } from "./dom.js";
import { USER } from "./store.js";

const DEMO_AGENT = "agent.console";
const DEMO_MINUTES = 30;

let session = null; // the last session granted (kept after revocation, to show its state)
let openMode = false;
const listeners = new Set();

export function onDelegationChange(fn) {
  listeners.add(fn);
}

function changed() {
  render();
  for (const fn of listeners) fn();
}

// currentSession is the surface's session getter. It answers a fresh copy so
// nothing downstream can change the panel's record of the grant.
export function currentSession() {
  if (!session) return null;
  const s = {
    agentId: session.agentId,
    sessionId: session.sessionId,
    userId: session.userId,
    expiresAt: session.expiresAt,
    scope: [...session.scope],
    delegationId: session.delegationId,
  };
  if (session.revokedAt) s.revokedAt = session.revokedAt;
  return s;
}

export function isOpenMode() {
  return openMode;
}

// sessionState is "none", "active", "expired" or "revoked", decided the way
// the surface decides it (revocation wins over expiry).
export function sessionState(now = Date.now()) {
  if (!session) return "none";
  if (session.revokedAt && now >= session.revokedAt) return "revoked";
  if (now >= session.expiresAt) return "expired";
  return "active";
}

export function grant({ agentId, scope, minutes }) {
  const now = Date.now();
  session = {
    agentId,
    sessionId: `ses_${randomHex(6)}`,
    delegationId: `dlg_${randomHex(6)}`,
    userId: USER.id,
    scope: [...scope],
    grantedAt: now,
    expiresAt: now + Math.round(minutes * 60_000),
    revokedAt: 0,
  };
  changed();
}

export function revoke() {
  if (!session || session.revokedAt) return;
  session.revokedAt = Date.now();
  changed();
}

function randomHex(bytes) {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// ---------------------------------------------------------------------------

export function mountDelegation(actionIds) {
  const scopes = $("delegation-scopes");
  scopes.replaceChildren(
    ...actionIds.map((id) => {
      const box = el("input", { type: "checkbox", value: id, "data-testid": `delegation-scope-${id}` });
      box.checked = true;
      return el("label", { class: "scope" }, box, el("code", {}, id));
    }),
  );

  $("delegation-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const agentId = $("delegation-agent").value.trim();
    const minutes = Number($("delegation-expiry").value);
    const scope = [...scopes.querySelectorAll("input[type=checkbox]:checked")].map((b) => b.value);
    if (!agentId) {
      $("delegation-agent").focus();
      return;
    }
    if (!(minutes > 0)) {
      $("delegation-expiry").focus();
      return;
    }
    grant({ agentId, scope, minutes });
    $("delegation-hint").textContent = `Session granted to ${agentId} for ${minutes} min with ${scope.length} ${scope.length === 1 ? "capability" : "capabilities"}. It replaces the previous one.`;
  });
  $("delegation-revoke").addEventListener("click", () => {
    revoke();
    $("delegation-hint").textContent = "Session revoked. The agent's next request is refused with SESSION_REVOKED.";
  });
  $("delegation-open-mode").addEventListener("change", (e) => {
    openMode = e.target.checked;
    changed();
  });

  // A demo session so the console works the moment the page loads.
  grant({ agentId: DEMO_AGENT, scope: actionIds, minutes: DEMO_MINUTES });
  // Expiry happens with the clock, not with an event: refresh the display.
  setInterval(render, 1000);
}

let lastState = "";

function render() {
  const st = sessionState();
  const badge = $("delegation-state");
  badge.dataset.state = openMode ? "open" : st;
  badge.textContent = openMode ? "open mode" : st === "none" ? "no session" : st;
  $("delegation-revoke").disabled = !session || Boolean(session.revokedAt);
  $("delegation-panel").classList.toggle("open-mode-on", openMode);

  const info = $("delegation-session");
  if (!session) {
    info.replaceChildren(el("div", { class: "kv wide" }, el("dt", {}, "Session"), el("dd", {}, "none: agent requests are refused with SESSION_REQUIRED")));
  } else {
    const left = session.expiresAt - Date.now();
    const rows = [
      ["Agent", session.agentId],
      ["Session", session.sessionId],
      ["User", `${USER.name} (${session.userId})`],
      ["Expires", `${new Date(session.expiresAt).toLocaleTimeString()}${left > 0 ? ` (in ${formatLeft(left)})` : " (expired)"}`],
      ["Scope", session.scope.length ? session.scope.join(", ") : "(empty: nothing callable)"],
    ];
    if (session.revokedAt) rows.push(["Revoked", new Date(session.revokedAt).toLocaleTimeString()]);
    info.replaceChildren(...rows.map(([k, v]) => el("div", { class: k === "Scope" ? "kv wide" : "kv" }, el("dt", {}, k), el("dd", { "data-testid": `delegation-session-${k.toLowerCase()}` }, v))));
  }
  if (openMode) {
    info.prepend(el("div", { class: "kv wide warn" }, el("dt", {}, "Mode"), el("dd", {}, "OPEN MODE: the session below is ignored")));
  }
  const now = `${st}:${openMode}`;
  if (now !== lastState) {
    lastState = now;
    for (const fn of listeners) fn();
  }
}

function formatLeft(ms) {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, "0")}s`;
}
