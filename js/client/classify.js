// classify.js: reading a page's reply by the reply grammar every client of
// the surface shares, into exactly one of three outcomes. Whatever does not
// follow the grammar is never read as a success or an approval.

import { CHANNEL, SURFACE_PROTOCOL, DEFAULT_LIMITS } from "./bounds.js";
import { OutcomeCode } from "./errors.js";
import { hasOwn, isObject, freeze } from "./checks.js";
import { inspectReply } from "./reply-size.js";

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
export function classify(reply, method = "invoke", expect = {}) {
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
