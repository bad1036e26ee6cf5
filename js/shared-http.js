// shared-http.js: the backend's limiter and guard (httpAdapter), and the
// shared option (applyShared).

import { importShared } from "./assets.js";
import { BASE_AT_LOAD, FETCH, StringCtor, URLCtor, XHR, defineProperty, freeze, isSafeInteger, numberIsFinite, urlHrefOf } from "./intrinsics.js";
import { own, ownOr, pending, whenSettled } from "./values.js";

/**
 * What createSurface does with its `shared` option: "indexeddb" replaces
 * the in-page limiter and guard with indexedDBLimiter and indexedDBGuard
 * (of pling-shared.js, loaded when the first decision is asked for),
 * keeping maxRequests, windowMs and the app name. Returns the options.
 */
export function applyShared(options) {
  const shared = own(options, "shared");
  const rateLimit = own(options, "rateLimit");
  const replay = own(options, "replay");
  const app = own(options, "app");
  if (shared === undefined) return options;
  if (shared !== "indexeddb") throw new TypeError('createSurface: shared must be "indexeddb"');
  if (!rateLimit && !replay) throw new TypeError("createSurface: shared needs rateLimit or replay to share");
  if ((rateLimit && own(rateLimit, "limiter") !== undefined) || (replay && typeof replay === "object" && own(replay, "guard") !== undefined)) {
    throw new TypeError("createSurface: shared replaces the limiter and the guard; give shared or your own, not both");
  }
  if (rateLimit) {
    const maxRequests = own(rateLimit, "maxRequests");
    const windowMs = own(rateLimit, "windowMs");
    defineProperty(options, "rateLimit", { __proto__: null, value: { __proto__: null, maxRequests, windowMs,
      limiter: sharedLimiter({ __proto__: null, app: app ?? "", maxRequests, windowMs }) }, writable: true, enumerable: true, configurable: true });
  }
  if (replay) {
    const windowMs = typeof replay === "object" ? own(replay, "windowMs") : undefined;
    defineProperty(options, "replay", { __proto__: null, value: { __proto__: null, windowMs, guard: sharedGuard({ __proto__: null, app: app ?? "" }) },
      writable: true, enumerable: true, configurable: true });
  }
  return options;
}

// ---------------------------------------------------------------------------
// HTTP: the page's backend decides (see redisstate.Handler). The backend
// names the session from its own login; the body never carries one.

/**
 * A limiter and a guard that POST to url: {"op":"allow"} and
 * {"op":"claim","requestId":...}. Options: timeoutMs (default 5000),
 * headers (a CSRF token, say), credentials (default "same-origin"), fetch
 * (default the page's fetch as it was when this module was evaluated).
 *
 * A script that runs after the surface loaded must not turn the backend's
 * "replayed" into "claimed", or a refusal into an admission: the request
 * body is written here, the Response is read through its original getter
 * and method (a stand-in fetch's answer through its own status and text),
 * the answer is parsed and checked in the callback that received it, and
 * no Promise is awaited or resolved with an object a then could be planted
 * on.
 */
export function httpAdapter(url, options) {
  const timeoutMs = ownOr(options, "timeoutMs", DEFAULT_TIMEOUT_MS);
  const headers = ownOr(options, "headers", {});
  const credentials = ownOr(options, "credentials", "same-origin");
  const fetchFn = ownOr(options, "fetch", FETCH);
  if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("httpAdapter: url must be a string or a URL");
  positive("httpAdapter: timeoutMs", timeoutMs, false);
  if (typeof fetchFn !== "function") throw new TypeError("httpAdapter: no fetch");
  // Absolute now: fetch would resolve a relative address against the
  // document's base at each request, which a later script can move.
  const target = BASE_AT_LOAD !== undefined && URLCtor !== undefined && urlHrefOf !== undefined ? urlHrefOf(new URLCtor(StringCtor(url), BASE_AT_LOAD)) : StringCtor(url);
  const fixedHeaders = { __proto__: null, ...headers, "Content-Type": "application/json" };
  // The page's own fetch, when it gave one, is the page's to trust; the
  // default goes by XMLHttpRequest (see XHR), where the page has one and
  // the credentials can be expressed there.
  const useXHR = fetchFn === FETCH && XHR !== undefined && credentials !== "omit";

  const adapter = freeze({ __proto__: null, target, headers: fixedHeaders, credentials, fetchFn, useXHR, timeoutMs });
  // The exchange itself is pling-shared.js's, loaded at the first decision.
  let made;
  const posting = (mod) => (made ??= mod.backendAdapter(adapter));
  return freeze({
    allow: () => withShared((mod) => posting(mod).allow()),
    claim: (sessionId, requestId) => withShared((mod) => posting(mod).claim(sessionId, requestId)),
  });
}

/** The limiter of httpAdapter(url, options), for rateLimit.limiter. */
export function httpLimiter(url, options) {
  const { allow } = httpAdapter(url, options);
  return freeze({ allow });
}

/** The guard of httpAdapter(url, options), for replay.guard. */
export function httpGuard(url, options) {
  const { claim } = httpAdapter(url, options);
  return freeze({ claim });
}

export const DEFAULT_TIMEOUT_MS = 5000;

export function positive(name, v, integer) {
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}

// IndexedDB's limiter and guard live in pling-shared.js, loaded when a
// surface first asks for a decision: a page that shares nothing never
// fetches it. The module's namespace has no prototype and no then, so
// neither the wait for it nor reading its exports looks anything up
// where a later script could stand.
let sharedModule;
function withShared(f) {
  const out = pending();
  const run = (mod) => {
    try {
      whenSettled(f(mod), out.resolve, out.reject);
    } catch (e) {
      out.reject(e);
    }
  };
  if (sharedModule !== undefined) run(sharedModule);
  else {
    whenSettled(importShared(), (mod) => {
      sharedModule = mod;
      run(mod);
    }, out.reject);
  }
  return out.promise;
}

function sharedLimiter(options) {
  let made;
  return freeze({ allow: (key, nowMs) => withShared((mod) => (made ??= mod.indexedDBLimiter(options)).allow(key, nowMs)) });
}

function sharedGuard(options) {
  let made;
  return freeze({ claim: (sessionId, requestId, windowMs) => withShared((mod) => (made ??= mod.indexedDBGuard(options)).claim(sessionId, requestId, windowMs)) });
}
