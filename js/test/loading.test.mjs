// Loading the surface is two requests for its scripts: pling-surface.js
// imports only pling-glue.js (a page preloads it beside the first, with
// <link rel="modulepreload">, so that it is not a request made only after
// the first had arrived and been parsed), and pling-shared.js names the
// very functions pling-surface.js holds, so a page may import either.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as surface from "../pling-surface.js";
import * as shared from "../pling-shared.js";

test("pling-surface.js imports only its glue, which imports nothing", async () => {
  const importsOf = async (name) => {
    const src = await readFile(new URL("../" + name, import.meta.url), "utf8");
    return src.split("\n").filter((line) => /^\s*(import\s|export\s.*\sfrom\s)/.test(line));
  };
  assert.deepEqual(await importsOf("pling-surface.js"), ['import { goGlue, randomUint32s } from "./pling-glue.js";']);
  assert.deepEqual(await importsOf("pling-glue.js"), []);
});

test("pling-shared.js names the functions of pling-surface.js", () => {
  const names = Object.keys(shared).sort();
  assert.deepEqual(names, ["applyShared", "httpAdapter", "httpGuard", "httpLimiter", "indexedDBGuard", "indexedDBLimiter"]);
  for (const name of names) assert.equal(shared[name], surface[name], name);
});
