// Generated from pling-client.js and the modules it imports by classic.mjs: do not edit.
(() => {
"use strict";
// ---- bounds.js
// bounds.js: the protocol's names on the window and every default and
// bound the client applies. One place, so that a change to a timeout or a
// size limit is read once and holds for every transport.

const CHANNEL = "pling.surface";
const SURFACE_PROTOCOL = "pling.surface/0.1";

// Defaults. An invoke waits longer than the page runtime's own bound on its
// executor (30 s), so a slow but healthy call is not reported as lost.
const DEFAULT_DESCRIBE_TIMEOUT_MS = 10_000;
const DEFAULT_INVOKE_TIMEOUT_MS = 35_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
// A connect or discover message posted before the page listens is dropped
// without an answer, so it is posted again at this interval until answered.
const REPOST_INTERVAL_MS = 250;
const DEFAULT_DISCOVER_SETTLE_MS = 200;
// How many applications discover() keeps unless told otherwise (the
// extension's panel offers 20), and the longest app name it keeps: the
// surface's own bound on ids (surface.MaxIDBytes), in UTF-8 bytes. Each
// answer kept is bounded by DEFAULT_LIMITS.replyBytes besides.
const DEFAULT_DISCOVER_APPS = 20;
const MAX_APP_BYTES = 256;
const DEFAULT_PAGE_LIMIT = 20;
// How many records records() reads unless told otherwise: every window it
// asks for brings at least one record or ends the walk, so this also bounds
// how many describes a page can draw out of one loop.
const DEFAULT_RECORDS_MAX = 1000;
// How many request ids a client remembers to refuse reusing one for another intent.
const REMEMBERED_IDS = 1024;

/**
 * The most a reply may weigh before anything reads it. replyBytes is the
 * reply's JSON size as estimated by a walk that stops as soon as it passes
 * the bound (the surface itself never answers more than 1 MiB); depth is the
 * reply grammar's nesting limit.
 */
const DEFAULT_LIMITS = Object.freeze({ replyBytes: 1 << 20, depth: 128 });
// ---- errors.js
// errors.js: the codes of what the client itself reports, and its one error
// type. Kept apart from the surface's own codes: a caller must tell "the
// page said no" from "the client gave up".

/** Codes of the errors the client itself raises (never a surface's codes). */
const ClientErrorCode = Object.freeze({
  TIMEOUT: "TIMEOUT", // no reply in time, after every allowed attempt
  NAVIGATED: "NAVIGATED", // the page navigated away or was unloaded
  CLOSED: "CLOSED", // the surface closed the channel, or the client was closed
  REFUSED: "REFUSED", // the page refused the private channel
  NO_SURFACE: "NO_SURFACE", // nothing answered a connect or discover
  ABORTED: "ABORTED", // the caller's AbortSignal fired
  INVALID_ARGUMENT: "INVALID_ARGUMENT", // a call the client will not send
  RECORD_REQUIRED: "RECORD_REQUIRED", // a folded template called without a record id
  RECORD_NOT_REFERENCEABLE: "RECORD_NOT_REFERENCEABLE", // the id is not among the recordIds described
  ID_REUSED: "ID_REUSED", // a request id offered for a different intent
  PROTOCOL_FAILURE: "PROTOCOL_FAILURE", // a helper that returns data got ok:false; see .outcome
  REPLY_REFUSED: "REPLY_REFUSED", // request(): the page answered, and the answer was refused unread; see .bound
  UNSUPPORTED_ENVIRONMENT: "UNSUPPORTED_ENVIRONMENT", // no window, no crypto, an opaque origin
});

/** Codes the client puts on outcomes it had to classify conservatively. */
const OutcomeCode = Object.freeze({
  MALFORMED_RESPONSE: "MALFORMED_RESPONSE", // protocol-error: the reply does not follow the protocol
  REPLY_OUT_OF_BOUNDS: "REPLY_OUT_OF_BOUNDS", // protocol-error: the reply is larger or deeper than the client reads
  APPROVAL_DENIED: "APPROVAL_DENIED", // business-error: a person denied the approval
  APPROVAL_STATUS_UNKNOWN: "APPROVAL_STATUS_UNKNOWN", // business-error: never read as a grant
});

/**
 * The one error type the client raises. `code` is one of ClientErrorCode.
 * `effectUnknown` is true when an invoke was sent and no reply was read: it
 * may have run. `request` is the envelope that was sent, for `client.retry`.
 */
class SurfaceClientError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.name = "SurfaceClientError";
    this.code = code;
    this.effectUnknown = details.effectUnknown === true;
    this.attempts = details.attempts || 0;
    if (details.request !== undefined) this.request = details.request;
    if (details.outcome !== undefined) this.outcome = details.outcome;
    if (details.bound !== undefined) this.bound = details.bound;
  }

  // Extension messaging and logs carry plain data, not Error objects.
  toJSON() {
    const out = { name: this.name, code: this.code, message: this.message, effectUnknown: this.effectUnknown, attempts: this.attempts };
    if (this.request && typeof this.request.id === "string") out.requestId = this.request.id;
    return out;
  }
}

function clientError(code, message, details) {
  return new SurfaceClientError(code, message, details);
}
// ---- checks.js
// checks.js: small checks every part of the client shares: the shape of a
// JSON value, the caller's numbers and window, and unpredictable request ids.



const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const freeze = Object.freeze;

/** A fresh request id from the platform's CSPRNG; never Math.random. */
function newRequestId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return `pc-${c.randomUUID()}`;
  if (c && typeof c.getRandomValues === "function") {
    // randomUUID is missing outside secure contexts; getRandomValues is not.
    const bytes = c.getRandomValues(new Uint8Array(16));
    return `pc-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }
  throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "no crypto.getRandomValues: cannot make unpredictable request ids");
}

function checkWindow(win) {
  if (!win || typeof win.postMessage !== "function" || typeof win.addEventListener !== "function" || !win.location) {
    throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "needs the page's window (run in a content script or the page)");
  }
  const origin = win.location.origin;
  if (typeof origin !== "string" || origin === "null" || origin === "") {
    // A surface never answers an opaque origin, and a reply could not be addressed to it.
    throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "the page has an opaque origin; no surface can answer it");
  }
}

function positive(name, v, fallback) {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${name} must be a positive number of milliseconds`);
  }
  return v;
}

function nonNegativeInteger(name, v, fallback) {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${name} must be a non-negative integer`);
  return v;
}
// ---- reply-size.js
// reply-size.js: how much a page's reply weighs, measured before anything
// reads it. A page chooses what it sends, so the walk is bounded by the
// budget, never by the reply.



// What a string takes in the reply's JSON, in UTF-8 bytes: a control
// character is written as six, a character past U+007F as two or three.
// Counting UTF-16 units instead let a reply of control characters six
// times the budget through.
const NOT_PLAIN = /[\u0000-\u001f"\\\u007f-\uffff]/;
function jsonBytes(s) {
  if (!NOT_PLAIN.test(s)) return s.length + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c < 0xd800 || c > 0xdfff) n += 3;
    else if (c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a pair: one character of four bytes
      i++;
    } else n += 6; // a lone surrogate, written \udXXX
  }
  return n;
}

/**
 * Walks a reply once, in time bounded by limits.replyBytes rather than by
 * what the page sent, and says what is wrong with it: a size or depth past
 * the limits (bound is set), a value JSON cannot carry, or two members of
 * one object whose names differ only in case (a Go or case-insensitive
 * reader would take the other one). "" when nothing is.
 */
function inspectReply(value, limits = DEFAULT_LIMITS) {
  let budget = limits.replyBytes;
  let named = false; // an array with members other than its elements
  // A string's JSON bytes, plus extra (a member name's colon and comma). A
  // string longer than what is left is not scanned: it is over either way,
  // so the walk stays bounded by the budget, not by the string.
  const weigh = (s, extra) => (s.length + 2 + extra > budget ? budget + 1 : jsonBytes(s) + extra);
  const stack = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop();
    if (depth > limits.depth) return { bound: "depth", message: `the reply is nested deeper than ${limits.depth}` };
    if (v === null || v === true) budget -= 4;
    else if (v === false) budget -= 5;
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) return { message: "the reply holds a number JSON cannot carry" };
      budget -= String(v).length;
    } else if (typeof v === "string") budget -= weigh(v, 0);
    else if (Array.isArray(v)) {
      // Brackets and commas; and every element takes at least one more
      // byte, so a huge array is refused by its length, untouched.
      budget -= 1 + v.length;
      if (v.length > budget) budget = -1;
      if (budget < 0) break;
      // A structured clone keeps an array's named members, which JSON
      // would drop: they are weighed like the rest, and the reply is
      // malformed.
      const keys = Object.keys(v);
      if (keys.length !== v.length) {
        named = true;
        for (let i = v.length; i < keys.length && budget >= 0; i++) {
          budget -= weigh(keys[i], 2);
          stack.push([v[keys[i]], depth + 1]);
        }
        if (budget < 0) break;
      }
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], depth + 1]);
    } else if (typeof v === "object" && Object.prototype.toString.call(v) === "[object Object]") {
      budget -= 2;
      const seen = new Set();
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        budget -= weigh(k, 2);
        if (budget < 0) break;
        const folded = k.toUpperCase().toLowerCase();
        if (seen.has(folded)) return { message: `the reply has two members named ${JSON.stringify(k)} up to case` };
        seen.add(folded);
        stack.push([v[k], depth + 1]);
      }
    } else return { message: `the reply holds a ${typeof v === "object" ? "non-JSON object" : typeof v}` };
    if (budget < 0) break;
  }
  if (budget < 0) return { bound: "replyBytes", message: `the reply is larger than ${limits.replyBytes} bytes` };
  if (named) return { message: "the reply holds an array with members other than its elements" };
  return null;
}
// ---- classify.js
// classify.js: reading a page's reply by the reply grammar every client of
// the surface shares, into exactly one of three outcomes. Whatever does not
// follow the grammar is never read as a success or an approval.






/**
 * Reads a reply by the one reply grammar every client of the surface shares
 * (testdata/replies at the repository's root holds it as vectors) and sorts
 * it into exactly one of "success", "business-error" or "protocol-error".
 * reply is the response envelope or the window wrapper around it. expect
 * may name the request id and app the reply must carry. Whatever does not
 * follow the grammar is a protocol-error with code MALFORMED_RESPONSE,
 * never a success and never an approval; for an invoke its effect is
 * unknown.
 */
function classify(reply, method = "invoke", expect = {}) {
  const wrong = inspectReply(reply, expect.limits ?? DEFAULT_LIMITS);
  if (wrong) return malformed("", wrong.message, reply, method, wrong.bound);
  if (!isObject(reply)) return malformed("", "the reply is not a JSON object", reply, method);
  let envelope = reply;
  if (hasOwn(reply, "envelope")) {
    if (reply.channel !== CHANNEL) return malformed("", "the wrapper is not on the pling.surface channel", reply, method);
    if (reply.kind !== "response") return malformed("", "the wrapper is not a response", reply, method);
    if (hasOwn(reply, "app") && reply.app !== null && typeof reply.app !== "string") return malformed("", "the wrapper's app is not a string", reply, method);
    if (expect.app !== undefined && reply.app !== expect.app) return malformed("", `the reply comes from app ${JSON.stringify(reply.app ?? null)}, not ${JSON.stringify(expect.app)}`, reply, method);
    envelope = reply.envelope;
    if (!isObject(envelope)) return malformed("", "the wrapper carries no envelope object", reply, method);
  }
  const id = typeof envelope.id === "string" ? envelope.id : "";
  if (typeof envelope.protocol !== "string") return malformed(id, "the reply names no protocol", envelope, method);
  if (envelope.protocol !== SURFACE_PROTOCOL) {
    return malformed(id, `the reply speaks ${JSON.stringify(envelope.protocol)}, not ${SURFACE_PROTOCOL}`, envelope, method);
  }
  if (typeof envelope.id !== "string") return malformed(id, "the reply carries no id", envelope, method);
  if (typeof envelope.ok !== "boolean") return malformed(id, `ok is ${JSON.stringify(envelope.ok)}, neither true nor false`, envelope, method);
  const hasResult = hasOwn(envelope, "result");
  const hasError = hasOwn(envelope, "error") && envelope.error !== null;

  if (envelope.ok === false) {
    // The empty id answers a request too broken to read its id from.
    if (expect.id !== undefined && id !== expect.id && id !== "") return malformed(id, `the reply answers ${JSON.stringify(id)}, not ${JSON.stringify(expect.id)}`, envelope, method);
    if (hasResult) return malformed(id, "ok is false but the reply has a result", envelope, method);
    const e = envelope.error;
    if (!hasError || !isObject(e)) return malformed(id, "a protocol failure without an error object", envelope, method);
    if (typeof e.code !== "string" || e.code === "") return malformed(id, "a protocol failure without an error code", envelope, method);
    if (hasOwn(e, "message") && e.message !== null && typeof e.message !== "string") return malformed(id, "the error message is not a string", envelope, method);
    const retry = hasOwn(e, "retryAfterMs") && e.retryAfterMs !== null ? e.retryAfterMs : undefined;
    if (retry !== undefined && !(Number.isInteger(retry) && retry >= 0)) return malformed(id, "retryAfterMs is not a non-negative integer", envelope, method);
    const violations = hasOwn(e, "violations") && e.violations !== null ? e.violations : undefined;
    if (violations !== undefined && !Array.isArray(violations)) return malformed(id, "violations are not a list", envelope, method);
    const error = { code: e.code, message: typeof e.message === "string" ? e.message : "" };
    const out = { kind: "protocol-error", ok: false, id, error, approval: "none", envelope };
    if (retry > 0) {
      error.retryAfterMs = retry;
      out.retryAfterMs = retry;
    }
    if (violations !== undefined) error.violations = violations.filter(isObject);
    return freeze(out);
  }

  if (expect.id !== undefined && id !== expect.id) return malformed(id, `the reply answers ${JSON.stringify(id)}, not ${JSON.stringify(expect.id)}`, envelope, method);
  if (hasError) return malformed(id, "ok is true but the reply has an error", envelope, method);
  if (!hasResult) return malformed(id, "ok is true but the reply has no result", envelope, method);
  const result = envelope.result;
  const after = hasOwn(envelope, "after") && envelope.after !== null ? envelope.after : undefined;
  if (method === "describe") {
    if (after !== undefined) return malformed(id, "a describe reply with after", envelope, method);
    const problem = describeProblem(result, expect.app, expect.askedChanged === true);
    if (problem) return malformed(id, problem, envelope, method);
    return freeze({ kind: "success", ok: true, id, result, description: result, approval: "none", envelope });
  }
  if (after !== undefined) {
    const problem = afterProblem(after);
    if (problem) return malformed(id, problem, envelope, method);
  }

  const out = { ok: true, id, result, envelope };
  if (after !== undefined) out.after = after;
  let approval = "none";
  if (isObject(result) && hasOwn(result, "approval")) {
    const a = result.approval;
    const status = isObject(a) ? a.status : undefined;
    if (!APPROVAL_STATUSES.includes(status)) return malformed(id, `the approval status ${JSON.stringify(status ?? null)} is not one of ${APPROVAL_STATUSES.join(", ")}`, envelope, method);
    approval = status;
  }
  out.approval = approval;
  if (isObject(result) && hasOwn(result, "error") && result.error !== null) {
    const e = result.error;
    if (!isObject(e) || typeof e.code !== "string" || e.code === "") return malformed(id, "the result's error has no code", envelope, method);
    if (hasOwn(e, "message") && e.message !== null && typeof e.message !== "string") return malformed(id, "the result's error message is not a string", envelope, method);
    out.kind = "business-error";
    out.error = { code: e.code, message: typeof e.message === "string" ? e.message : "" };
    return freeze(out);
  }
  switch (approval) {
    case "none":
    case "pending":
    case "granted":
      out.kind = "success";
      break;
    case "denied":
      // The grammar reads this as a success whose approval was denied; a
      // caller that only looks at kind must not take it as done, so it is
      // presented as a failure.
      out.kind = "business-error";
      out.error = { code: OutcomeCode.APPROVAL_DENIED, message: "a person denied the approval" };
      break;
    default: // "unknown": the page could not tell; never a grant
      out.kind = "business-error";
      out.error = { code: OutcomeCode.APPROVAL_STATUS_UNKNOWN, message: "the page reports the approval status as unknown; it is not a grant" };
  }
  return freeze(out);
}

const APPROVAL_STATUSES = ["pending", "granted", "denied", "unknown"];

// describeProblem checks a description as far as a caller relies on it: the
// members it reads have their types, capability ids are unique and
// non-empty, and a folded template names its record parameter.
function describeProblem(d, app, askedChanged) {
  if (!isObject(d)) return "the description is not an object";
  if (hasOwn(d, "protocol") && d.protocol !== SURFACE_PROTOCOL) return `the description speaks ${JSON.stringify(d.protocol)}`;
  if (!Array.isArray(d.capabilities)) return "the description has no capabilities list";
  if (!isObject(d.context)) return "the description has no context object";
  if (app !== undefined && d.app !== app) return `the description is of app ${JSON.stringify(d.app ?? null)}, not ${JSON.stringify(app)}`;
  // A surface says "unchanged" only, and with an empty list, to a describe that asked whether anything changed.
  if (d.capabilitiesUnchanged === true && (d.capabilities.length > 0 || !askedChanged)) return "capabilitiesUnchanged answers a describe that did not ask for it";
  const seen = new Set();
  for (const c of d.capabilities) {
    if (!isObject(c) || typeof c.id !== "string" || c.id === "") return "a capability without an id";
    if (seen.has(c.id)) return `capability ${JSON.stringify(c.id)} is listed twice`;
    seen.add(c.id);
    for (const k of ["description", "effect", "approval", "handoff"]) {
      if (hasOwn(c, k) && c[k] !== null && typeof c[k] !== "string") return `capability ${JSON.stringify(c.id)}: ${k} is not a string`;
    }
    if (hasOwn(c, "record") && c.record !== null) {
      if (!isObject(c.record) || typeof c.record.param !== "string" || c.record.param === "") return `folded template ${JSON.stringify(c.id)} names no record parameter`;
    }
  }
  const x = d.context;
  for (const k of ["records", "recordIds", "feedback", "unavailable", "regions"]) {
    if (hasOwn(x, k) && x[k] !== null && !Array.isArray(x[k])) return `context.${k} is not a list`;
  }
  for (const k of ["recordsTotal", "recordIdsTotal", "feedbackTotal", "unavailableTotal"]) {
    if (hasOwn(x, k) && x[k] !== null && !(Number.isInteger(x[k]) && x[k] >= 0)) return `context.${k} is not a count`;
  }
  if (hasOwn(x, "state") && x.state !== null && !isObject(x.state)) return "context.state is not an object";
  for (const r of x.records ?? []) {
    if (!isObject(r) || typeof r.id !== "string") return "a record without an id";
    if (hasOwn(r, "fields") && r.fields !== null && !isObject(r.fields)) return `record ${JSON.stringify(r.id)}: fields is not an object`;
  }
  for (const r of x.recordIds ?? []) if (typeof r !== "string") return "a record id that is not a string";
  return "";
}

// afterProblem checks the changes an invoke reports.
function afterProblem(after) {
  if (!isObject(after)) return "after is not an object";
  if (hasOwn(after, "records") && after.records !== null) {
    if (!Array.isArray(after.records)) return "after.records is not a list";
    for (const r of after.records) {
      if (!isObject(r) || typeof r.id !== "string") return "after.records holds a record without an id";
      if (hasOwn(r, "fields") && r.fields !== null && !isObject(r.fields)) return "after.records holds fields that are not an object";
    }
  }
  if (hasOwn(after, "state") && after.state !== null && !isObject(after.state)) return "after.state is not an object";
  return "";
}

function malformed(id, message, envelope, method = "invoke", bound) {
  const out = {
    kind: "protocol-error",
    ok: false,
    id,
    error: { code: bound ? OutcomeCode.REPLY_OUT_OF_BOUNDS : OutcomeCode.MALFORMED_RESPONSE, message },
    approval: "none",
    // An oversize reply is not kept: what is carried is never larger than the bound.
    envelope: bound ? null : envelope,
  };
  if (bound) out.error.bound = bound;
  // An invoke answered by a reply that means nothing may have run.
  if (method === "invoke") out.effectUnknown = true;
  return freeze(out);
}
// ---- description.js
// description.js: what a description says about folded templates and the
// records they may name, checked before an invoke is sent.



/** The capability with this id in a description, or undefined. */
function findCapability(description, capabilityId) {
  if (!isObject(description) || !Array.isArray(description.capabilities)) return undefined;
  return description.capabilities.find((c) => isObject(c) && c.id === capabilityId);
}

/** The input member naming the record of a folded template, or undefined for a plain capability. */
function recordParam(capability) {
  if (!isObject(capability) || !isObject(capability.record)) return undefined;
  const p = capability.record.param;
  return typeof p === "string" && p !== "" ? p : "record";
}

/**
 * Whether recordId may be referenced according to a description: true when
 * it is among context.recordIds or the records shown, false when it is not
 * and the id list is complete, undefined when the list was cut short and
 * cannot tell. testdata/rules/referenceable.json holds the rule, which the
 * Go client runs too.
 */
function isReferenceable(description, recordId) {
  const c = isObject(description) ? description.context : undefined;
  if (!isObject(c) || !Array.isArray(c.recordIds)) return undefined;
  if (c.recordIds.includes(recordId)) return true;
  if (Array.isArray(c.records) && c.records.some((r) => isObject(r) && r.id === recordId)) return true;
  const total = typeof c.recordIdsTotal === "number" ? c.recordIdsTotal : c.recordIds.length;
  return c.recordIds.length >= total ? false : undefined;
}
// ---- window-transport.js
// window-transport.js: talking to the page over window.postMessage, where
// every script of the page reads and can answer: the window transport of a
// client, discover (which surfaces are here) and request (one round trip
// for callers that read the answer themselves). Messages posted before the
// page listens are lost, so discover and request post again until answered.







// windowTransport is a client's transport over the window. Like the port's,
// it delivers response envelopes to hooks.onEnvelope (with false: anyone
// could have posted them); the window itself never ends, pagehide aside.
function windowTransport(win, app, hooks) {
  const origin = win.location.origin;
  const listener = (event) => {
    // Only replies posted to this window by this window's own origin, and
    // only real ones: a page script's dispatchEvent is not a reply.
    if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
    const d = event.data;
    if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response") return;
    if (app !== undefined && d.app !== app) return;
    hooks.onEnvelope(d, false);
  };
  win.addEventListener("message", listener);
  return {
    kind: "window",
    private: false,
    send(envelope) {
      const msg = { channel: CHANNEL, kind: "request" };
      if (app !== undefined) msg.app = app;
      msg.envelope = envelope;
      win.postMessage(msg, origin);
    },
    close() {
      win.removeEventListener("message", listener);
    },
  };
}

// utf8Within reports whether s takes at most max bytes of UTF-8, reading at
// most max of its code units (each takes one byte or more).
function utf8Within(s, max) {
  if (s.length > max) return false;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
        continue;
      }
    }
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return bytes <= max;
}

const DISCOVER_OPTIONS = ["window", "timeoutMs", "settleMs", "maxApps"];

/**
 * Finds the surfaces on this page: posts one describe with no app and no
 * records on the window and collects the answers for a short while.
 * Resolves to [{ app, outcome }], one per application that answered, at
 * most maxApps of them (20 unless given; the first to answer), and ends as
 * soon as that many did. An answer naming an app of more than 256 bytes
 * is ignored.
 */
async function discover(options = {}) {
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "discover options must be an object");
  for (const k of Object.keys(options)) {
    if (!DISCOVER_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `discover: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const timeoutMs = positive("timeoutMs", options.timeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  const settleMs = positive("settleMs", options.settleMs, DEFAULT_DISCOVER_SETTLE_MS);
  const maxApps = nonNegativeInteger("maxApps", options.maxApps, DEFAULT_DISCOVER_APPS);
  if (maxApps === 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "maxApps must be at least 1");
  const origin = win.location.origin;
  const envelope = { protocol: SURFACE_PROTOCOL, id: newRequestId(), method: "describe", input: { limit: 0 } };
  return new Promise((resolve, reject) => {
    const found = new Map(); // app -> outcome
    let settleTimer;
    let repost;
    const finish = (err) => {
      clearTimeout(repost);
      clearTimeout(timer);
      clearTimeout(settleTimer);
      win.removeEventListener("message", onMessage);
      win.removeEventListener("pagehide", onHide);
      if (err) reject(err);
      else resolve([...found].map(([app, outcome]) => freeze({ app, outcome })));
    };
    const onMessage = (event) => {
      if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
      const d = event.data;
      if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response" || !isObject(d.envelope) || d.envelope.id !== envelope.id) return;
      const app = typeof d.app === "string" ? d.app : undefined;
      // A name no surface would use is not kept, nor looked at further.
      if (found.has(app) || (app !== undefined && !utf8Within(app, MAX_APP_BYTES))) return;
      // Discovery asks on the window, where any script of the page can answer.
      found.set(app, freeze({ ...classify(d, "describe", { id: envelope.id }), transport: "window", forgeable: true }));
      if (found.size >= maxApps) finish(null);
      else if (found.size === 1) {
        clearTimeout(repost);
        settleTimer = setTimeout(() => finish(null), settleMs);
      }
    };
    const onHide = (event) => {
      if (event && event.isTrusted === true) finish(clientError(ClientErrorCode.NAVIGATED, "the page navigated away"));
    };
    const post = () => win.postMessage({ channel: CHANNEL, kind: "request", envelope }, origin);
    win.addEventListener("message", onMessage);
    win.addEventListener("pagehide", onHide);
    // The same id each time: a describe has no effect, and several answers
    // from one application count once.
    repost = repostUntilAnswered(post, (t) => (repost = t));
    const timer = setTimeout(() => finish(clientError(ClientErrorCode.NO_SURFACE, `no surface answered within ${timeoutMs} ms`)), timeoutMs);
    post();
  });
}

// repostUntilAnswered posts again after REPOST_INTERVAL_MS * 2, and then
// after each wait twice the last (up to 2 s), so a page slow to answer is
// not handed a queue of copies; every timer it sets is handed to armed,
// for the caller to clear once an answer came.
function repostUntilAnswered(post, armed) {
  let wait = REPOST_INTERVAL_MS * 2;
  const again = () => {
    post();
    wait = Math.min(wait * 2, 2000);
    armed(setTimeout(again, wait));
  };
  return setTimeout(again, wait);
}

const REQUEST_OPTIONS = ["window", "app", "timeoutMs", "replyBytes", "repost"];

/**
 * Posts one request envelope on the window and resolves with the message
 * that answers its id, as the page posted it, once inspectReply has found
 * it within the bounds: the round trip under callers that read the page's
 * answer themselves (pling-mcp, through the extension or DevTools). With
 * repost, the envelope (a describe: it has no effect) is posted again with
 * the same id until an answer comes, as discover posts; otherwise once.
 * Rejects with TIMEOUT, or with REPLY_REFUSED when the answer is larger or
 * deeper than the bounds (error.bound says which) or not JSON.
 */
function request(envelope, options = {}) {
  if (!isObject(envelope) || typeof envelope.id !== "string") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "request needs an envelope with a string id");
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "request options must be an object");
  for (const k of Object.keys(options)) {
    if (!REQUEST_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `request: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const app = options.app;
  if (app !== undefined && (typeof app !== "string" || app === "")) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "app must be a non-empty string");
  const timeoutMs = positive("timeoutMs", options.timeoutMs, DEFAULT_DESCRIBE_TIMEOUT_MS);
  const limits = { replyBytes: positive("replyBytes", options.replyBytes, DEFAULT_LIMITS.replyBytes), depth: DEFAULT_LIMITS.depth };
  const origin = win.location.origin;
  const msg = { channel: CHANNEL, kind: "request" };
  if (app !== undefined) msg.app = app;
  msg.envelope = envelope;
  return new Promise((resolve, reject) => {
    let repost;
    const finish = (err, reply) => {
      clearTimeout(timer);
      clearTimeout(repost);
      win.removeEventListener("message", onMessage);
      if (err) reject(err);
      else resolve(reply);
    };
    const onMessage = (event) => {
      if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
      const d = event.data;
      if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response" || !isObject(d.envelope) || d.envelope.id !== envelope.id) return;
      if (app !== undefined && d.app !== app) return;
      const wrong = inspectReply(d, limits);
      if (wrong) finish(clientError(ClientErrorCode.REPLY_REFUSED, wrong.message, { bound: wrong.bound }));
      else finish(null, d);
    };
    const post = () => win.postMessage(msg, origin);
    win.addEventListener("message", onMessage);
    const timer = setTimeout(() => finish(clientError(ClientErrorCode.TIMEOUT, `no reply to ${envelope.method} ${envelope.id} within ${timeoutMs} ms`, { request: envelope })), timeoutMs);
    if (options.repost === true) repost = repostUntilAnswered(post, (t) => (repost = t));
    post();
  });
}
// ---- port-channel.js
// port-channel.js: the page's private channel, a MessagePort that only this
// client holds: opening it (connect, answered "connected" or "refused") and
// the transport over it.





// portTransport is a client's transport over the private channel: it
// delivers response envelopes to hooks.onEnvelope (with true: only the page
// holds the other end) and reports the channel's end to hooks.onEnd.
function portTransport(port, app, hooks) {
  const onMessage = (event) => {
    const d = event.data;
    if (isObject(d) && d.channel === CHANNEL && d.kind === "closed") {
      hooks.onEnd(ClientErrorCode.CLOSED, "the surface closed the channel");
      return;
    }
    if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response") return;
    if (app !== undefined && hasOwn(d, "app") && d.app !== app) return;
    hooks.onEnvelope(d, true);
  };
  const onClose = () => hooks.onEnd(ClientErrorCode.CLOSED, "the surface closed the channel");
  port.addEventListener("message", onMessage);
  // The page closes its end when it stops listening or closes the surface.
  // The page posts {kind: "closed"} first; browsers that implement the
  // MessagePort "close" event also report it here.
  port.addEventListener("close", onClose);
  return {
    kind: "port",
    private: true,
    send(envelope) {
      port.postMessage({ channel: CHANNEL, kind: "request", envelope });
    },
    close() {
      port.removeEventListener("message", onMessage);
      port.removeEventListener("close", onClose);
      try {
        // Tells the page to free the channel now rather than after its idle time.
        port.postMessage({ channel: CHANNEL, kind: "close" });
        port.close();
      } catch {
        // already closed
      }
    },
  };
}

// openChannel posts connect messages, each with a fresh MessageChannel, until
// one is answered "connected" or "refused", or the timeout passes.
function openChannel(win, { app, credential, timeoutMs, MessageChannelCtor }) {
  const origin = win.location.origin;
  return new Promise((resolve, reject) => {
    const tried = [];
    let done = false;
    const finish = (winner, err) => {
      if (done) return;
      done = true;
      clearInterval(repost);
      clearTimeout(timer);
      win.removeEventListener("pagehide", onHide);
      for (const p of tried) {
        if (winner && p === winner.port) continue;
        p.onmessage = null;
        try {
          p.close();
        } catch {
          // already closed
        }
      }
      if (err) reject(err);
      else resolve(winner);
    };
    const attempt = () => {
      const { port1, port2 } = new MessageChannelCtor();
      tried.push(port1);
      port1.onmessage = (event) => {
        const d = event.data;
        if (!isObject(d) || d.channel !== CHANNEL) return;
        if (d.kind === "refused") {
          finish(null, clientError(ClientErrorCode.REFUSED, "the page refused the private channel"));
        } else if (d.kind === "connected") {
          if (app !== undefined && d.app !== app) return;
          port1.onmessage = null;
          finish({ port: port1, app: typeof d.app === "string" ? d.app : undefined });
        }
      };
      const msg = { channel: CHANNEL, kind: "connect" };
      if (app !== undefined) msg.app = app;
      if (credential !== undefined) msg.credential = credential;
      try {
        win.postMessage(msg, origin, [port2]);
      } catch (err) {
        finish(null, clientError(ClientErrorCode.INVALID_ARGUMENT, `the connect message cannot be posted: ${err && err.message}`));
      }
    };
    const onHide = (event) => {
      if (event && event.isTrusted === true) finish(null, clientError(ClientErrorCode.NAVIGATED, "the page navigated away while connecting"));
    };
    win.addEventListener("pagehide", onHide);
    // A credential is posted once: repeating it would show it to same-window
    // listeners again. Without one, repeat until the page starts listening.
    const repost = credential === undefined ? setInterval(attempt, REPOST_INTERVAL_MS) : undefined;
    const timer = setTimeout(
      () => finish(null, clientError(ClientErrorCode.NO_SURFACE, `no surface${app !== undefined ? ` for app ${JSON.stringify(app)}` : ""} answered within ${timeoutMs} ms`)),
      timeoutMs,
    );
    attempt();
  });
}
// ---- surface-client.js
// surface-client.js: the client a caller holds: connect picks the
// transport, and SurfaceClient checks each call before it is sent, keeps
// its deadlines and retries, and ends on navigation or a closed channel.









const CONNECT_OPTIONS = ["app", "transport", "credential", "window", "describeTimeoutMs", "invokeTimeoutMs", "connectTimeoutMs", "MessageChannel"];

/**
 * Connects to the surface of the page this script runs in.
 * transport "auto" (the default) opens the page's private channel where the
 * page offers it, and otherwise (refused, or no answer to connect) talks
 * over the window; client.transport and every outcome say which one.
 * transport "port" opens the private channel or fails: replies reach this
 * client only, a credential can be handed to the page's authenticate, and
 * the client ends as soon as the page closes the channel. transport
 * "window" posts requests on the window and reads the replies there, where
 * every script of the page can read them and forge them (outcomes carry
 * forgeable: true); it reaches whichever surface listens now.
 */
async function connect(options = {}) {
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "connect options must be an object");
  for (const k of Object.keys(options)) {
    if (!CONNECT_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `connect: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const app = options.app;
  if (app !== undefined && (typeof app !== "string" || app === "")) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "app must be a non-empty string");
  const transport = options.transport ?? (options.credential !== undefined ? "port" : "auto");
  if (transport !== "port" && transport !== "window" && transport !== "auto") throw clientError(ClientErrorCode.INVALID_ARGUMENT, 'transport must be "auto", "port" or "window"');
  if (options.credential !== undefined && transport !== "port") {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, "a credential travels only on the private channel (transport: \"port\")");
  }
  const settings = {
    describeTimeoutMs: positive("describeTimeoutMs", options.describeTimeoutMs, DEFAULT_DESCRIBE_TIMEOUT_MS),
    invokeTimeoutMs: positive("invokeTimeoutMs", options.invokeTimeoutMs, DEFAULT_INVOKE_TIMEOUT_MS),
  };
  const connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  if (transport === "window") return new SurfaceClient(win, app, null, settings);
  const MessageChannelCtor = options.MessageChannel ?? globalThis.MessageChannel;
  if (typeof MessageChannelCtor !== "function") throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "no MessageChannel");
  let opened;
  try {
    opened = await openChannel(win, { app, credential: options.credential, timeoutMs: connectTimeoutMs, MessageChannelCtor });
  } catch (err) {
    if (transport === "auto" && (err.code === ClientErrorCode.REFUSED || err.code === ClientErrorCode.NO_SURFACE)) {
      return new SurfaceClient(win, app, null, { ...settings, privateRefused: err.code });
    }
    throw err;
  }
  return new SurfaceClient(win, app ?? opened.app, opened.port, settings);
}

const CALL_OPTIONS = ["timeoutMs", "retries", "id", "record", "description", "signal"];

class SurfaceClient {
  #win;
  #transport;
  #settings;
  #pending = new Map(); // request id -> call state
  #intents = new Map(); // request id -> fingerprint of the intent it was used for
  #ended = null; // the SurfaceClientError that ended the client
  #resolveEnded;
  #onHide;
  #lastDescription;

  constructor(win, app, port, settings) {
    this.#win = win;
    this.#settings = settings;
    /** The application this client talks to (undefined: whichever surface answers). */
    this.app = app;
    /** Resolves with the SurfaceClientError that ended the client. */
    this.ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
    const hooks = {
      onEnvelope: (message, isPrivate) => this.#onEnvelope(message, isPrivate),
      onEnd: (code, message) => this.#end(code, message),
    };
    this.#transport = port ? portTransport(port, app, hooks) : windowTransport(win, app, hooks);
    if (port && typeof port.start === "function") port.start();
    // pagehide fires on every navigation and unload, bfcache included;
    // beforeunload may be cancelled and is not a navigation yet. One a page
    // script dispatches (isTrusted false) is no navigation.
    this.#onHide = (event) => {
      if (event && event.isTrusted === true) this.#end(ClientErrorCode.NAVIGATED, "the page navigated away");
    };
    win.addEventListener("pagehide", this.#onHide);
  }

  /** "port" or "window". */
  get transport() {
    return this.#transport.kind;
  }

  /**
   * Why an "auto" client talks over the window: "REFUSED" (the page refused
   * a private channel without a credential) or "NO_SURFACE" (nothing
   * answered connect); undefined otherwise.
   */
  get privateRefused() {
    return this.#settings.privateRefused;
  }

  /** Whether the client has ended (navigation, closed channel, close()). */
  get closed() {
    return this.#ended !== null;
  }

  /** The last successful description this client received, if any. */
  get lastDescription() {
    return this.#lastDescription;
  }

  /** Asks for the capabilities and bounded context. Resolves to an outcome. */
  async describe(input, options = {}) {
    if (input !== undefined && !isObject(input)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "describe input must be an object");
    const opts = this.#callOptions(options, ["timeoutMs", "retries", "signal"]);
    const envelope = { protocol: SURFACE_PROTOCOL, id: newRequestId(), method: "describe" };
    if (input !== undefined) envelope.input = jsonCopy(input, "describe input");
    // A describe has no effect, so one transport retry is on by default.
    const outcome = await this.#call(envelope, opts.timeoutMs ?? this.#settings.describeTimeoutMs, opts.retries ?? 1, opts.signal);
    if (outcome.kind === "success") {
      const d = outcome.description;
      // After capabilities: "changed" an unchanged list comes back empty;
      // the list this client already holds still applies.
      this.#lastDescription = d.capabilitiesUnchanged === true && this.#lastDescription ? { ...d, capabilities: this.#lastDescription.capabilities } : d;
    }
    return outcome;
  }

  /**
   * Invokes one capability. For a folded template the record id may be given
   * as options.record or in input under the template's record parameter; it
   * is checked against the recordIds of the last description (or
   * options.description) before anything is sent.
   */
  async invoke(capability, input, options = {}) {
    if (typeof capability !== "string" || capability === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "capability must be a non-empty string");
    if (input !== undefined && input !== null && !isObject(input)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "invoke input must be an object");
    const opts = this.#callOptions(options, CALL_OPTIONS);
    const body = jsonCopy(input ?? {}, "invoke input");
    const description = opts.description ?? this.#lastDescription;
    this.#placeRecord(capability, body, opts.record, description);

    const envelope = { protocol: SURFACE_PROTOCOL, id: "", method: "invoke", capability, input: body };
    const fingerprint = canonicalJSON({ capability, input: body });
    if (opts.id !== undefined) {
      if (typeof opts.id !== "string" || opts.id === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "id must be a non-empty string");
      const seen = this.#intents.get(opts.id);
      if (seen !== undefined && seen !== fingerprint) {
        throw clientError(ClientErrorCode.ID_REUSED, `request id ${JSON.stringify(opts.id)} was used for another intent; a new intent needs a new id`);
      }
      envelope.id = opts.id;
    } else {
      envelope.id = newRequestId();
    }
    if (this.#pending.has(envelope.id)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `a call with id ${JSON.stringify(envelope.id)} is still waiting`);
    this.#remember(envelope.id, fingerprint);
    // A caller-given id is a retry of an intent that may have reached the
    // surface before, from this client or an earlier one.
    return this.#call(envelope, opts.timeoutMs ?? this.#settings.invokeTimeoutMs, opts.retries ?? 0, opts.signal, opts.id !== undefined);
  }

  /**
   * Sends an invoke again with the same id: the transport retry of the same
   * intent, for example after a TIMEOUT (pass error.request). A surface with
   * replay protection answers REPLAY_DETECTED if the first attempt arrived.
   */
  retry(request, options = {}) {
    if (!isObject(request) || request.method !== "invoke" || typeof request.id !== "string") {
      throw clientError(ClientErrorCode.INVALID_ARGUMENT, "retry needs the invoke envelope that was sent (error.request)");
    }
    return this.invoke(request.capability, request.input, { ...options, id: request.id });
  }

  /** One window of records: describe with offset and limit. */
  async page({ offset = 0, limit = DEFAULT_PAGE_LIMIT, ...rest } = {}) {
    nonNegativeInteger("offset", offset);
    nonNegativeInteger("limit", limit);
    const outcome = await this.describe({ offset, limit }, rest);
    if (outcome.kind !== "success") {
      throw clientError(ClientErrorCode.PROTOCOL_FAILURE, `describe failed: ${outcome.error.code}`, { outcome });
    }
    const c = outcome.description.context;
    const records = Array.isArray(c.records) ? c.records : [];
    const total = typeof c.recordsTotal === "number" ? c.recordsTotal : records.length;
    const next = offset + records.length;
    return { records, recordsTotal: total, offset, limit, nextOffset: records.length > 0 && next < total ? next : null, description: outcome.description };
  }

  /**
   * Every record from offset on, page by page: at most max of them (1000
   * unless given; a finite count, since the page says how many there are).
   * A window without records ends the walk.
   */
  async *records({ offset = 0, limit = DEFAULT_PAGE_LIMIT, max = DEFAULT_RECORDS_MAX, ...rest } = {}) {
    if (limit === 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "limit must be at least 1 to page");
    nonNegativeInteger("max", max);
    let at = offset;
    let given = 0;
    while (at !== null && given < max) {
      const p = await this.page({ offset: at, limit: Math.min(limit, max - given), ...rest });
      for (const r of p.records) {
        if (given >= max) return;
        given += 1;
        yield r;
      }
      at = p.nextOffset;
    }
  }

  /** Ends the client: calls still waiting fail with CLOSED. */
  close() {
    this.#end(ClientErrorCode.CLOSED, "the client was closed");
  }

  #callOptions(options, allowed) {
    if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "options must be an object");
    for (const k of Object.keys(options)) {
      if (!allowed.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `unknown option ${JSON.stringify(k)}`);
    }
    if (options.timeoutMs !== undefined) positive("timeoutMs", options.timeoutMs);
    if (options.retries !== undefined) nonNegativeInteger("retries", options.retries);
    return options;
  }

  #placeRecord(capabilityId, body, record, description) {
    const cap = findCapability(description, capabilityId);
    if (cap && recordParam(cap) === undefined) {
      if (record !== undefined) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${capabilityId} is not a folded template: it takes no record`);
      return;
    }
    // Not described: the protocol's own name for the record member.
    const param = cap ? recordParam(cap) : "record";
    if (record !== undefined) {
      if (typeof record !== "string" || record === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "record must be a non-empty string");
      if (hasOwn(body, param) && body[param] !== record) {
        throw clientError(ClientErrorCode.INVALID_ARGUMENT, `input.${param} and options.record name different records`);
      }
      body[param] = record;
    }
    if (!cap) return; // not described: the surface decides
    const id = body[param];
    if (typeof id !== "string" || id === "") {
      throw clientError(ClientErrorCode.RECORD_REQUIRED, `${capabilityId} is a folded template: name the record in input.${param} or options.record`);
    }
    if (isReferenceable(description, id) === false) {
      throw clientError(ClientErrorCode.RECORD_NOT_REFERENCEABLE, `${id} is not among the record ids the surface described`);
    }
  }

  #remember(id, fingerprint) {
    this.#intents.delete(id);
    this.#intents.set(id, fingerprint);
    if (this.#intents.size > REMEMBERED_IDS) this.#intents.delete(this.#intents.keys().next().value);
  }

  #call(envelope, timeoutMs, retries, signal, resent = false) {
    if (this.#ended) return Promise.reject(this.#copyEnd(envelope, 0));
    return new Promise((resolve, reject) => {
      const isInvoke = envelope.method === "invoke";
      const call = { envelope, attempts: 0, timer: undefined, fallback: null, settle: null };
      const cleanup = () => {
        clearTimeout(call.timer);
        if (this.#pending.get(envelope.id) === call) this.#pending.delete(envelope.id);
        if (signal) signal.removeEventListener("abort", onAbort);
      };
      call.settle = (outcome, err) => {
        cleanup();
        if (err) reject(err);
        else resolve(outcome);
      };
      call.fail = (code, message) =>
        call.settle(null, clientError(code, message, { effectUnknown: isInvoke && call.attempts > 0, attempts: call.attempts, request: envelope }));
      const onAbort = () => call.fail(ClientErrorCode.ABORTED, "the call was aborted");
      const send = () => {
        call.attempts += 1;
        call.timer = setTimeout(onTimeout, timeoutMs);
        try {
          this.#transport.send(envelope);
        } catch (err) {
          call.attempts -= 1;
          call.fail(ClientErrorCode.INVALID_ARGUMENT, `the request cannot be posted: ${err && err.message}`);
        }
      };
      const onTimeout = () => {
        if (call.fallback) {
          // The retry was refused as a replay and the first attempt's own
          // reply never came: it reached the surface, its effect is unknown.
          call.settle(freeze({ ...call.fallback, attempts: call.attempts, effectUnknown: true }));
        } else if (call.attempts <= retries) {
          send();
        } else {
          call.fail(ClientErrorCode.TIMEOUT, `no reply to ${envelope.method} ${envelope.id} within ${timeoutMs} ms (${call.attempts} attempt${call.attempts === 1 ? "" : "s"})`);
        }
      };
      call.onEnvelope = (message) => {
        // The port is this client's own; the window is every script's, and
        // a same-window script can swallow the page's reply and post its
        // own, so an answer read there says so.
        const via = { transport: this.#transport.kind, forgeable: !this.#transport.private };
        const askedChanged = isObject(envelope.input) && envelope.input.capabilities === "changed";
        const outcome = { ...classify(message, envelope.method, { id: envelope.id, app: this.app, askedChanged }), ...via };
        const retried = isInvoke && (resent || call.attempts > 1);
        if (retried && outcome.kind === "protocol-error" && outcome.error.code === "REPLAY_DETECTED") {
          // The refusal answers a retry; the first attempt may still answer
          // with its real result (same id), so wait for it until the timer.
          call.fallback = outcome;
          return;
        }
        // Any other refusal of a copy sent again says nothing about the
        // copy before it, which may have reached the page and run.
        if (retried && outcome.kind === "protocol-error") outcome.effectUnknown = true;
        call.settle(freeze({ ...outcome, attempts: call.attempts }));
      };
      call.onEnd = (err) => call.settle(null, this.#copyEnd(envelope, call.attempts, err));
      if (signal) {
        if (signal.aborted) {
          reject(clientError(ClientErrorCode.ABORTED, "the call was aborted before it was sent", { request: envelope }));
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
      }
      this.#pending.set(envelope.id, call);
      send();
    });
  }

  #onEnvelope(message, isPrivate) {
    const env = message.envelope;
    if (!isObject(env)) return;
    let id = typeof env.id === "string" ? env.id : "";
    // A request the page could not read is answered with the empty id. On
    // the private channel with one call waiting, that answer is its own; on
    // the shared window it could be any script's, so it is ignored there.
    if (id === "" && isPrivate && this.#pending.size === 1) id = this.#pending.keys().next().value;
    const call = this.#pending.get(id);
    if (call) call.onEnvelope(message);
  }

  #copyEnd(envelope, attempts, err = this.#ended) {
    return clientError(err.code, err.message, { effectUnknown: envelope.method === "invoke" && attempts > 0, attempts, request: envelope });
  }

  #end(code, message) {
    if (this.#ended) return;
    this.#ended = clientError(code, message);
    this.#win.removeEventListener("pagehide", this.#onHide);
    this.#transport.close();
    for (const call of [...this.#pending.values()]) call.onEnd(this.#ended);
    this.#pending.clear();
    this.#resolveEnded(this.#ended);
  }
}

// jsonCopy sends what JSON.stringify makes of a value, so what the page
// reads is what a fingerprint or a log of the call shows.
function jsonCopy(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${what} is not JSON: ${err && err.message}`);
  }
  const copy = JSON.parse(text);
  if (!isObject(copy)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${what} must be an object`);
  return copy;
}

function canonicalJSON(v) {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(",")}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}
// ---- pling-client.js
// pling-client.js: the caller's side of pling.surface/0.1. It lets a browser
// extension's content script (or any script running in the page's window)
// describe the page's agent surface and invoke its capabilities.
//
//   import { connect } from "./pling-client.js";
//   const client = await connect({ app: "orders" }); // or { app, transport: "port" }
//   const d = await client.describe();
//   const out = await client.invoke("update_note@order", { note: "Call Friday" }, { record: "SO-1002" });
//   if (out.kind === "success") ... else if (out.kind === "business-error") ... else /* protocol-error */ ...
//
// The entry of the library: the modules beside it hold the parts, one job
// each. No dependencies, no import.meta, only `import { ... } from "./x.js"`
// between them: a classic-script build (globalThis.PlingClient) is made of
// them by classic.mjs beside this file. See README.md beside this file.
globalThis.PlingClient = Object.freeze({ SURFACE_PROTOCOL, ClientErrorCode, OutcomeCode, SurfaceClientError, connect, discover, request, classify, findCapability, recordParam, isReferenceable, newRequestId });
})();
