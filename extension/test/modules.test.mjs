// The extension's scripts (extension/README.md, "How it is put together"):
// none over 800 lines, no import cycle, and every module they import (the
// client library's among them) is one the packaged extension holds, which
// the browser tests check for.
//
//   node --test extension/test/

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { modulesOf } from "../../js/client/classic.mjs";

const dir = new URL("../", import.meta.url);
// The client library's modules: pling-client.js and what it imports, which
// `make extension` copies beside the panel as classic.mjs --modules lists them.
const clientEntry = new URL("../../js/client/pling-client.js", import.meta.url);
const CLIENT_MODULES = modulesOf(await readFile(clientEntry, "utf8")).map((m) => m.file);
// What `make extension` adds from elsewhere (Makefile, target extension).
const COPIED = [...CLIENT_MODULES, "pling-client.classic.js", "page.js"];

// graph reads each extension/*.js: its length in lines and the files its
// static imports and re-exports name (single- and multi-line forms alike).
async function graph() {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".js"));
  const out = new Map();
  for (const f of files) {
    const src = await readFile(new URL(f, dir), "utf8");
    const lines = src.split("\n").length - (src.endsWith("\n") ? 1 : 0);
    const imports = [...src.matchAll(/^\s*(?:import|export)\s+(?:[^"';]*?\s+from\s+)?["']\.\/([^"']+)["']/gm)].map((m) => m[1]);
    out.set(f, { lines, imports });
  }
  return out;
}

test("no extension script is over 800 lines", async () => {
  for (const [f, m] of await graph()) assert.ok(m.lines <= 800, `${f} has ${m.lines} lines`);
});

test("no import is a cycle", async () => {
  const g = await graph();
  const state = new Map();
  const visit = (f, path) => {
    if (!g.has(f) || state.get(f) === "done") return;
    assert.notEqual(state.get(f), "open", `import cycle: ${[...path, f].join(" -> ")}`);
    state.set(f, "open");
    for (const i of g.get(f).imports) visit(i, [...path, f]);
    state.set(f, "done");
  };
  for (const f of g.keys()) visit(f, []);
});

test("every imported module is packaged and checked for by the browser tests", async () => {
  const g = await graph();
  const goTest = await readFile(new URL("../../e2e/extension_test.go", import.meta.url), "utf8");
  const listed = /var extensionFiles = \[\]string\{([^}]*)\}/.exec(goTest);
  assert.ok(listed, "extensionFiles is where this test reads it");
  const required = new Set([...listed[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]));
  for (const [f, m] of g) {
    for (const i of m.imports) {
      assert.ok(g.has(i) || COPIED.includes(i), `${f} imports ${i}, which make extension does not package`);
      assert.ok(required.has(i), `${f} imports ${i}, missing from extensionFiles in e2e/extension_test.go`);
    }
  }
});

test("the client library's modules are packaged beside the panel's, and checked for", async () => {
  // The client imports its parts from beside it: each must reach
  // build/extension, and none may share a name with an extension script,
  // which the copy would overwrite.
  const goTest = await readFile(new URL("../../e2e/extension_test.go", import.meta.url), "utf8");
  const listed = /var extensionFiles = \[\]string\{([^}]*)\}/.exec(goTest);
  const required = new Set([...listed[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]));
  const own = new Set(await readdir(dir));
  assert.ok(CLIENT_MODULES.length > 1, "the client's entry imports its parts");
  for (const f of CLIENT_MODULES) {
    assert.ok(required.has(f), `the client's ${f} is missing from extensionFiles in e2e/extension_test.go`);
    assert.ok(!own.has(f), `extension/${f} has the name of a client module; make extension would overwrite it`);
  }
});

test("the graph sees the panel's modules", async () => {
  // A pattern that matched nothing would pass the tests above vacuously.
  const g = await graph();
  assert.ok(g.get("panel.js").imports.length > 3, "panel.js imports its parts");
  assert.ok(g.get("panel-call.js").imports.includes("pling-client.js"));
});
