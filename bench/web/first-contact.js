// An agent's first describe on a page that has gone idle, over the
// benchmark page's registry (app "orders", as in bench.html). ?mode= picks
// how the page starts the surface:
//
//   lazy    createSurface at the top level; the kernel starts when the
//           first agent message arrives
//   idle    the same with prefetch: "idle" (fetched and compiled in idle
//           time, started on first contact)
//   today   loadSurface(), which waits for the kernel before the page's
//           code runs: the cold start (row 4's) paid up front
//
// A runtime without a top-level createSurface has no lazy start: lazy and
// idle then say so (api "none") and measure nothing.
import { makePage, makeSession } from "./fixture.js";

const mode = new URLSearchParams(location.search).get("mode") || "lazy";
const page = makePage(48);
const session = makeSession(page.ids);
const options = { execute: page.execute, app: "orders", expose: page.ids, session };

const t0 = performance.now();
const mod = await import("/pling/pling-surface.js");
let state;
if (mode === "today") {
  const { createSurface, defineRegistry } = await mod.loadSurface();
  createSurface({ ...options, registry: defineRegistry(page.parts) }).listen();
  state = { api: "loadSurface", setupMs: performance.now() - t0 };
} else if (typeof mod.createSurface !== "function") {
  state = { api: "none" };
} else {
  const surface = mod.createSurface({
    ...options,
    registry: mod.defineRegistry(page.parts),
    ...(mode === "idle" ? { prefetch: "idle" } : {}),
  });
  surface.listen();
  // ready() resolves to the start's timings once the kernel is up; asked
  // only after the first describe, which starts it.
  state = { api: "createSurface", setupMs: performance.now() - t0, timings: () => surface.ready() };
}

window.__contact = { ready: true, isolated: globalThis.crossOriginIsolated === true, mode, ...state };
