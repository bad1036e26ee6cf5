// The page's first script: it loads the agent surface and waits at its top
// level until loading is over. Every other script of the page is a module
// that imports this one (main.js does, and the rest come in through
// main.js), so none of them runs before the runtime is up (js/README.md,
// "Loading the surface first").
//
// A runtime that fails to load leaves the page working: the failure is
// handed on, not thrown, so that the modules importing this one still run.
import { loadSurface } from "./pling/pling-surface.js";

export const loaded = await loadSurface().then(
  (api) => ({ api, error: null }),
  (error) => ({ api: null, error }),
);
