// The page's first script. It evaluates the surface's first script, which
// captures the built-ins the runtime will use and installs its message
// listener, and waits for nothing: the kernel (surface.wasm) is fetched and
// started only when an agent first speaks (js/README.md, "Loading the
// surface first"). Every other script of the page is a module that imports
// this one (main.js does, and the rest come in through main.js), so none of
// them runs before it.
export { createSurface, defineRegistry } from "./pling/pling-surface.js";
