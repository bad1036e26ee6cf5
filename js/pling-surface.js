// pling-surface.js: the in-page runtime of the pling.surface/0.1 agent
// surface, and the page's first script.
//
//   import { createSurface, defineRegistry } from "./pling/pling-surface.js";
//   const surface = createSurface({ registry: defineRegistry({ ... }), execute });
//   surface.listen({ allowedOrigins: [] });
//
// Evaluating it captures every built-in the runtime and the Go glue will
// use (intrinsics.js, pling-glue.js) and installs the window's message
// listener (transport.js); it waits for nothing. The protocol kernel is Go
// compiled to WebAssembly (surface.wasm), fetched, compiled and started
// when a surface is first called (kernel.js). README.md beside this file
// has the guide, the module map and the threat model.

import { bind } from "./api.js";
import { ErrorCtor, PromiseCtor } from "./intrinsics.js";
import { PAGE_KERNEL, startKernel } from "./kernel.js";
import { own, pending } from "./values.js";

export { SURFACE_PROTOCOL, DEFAULT_SURFACE_RECORD_LIMIT, MAX_SURFACE_RECORD_LIMIT } from "./constants.js";
export { SurfaceSessionError } from "./values.js";
export { defineRegistry } from "./registry.js";
export { applyShared, httpAdapter, httpGuard, httpLimiter } from "./shared-http.js";
export { webmcpKit } from "./webmcp-kit.js";

// Not API. What the modules loaded when first needed (pling-kernel.js,
// pling-shared.js) take from the first script: bundled, their imports of
// these modules name this file, so they bind to what was captured when the
// page loaded.
export * from "./intrinsics.js";
export { DEFAULT_TIMEOUT_MS, positive } from "./shared-http.js";
export { isThenable, methodOf, onlyMembers, own, ownOr, ownValue, pageJSON, pending, settledText, whenSettled } from "./values.js";
export { sessionGetter } from "./session.js";
export { bind } from "./api.js";


const PAGE_API = bind(PAGE_KERNEL, false);
let pageStatsAPI;

/**
 * Makes a surface on the page's kernel, which starts when the surface is
 * first called: an agent's message, handle(), describe(), webmcp() or
 * ready(). Options as for the API's createSurface, and wasmURL (default:
 * the surface.wasm beside this module), prefetch: "idle" (fetch and
 * compile it when the page is idle), start: "eager" (start it now).
 */
export const createSurface = PAGE_API.createSurface;

/**
 * Starts the page's kernel (surface.wasm beside this module, or
 * options.wasmURL) and resolves to the API once it is up, so that
 * createSurface then makes its surface in the kernel at once, throwing
 * what the kernel refuses. options.stats adds stats().
 */
export function loadSurface(options = {}) {
  if (options === null || typeof options !== "object") {
    return PromiseCtor.reject(new TypeError("loadSurface options must be an object"));
  }
  // Answered through a Promise of its own (pending), resolved with an API
  // that has its own then: a later call, made once the surface loaded,
  // gets the real API whatever a later script put on Promise.prototype,
  // Object.prototype or the global.
  const out = pending();
  const withStats = own(options, "stats") === true;
  let wasmURL;
  try {
    wasmURL = own(options, "wasmURL");
  } catch (e) {
    out.reject(e);
    return out.promise;
  }
  startKernel(wasmURL, (kernel, error) => {
    if (kernel === undefined) {
      out.reject(new ErrorCtor(`loadSurface: ${error instanceof ErrorCtor ? error.message : "the surface runtime did not start"}`));
      return;
    }
    if (!withStats) {
      out.resolve(PAGE_API);
      return;
    }
    if (pageStatsAPI === undefined) pageStatsAPI = bind(PAGE_KERNEL, true);
    out.resolve(pageStatsAPI);
  });
  return out.promise;
}
