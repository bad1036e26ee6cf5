// The agent console plays an EXTERNAL agent. It knows nothing of the page's
// code: it talks to the surface only through window.postMessage with the
// pling.surface wire format, exactly as a content script or an extension
// would, and learns capabilities and record ids from its own last describe.

import { $, el, pretty } from "./dom.js";

const CHANNEL = "pling.surface";
const PROTOCOL = "pling.surface/0.1";
const APP = "orders";
const REPLY_TIMEOUT_MS = 8000;

let seq = 0;
let lastDescription = null; // result of the last successful describe
let lastInvoke = null; // the last invoke message posted, for "Retry same id"
const pending = new Map(); // request id -> { settle }

export function mountConsole() {
  window.addEventListener("message", onMessage);
  $("console-describe").addEventListener("click", describe);
  $("console-invoke").addEventListener("click", invoke);
  $("console-retry").addEventListener("click", retry);
  $("console-send-raw").addEventListener("click", sendRaw);
  $("console-capability").addEventListener("change", () => buildForm());
  for (const tab of document.querySelectorAll('[role="tab"][data-pane]')) {
    tab.addEventListener("click", () => showPane(tab.dataset.pane));
    tab.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
      e.preventDefault();
      const next = tab.dataset.pane === "request" ? "response" : "request";
      showPane(next);
      $(`console-tab-${next}`).focus();
    });
  }
  $("console-form").addEventListener("submit", (e) => {
    e.preventDefault();
    invoke();
  });
}

// showPane shows the request or the response: one pane as wide as the
// console, so the JSON reads line by line instead of wrapping mid-string.
function showPane(which) {
  for (const name of ["request", "response"]) {
    const on = name === which;
    const tab = $(`console-tab-${name}`);
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`console-${name}`).hidden = !on;
  }
}

function nextId(method) {
  seq++;
  return `agent-${method}-${Date.now().toString(36)}-${seq}`;
}

function wrap(envelope) {
  return { channel: CHANNEL, kind: "request", app: APP, envelope };
}

// ---------------------------------------------------------------------------
// Transport

function onMessage(e) {
  // Replies come back to this window, from this window's own origin.
  if (e.source !== window || e.origin !== location.origin) return;
  const d = e.data;
  if (!d || typeof d !== "object" || d.channel !== CHANNEL || d.kind !== "response") return;
  const id = d.envelope && typeof d.envelope.id === "string" ? d.envelope.id : "";
  let entry = pending.get(id);
  if (!entry && id === "" && pending.size === 1) {
    // A request the surface could not read is answered with an empty id;
    // with one request in flight, it is the answer to that one.
    entry = [...pending.values()][0];
  }
  if (entry) entry.settle(d);
}

// post sends one message and resolves with the reply message, or null when
// none arrives in time (the transport ignores what it does not accept).
function post(message, id) {
  $("console-request").value = typeof message === "string" ? message : pretty(message);
  $("console-response").value = "";
  showPane("request");
  showOutcome("waiting", "Waiting for the reply…");
  $("console-after").hidden = true;
  return new Promise((resolve) => {
    const key = id ?? "";
    const timer = setTimeout(() => {
      pending.delete(key);
      resolve(null);
    }, REPLY_TIMEOUT_MS);
    pending.set(key, {
      settle(reply) {
        clearTimeout(timer);
        pending.delete(key);
        resolve(reply);
      },
    });
    window.postMessage(message, location.origin);
  });
}

// ---------------------------------------------------------------------------
// Actions

async function describe() {
  const id = nextId("describe");
  const reply = await post(wrap({ protocol: PROTOCOL, id, method: "describe" }), id);
  const env = show(reply);
  if (env && env.ok && env.result && Array.isArray(env.result.capabilities)) {
    lastDescription = env.result;
    fillCapabilities();
  }
}

async function invoke() {
  const capId = $("console-capability").value;
  const cap = capability(capId);
  if (!cap) return;
  let input;
  try {
    input = collectInput(cap);
  } catch (err) {
    showOutcome("local-error", err.message);
    return;
  }
  const id = nextId("invoke");
  const message = wrap({ protocol: PROTOCOL, id, method: "invoke", capability: cap.id, input });
  lastInvoke = message;
  $("console-retry").disabled = false;
  show(await post(message, id));
}

async function retry() {
  if (!lastInvoke) return;
  // Exactly the same message, same request id: the surface must refuse to
  // run it again.
  show(await post(lastInvoke, lastInvoke.envelope.id));
}

async function sendRaw() {
  const text = $("console-request").value;
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    showOutcome("local-error", "The request pane does not hold valid JSON; nothing was sent.");
    return;
  }
  const id = message && message.envelope && typeof message.envelope.id === "string" ? message.envelope.id : "";
  const reply = await post(message, id);
  $("console-request").value = text;
  show(reply);
}

// ---------------------------------------------------------------------------
// Capabilities and the generated input form

function capability(id) {
  if (!lastDescription || !id) return undefined;
  return lastDescription.capabilities.find((c) => c.id === id);
}

function fillCapabilities() {
  const select = $("console-capability");
  const before = select.value;
  const caps = lastDescription.capabilities;
  select.replaceChildren(
    ...(caps.length
      ? caps.map((c) => el("option", { value: c.id }, `${c.id}  (${c.effect || "?"}${c.approval && c.approval !== "none" ? `, approval ${c.approval}` : ""})`))
      : [el("option", { value: "" }, "No capabilities in this session")]),
  );
  if (caps.some((c) => c.id === before)) select.value = before;
  select.disabled = caps.length === 0;
  $("console-invoke").disabled = caps.length === 0;
  buildForm();
}

function buildForm() {
  const form = $("console-form");
  const meta = $("console-capability-meta");
  const cap = capability($("console-capability").value);
  const previous = collectDraft(form);
  form.replaceChildren();
  if (!cap) {
    meta.textContent = "";
    return;
  }
  const bits = [cap.description || ""];
  if (cap.record) {
    bits.push(`Folded template: ${cap.record.total} records${cap.record.offscreen ? ` (${cap.record.offscreen} offscreen)` : ""}.`);
  }
  if (cap.handoff) bits.push(`Handoff: ${cap.handoff}.`);
  meta.textContent = bits.filter(Boolean).join(" ");
  meta.title = meta.textContent;

  if (cap.record) {
    const param = cap.record.param || "record";
    const ids = (lastDescription.context && lastDescription.context.recordIds) || [];
    const select = el("select", { name: param, "data-testid": "console-record", "data-param": param, required: true });
    select.append(...ids.map((id) => el("option", { value: id }, id)));
    if (ids.includes(previous[param])) select.value = previous[param];
    form.append(field(`${param}`, select, `${ids.length} of ${lastDescription.context.recordIdsTotal} ids`, "record-field"));
  }
  const schema = cap.inputSchema || {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [name, prop] of Object.entries(schema.properties || {})) {
    form.append(propertyField(name, prop || {}, required.has(name), previous[name]));
  }
  if (!cap.record && Object.keys(schema.properties || {}).length === 0) {
    form.append(el("p", { class: "hint" }, "This capability takes no input."));
  }
}

function field(label, control, hint, cls = "") {
  return el("label", { class: `field ${cls}`.trim(), title: hint || "" },
    el("span", { class: "field-label" }, label, hint ? el("span", { class: "field-hint" }, ` · ${hint}`) : ""),
    control);
}

function propertyField(name, prop, required, previous) {
  const label = `${name}${required ? " *" : ""}`;
  const hint = [schemaType(prop), rangeHint(prop)].filter(Boolean).join(", ");
  const common = { name, "data-testid": `console-field-${name}`, "data-type": schemaType(prop) };
  let control;
  if (Array.isArray(prop.enum)) {
    control = el("select", common);
    if (!required) control.append(el("option", { value: "" }, "(omit)"));
    control.append(...prop.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
    if (previous !== undefined) control.value = previous;
  } else {
    switch (schemaType(prop)) {
      case "boolean":
        control = el("input", { ...common, type: "checkbox" });
        control.checked = previous === true;
        return el("label", { class: "field check", title: prop.description || "" }, control, el("span", { class: "field-label" }, label, el("span", { class: "field-hint" }, ` · ${hint}`)));
      case "integer":
      case "number":
        control = el("input", { ...common, type: "number", step: schemaType(prop) === "integer" ? "1" : "any", placeholder: prop.description || "" });
        if (typeof prop.minimum === "number") control.min = String(prop.minimum);
        if (typeof prop.maximum === "number") control.max = String(prop.maximum);
        break;
      case "string":
        control = el("input", { ...common, type: "text", placeholder: prop.description || "" });
        if (typeof prop.maxLength === "number") control.maxLength = prop.maxLength;
        break;
      default:
        control = el("textarea", { ...common, rows: "2", placeholder: "JSON value" });
    }
    if (typeof previous === "string") control.value = previous;
  }
  return field(label, control, hint, schemaType(prop) === "string" || schemaType(prop) === "json" ? "wide" : "");
}

function schemaType(prop) {
  if (Array.isArray(prop.enum)) return "enum";
  const t = Array.isArray(prop.type) ? prop.type.find((x) => x !== "null") : prop.type;
  return t || "json";
}

function rangeHint(prop) {
  const parts = [];
  if (typeof prop.minimum === "number") parts.push(`min ${prop.minimum}`);
  if (typeof prop.maximum === "number") parts.push(`max ${prop.maximum}`);
  if (typeof prop.maxLength === "number") parts.push(`up to ${prop.maxLength} chars`);
  return parts.join(", ");
}

// collectDraft keeps what was typed when the form is rebuilt.
function collectDraft(form) {
  const out = {};
  for (const c of form.querySelectorAll("[name]")) out[c.name] = c.type === "checkbox" ? c.checked : c.value;
  return out;
}

// collectInput turns the form into the invoke input, typed by the schema.
// Empty optional fields are left out; required ones are always sent, so the
// surface, not the console, decides whether they are acceptable.
function collectInput(cap) {
  const input = {};
  const schema = cap.inputSchema || {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const c of $("console-form").querySelectorAll("[name]")) {
    const name = c.name;
    if (c.dataset.param) {
      input[name] = c.value;
      continue;
    }
    switch (c.dataset.type) {
      case "enum":
        if (c.value === "") continue;
        input[name] = JSON.parse(c.value);
        break;
      case "boolean":
        input[name] = c.checked;
        break;
      case "integer":
      case "number":
        if (c.value === "" && !required.has(name)) continue;
        input[name] = c.value === "" ? null : Number(c.value);
        break;
      case "string":
        if (c.value === "" && !required.has(name)) continue;
        input[name] = c.value;
        break;
      default:
        if (c.value.trim() === "" && !required.has(name)) continue;
        try {
          input[name] = JSON.parse(c.value);
        } catch {
          throw new Error(`${name} must be a JSON value`);
        }
    }
  }
  return input;
}

// ---------------------------------------------------------------------------
// Showing replies: protocol failure, business failure and success look different.

function show(reply) {
  if (!reply) {
    $("console-response").value = "";
    showOutcome("no-reply", `No reply within ${REPLY_TIMEOUT_MS / 1000} s: the transport ignored the message, or the surface is not running.`);
    return null;
  }
  $("console-response").value = pretty(reply);
  showPane("response");
  const env = reply.envelope || {};
  if (env.ok !== true) {
    const err = env.error || {};
    const lines = [err.message || ""];
    if (typeof err.retryAfterMs === "number") lines.push(`Retry after ${Math.ceil(err.retryAfterMs / 1000)} s.`);
    if (Array.isArray(err.violations)) {
      for (const v of err.violations.slice(0, 4)) lines.push(typeof v === "string" ? v : [v.instanceLocation || v.path, v.keyword, v.message].filter(Boolean).join(" "));
    }
    showOutcome("protocol-error", lines.filter(Boolean).join(" "), `Protocol failure · ${err.code || "UNKNOWN"}`);
    return env;
  }
  const result = env.result;
  if (result && typeof result === "object" && result.capabilities && result.context) {
    const c = result.context;
    showOutcome(
      "success",
      `${result.capabilities.length} capabilities · records ${c.records.length} of ${c.recordsTotal} · ${c.recordIds.length} record ids of ${c.recordIdsTotal} · state ${summarizeState(c.state)}`,
      "Described",
    );
    return env;
  }
  if (result && typeof result === "object" && result.error) {
    showOutcome("business-error", result.error.message || "", `Business failure · ${result.error.code || "ACTION_FAILED"}`);
  } else if (result && typeof result === "object" && result.approval) {
    const st = result.approval.status;
    if (st === "pending") {
      showOutcome("pending-approval", `${result.title || "A person must confirm it in the page"}. The agent cannot approve it.`, "Approval pending");
    } else if (st === "granted" || st === "denied") {
      showOutcome(st === "granted" ? "success" : "business-error", result.title || "", `Approval ${st}`);
    } else {
      showOutcome("business-error", "The approval status is not one the console knows; it is not a grant.", `Approval ${st || "unknown"}`);
    }
  } else {
    showOutcome("success", (result && result.title) || "The capability ran.", "Success");
  }
  showAfter(env.after);
  return env;
}

function summarizeState(state) {
  if (!state) return "{}";
  return ["filter", "search", "page"].filter((k) => k in state).map((k) => `${k}=${JSON.stringify(state[k])}`).join(" ") || "{}";
}

function showOutcome(kind, text, title = "") {
  const box = $("console-outcome");
  box.dataset.outcome = kind;
  box.replaceChildren(...(title ? [el("strong", { class: "outcome-title" }, title), " "] : []), el("span", {}, text));
}

function showAfter(after) {
  const box = $("console-after");
  if (!after || typeof after !== "object") {
    box.hidden = true;
    return;
  }
  const items = [];
  for (const r of after.records || []) {
    if (r.removed) {
      items.push(el("li", {}, el("code", {}, r.id), " is no longer referenceable"));
      continue;
    }
    for (const [k, v] of Object.entries(r.fields || {})) {
      items.push(el("li", {}, el("code", {}, r.id), ` ${k} → `, el("code", {}, JSON.stringify(v))));
    }
  }
  for (const [k, v] of Object.entries(after.state || {})) {
    items.push(el("li", {}, el("code", {}, `state.${k}`), " → ", el("code", {}, JSON.stringify(v))));
  }
  if (after.recordsOmitted || after.stateOmitted) items.push(el("li", { class: "muted" }, "more changes omitted"));
  box.replaceChildren(el("strong", {}, "after (observed changes)"), el("ul", {}, ...items));
  box.hidden = false;
}
