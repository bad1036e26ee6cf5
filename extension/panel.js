// The extension page. It runs as the side panel (following the active tab)
// or as a tab opened at panel.html?tab=<tabId> (pinned to that tab). It
// never talks to the page directly: it asks the content script in the tab,
// which holds the surface client, and shows what comes back. It has no
// access to the page's credentials and asks for none.

import { findCapability, recordParam, isReferenceable } from "./pling-client.js";

const RECORDS_PER_PAGE = 8;

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

const pretty = (v) => JSON.stringify(v, null, 2);

const params = new URLSearchParams(location.search);
const pinnedTab = params.has("tab") ? Number(params.get("tab")) : null;

const state = {
  tabId: null,
  app: null, // the application chosen on the page
  description: null, // the last successful description
  stale: false, // the page navigated since the description was read
  private: false, // talk over the page's private channel instead of the window
  selected: null, // capability id
  records: { offset: 0, list: [], total: 0, nextOffset: null },
  generation: 0, // bumped on every navigation: answers for an older page are dropped
};

// ---------------------------------------------------------------------------
// Talking to the content script

class PanelError extends Error {
  constructor(plain) {
    super(plain.message || plain.code);
    this.code = plain.code || "EXTENSION_ERROR";
    this.effectUnknown = plain.effectUnknown === true;
  }
}

async function ask(message) {
  const send = () => chrome.tabs.sendMessage(state.tabId, message, { frameId: 0 });
  let reply;
  try {
    reply = await send();
  } catch (err) {
    const text = String(err && err.message);
    if (/Receiving end does not exist/i.test(text)) {
      // A tab opened before the extension was loaded has no content script
      // yet: add it, then ask again.
      await inject();
      reply = await send().catch((e) => {
        throw gone(e);
      });
    } else {
      throw gone(err);
    }
  }
  if (!reply || typeof reply !== "object") throw new PanelError({ code: "PAGE_GONE", message: "The page did not answer." });
  if (!reply.ok) throw new PanelError(reply.error || {});
  return reply.value;
}

// gone turns a broken extension message into the error a person can act on:
// the page went away (navigated, reloaded or closed) while the call waited.
function gone(err) {
  return new PanelError({
    code: "PAGE_GONE",
    message: `The page went away before it answered (${String(err && err.message)}).`,
    effectUnknown: true,
  });
}

async function inject() {
  try {
    await chrome.scripting.executeScript({ target: { tabId: state.tabId, frameIds: [0] }, files: ["pling-client.classic.js", "content.js"] });
  } catch (err) {
    throw new PanelError({ code: "NOT_SCRIPTABLE", message: `This page cannot be reached by the extension: ${String(err && err.message)}` });
  }
}

// ---------------------------------------------------------------------------
// Status, target, description

function setStatus(kind, text, code) {
  const s = $("ext-status");
  s.dataset.state = kind;
  if (code) s.dataset.code = code;
  else delete s.dataset.code;
  s.textContent = text;
}

async function showTarget() {
  try {
    const tab = await chrome.tabs.get(state.tabId);
    $("ext-target").textContent = `${tab.title || "(untitled)"} · ${tab.url || ""}`;
  } catch {
    $("ext-target").textContent = `Tab ${state.tabId}`;
  }
}

async function refresh() {
  const gen = ++state.generation;
  setStatus("connecting", "Looking for an agent surface on the page…");
  showTarget();
  let found;
  try {
    found = await ask({ type: "pling.discover" });
  } catch (err) {
    if (gen !== state.generation) return;
    if (err.code === "NO_SURFACE") setStatus("no-surface", "This page offers no agent surface (nothing answered).", err.code);
    else setStatus("error", err.message, err.code);
    clearDescription();
    return;
  }
  if (gen !== state.generation) return;
  const apps = found.map((f) => f.app);
  if (!apps.includes(state.app)) state.app = apps[0] ?? null;
  const picker = $("ext-app");
  picker.replaceChildren(...found.map((f) => el("option", { value: f.app ?? "" }, f.app ?? "(unnamed)")));
  picker.value = state.app ?? "";
  picker.closest("label").hidden = found.length < 2;
  await describe(gen);
}

async function describe(gen = state.generation) {
  let answer;
  try {
    answer = await ask({ type: "pling.describe", app: state.app, private: state.private });
  } catch (err) {
    if (gen !== state.generation) return;
    setStatus("error", err.message, err.code);
    showClientError(err);
    return;
  }
  if (gen !== state.generation) return;
  const { outcome, transport } = answer;
  if (outcome.kind !== "success") {
    setStatus("error", `The surface refused to describe itself: ${outcome.error.code}`, outcome.error.code);
    showOutcome(outcome);
    return;
  }
  state.description = outcome.description;
  state.stale = false;
  state.records = { offset: 0, list: outcome.description.context.records, total: outcome.description.context.recordsTotal, nextOffset: null };
  state.records.nextOffset = state.records.list.length < state.records.total ? state.records.list.length : null;
  const channel = transport === "port" ? "private channel" : "page window";
  setStatus("connected", `Connected to ${answer.app ?? "the page's surface"} (${channel}).`);
  renderDescription();
}

function clearDescription() {
  state.description = null;
  state.selected = null;
  $("ext-capabilities").replaceChildren();
  $("ext-call").hidden = true;
  $("ext-summary").textContent = "";
  $("ext-records").replaceChildren();
  $("ext-records-range").textContent = "";
  $("ext-feedback").replaceChildren();
  $("ext-state").textContent = "";
}

function renderDescription() {
  const d = state.description;
  const c = d.context;
  $("ext-summary").textContent = [
    `${d.capabilities.length} ${d.capabilities.length === 1 ? "capability" : "capabilities"}`,
    `${c.recordsTotal} records`,
    c.route ? `route ${c.route}` : "",
  ]
    .filter(Boolean)
    .join(" · ");
  const list = $("ext-capabilities");
  list.replaceChildren(
    ...d.capabilities.map((cap) => {
      const needsApproval = cap.approval && cap.approval !== "none";
      const button = el(
        "button",
        {
          type: "button",
          "data-testid": `ext-cap-${cap.id}`,
          "data-effect": cap.effect || "",
          "data-approval": cap.approval || "none",
          "aria-pressed": String(cap.id === state.selected),
          title: cap.description || "",
        },
        el("code", {}, cap.id),
        el("span", { class: `badge ${cap.effect === "destructive" ? "destructive" : ""}` }, cap.effect || "effect ?"),
        needsApproval ? el("span", { class: "badge approval", "data-testid": `ext-cap-approval-${cap.id}` }, `needs approval (${cap.approval})`) : null,
        cap.record ? el("span", { class: "badge" }, `per ${cap.record.param || "record"}`) : null,
      );
      button.addEventListener("click", () => select(cap.id));
      return el("li", {}, button);
    }),
  );
  if (d.capabilities.length === 0) list.append(el("li", { class: "hint" }, "This session may use no capability on this page."));
  if (state.selected && !findCapability(d, state.selected)) state.selected = null;
  renderCall();
  renderRecords();
  renderContext();
}

function renderContext() {
  const c = state.description.context;
  $("ext-feedback").replaceChildren(
    ...c.feedback.map((f) => el("li", { "data-level": f.level || "info" }, f.message)),
    ...c.unavailable.map((u) => el("li", { class: "hint" }, `${u.id} is unavailable${u.reason ? `: ${u.reason}` : ""}`)),
  );
  $("ext-state").textContent = pretty(c.state);
}

// ---------------------------------------------------------------------------
// The call form, generated from the capability's inputSchema

function select(id) {
  state.selected = id;
  for (const b of $("ext-capabilities").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.testid === `ext-cap-${id}`));
  renderCall();
}

function renderCall() {
  const section = $("ext-call");
  const cap = state.selected && state.description ? findCapability(state.description, state.selected) : undefined;
  if (!cap) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  $("ext-selected").textContent = cap.id;
  const meta = [cap.description];
  if (cap.approval && cap.approval !== "none") meta.push(`Needs approval (${cap.approval}): a person decides in the page.`);
  if (cap.handoff) meta.push(`Handoff: ${cap.handoff}.`);
  if (cap.record) meta.push(`Applies to one record of ${cap.record.total}${cap.record.offscreen ? ` (${cap.record.offscreen} not on screen)` : ""}.`);
  $("ext-selected-meta").textContent = meta.filter(Boolean).join(" ");

  const form = $("ext-form");
  const draft = readDraft(form);
  form.replaceChildren();
  const param = recordParam(cap);
  if (param) form.append(recordField(param, draft[param]));
  const schema = isObject(cap.inputSchema) ? cap.inputSchema : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const props = isObject(schema.properties) ? schema.properties : {};
  for (const [name, prop] of Object.entries(props)) {
    if (name === param) continue;
    form.append(propertyField(name, isObject(prop) ? prop : {}, required.has(name), draft[name]));
  }
  if (!param && Object.keys(props).length === 0) form.append(el("p", { class: "hint" }, "This capability takes no input."));
  $("ext-invoke").disabled = state.stale;
}

function recordField(param, previous) {
  const c = state.description.context;
  const complete = c.recordIds.length >= c.recordIdsTotal;
  let control;
  if (complete) {
    control = el("select", { name: param, "data-testid": "ext-record", "data-param": param });
    control.append(...c.recordIds.map((id) => el("option", { value: id }, id)));
    if (c.recordIds.includes(previous)) control.value = previous;
  } else {
    // The id list was cut short: any id may be typed, the listed ones are suggested.
    const listId = "ext-record-ids";
    control = el("input", { name: param, type: "text", list: listId, "data-testid": "ext-record", "data-param": param, value: previous ?? "" });
    document.getElementById(listId)?.remove();
    document.body.append(el("datalist", { id: listId }, ...c.recordIds.map((id) => el("option", { value: id }))));
  }
  return el("label", {}, el("span", {}, `${param} *`, el("span", { class: "hint" }, ` · ${c.recordIds.length} of ${c.recordIdsTotal} record ids`)), control);
}

function schemaType(prop) {
  if (Array.isArray(prop.enum)) return "enum";
  if (hasOwn(prop, "const")) return "json";
  const t = Array.isArray(prop.type) ? prop.type.find((x) => x !== "null") : prop.type;
  return ["string", "number", "integer", "boolean"].includes(t) ? t : "json";
}

function propertyField(name, prop, required, previous) {
  const type = schemaType(prop);
  const hints = [type === "json" ? "JSON" : type];
  if (typeof prop.minimum === "number") hints.push(`min ${prop.minimum}`);
  if (typeof prop.maximum === "number") hints.push(`max ${prop.maximum}`);
  if (typeof prop.maxLength === "number") hints.push(`up to ${prop.maxLength} characters`);
  if (prop.description) hints.push(prop.description);
  const common = { name, "data-testid": `ext-field-${name}`, "data-type": type, "data-required": required ? "true" : null };
  let control;
  switch (type) {
    case "enum":
      control = el("select", common);
      if (!required) control.append(el("option", { value: "" }, "(leave out)"));
      control.append(...prop.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
      if (previous !== undefined) control.value = previous;
      break;
    case "boolean":
      control = el("input", { ...common, type: "checkbox" });
      control.checked = previous === true;
      return el("label", { class: "check" }, control, el("span", {}, name, el("span", { class: "hint" }, ` · ${hints.join(", ")}`)));
    case "number":
    case "integer":
      control = el("input", { ...common, type: "number", step: type === "integer" ? "1" : "any", min: prop.minimum, max: prop.maximum });
      break;
    case "string":
      control = prop.maxLength > 120 ? el("textarea", { ...common, rows: 2, maxlength: prop.maxLength }) : el("input", { ...common, type: "text", maxlength: prop.maxLength });
      break;
    default:
      control = el("textarea", { ...common, rows: 2, placeholder: "a JSON value" });
  }
  if (typeof previous === "string" && type !== "enum") control.value = previous;
  return el("label", {}, el("span", {}, `${name}${required ? " *" : ""}`, el("span", { class: "hint" }, ` · ${hints.join(", ")}`)), control);
}

function readDraft(form) {
  const out = {};
  for (const c of form.querySelectorAll("[name]")) out[c.name] = c.type === "checkbox" ? c.checked : c.value;
  return out;
}

// collectInput reads the form as the schema types it. Empty optional fields
// are left out; an empty required number is left out too, so the surface's
// schema check (not this page) says what is missing.
function collectInput() {
  const input = {};
  let record;
  for (const c of $("ext-form").querySelectorAll("[name]")) {
    const name = c.name;
    if (c.dataset.param) {
      record = c.value.trim();
      continue;
    }
    const required = c.dataset.required === "true";
    switch (c.dataset.type) {
      case "enum":
        if (c.value !== "") input[name] = JSON.parse(c.value);
        break;
      case "boolean":
        input[name] = c.checked;
        break;
      case "number":
      case "integer":
        if (c.value !== "") input[name] = Number(c.value);
        break;
      case "string":
        if (c.value !== "" || required) input[name] = c.value;
        break;
      default:
        if (c.value.trim() === "") break;
        try {
          input[name] = JSON.parse(c.value);
        } catch {
          throw new PanelError({ code: "INVALID_INPUT", message: `${name} must be a JSON value.` });
        }
    }
  }
  return { input, record };
}

async function invoke() {
  const cap = findCapability(state.description, state.selected);
  if (!cap || state.stale) return;
  let call;
  try {
    call = collectInput();
    if (recordParam(cap)) {
      if (!call.record) throw new PanelError({ code: "RECORD_REQUIRED", message: "Choose the record this applies to." });
      if (isReferenceable(state.description, call.record) === false) {
        throw new PanelError({ code: "RECORD_NOT_REFERENCEABLE", message: `${call.record} is not among the records the page offers.` });
      }
    }
  } catch (err) {
    showClientError(err);
    return;
  }
  const gen = state.generation;
  showWaiting(cap.id);
  $("ext-invoke").disabled = true;
  try {
    const { outcome } = await ask({
      type: "pling.invoke",
      app: state.app,
      private: state.private,
      capability: cap.id,
      input: call.input,
      record: recordParam(cap) ? call.record : undefined,
    });
    if (gen !== state.generation) return;
    showOutcome(outcome);
    if (outcome.after) applyAfter(outcome.after);
  } catch (err) {
    showClientError(err);
  } finally {
    $("ext-invoke").disabled = state.stale;
  }
}

// ---------------------------------------------------------------------------
// Outcomes: each kind looks different, and only a known status reads as done

const PROTOCOL_HINTS = {
  SESSION_REVOKED: "The person revoked this agent's session in the page. Nothing ran.",
  SESSION_EXPIRED: "The agent's session has expired. Nothing ran; the person can grant a new one.",
  SESSION_REQUIRED: "The page has granted no session to an agent. Nothing ran.",
  SESSION_INVALID: "The page could not establish the agent's session. Nothing ran.",
  CAPABILITY_NOT_EXPOSED: "This capability is not offered to this session (any more). Nothing ran.",
  INVALID_REQUEST: "The page refused the input. Nothing ran.",
  RATE_LIMITED: "Too many calls: the page asks to wait.",
  REPLAY_DETECTED: "The page already received a call with this request id. It did not run again.",
  INTERNAL_ERROR: "The page failed to handle the call; whether it ran is not known.",
  MALFORMED_RESPONSE: "The reply does not follow the protocol; it is not taken as a result.",
};

const CLIENT_HINTS = {
  NAVIGATED: "The page navigated while the call was waiting.",
  PAGE_GONE: "The page went away while the call was waiting.",
  CLOSED: "The channel to the page's surface ended. The next call connects again.",
  TIMEOUT: "No reply in time: the page's surface may have stopped listening. The next call connects again.",
  REFUSED: "The page refused a private channel without a credential; this extension has none to give. Use the page window instead.",
  NO_SURFACE: "No agent surface answered on this page.",
};

function showWaiting(id) {
  const box = $("ext-outcome");
  box.dataset.outcome = "waiting";
  delete box.dataset.code;
  box.replaceChildren(el("strong", {}, "Waiting"), `Invoking ${id}…`);
  $("ext-after").hidden = true;
  $("ext-response").textContent = "";
}

function showOutcome(outcome) {
  const box = $("ext-outcome");
  const lines = [];
  let kind = outcome.kind;
  let title;
  if (outcome.kind === "protocol-error") {
    const e = outcome.error;
    title = `Protocol failure · ${e.code}`;
    lines.push(PROTOCOL_HINTS[e.code] || "The page did not run the call.");
    if (e.message) lines.push(e.message);
    if (outcome.retryAfterMs) lines.push(`Try again in ${Math.ceil(outcome.retryAfterMs / 1000)} s.`);
    for (const v of (e.violations || []).slice(0, 5)) lines.push(`${v.instancePath || "/"}: ${v.message || v.keyword}`);
    if (outcome.effectUnknown) lines.push("An earlier attempt reached the page; whether it ran is unknown.");
  } else if (outcome.kind === "business-error") {
    title = `Business failure · ${outcome.error.code}`;
    if (outcome.error.message) lines.push(outcome.error.message);
    if (outcome.approval === "unknown") lines.push("The approval status is not one this extension knows, so it is not treated as approved.");
  } else if (outcome.approval === "pending") {
    kind = "pending-approval";
    title = "Approval pending";
    lines.push(resultTitle(outcome.result) || "The page asked a person to decide.");
    lines.push("A person must confirm or reject it in the page; this extension cannot approve.");
  } else {
    title = outcome.approval === "granted" ? "Approved" : "Success";
    lines.push(resultTitle(outcome.result) || "The capability ran.");
  }
  box.dataset.outcome = kind;
  box.dataset.code = outcome.error ? outcome.error.code : "";
  box.replaceChildren(el("strong", { "data-testid": "ext-outcome-title" }, title), ...lines.map((l) => el("div", {}, l)));
  $("ext-response").textContent = pretty(outcome.envelope);
  showAfter(outcome.after);
}

function resultTitle(result) {
  return result && typeof result === "object" && typeof result.title === "string" ? result.title : "";
}

function showClientError(err) {
  const box = $("ext-outcome");
  box.dataset.outcome = "client-error";
  box.dataset.code = err.code || "";
  const lines = [CLIENT_HINTS[err.code], err.message];
  if (err.effectUnknown) lines.push("Whether the call ran is unknown: describe the page again before repeating it.");
  box.replaceChildren(el("strong", { "data-testid": "ext-outcome-title" }, `Not completed · ${err.code}`), ...lines.filter(Boolean).map((l) => el("div", {}, l)));
  $("ext-after").hidden = true;
  $("ext-response").textContent = "";
}

function showAfter(after) {
  const box = $("ext-after");
  if (!after || typeof after !== "object") {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const items = [];
  for (const r of after.records || []) {
    if (r.removed) items.push(el("li", { "data-record": r.id }, `${r.id} is no longer on the page`));
    for (const [k, v] of Object.entries(r.fields || {})) items.push(el("li", { "data-record": r.id, "data-field": k }, `${r.id} ${k} → ${JSON.stringify(v)}`));
  }
  for (const [k, v] of Object.entries(after.state || {})) items.push(el("li", { "data-state": k }, `state.${k} → ${JSON.stringify(v)}`));
  if (after.recordsOmitted || after.stateOmitted) items.push(el("li", { class: "hint" }, "more changes were left out"));
  box.replaceChildren(el("strong", {}, "Changes the page reported"), el("ul", {}, ...items));
  box.hidden = false;
}

// applyAfter folds the reported changes into what the panel shows, so the
// records and state stay current without describing again.
function applyAfter(after) {
  const c = state.description && state.description.context;
  if (!c) return;
  for (const r of after.records || []) {
    for (const list of [c.records, state.records.list]) {
      const i = list.findIndex((x) => x.id === r.id);
      if (i < 0) continue;
      if (r.removed) list.splice(i, 1);
      else list[i] = { ...list[i], fields: { ...(list[i].fields || {}), ...(r.fields || {}) } };
    }
  }
  if (after.state) c.state = { ...c.state, ...after.state };
  renderRecords();
  renderContext();
}

// ---------------------------------------------------------------------------
// Records, page by page

function renderRecords() {
  const r = state.records;
  const body = $("ext-records");
  body.replaceChildren(
    ...r.list.map((rec) => {
      const use = el("button", { type: "button", "data-testid": `ext-use-${rec.id}` }, "Use");
      use.addEventListener("click", () => {
        const picker = $("ext-record");
        if (picker) picker.value = rec.id;
      });
      const fields = Object.entries(rec.fields || {})
        .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
        .join(" · ");
      return el("tr", { "data-testid": `ext-record-row-${rec.id}` }, el("td", {}, el("code", {}, rec.id), rec.offscreen ? el("span", { class: "badge" }, "off screen") : null), el("td", {}, fields), el("td", {}, use));
    }),
  );
  $("ext-records-range").textContent = r.list.length ? `Records ${r.offset + 1}–${r.offset + r.list.length} of ${r.total}` : `No records (${r.total} in all)`;
  $("ext-records-prev").disabled = r.offset === 0;
  $("ext-records-next").disabled = r.nextOffset === null;
}

async function pageRecords(offset) {
  const gen = state.generation;
  try {
    const p = await ask({ type: "pling.page", app: state.app, private: state.private, offset: Math.max(0, offset), limit: RECORDS_PER_PAGE });
    if (gen !== state.generation) return;
    state.records = { offset: p.offset, list: p.records, total: p.recordsTotal, nextOffset: p.nextOffset };
    renderRecords();
  } catch (err) {
    if (err.code === "PROTOCOL_FAILURE") setStatus("error", `The page refused to list records: ${err.message}`, err.code);
    else showClientError(err);
  }
}

// ---------------------------------------------------------------------------

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function hasOwn(o, k) {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function markNavigated() {
  state.generation += 1;
  state.stale = true;
  setStatus("navigated", "The page is loading; what is shown is from the previous page.");
  $("ext-invoke").disabled = true;
}

async function activeTab() {
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab ? tab.id : null;
}

async function main() {
  $("ext-describe").addEventListener("click", () => refresh());
  $("ext-invoke").addEventListener("click", () => invoke());
  $("ext-form").addEventListener("submit", (e) => {
    e.preventDefault();
    invoke();
  });
  $("ext-app").addEventListener("change", (e) => {
    state.app = e.target.value || null;
    state.selected = null;
    state.generation += 1;
    describe();
  });
  $("ext-private").addEventListener("change", (e) => {
    state.private = e.target.checked;
    refresh();
  });
  $("ext-records-prev").addEventListener("click", () => pageRecords(state.records.offset - RECORDS_PER_PAGE));
  $("ext-records-next").addEventListener("click", () => state.records.nextOffset !== null && pageRecords(state.records.nextOffset));

  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (tabId !== state.tabId) return;
    if (info.status === "loading") markNavigated();
    else if (info.status === "complete") refresh();
  });
  if (pinnedTab === null) {
    // As the side panel: follow the tab the person is looking at.
    chrome.tabs.onActivated.addListener(({ tabId }) => {
      state.tabId = tabId;
      state.app = null;
      state.selected = null;
      clearDescription();
      refresh();
    });
  }
  // The content script reports a surface that closed its channel.
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || !sender.tab || sender.tab.id !== state.tabId || !msg || msg.type !== "pling.ended") return;
    if (msg.error && msg.error.code === "CLOSED") setStatus("closed", "The private channel to the page's surface ended; the next call opens a new one.", "CLOSED");
  });

  state.tabId = pinnedTab ?? (await activeTab());
  if (state.tabId === null || Number.isNaN(state.tabId)) {
    setStatus("error", "No tab to look at.", "NO_TAB");
    return;
  }
  await refresh();
}

main();
