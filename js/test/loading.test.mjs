// Loading the surface is one request for its script: pling-surface.js
// imports no other module (each would be a request made only after the
// script had arrived and been parsed), and pling-shared.js names the very
// functions pling-surface.js holds, so a page may import either.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as surface from "../pling-surface.js";
import * as shared from "../pling-shared.js";

test("pling-surface.js imports no module", async () => {
  const src = await readFile(new URL("../pling-surface.js", import.meta.url), "utf8");
  const imports = src.split("\n").filter((line) => /^\s*(import\s|export\s.*\sfrom\s)/.test(line));
  assert.deepEqual(imports, []);
});

test("pling-shared.js names the functions of pling-surface.js", () => {
  const names = Object.keys(shared).sort();
  assert.deepEqual(names, ["applyShared", "httpAdapter", "httpGuard", "httpLimiter", "indexedDBGuard", "indexedDBLimiter"]);
  for (const name of names) assert.equal(shared[name], surface[name], name);
});
