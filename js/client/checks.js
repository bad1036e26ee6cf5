// checks.js: small checks every part of the client shares: the shape of a
// JSON value, the caller's numbers and window, and unpredictable request ids.

import { ClientErrorCode, clientError } from "./errors.js";

export const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
export const freeze = Object.freeze;

/** A fresh request id from the platform's CSPRNG; never Math.random. */
export function newRequestId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return `pc-${c.randomUUID()}`;
  if (c && typeof c.getRandomValues === "function") {
    // randomUUID is missing outside secure contexts; getRandomValues is not.
    const bytes = c.getRandomValues(new Uint8Array(16));
    return `pc-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }
  throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "no crypto.getRandomValues: cannot make unpredictable request ids");
}

export function checkWindow(win) {
  if (!win || typeof win.postMessage !== "function" || typeof win.addEventListener !== "function" || !win.location) {
    throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "needs the page's window (run in a content script or the page)");
  }
  const origin = win.location.origin;
  if (typeof origin !== "string" || origin === "null" || origin === "") {
    // A surface never answers an opaque origin, and a reply could not be addressed to it.
    throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "the page has an opaque origin; no surface can answer it");
  }
}

export function positive(name, v, fallback) {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${name} must be a positive number of milliseconds`);
  }
  return v;
}

export function nonNegativeInteger(name, v, fallback) {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${name} must be a non-negative integer`);
  return v;
}
