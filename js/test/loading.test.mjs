// The runtime's modules (js/README.md, "Modules"): none over 800 lines, no
// import cycle, and the first script's graph holds everything the kernel
// needs but not what is loaded when first needed (pling-shared.js,
// pling-webmcp.js). Those take what they import of the first script's
// modules from pling-surface.js itself once bundled, so every such name
// must be one pling-surface.js exports, as the same value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import * as surface from "../pling-surface.js";
import * as shared from "../pling-shared.js";

const dir = new URL("../", import.meta.url);
const LATER = ["pling-kernel.js", "pling-shared.js", "pling-webmcp.js"];

async function graph() {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".js"));
  const out = new Map();
  for (const f of files) {
    const src = await readFile(new URL(f, dir), "utf8");
    const imports = [];
    for (const m of src.matchAll(/^(?:import|export)\s+(?:\{([^}]*)\}|\*(?:\s+as\s+\w+)?)\s+from\s+"\.\/([^"]+)";/gm)) {
      const names = m[1] === undefined ? [] : m[1].split(",").map((s) => s.trim().split(/\s+as\s+/)[0]).filter(Boolean);
      imports.push({ from: m[2], names });
    }
    out.set(f, { lines: src.split("\n").length, imports });
  }
  return out;
}

function reach(g, start) {
  const seen = new Set();
  const walk = (f) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const i of g.get(f).imports) walk(i.from);
  };
  walk(start);
  return seen;
}

test("no module is over 800 lines, and no import is a cycle", async () => {
  const g = await graph();
  for (const [f, m] of g) assert.ok(m.lines <= 800, `${f} has ${m.lines} lines`);
  const state = new Map();
  const visit = (f, path) => {
    if (state.get(f) === "done") return;
    assert.notEqual(state.get(f), "open", `import cycle: ${[...path, f].join(" -> ")}`);
    state.set(f, "open");
    for (const i of g.get(f).imports) visit(i.from, [...path, f]);
    state.set(f, "done");
  };
  for (const f of g.keys()) visit(f, []);
});

test("the first script captures and listens; the kernel's host and glue are loaded later", async () => {
  const g = await graph();
  const first = reach(g, "pling-surface.js");
  for (const f of ["intrinsics.js", "transport.js", "kernel.js", "api.js"]) assert.ok(first.has(f), f);
  for (const f of ["pling-glue.js", "host.js"]) assert.ok(!first.has(f), `${f} is in the first script`);
  for (const f of LATER) assert.ok(!first.has(f), `${f} is in the first script`);
});

test("what a later module imports of the first script, pling-surface.js exports", async () => {
  const g = await graph();
  const first = reach(g, "pling-surface.js");
  for (const later of LATER) {
    for (const i of g.get(later).imports) {
      if (!first.has(i.from)) continue;
      const mod = await import(new URL(i.from, dir));
      for (const name of i.names) {
        assert.ok(name in surface, `${later} imports ${name} from ${i.from}, which pling-surface.js does not export`);
        assert.equal(surface[name], mod[name], `${name}: pling-surface.js exports another value`);
      }
    }
  }
});

test("pling-shared.js names the HTTP adapters of pling-surface.js and its IndexedDB ones", () => {
  assert.deepEqual(Object.keys(shared).sort(), ["applyShared", "backendAdapter", "httpAdapter", "httpGuard", "httpLimiter", "indexedDBGuard", "indexedDBLimiter"]);
  for (const name of ["applyShared", "httpAdapter", "httpGuard", "httpLimiter"]) assert.equal(shared[name], surface[name], name);
});
