// Turns pling-client.js into a classic script that defines
// globalThis.PlingClient, for the places that cannot load a module: a
// Manifest V3 content script declared in manifest.json is a classic script.
// No bundler: the module is written so that this is a checked text edit
// (no imports, no import.meta, exactly one `export { ... };` at the end).
//
//   node js/client/classic.mjs js/client/pling-client.js > pling-client.classic.js

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const EXPORT_LIST = /^export \{([^}]*)\};\s*$/m;

/** toClassic returns the classic-script text of the module source, or throws. */
export function toClassic(source, name = "PlingClient") {
  const exports = source.match(new RegExp(EXPORT_LIST.source, "gm")) || [];
  if (exports.length !== 1) throw new Error(`expected exactly one "export { ... };" statement, found ${exports.length}`);
  const body = source.replace(EXPORT_LIST, "");
  // Whole-line comments may mention anything; code may not import.
  const code = body
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n");
  if (/^\s*(import|export)\b/m.test(code) || /\bimport\s*\.\s*meta\b/.test(code) || /\bimport\s*\(/.test(code)) {
    throw new Error("the module imports or exports outside its final export list; it cannot become a classic script");
  }
  const names = source
    .match(EXPORT_LIST)[1]
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!/^[A-Za-z_$][\w$]*$/.test(n)) throw new Error(`cannot re-export ${JSON.stringify(n)} (renamed exports are not supported)`);
  }
  return [
    "// Generated from pling-client.js by classic.mjs: do not edit.",
    "(() => {",
    '"use strict";',
    body.trimEnd(),
    `globalThis.${name} = Object.freeze({ ${names.join(", ")} });`,
    "})();",
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [input] = process.argv.slice(2);
  if (!input) {
    process.stderr.write("usage: node classic.mjs <module.js>\n");
    process.exit(2);
  }
  process.stdout.write(toClassic(readFileSync(input, "utf8")));
}
