// assets.js: where the runtime's other files are, and how they are loaded.
//
// A site built by internal/sitebuild names the kernel by content and tells
// the first script (__PLING_ASSETS__); it rewrites the literal imports
// below to the hashed names of the bundles it writes. A package build
// leaves every name plain and literal, so that a page's bundler (Vite,
// webpack, ...) finds the kernel by `new URL(<literal>, import.meta.url)`
// and the lazy modules by `import(<literal>)`, and copies, splits and
// fingerprints them itself. Unbuilt, they are the files beside this module.
import { URLCtor, urlHrefOf } from "./intrinsics.js";

/* global __PLING_ASSETS__, __PLING_PACKAGE__ */
const ASSETS = typeof __PLING_ASSETS__ === "object" && __PLING_ASSETS__ !== null ? __PLING_ASSETS__ : undefined;
// The kernel: the literal form is what a bundler recognises as an asset.
export const WASM_FILE = ASSETS !== undefined && typeof ASSETS.wasm === "string" ? ASSETS.wasm : new URL("./surface.wasm", import.meta.url).href;
// The modules loaded when first needed: the kernel's host and glue (see
// kernel-host.js), WebMCP's bridge, and IndexedDB's shared state.
export const importKernel = () => import("./pling-kernel.js");
export const importWebMCP = () => import("./pling-webmcp.js");
export const importShared = () => import("./pling-shared.js");
// Resolved now, so that an import map a later script adds cannot point
// them elsewhere (a module specifier resolved once keeps its meaning). In
// a package the bundler names the chunks, so there is nothing to resolve.
if (typeof __PLING_PACKAGE__ === "undefined" && typeof import.meta.resolve === "function") {
  const fileURL = (name, fallback) => urlHrefOf(new URLCtor(ASSETS !== undefined && typeof ASSETS[name] === "string" ? ASSETS[name] : fallback, import.meta.url));
  try {
    import.meta.resolve(fileURL("kernel", "./pling-kernel.js"));
    import.meta.resolve(fileURL("webmcp", "./pling-webmcp.js"));
    import.meta.resolve(fileURL("shared", "./pling-shared.js"));
  } catch {
    // resolved when imported
  }
}
