// The call: a form generated from the chosen capability's input schema
// (refused for a schema over the panel's bounds), read back as the schema
// types it, and the invoke that sends it to the page shown.

import { findCapability, recordParam, isReferenceable } from "./pling-client.js";
import { BOUNDS, TEXT } from "./panel-bounds.js";
import { ask, PanelError } from "./panel-connection.js";
import { applyAfter } from "./panel-context.js";
import { $, el } from "./panel-dom.js";
import { showWaiting, showOutcome, showClientError } from "./panel-outcome.js";
import { state } from "./panel-state.js";
import { showTransport } from "./panel-status.js";
import { pageText, safeJSON } from "./panel-words.js";

// schemaProblem names the bound an input schema passes, or "": such a
// capability is listed but cannot be called from the panel.
export function schemaProblem(schema) {
  if (schema === undefined || schema === null) return "";
  const text = safeJSON(schema, BOUNDS.schemaBytes + 1);
  if (text.length > BOUNDS.schemaBytes) return `its input schema is larger than ${BOUNDS.schemaBytes / 1024} KiB`;
  let deepest = 0;
  const stack = [[schema, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop();
    deepest = Math.max(deepest, depth);
    if (deepest > BOUNDS.schemaDepth) return `its input schema is nested deeper than ${BOUNDS.schemaDepth}`;
    if (v && typeof v === "object") for (const k of Object.keys(v)) stack.push([v[k], depth + 1]);
  }
  const props = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (props.length > BOUNDS.properties) return `its input has ${props.length} members, more than ${BOUNDS.properties}`;
  for (const name of props) {
    const p = schema.properties[name];
    if (isObject(p) && Array.isArray(p.enum) && p.enum.length > BOUNDS.enumValues) {
      return `its input member ${JSON.stringify(Array.from(name).slice(0, 40).join(""))} offers ${p.enum.length} values, more than ${BOUNDS.enumValues}`;
    }
  }
  return "";
}

export function renderCall() {
  const section = $("ext-call");
  const cap = state.selected && state.description ? findCapability(state.description, state.selected) : undefined;
  if (!cap) {
    section.hidden = true;
    $("ext-form").replaceChildren();
    return;
  }
  section.hidden = false;
  $("ext-selected").replaceChildren(pageText(cap.id, TEXT.id));
  const meta = [];
  if (cap.description) meta.push(el("div", {}, pageText(cap.description, TEXT.long)));
  const approval = cap.approval ?? "none";
  if (approval === "always" || approval === "ask") meta.push(el("div", {}, "Needs approval: a person decides in the page; this panel cannot approve."));
  if (cap.handoff) meta.push(el("div", {}, "Handoff, in the page's words: ", pageText(cap.handoff, TEXT.short)));
  if (cap.record) meta.push(el("div", {}, `Applies to one record of ${Number.isInteger(cap.record.total) ? cap.record.total : "?"}.`));
  $("ext-selected-meta").replaceChildren(...meta);

  const form = $("ext-form");
  const draft = readDraft(form);
  form.replaceChildren();
  const blocked = schemaProblem(cap.inputSchema);
  if (blocked) {
    form.append(el("p", { class: "hint", "data-testid": "ext-form-refused" }, `This capability cannot be called from the panel: ${blocked}.`));
    $("ext-invoke").disabled = true;
    return;
  }
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
  const ids = (c.recordIds ?? []).filter((x) => typeof x === "string");
  const total = Number.isInteger(c.recordIdsTotal) ? c.recordIdsTotal : ids.length;
  const complete = ids.length >= total && ids.length <= BOUNDS.recordIds;
  const offered = ids.slice(0, BOUNDS.recordIds);
  let control;
  if (complete) {
    control = el("select", { "data-name": param, "data-testid": "ext-record", "data-param": param });
    control.append(...offered.map((id) => el("option", { value: id }, pageText(id, TEXT.id, "span").textContent)));
    if (offered.includes(previous)) control.value = previous;
  } else {
    // The id list was cut short: any id may be typed, the listed ones are suggested.
    const listId = "ext-record-ids";
    control = el("input", { "data-name": param, type: "text", list: listId, "data-testid": "ext-record", "data-param": param, value: previous ?? "" });
    document.getElementById(listId)?.remove();
    document.body.append(el("datalist", { id: listId }, ...offered.map((id) => el("option", { value: id }))));
  }
  return el("label", { class: "field" }, el("span", { class: "field-label" }, pageText(param, 40, "span"), " *", el("span", { class: "field-hint" }, ` · ${offered.length} of ${total} record ids`)), control);
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
  // The page names the members: a control with a name (or an id) would
  // become a property of the form, shadowing the form's own methods
  // (form.append, form.querySelectorAll), so the name is kept as data.
  const common = { "data-name": name, "data-testid": `ext-field-${name}`, "data-type": type, "data-required": required ? "true" : null };
  const label = (...extra) =>
    el(
      "span",
      { class: "field-label" },
      pageText(name, 40, "span"),
      required ? " *" : "",
      el("span", { class: "field-hint" }, ` · ${hints.join(", ")}`),
      prop.description ? el("span", { class: "field-hint" }, " · ", pageText(prop.description, TEXT.short)) : null,
      ...extra,
    );
  let control;
  switch (type) {
    case "enum":
      control = el("select", common);
      if (!required) control.append(el("option", { value: "" }, "(leave out)"));
      control.append(...prop.enum.map((v) => el("option", { value: safeJSON(v, Infinity) }, pageText(typeof v === "string" ? v : safeJSON(v, 200), 80, "span").textContent)));
      if (previous !== undefined) control.value = previous;
      break;
    case "boolean":
      control = el("input", { ...common, type: "checkbox" });
      control.checked = previous === true;
      return el("label", { class: "field check" }, control, label());
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
  return el("label", { class: "field" }, label(), control);
}

// Drafts and inputs are keyed by the page's member names, so they have no
// prototype: a member named __proto__ is a member like any other.
function readDraft(form) {
  const out = Object.create(null);
  for (const c of form.querySelectorAll("[data-name]")) out[c.dataset.name] = c.type === "checkbox" ? c.checked : c.value;
  return out;
}

// collectInput reads the form as the schema types it. Empty optional fields
// are left out; an empty required number is left out too, so the surface's
// schema check (not this page) says what is missing.
function collectInput() {
  const input = Object.create(null);
  let record;
  for (const c of $("ext-form").querySelectorAll("[data-name]")) {
    const name = c.dataset.name;
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

export async function invoke() {
  const cap = state.description && findCapability(state.description, state.selected);
  if (!cap || state.stale || state.origin === null) return;
  let call;
  try {
    call = collectInput();
    if (recordParam(cap)) {
      if (!call.record) throw new PanelError({ code: "RECORD_REQUIRED", message: "Choose the record this applies to." });
      if (isReferenceable(state.description, call.record) === false) {
        throw new PanelError({ code: "RECORD_NOT_REFERENCEABLE", message: "That record is not among the records the page offers." });
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
    const answer = await ask({
      type: "pling.invoke",
      app: state.app,
      origin: state.origin,
      capability: cap.id,
      input: call.input,
      record: recordParam(cap) ? call.record : undefined,
    });
    if (gen !== state.generation) return;
    showTransport(answer.transport, answer.privateRefused);
    showOutcome(answer.outcome);
    if (answer.outcome.after) applyAfter(answer.outcome.after);
  } catch (err) {
    showClientError(err);
  } finally {
    $("ext-invoke").disabled = state.stale || !state.description;
  }
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function hasOwn(o, k) {
  return Object.prototype.hasOwnProperty.call(o, k);
}
