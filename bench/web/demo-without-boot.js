// The demo's first script as a site without the agent surface would have
// it: it exports no runtime, so main.js runs the page alone. The baseline
// of the page-cost rows. It names both shapes of the demo's boot.js: the
// one that waited for loadSurface() (loaded) and the one that hands on the
// top-level createSurface and defineRegistry.
const error = new Error("this page has no agent surface");

export const loaded = { api: null, error };

export function createSurface() {
  throw error;
}

export function defineRegistry() {
  throw error;
}
