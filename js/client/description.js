// description.js: what a description says about folded templates and the
// records they may name, checked before an invoke is sent.

import { isObject } from "./checks.js";

/** The capability with this id in a description, or undefined. */
export function findCapability(description, capabilityId) {
  if (!isObject(description) || !Array.isArray(description.capabilities)) return undefined;
  return description.capabilities.find((c) => isObject(c) && c.id === capabilityId);
}

/** The input member naming the record of a folded template, or undefined for a plain capability. */
export function recordParam(capability) {
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
export function isReferenceable(description, recordId) {
  const c = isObject(description) ? description.context : undefined;
  if (!isObject(c) || !Array.isArray(c.recordIds)) return undefined;
  if (c.recordIds.includes(recordId)) return true;
  if (Array.isArray(c.records) && c.records.some((r) => isObject(r) && r.id === recordId)) return true;
  const total = typeof c.recordIdsTotal === "number" ? c.recordIdsTotal : c.recordIds.length;
  return c.recordIds.length >= total ? false : undefined;
}
