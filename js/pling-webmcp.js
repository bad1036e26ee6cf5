// pling-webmcp.js: offers a surface's effective capabilities as WebMCP tools.
//
//   const bridge = await surface.webmcp();          // or bridgeWebMCP(surface)
//   bridge.refresh();                               // after the page changed its session
//
// WebMCP is the browser's own tool registry for agents
// (document.modelContext.registerTool). Each capability the surface's session
// may use becomes one tool; a folded template becomes one tool with the record
// parameter added. Every call goes through surface.handle() as an invoke with
// a fresh request id, so session, scope, rate limit, replay guard, validation
// and audit apply exactly as they do for any other caller. The tools follow
// the surface: the bridge reads describe() on a timer and on refresh(), and
// unregisters what the session can no longer use.
//
// Only the page's own document is touched; nothing here reaches the kernel
// except through the surface's public methods.
//
// This module is loaded on first use, by when a later script may have
// replaced any global. Where an agent's call crosses (the tool's execute,
// its answer, the registration that hands the browser execute, the request
// id), it uses what pling-surface.js captured when it was evaluated
// (webmcpKit), never a global looked up now.

import { webmcpKit as kit } from "./webmcp-kit.js";
import { bare, bareObjects, randomUUID } from "./webmcp-bare.js";


const PROTOCOL = "pling.surface/0.1";
const SESSION_CODES = ["SESSION_REQUIRED", "SESSION_INVALID", "SESSION_EXPIRED", "SESSION_REVOKED"];

export const WEBMCP_DEFAULT_POLL_MS = 2000;
export const WEBMCP_DEFAULT_RECORD_ENUM_LIMIT = 20;
/** The kernel's largest record window; the enum is read from one window. */
export const WEBMCP_MAX_RECORD_ENUM_LIMIT = 100;
/** WebMCP tool names: 1 to 128 of these characters (Chromium refuses others). */
export const WEBMCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const NAME_CHAR = /[A-Za-z0-9_.-]/;
const MAX_NAME = 128;
const CONTEXT_TOOL = "page_context";

const OPTION_NAMES = Object.freeze([
  "pollMs", "prefix", "recordEnumLimit", "contextTool", "untrustedContent", "modelContext", "onChange",
]);

// ---------------------------------------------------------------------------
// Pure mapping from a description to tool definitions.

/**
 * A WebMCP-safe name for a capability id: characters WebMCP allows are kept,
 * "@" (the template separator) becomes "_", anything else becomes "-" and its
 * code point in hex. Names are made unique by toolDefinitions, which also
 * keeps the map back to the id: a name is never parsed back into an id.
 */
export function toolBaseName(id, prefix = "") {
  let s = "";
  for (const ch of String(id)) {
    if (NAME_CHAR.test(ch)) s += ch;
    else if (ch === "@") s += "_";
    else s += "-" + ch.codePointAt(0).toString(16);
  }
  return (prefix + (s || "tool")).slice(0, MAX_NAME);
}

function uniqueName(base, free) {
  if (free(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = "-" + n;
    const name = base.slice(0, MAX_NAME - suffix.length) + suffix;
    if (free(name)) return name;
  }
}

function words(s) {
  return String(s)
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .toLowerCase();
}

function capitalize(s) {
  const cps = [...s];
  return cps.length ? cps[0].toUpperCase() + cps.slice(1).join("") : s;
}

/**
 * The title a person sees for a capability's tool (an agent's tool list, a
 * browser's tool panel), made from its id, since a capability has no title
 * of its own: "orders.set_filter" is "Orders: set filter", and a template
 * "update_note@order" is "Order: update note", its record kind first.
 */
export function toolTitle(capability) {
  const id = String((capability && capability.id) || "");
  const at = id.lastIndexOf("@");
  const segs = (at >= 0 ? [id.slice(at + 1), ...id.slice(0, at).split(".")] : id.split("."))
    .map(words)
    .filter((w) => w !== "");
  const title = segs.length ? capitalize(segs.join(": ")) : "Tool";
  return [...title].slice(0, MAX_NAME).join("");
}

/**
 * WebMCP annotations for a capability. Only the hints WebMCP defines are set
 * (readOnlyHint, consequentialHint, untrustedContentHint): a read is
 * read-only; a write or destructive action that needs a person's approval is
 * consequential, and so is every destructive one. Anything not exactly
 * "read" is treated as a change, and an unknown approval as one that is
 * needed, so a missing or new value never makes a tool look harmless.
 */
export function toolAnnotations(capability, untrustedContent = false) {
  const effect = capability.effect;
  const approval = capability.approval;
  const readOnly = effect === "read";
  const needsApproval = approval !== "none";
  const a = { readOnlyHint: readOnly };
  if (!readOnly && (needsApproval || effect !== "write")) a.consequentialHint = true;
  if (untrustedContent) a.untrustedContentHint = true;
  return a;
}

/** The record kind of a template id name@kind, or "" when it has none. */
export function templateKind(id) {
  const at = String(id).lastIndexOf("@");
  return at >= 0 ? String(id).slice(at + 1) : "";
}

/**
 * The ids a template can name, when the description proves the list is
 * complete and short: every record of the page is in the window read, and
 * at most limit of them have the template's kind. Otherwise null, and the
 * record parameter says where ids can be found instead. Records whose own
 * action map excludes the template are not visible in a description; the
 * surface refuses them at invoke.
 */
export function recordEnum(capability, context, limit) {
  if (!(limit > 0) || !context || !Array.isArray(context.records)) return null;
  const records = context.records;
  if (!(context.recordsTotal <= records.length)) return null;
  const kind = templateKind(capability.id);
  const ids = [];
  for (const r of records) {
    if (!r || typeof r.id !== "string" || r.id === "") continue;
    if (kind !== "" && r.kind !== kind) continue;
    // An id the model could not read back exactly stays in the context,
    // where the agent reads it as data, and the parameter lists none.
    if (UNSHOWN_IN_ENUM.test(r.id) || [...r.id].length > MAX_ENUM_ID) return null;
    if (!ids.includes(r.id)) ids.push(r.id);
  }
  return ids.length > 0 && ids.length <= limit ? ids : null;
}

// Characters that do not show as themselves in a tool list: controls,
// format characters (bidi overrides, zero-width, tags), separators and
// spaces other than " ", private use, unassigned code points, and the
// invisible fillers and variation selectors. testdata/rules holds the rule
// as vectors, which pling-mcp runs too.
const UNSHOWN_IN_ENUM = /(?! )[\p{Z}\p{C}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/u;
// The longest record id an enum lists, in characters.
const MAX_ENUM_ID = 500;

function isObject(v) {
  return v !== null && typeof v === "object" && !kit.isArray(v);
}

/**
 * The tool's input schema: the capability's own, and for a template its
 * record parameter, required, named as the template says. The business
 * schema is never loosened; the surface validates the business input against
 * it after taking the record parameter out.
 */
export function toolInputSchema(capability, recordParam) {
  // A copy whose objects have no prototype: nothing a later script put on
  // Object.prototype (a toJSON, a member the schema lacks) enters it.
  // WebMCP wants an object schema at the top: one without a type gets
  // "object", any other is kept whole under allOf.
  const given = bareObjects(capability.inputSchema);
  let schema;
  if (given === undefined || given === null) schema = { type: "object" };
  else if (isObject(given) && (given.type === undefined || given.type === null || given.type === "object")) {
    schema = given;
    schema.type = "object";
  }
  else schema = { type: "object", allOf: [given] };
  if (recordParam) {
    const { name, description, ids } = recordParam;
    const props = isObject(schema.properties) ? schema.properties : {};
    const prop = { type: "string", minLength: 1, description };
    if (ids) prop.enum = ids;
    schema.properties = { [name]: prop, ...withoutKey(props, name) };
    const required = Array.isArray(schema.required) ? schema.required.filter((r) => r !== name) : [];
    schema.required = [name, ...required];
  }
  return schema;
}

// Object.fromEntries defines members, so a property named "__proto__" (an
// own member of a schema read from JSON) stays one instead of setting the
// prototype and vanishing from the schema with its constraints.
function withoutKey(obj, key) {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key));
}

function sentence(s) {
  const t = String(s).trim();
  return t === "" || /[.!?]$/.test(t) ? t : t + ".";
}

function toolDescription(capability) {
  const parts = [sentence(capability.description || capability.id)];
  if (capability.record) {
    const kind = templateKind(capability.id) || "record";
    parts.push(`Acts on one ${kind}, named by "${capability.record.param || "record"}".`);
  }
  if (capability.effect === "destructive") parts.push("Destructive.");
  if (capability.approval === "always") {
    parts.push('A person must approve it in the page: the call returns at once with outcome "pending_approval", and nothing changes unless the person approves.');
  } else if (capability.approval === "ask") {
    parts.push('The page may ask a person to approve it: the outcome is then "pending_approval", and nothing changes unless the person approves.');
  }
  if (capability.handoff) parts.push(`Hands over to a person: ${sentence(capability.handoff)}`);
  return parts.join(" ");
}

function recordParamDescription(capability, ids, contextName) {
  const kind = templateKind(capability.id) || "record";
  if (ids) return `Id of the ${kind} to act on.`;
  const rec = capability.record || {};
  let s = `Id of the ${kind} to act on`;
  if (typeof rec.total === "number") {
    s += `; ${rec.total} can be named now`;
    if (rec.offscreen > 0) s += ` (${rec.offscreen} of them are not in view)`;
  }
  s += ".";
  s += contextName
    ? ` The ${contextName} tool lists record ids (context.recordIds) and reads records by id or by window.`
    : " Record ids are shown in the page.";
  return s;
}

function contextToolDefinition(name, untrustedContent) {
  return {
    name,
    capability: null,
    title: "Page: read what it shows",
    description:
      "Read what the page shows now: its route, record ids and a window of records (by offset and limit, or by id), " +
      "its state, the notices it shows, and actions that are unavailable and why. Changes nothing.",
    inputSchema: {
      type: "object",
      properties: {
        offset: { type: "integer", minimum: 0, description: "First record of the window" },
        limit: { type: "integer", minimum: 0, description: "Records in the window; the page caps it" },
        record: {
          description: "Read these records instead of a window: one id, or 1 to 20 ids",
          anyOf: [
            { type: "string", minLength: 1 },
            { type: "array", items: { type: "string", minLength: 1 }, minItems: 1, maxItems: 20 },
          ],
        },
      },
      additionalProperties: false,
    },
    annotations: untrustedContent ? { readOnlyHint: true, untrustedContentHint: true } : { readOnlyHint: true },
  };
}

/**
 * The tools for one description: one per capability, in the description's
 * order, then the read-only context tool when asked for. Each definition is
 * { name, capability, title, description, inputSchema, annotations };
 * capability is the surface id it invokes (null for the context tool).
 *
 * An agent calls a tool by a name it listed earlier, so a name must not
 * come to call another capability when ids that share a base name come and
 * go. options.names (a Map from name to capability, null for the context
 * tool) holds the names handed out before: each capability gets its earlier
 * name back, and no name goes to a capability other than its first. The
 * context tool is named first, so page_context is always the read-only one.
 */
export function toolDefinitions(description, options = {}) {
  const prefix = options.prefix || "";
  const limit = options.recordEnumLimit === undefined ? WEBMCP_DEFAULT_RECORD_ENUM_LIMIT : options.recordEnumLimit;
  const untrusted = options.untrustedContent || false;
  const caps = Array.isArray(description.capabilities) ? description.capabilities : [];
  const earlier = options.names instanceof Map ? options.names : new Map();
  const earlierName = new Map(); // capability -> its first name
  for (const [n, c] of earlier) if (!earlierName.has(c)) earlierName.set(c, n);
  const taken = new Set();
  const nameFor = (capability, base) => {
    const prev = earlierName.get(capability);
    const name = prev !== undefined && !taken.has(prev)
      ? prev
      : uniqueName(base, (n) => !taken.has(n) && (!earlier.has(n) || earlier.get(n) === capability));
    taken.add(name);
    return name;
  };
  let contextName = null;
  if (options.contextTool !== false) contextName = nameFor(null, toolBaseName(CONTEXT_TOOL, prefix));
  const names = caps.map((c) => nameFor(c.id, toolBaseName(c.id, prefix)));
  const defs = caps.map((c, i) => {
    const isUntrusted = typeof untrusted === "function" ? callPredicate(untrusted, c) : untrusted === true;
    let recordParam = null;
    if (c.record) {
      const ids = recordEnum(c, description.context, limit);
      recordParam = {
        name: c.record.param || "record",
        ids,
        description: recordParamDescription(c, ids, contextName),
      };
    }
    return {
      name: names[i],
      capability: c.id,
      title: toolTitle(c),
      description: toolDescription(c),
      inputSchema: toolInputSchema(c, recordParam),
      annotations: toolAnnotations(c, isUntrusted),
    };
  });
  if (contextName) {
    const isUntrusted = typeof untrusted === "function" ? callPredicate(untrusted, null) : untrusted === true;
    defs.push(contextToolDefinition(contextName, isUntrusted));
  }
  return defs;
}

function callPredicate(fn, capability) {
  try {
    return fn(capability) === true;
  } catch {
    return true; // a predicate that fails marks the output untrusted, the cautious side
  }
}

// ---------------------------------------------------------------------------
// Mapping an envelope to what a tool call answers.

/**
 * What a tool call answers for a surface response. Every outcome is a
 * value, never a thrown error: WebMCP hands a thrown error's reason to no
 * one (the caller gets a bare UnknownError), and the agent needs the code.
 * outcome uses the audit's words, and approval the kernel's statuses
 * (result.approval.status, the only member of an approval it keeps):
 * - "ok", done: { outcome, approval?: "granted", requestId, result, after? };
 * - "pending_approval", not done yet: a person must decide in the page:
 *   { outcome, approval: "pending", requestId, message, result, after? };
 * - "business_error", the page's executor answered { error: { code,
 *   message } }, or a person denied the approval (APPROVAL_DENIED), or the
 *   status is not one the kernel knows (APPROVAL_STATUS_UNKNOWN): { outcome,
 *   isError: true, approval?, requestId, error: { code, message }, after? };
 * - "protocol_error", the surface refused the request (session, scope, rate
 *   limit, replay, validation): { outcome, isError: true, requestId, error:
 *   { code, message, retryAfterMs?, violations? } }. Nothing ran.
 */
export function toolResult(response) {
  if (!isObject(response) || response.ok !== true) {
    const given = isObject(response) && isObject(response.error) ? response.error : {};
    const error = {
      code: typeof given.code === "string" ? given.code : "INTERNAL_ERROR",
      message: typeof given.message === "string" ? given.message : "internal error",
    };
    if (given.retryAfterMs !== undefined) error.retryAfterMs = given.retryAfterMs;
    if (given.violations !== undefined) error.violations = given.violations;
    return { outcome: "protocol_error", isError: true, requestId: isObject(response) ? response.id : undefined, error };
  }
  const result = response.result === undefined ? null : response.result;
  const approval = approvalOf(result);
  let out;
  if (isObject(result) && isObject(result.error)) {
    out = { outcome: "business_error", isError: true, approval, requestId: response.id, error: { code: result.error.code, message: result.error.message } };
  } else if (approval === undefined || approval === "granted") {
    out = { outcome: "ok", approval, requestId: response.id, result };
  } else if (approval === "pending") {
    out = { outcome: "pending_approval", approval, requestId: response.id, message: PENDING_MESSAGE, result };
  } else {
    out = { outcome: "business_error", isError: true, approval, requestId: response.id, error: APPROVAL_ERRORS[approval] };
  }
  if (out.approval === undefined) delete out.approval;
  if (response.after !== undefined) out.after = response.after;
  return out;
}

const PENDING_MESSAGE = "Not done yet: a person has to approve this in the page, and nothing has changed until they do. Calling again does not speed it up.";
const APPROVAL_ERRORS = {
  denied: { code: "APPROVAL_DENIED", message: "a person declined it in the page; nothing changed" },
  unknown: { code: "APPROVAL_STATUS_UNKNOWN", message: "the page reported an approval status that is not known; treat it as not done" },
};

// approvalOf reads result.approval.status as the kernel reports it:
// undefined without an approval member, a known status, or "unknown" for
// anything else, so no shape of it can read as a grant.
function approvalOf(result) {
  if (!isObject(result) || !kit.hasOwn(result, "approval")) return undefined;
  const status = isObject(result.approval) ? result.approval.status : undefined;
  return status === "pending" || status === "granted" || status === "denied" ? status : "unknown";
}

/** What the context tool returns: the description's context, nothing else. */
export function contextResult(response) {
  if (!isObject(response) || response.ok !== true) return toolResult(response);
  const d = isObject(response.result) ? response.result : {};
  const out = { outcome: "ok", requestId: response.id, context: d.context === undefined ? null : d.context };
  if (d.app !== undefined) out.app = d.app;
  return out;
}

// ---------------------------------------------------------------------------
// The bridge.

let toldMissing = false;

// The registry the page had when pling-surface.js was evaluated, with its
// registerTool as it was then; else whatever the document has now.
function findModelContext() {
  if (kit.modelContext !== undefined && typeof kit.registerTool === "function") return kit.modelContext;
  const doc = globalThis.document;
  const mc = doc ? doc.modelContext : undefined;
  return mc && typeof mc.registerTool === "function" ? mc : null;
}

let seq = 0;
function requestId() {
  const uuid = randomUUID();
  if (uuid !== undefined) return "webmcp-" + uuid;
  seq += 1;
  return `webmcp-${Date.now().toString(36)}-${seq}-${Math.random().toString(36).slice(2)}`;
}

/** A tool's answer when it reaches no surface: no prototype, as every answer (see execute). */
function refusal(code, message, id) {
  return bare({ outcome: "protocol_error", isError: true, ...(id === undefined ? {} : { requestId: id }), error: { code, message } });
}

function checkOptions(o) {
  if (o === null || typeof o !== "object") throw new TypeError("webmcp options must be an object");
  for (const name of Object.keys(o)) {
    if (!OPTION_NAMES.includes(name)) throw new TypeError(`webmcp: unknown option ${JSON.stringify(name)}`);
  }
  if (o.pollMs !== undefined && !(typeof o.pollMs === "number" && o.pollMs >= 0 && Number.isFinite(o.pollMs))) {
    throw new TypeError("webmcp: pollMs must be a number of milliseconds, 0 for no polling");
  }
  if (o.prefix !== undefined && !(typeof o.prefix === "string" && (o.prefix === "" || /^[A-Za-z0-9_.-]{1,64}$/.test(o.prefix)))) {
    throw new TypeError("webmcp: prefix must be up to 64 of A-Z a-z 0-9 _ . -");
  }
  const lim = o.recordEnumLimit;
  if (lim !== undefined && !(Number.isSafeInteger(lim) && lim >= 0 && lim <= WEBMCP_MAX_RECORD_ENUM_LIMIT)) {
    throw new TypeError(`webmcp: recordEnumLimit must be an integer from 0 to ${WEBMCP_MAX_RECORD_ENUM_LIMIT}`);
  }
  if (o.contextTool !== undefined && typeof o.contextTool !== "boolean") throw new TypeError("webmcp: contextTool must be a boolean");
  const u = o.untrustedContent;
  if (u !== undefined && typeof u !== "boolean" && typeof u !== "function") {
    throw new TypeError("webmcp: untrustedContent must be a boolean or a function of the capability");
  }
  if (o.modelContext !== undefined && (o.modelContext === null || typeof o.modelContext.registerTool !== "function")) {
    throw new TypeError("webmcp: modelContext needs a registerTool function");
  }
  if (o.onChange !== undefined && typeof o.onChange !== "function") throw new TypeError("webmcp: onChange must be a function");
}

// Of a copy without prototypes, with the JSON.stringify captured at load: no
// toJSON a later script planted is handed the definitions or decides
// whether a tool changed.
function defKey(def) {
  return kit.stringify(bare([def.capability, def.title, def.description, def.inputSchema, def.annotations]));
}

function warn(...args) {
  try {
    console.warn(...args);
  } catch {
    // no console
  }
}

const inertBridge = Object.freeze({
  __proto__: null,
  supported: false,
  ready: Promise.resolve(),
  get tools() {
    return [];
  },
  refresh: () => Promise.resolve(),
  stop() {},
});

/**
 * Registers the surface's effective capabilities as WebMCP tools and keeps
 * them in step with it. Without document.modelContext (and no modelContext
 * option) it registers nothing, says so once per page on the console, and
 * returns an inert bridge ({ supported: false }).
 *
 * onStop is for pling-surface.js: it is told when the bridge stops, so a
 * closed surface can stop its bridges and forget stopped ones.
 */
export function bridgeWebMCP(surface, options = {}, onStop) {
  if (surface === null || typeof surface !== "object" || typeof surface.describe !== "function" || typeof surface.handle !== "function") {
    throw new TypeError("bridgeWebMCP needs a surface (describe and handle)");
  }
  checkOptions(options);
  const mc = options.modelContext !== undefined ? options.modelContext : findModelContext();
  if (!mc) {
    if (!toldMissing) {
      toldMissing = true;
      try {
        console.info("pling-webmcp: document.modelContext is not available in this browser; no WebMCP tools are registered");
      } catch {
        // no console
      }
    }
    return inertBridge;
  }
  const pollMs = options.pollMs === undefined ? WEBMCP_DEFAULT_POLL_MS : options.pollMs;
  const limit = options.recordEnumLimit === undefined ? WEBMCP_DEFAULT_RECORD_ENUM_LIMIT : options.recordEnumLimit;
  const settings = {
    prefix: options.prefix || "",
    recordEnumLimit: limit,
    contextTool: options.contextTool !== false,
    untrustedContent: options.untrustedContent === undefined ? false : options.untrustedContent,
  };
  const onChange = options.onChange;
  // Read once: a later script that wraps registerTool afterwards is handed
  // no tool, so neither an agent's input nor the tool's execute.
  const registerTool = mc === kit.modelContext && typeof kit.registerTool === "function" ? kit.registerTool : mc.registerTool;

  const registered = new Map(); // name -> { def, key, controller, live }
  const bound = new Map(); // every name handed out -> its capability, for as long as the bridge runs
  const warned = new Set();
  let stopped = false;
  let timer = null;
  let queued = null;
  let chain = Promise.resolve();
  let truncationTold = false;

  // Implementations without signal support unregister by name.
  const unregisterByName = (name) => {
    if (typeof mc.unregisterTool !== "function") return;
    try {
      const r = mc.unregisterTool(name);
      if (r && typeof r.catch === "function") r.catch(() => {});
    } catch {
      // not registered there any more
    }
  };

  // By name only once the browser accepted the tool: until then (or when it
  // refused it) the name may be another registration's, the page's own
  // tool, which must stay.
  const unregister = (name) => {
    const entry = registered.get(name);
    if (!entry) return;
    registered.delete(name);
    entry.live = false;
    try {
      entry.controller.abort();
    } catch {
      // already aborted
    }
    if (entry.accepted) unregisterByName(name);
  };

  const execute = (entry) => async (input) => {
    // A tool this bridge has taken back answers nothing, even if a caller
    // still holds it; the surface would refuse a revoked session anyway.
    if (!entry.live || stopped) {
      return refusal("CAPABILITY_NOT_EXPOSED", "this tool is no longer offered by the page");
    }
    const id = requestId();
    const def = entry.def;
    // Whatever the agent sent goes to the surface as it is (a tool without
    // parameters may be called with nothing); the surface judges it.
    let given = input === undefined || input === null ? {} : input;
    // Except for page_context: a protocol describe also takes capabilities:
    // "changed", which moves the session's remembered signature and would
    // hide a change from another agent of the same session. What is sent is
    // a copy of the three members, so an input that lists its members one
    // way and reads them another (a Proxy) sends nothing else.
    if (def.capability === null) {
      const names = isObject(given) ? kit.keys(given) : null;
      let ok = names !== null;
      for (let i = 0; ok && i < names.length; i++) ok = names[i] === "offset" || names[i] === "limit" || names[i] === "record";
      if (!ok) return refusal("INVALID_REQUEST", "page_context takes only offset, limit and record", id);
      // Spread object literals define their members: no setter a later
      // script put on Object.prototype sees or drops one.
      const member = (k) => (kit.hasOwn(given, k) ? { [k]: kit.ownValue(given, k) } : {});
      given = { ...member("offset"), ...member("limit"), ...member("record") };
    }
    const request = def.capability === null
      ? { protocol: PROTOCOL, id, method: "describe", input: given }
      : { protocol: PROTOCOL, id, method: "invoke", capability: def.capability, input: given };
    let response;
    try {
      response = await surface.handle(request);
    } catch {
      response = undefined; // handle() never rejects; a stand-in surface might
    }
    // The call may have changed what the session can do (a filter, a page,
    // a record): bring the tools up to date without holding the answer.
    if (def.capability !== null) refresh();
    // The reply is read through a copy whose objects have no prototype, so
    // a member it lacks (after, approval) is not one a later script put on
    // Object.prototype; the answer is a copy with no prototype anywhere, so
    // neither resolving this function's Promise (then) nor the browser
    // serializing it (toJSON) hands it to such a script.
    try {
      response = bareObjects(response);
      return bare(def.capability === null ? contextResult(response) : toolResult(response));
    } catch {
      return refusal("INTERNAL_ERROR", "the page's answer could not be read", id);
    }
  };

  const register = (def) => {
    const controller = new AbortController();
    const entry = { def, key: defKey(def), controller, live: true, accepted: false };
    registered.set(def.name, entry);
    // No prototype anywhere: the browser reads the tool's members (and
    // serializes its schema) without finding one a later script put on
    // Object.prototype.
    const tool = bare({
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: def.inputSchema,
      annotations: def.annotations,
      execute: execute(entry),
    });
    const accepted = () => {
      entry.accepted = true;
      // Taken back while the browser was answering: by name now, for an
      // implementation that ignores the signal.
      if (!entry.live && !registered.has(def.name)) unregisterByName(def.name);
    };
    const refused = (err) => {
      if (registered.get(def.name) === entry) unregister(def.name);
      const why = `${def.name}: ${err && err.message ? err.message : err}`;
      if (!warned.has(why)) {
        warned.add(why);
        warn("pling-webmcp: the browser refused the tool", why);
      }
    };
    try {
      const r = kit.apply(registerTool, mc, [tool, { __proto__: null, signal: controller.signal }]);
      if (r && typeof r.then === "function") {
        return Promise.resolve(r).then(accepted, (err) => {
          // An abort of our own (a newer list replaced this tool) is no refusal.
          if (!controller.signal.aborted) refused(err);
        });
      }
      accepted();
    } catch (err) {
      refused(err);
    }
    return Promise.resolve();
  };

  const apply = async (defs) => {
    const wanted = new Map(defs.map((d) => [d.name, d]));
    let changed = false;
    for (const [name, entry] of [...registered]) {
      const d = wanted.get(name);
      if (!d || defKey(d) !== entry.key) {
        unregister(name);
        changed = true;
      }
    }
    const pending = [];
    for (const d of defs) {
      if (registered.has(d.name)) continue;
      pending.push(register(d));
      changed = true;
    }
    await Promise.all(pending);
    if (changed && onChange && !stopped) {
      try {
        onChange(currentTools());
      } catch {
        // the page's callback is its own business
      }
    }
  };

  const sync = async () => {
    if (stopped) return;
    let defs = [];
    try {
      // A full description every time, compared here: the "changed" marker
      // of describe is kept per session, and another caller of the same
      // session (an extension, the page itself) may have taken it already.
      const description = await surface.describe({ limit });
      if (description.capabilitiesTotal !== undefined && !truncationTold) {
        truncationTold = true;
        warn(`pling-webmcp: the surface lists ${description.capabilities.length} of ${description.capabilitiesTotal} capabilities; only those are offered as tools`);
      }
      defs = toolDefinitions(description, { ...settings, names: bound });
      for (const d of defs) if (!bound.has(d.name)) bound.set(d.name, d.capability);
    } catch (err) {
      // No session, an expired or revoked one, a closed surface, a registry
      // that fails: nothing is offered until describe answers again.
      defs = [];
      if (!(err && SESSION_CODES.includes(err.code)) && !warned.has("describe:" + (err && err.code))) {
        warned.add("describe:" + (err && err.code));
        warn("pling-webmcp: describe failed; no tools are offered until it answers", err && err.code, err && err.message);
      }
    }
    if (stopped) return;
    await apply(defs);
  };

  function refresh() {
    if (stopped) return Promise.resolve();
    if (queued) return queued;
    const next = chain.then(() => {
      queued = null;
      return sync();
    });
    queued = next;
    chain = next.catch(() => {});
    return next;
  }

  function currentTools() {
    return Object.freeze([...registered.values()].map((e) => Object.freeze({ name: e.def.name, capability: e.def.capability })));
  }

  function stop() {
    if (stopped) return;
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    for (const name of [...registered.keys()]) unregister(name);
    if (typeof onStop === "function") {
      try {
        onStop();
      } catch {
        // nothing to undo
      }
    }
  }

  const loop = () => {
    timer = null;
    return refresh().then(() => {
      if (!stopped && pollMs > 0) timer = setTimeout(loop, pollMs);
    });
  };
  const ready = loop();

  // No prototype: resolving surface.webmcp()'s Promise with it looks up no
  // then a later script put on Object.prototype.
  return Object.freeze({
    __proto__: null,
    supported: true,
    ready,
    get tools() {
      return currentTools();
    },
    refresh,
    stop,
  });
}
