// Turns pling-client.js and the modules it imports into one classic script
// that defines globalThis.PlingClient, for the places that cannot load a
// module: a Manifest V3 content script declared in manifest.json is a
// classic script. No bundler: the modules are written so that this is a
// checked text edit, and anything it cannot do safely is refused:
//
//   - between modules only `import { a, b } from "./x.js";` (the braces may
//     span lines), of a module beside this file, never renamed;
//   - a module's exports are top-level declarations written `export
//     function/const/let/class`; the entry alone also has one `export { ... };`
//     list, which names what globalThis.PlingClient holds;
//   - no default export, no import.meta, no dynamic import, no cycle;
//   - top-level declarations start at column 0 (as Prettier writes them), and
//     no name is declared at top level in two modules: in the one function
//     the modules share, the second would shadow or break the first.
//
// The modules are concatenated in dependency order, the order in which a
// module graph without cycles evaluates them, with the import lines and the
// `export` keywords removed.
//
//   node js/client/classic.mjs js/client/pling-client.js > pling-client.classic.js
//   node js/client/classic.mjs --modules js/client/pling-client.js   (the files it reads)

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CLIENT_DIR = path.dirname(fileURLToPath(import.meta.url));

const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*"([^"]*)";[ \t]*$/gm;
const EXPORT_LIST = /^export \{([^}]*)\};[ \t]*$/gm;
const EXPORT_DECLARATION = /^export (async function\*? |function\*? |class |const |let )/gm;
const DECLARATION = /^(?:async function\s*\*?|function\s*\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
// A module beside this file: "./name.js", no directory.
const SIBLING = /^\.\/[\w-]+(?:\.[\w-]+)*\.js$/;

const readSibling = (file) => readFileSync(path.join(CLIENT_DIR, file), "utf8");

// codeLines is the source without its whole-line comments, where anything
// may be mentioned; the checks read code only.
function codeLines(source) {
  return source
    .split("\n")
    .filter((line) => {
      const t = line.trimStart();
      return !t.startsWith("//") && !t.startsWith("*") && !t.startsWith("/*");
    })
    .join("\n");
}

function names(list, file, what) {
  const out = list
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
  for (const n of out) {
    if (!IDENTIFIER.test(n)) throw new Error(`${file}: cannot ${what} ${JSON.stringify(n)} (renamed ${what}s are not supported)`);
  }
  return out;
}

// readModule takes one module apart: its imports, the names it exports,
// the names it declares at top level, and its text without import
// statements and export keywords.
function readModule(file, source, isEntry) {
  const imports = [];
  let body = source.replace(IMPORT, (_, list, from) => {
    if (from.startsWith("../") || from.startsWith("/") || /^[a-z][\w+.-]*:/i.test(from) || !from.startsWith("./")) {
      throw new Error(`${file}: imports ${JSON.stringify(from)}, from outside js/client/`);
    }
    if (!SIBLING.test(from)) throw new Error(`${file}: imports ${JSON.stringify(from)}; only modules beside it ("./name.js") are read`);
    imports.push({ from: from.slice(2), names: names(list, file, "import") });
    return "";
  });
  const code = codeLines(body);
  if (/\bimport\s*\.\s*meta\b/.test(code)) throw new Error(`${file}: uses import.meta, which a classic script has not`);
  if (/\bimport\s*\(/.test(code)) throw new Error(`${file}: imports dynamically, which classic.mjs cannot follow`);
  if (/^\s*import\b/m.test(code)) throw new Error(`${file}: has an import other than import { a, b } from "./x.js";`);
  if (/^\s*export\s+default\b/m.test(code)) throw new Error(`${file}: has a default export, which globalThis.PlingClient cannot name`);

  const exported = [];
  const lists = body.match(EXPORT_LIST) || [];
  if (lists.length > 0 && !isEntry) throw new Error(`${file}: export lists are for the entry; export declarations here`);
  if (lists.length > 1) throw new Error(`${file}: expected at most one "export { ... };" statement, found ${lists.length}`);
  for (const l of lists) exported.push(...names(l.replace(EXPORT_LIST, "$1"), file, "export"));
  body = body.replace(EXPORT_LIST, "");
  body = body.replace(EXPORT_DECLARATION, (_, kind) => kind);
  for (const m of source.matchAll(EXPORT_DECLARATION)) {
    const at = source.slice(m.index + "export ".length);
    exported.push(DECLARATION.exec(at)[1]);
  }
  if (/^\s*export\b/m.test(codeLines(body))) throw new Error(`${file}: has an export other than a declaration${isEntry ? " or the one export list" : ""}`);

  const declared = [];
  for (const line of codeLines(body).split("\n")) {
    if (/^(?:const|let|var)\s*[{[]/.test(line)) throw new Error(`${file}: a destructuring declaration at top level; its names cannot be read safely`);
    const m = DECLARATION.exec(line);
    if (m) declared.push(m[1]);
  }
  return { file, imports, exported, declared, body };
}

/**
 * modulesOf reads the entry (its source given) and every module it imports,
 * and returns them in dependency order, the entry last; it throws on
 * anything the classic build cannot do safely. read(file) gives the source
 * of a module beside this file by its name.
 */
export function modulesOf(source, { entry = "pling-client.js", read = readSibling } = {}) {
  const order = [];
  const state = new Map(); // file -> "open" | module
  const visit = (file, text, trail) => {
    if (state.get(file) === "open") throw new Error(`import cycle: ${[...trail, file].join(" -> ")}`);
    if (state.has(file)) return state.get(file);
    state.set(file, "open");
    const m = readModule(file, text, file === entry);
    for (const imp of m.imports) {
      const dep = visit(imp.from, read(imp.from), [...trail, file]);
      for (const n of imp.names) {
        if (!dep.exported.includes(n) || !dep.declared.includes(n)) throw new Error(`${file}: imports ${n}, which ${imp.from} does not export`);
      }
    }
    state.set(file, m);
    order.push(m);
    return m;
  };
  const main = visit(entry, source, []);
  const owner = new Map();
  for (const m of order) {
    for (const n of m.declared) {
      if (owner.has(n)) throw new Error(`${n} is declared at top level in both ${owner.get(n)} and ${m.file}`);
      owner.set(n, m.file);
    }
  }
  if (main.exported.length === 0) throw new Error(`${entry}: exports nothing`);
  const reached = new Set([...main.declared, ...main.imports.flatMap((i) => i.names)]);
  for (const n of main.exported) {
    if (!reached.has(n)) throw new Error(`${entry}: exports ${n}, which it neither declares nor imports`);
  }
  return order;
}

/** toClassic returns the classic-script text of the entry (its source given) and its imports, or throws. */
export function toClassic(source, { name = "PlingClient", entry = "pling-client.js", read = readSibling } = {}) {
  const order = modulesOf(source, { entry, read });
  const main = order[order.length - 1];
  return [
    `// Generated from ${entry} and the modules it imports by classic.mjs: do not edit.`,
    "(() => {",
    '"use strict";',
    ...order.map((m) => `// ---- ${m.file}\n${m.body.trim()}`),
    `globalThis.${name} = Object.freeze({ ${main.exported.join(", ")} });`,
    "})();",
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const list = args[0] === "--modules";
  const input = list ? args[1] : args[0];
  if (!input) {
    process.stderr.write("usage: node classic.mjs [--modules] <js/client entry module>\n");
    process.exit(2);
  }
  const file = path.resolve(input);
  if (path.dirname(file) !== CLIENT_DIR) {
    process.stderr.write(`classic.mjs: ${input} is not a module of ${CLIENT_DIR}\n`);
    process.exit(2);
  }
  const entry = path.basename(file);
  const source = readFileSync(file, "utf8");
  if (list) process.stdout.write(modulesOf(source, { entry }).map((m) => path.join(path.dirname(input), m.file)).join("\n") + "\n");
  else process.stdout.write(toClassic(source, { entry }));
}
