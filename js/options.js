// options.js: createSurface's options, copied, checked and turned into the
// kernel's config.

import { DEFAULT_EXECUTE_TIMEOUT_MS, OPTION_NAMES } from "./constants.js";
import { URLCtor, append, isArray, isSafeInteger, jsonStringify, listIncludes, newList, numberIsFinite, objectKeys } from "./intrinsics.js";
import { methodOf, own } from "./values.js";

/**
 * The kernel's config from the options ownOptions copied. Its objects and
 * expose's array have no prototype, so no setter or toJSON a later script
 * put on a prototype takes a member away as it is built and encoded.
 */
export function buildConfig(options) {
  const { app, expose, recordLimit, maxRecordLimit, rateLimit, replay, executeTimeoutMs } = options;
  const config = { __proto__: null, app, recordLimit, maxRecordLimit, executeTimeoutMs: executeTimeoutMs ?? DEFAULT_EXECUTE_TIMEOUT_MS };
  if (isArray(expose)) config.expose = expose;
  if (rateLimit) {
    config.rateLimit = rateLimit.limiter !== undefined
      ? { __proto__: null }
      : { __proto__: null, maxRequests: rateLimit.maxRequests, windowMs: rateLimit.windowMs };
  }
  if (replay === true) config.replay = { __proto__: null };
  else if (replay) config.replay = { __proto__: null, windowMs: replay.windowMs };
  return config;
}

/**
 * The page's options as the surface keeps them: own members only, the
 * rateLimit and replay objects copied the same way onto objects without a
 * prototype, expose's ids by index. What a later script put on
 * Object.prototype (limiter, guard, shared, onAudit, ...) is no option,
 * and nothing read later goes through a prototype it could change.
 */
export function ownOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("createSurface needs an options object");
  const names = objectKeys(options);
  for (let i = 0; i < names.length; i++) {
    if (!listIncludes(OPTION_NAMES, names[i])) throw new TypeError(`createSurface: unknown option ${jsonStringify(names[i])}`);
  }
  const o = { __proto__: null };
  for (let i = 0; i < OPTION_NAMES.length; i++) o[OPTION_NAMES[i]] = own(options, OPTION_NAMES[i]);
  const { rateLimit, replay, expose } = o;
  if (rateLimit !== null && typeof rateLimit === "object") {
    o.rateLimit = { __proto__: null, maxRequests: own(rateLimit, "maxRequests"), windowMs: own(rateLimit, "windowMs"), limiter: own(rateLimit, "limiter") };
  }
  if (replay !== null && typeof replay === "object") {
    o.replay = { __proto__: null, windowMs: own(replay, "windowMs"), guard: own(replay, "guard") };
  }
  if (isArray(expose)) {
    const ids = newList();
    const n = own(expose, "length");
    for (let i = 0; i < n; i++) append(ids, own(expose, i));
    o.expose = ids;
  }
  return o;
}

/** Checks the options ownOptions copied. */
export function validateOptions(options) {
  const { registry, execute, app, expose, session, rateLimit, replay } = options;
  if (registry === null || (typeof registry !== "object" && typeof registry !== "function")) {
    throw new TypeError("createSurface: options.registry is required");
  }
  if (typeof registry.actions !== "function" || typeof registry.view !== "function") {
    throw new TypeError("createSurface: the registry needs actions() and view() functions");
  }
  const version = methodOf(registry, "version");
  if (version !== undefined && typeof version !== "function") {
    throw new TypeError("createSurface: registry.version must be a function");
  }
  if (typeof execute !== "function") throw new TypeError("createSurface: options.execute is required and must be a function");
  if (app !== undefined && typeof app !== "string") throw new TypeError("createSurface: app must be a string");
  if (expose !== undefined && typeof expose !== "function") {
    let ok = isArray(expose);
    for (let i = 0; ok && i < expose.length; i++) ok = typeof expose[i] === "string" && expose[i] !== "";
    if (!ok) throw new TypeError("createSurface: expose must be an array of capability ids or a function");
  }
  if (session !== undefined && session !== null && typeof session !== "object" && typeof session !== "function") {
    throw new TypeError("createSurface: session must be a session object, a getter, or null");
  }
  checkPositive("recordLimit", options.recordLimit, true);
  checkPositive("maxRecordLimit", options.maxRecordLimit, true);
  checkPositive("executeTimeoutMs", options.executeTimeoutMs, false);
  if (rateLimit !== undefined && rateLimit !== null) {
    if (typeof rateLimit !== "object") throw new TypeError("createSurface: rateLimit must be an object");
    if (rateLimit.limiter !== undefined) {
      if (rateLimit.limiter === null || typeof rateLimit.limiter.allow !== "function") {
        throw new TypeError("createSurface: rateLimit.limiter needs an allow(key, nowMs) function");
      }
    } else {
      if (rateLimit.maxRequests === undefined || rateLimit.windowMs === undefined) {
        throw new TypeError("createSurface: rateLimit needs maxRequests and windowMs");
      }
      checkPositive("rateLimit.maxRequests", rateLimit.maxRequests, true);
      checkPositive("rateLimit.windowMs", rateLimit.windowMs, false);
    }
  }
  if (replay !== undefined && replay !== null && typeof replay !== "boolean") {
    if (typeof replay !== "object") throw new TypeError("createSurface: replay must be a boolean or an object");
    checkPositive("replay.windowMs", replay.windowMs, false);
    if (replay.guard !== undefined && (replay.guard === null || typeof replay.guard.claim !== "function")) {
      throw new TypeError("createSurface: replay.guard needs a claim(sessionId, requestId, windowMs) function");
    }
  }
  if (options.onAudit !== undefined && typeof options.onAudit !== "function") throw new TypeError("createSurface: onAudit must be a function");
  if (options.wasmURL !== undefined && typeof options.wasmURL !== "string" && !(options.wasmURL instanceof URLCtor)) {
    throw new TypeError("createSurface: wasmURL must be a string or a URL");
  }
  if (options.prefetch !== undefined && options.prefetch !== "idle") throw new TypeError('createSurface: prefetch must be "idle"');
  if (options.start !== undefined && options.start !== "eager") throw new TypeError('createSurface: start must be "eager"');
  if (options.onAuditError !== undefined && typeof options.onAuditError !== "function") {
    throw new TypeError("createSurface: onAuditError must be a function");
  }
}

export function checkPositive(name, v, integer) {
  if (v === undefined) return;
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}
