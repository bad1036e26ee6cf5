// assets.js: where the runtime's other files are. A site built by
import { URLCtor, urlHrefOf } from "./intrinsics.js";

/* global __PLING_ASSETS__ */
// internal/sitebuild names them by content and tells the first script
// (__PLING_ASSETS__); unbuilt, they are the files beside this module.

// The runtime's files, named by content when the site was built (see
// internal/sitebuild), else the files beside this module.
const ASSETS = typeof __PLING_ASSETS__ === "object" && __PLING_ASSETS__ !== null ? __PLING_ASSETS__ : undefined;
export const WASM_FILE = ASSETS !== undefined && typeof ASSETS.wasm === "string" ? ASSETS.wasm : "./surface.wasm";
const fileURL = (name, fallback) => urlHrefOf(new URLCtor(ASSETS !== undefined && typeof ASSETS[name] === "string" ? ASSETS[name] : fallback, import.meta.url));
// The modules loaded when first needed: the kernel's host and glue,
// WebMCP's bridge, and IndexedDB's shared state.
export const KERNEL_URL = fileURL("kernel", "./pling-kernel.js");
export const WEBMCP_URL = fileURL("webmcp", "./pling-webmcp.js");
export const SHARED_URL = fileURL("shared", "./pling-shared.js");
// Resolved now, so that an import map a later script adds cannot point
// them elsewhere (a module specifier resolved once keeps its meaning).
if (typeof import.meta.resolve === "function") {
  try {
    import.meta.resolve(KERNEL_URL);
    import.meta.resolve(WEBMCP_URL);
    import.meta.resolve(SHARED_URL);
  } catch {
    // resolved when imported
  }
}

