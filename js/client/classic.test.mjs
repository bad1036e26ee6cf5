// classic.mjs over module graphs written for the test: what it makes of
// them, and each thing it must refuse rather than build a script that
// behaves otherwise than the modules do.
//
//   node --test js/client/

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

import { modulesOf, toClassic } from "./classic.mjs";

// build runs classic.mjs on the modules given by name, "main.js" the entry.
function build(files) {
  const read = (f) => {
    if (!Object.hasOwn(files, f)) throw new Error(`no module ${f}`);
    return files[f];
  };
  return toClassic(files["main.js"], { entry: "main.js", read, name: "Lib" });
}

function run(script) {
  const ctx = vm.createContext({});
  vm.runInContext(script, ctx);
  return ctx.Lib;
}

describe("classic.mjs", () => {
  test("concatenates the modules in dependency order, each once, inside one function", () => {
    const script = build({
      "main.js": 'import { twice } from "./b.js";\nimport { base } from "./a.js";\nexport { twice, base };\n',
      "b.js": 'import { base } from "./a.js";\n\nexport function twice() {\n  return base * 2;\n}\n',
      "a.js": "export const base = 21;\nconst hidden = 1;\nexport let later = hidden;\n",
    });
    assert.ok(script.indexOf("// ---- a.js") < script.indexOf("// ---- b.js"), "a.js, which b.js imports, comes first");
    assert.equal(script.match(/\/\/ ---- a\.js/g).length, 1);
    assert.doesNotMatch(script, /^\s*(import|export)\b/m);
    const lib = run(script);
    assert.deepEqual(Object.keys(lib), ["twice", "base"]);
    assert.equal(lib.twice(), 42);
    assert.ok(Object.isFrozen(lib));
    // Nothing but the entry's exports leaves the function.
    const ctx = vm.createContext({});
    vm.runInContext(script, ctx);
    assert.equal(ctx.hidden, undefined);
    assert.equal(ctx.base, undefined);
  });

  test("imports may span lines", () => {
    const lib = run(build({ "main.js": 'import {\n  a,\n  b,\n} from "./x.js";\nexport { a, b };\n', "x.js": "export const a = 1;\nexport const b = 2;\n" }));
    assert.equal(lib.a + lib.b, 3);
  });

  test("refuses a name declared at top level in two modules", () => {
    assert.throws(
      () => build({ "main.js": 'import { a } from "./x.js";\nimport { b } from "./y.js";\nexport { a, b };\n', "x.js": "const n = 1;\nexport const a = n;\n", "y.js": "function n() {}\nexport const b = n;\n" }),
      /n is declared at top level in both x\.js and y\.js/,
    );
  });

  test("refuses a renamed import", () => {
    assert.throws(() => build({ "main.js": 'import { a as b } from "./x.js";\nexport { b };\n', "x.js": "export const a = 1;\n" }), /renamed imports/);
  });

  test("refuses an import from outside js/client/", () => {
    for (const from of ["../pling-protocol.js", "/abs.js", "node:fs", "https://example.com/x.js", "x.js"]) {
      assert.throws(() => build({ "main.js": `import { a } from "${from}";\nexport { a };\n` }), /from outside js\/client\//, from);
    }
    assert.throws(() => build({ "main.js": 'import { a } from "./sub/x.js";\nexport { a };\n' }), /only modules beside it/);
  });

  test("refuses a default export", () => {
    assert.throws(() => build({ "main.js": 'import { a } from "./x.js";\nexport { a };\n', "x.js": "export const a = 1;\nexport default a;\n" }), /default export/);
    assert.throws(() => build({ "main.js": "export default function f() {}\n" }), /default export/);
  });

  test("refuses import.meta and dynamic import in any module", () => {
    const entry = 'import { a } from "./x.js";\nexport { a };\n';
    assert.throws(() => build({ "main.js": entry, "x.js": "export const a = import.meta.url;\n" }), /x\.js: uses import\.meta/);
    assert.throws(() => build({ "main.js": entry, "x.js": 'export const a = () => import("./y.js");\n' }), /x\.js: imports dynamically/);
  });

  test("refuses other import and export forms", () => {
    const x = "export const a = 1;\n";
    for (const main of [
      'import * as x from "./x.js";\nexport { x };\n',
      'import a from "./x.js";\nexport { a };\n',
      'import "./x.js";\nexport const b = 1;\n',
      "import { a } from './x.js';\nexport { a };\n",
      'export { a } from "./x.js";\n',
      'export * from "./x.js";\n',
    ]) {
      assert.throws(() => build({ "main.js": main, "x.js": x }), main);
    }
    // Outside the entry, exports are declarations.
    assert.throws(() => build({ "main.js": 'import { a } from "./x.js";\nexport { a };\n', "x.js": "const a = 1;\nexport { a };\n" }), /export lists are for the entry/);
  });

  test("refuses an import cycle", () => {
    assert.throws(
      () => build({ "main.js": 'import { a } from "./x.js";\nexport { a };\n', "x.js": 'import { b } from "./y.js";\nexport const a = b;\n', "y.js": 'import { a } from "./x.js";\nexport const b = 1;\nexport const c = a;\n' }),
      /import cycle: main\.js -> x\.js -> y\.js -> x\.js/,
    );
  });

  test("refuses an import of a name the module does not export", () => {
    assert.throws(() => build({ "main.js": 'import { a } from "./x.js";\nexport { a };\n', "x.js": "const a = 1;\nexport const b = a;\n" }), /imports a, which x\.js does not export/);
  });

  test("refuses a top-level destructuring declaration, whose names it cannot read", () => {
    assert.throws(() => build({ "main.js": 'import { a } from "./x.js";\nexport { a };\n', "x.js": "const { a, n } = { a: 1, n: 2 };\nexport const b = n;\n" }), /destructuring/);
  });

  test("refuses an entry that exports a name it does not hold", () => {
    assert.throws(() => build({ "main.js": 'import { a } from "./x.js";\nexport { a, b };\n', "x.js": "export const a = 1;\n" }), /exports b, which it neither declares nor imports/);
  });

  test("--modules lists the library's files, the entry last", () => {
    const cli = fileURLToPath(new URL("./classic.mjs", import.meta.url));
    const entry = fileURLToPath(new URL("./pling-client.js", import.meta.url));
    const listed = execFileSync(process.execPath, [cli, "--modules", entry], { encoding: "utf8" }).trim().split("\n");
    assert.equal(listed.at(-1), entry);
    assert.ok(listed.length > 1);
    assert.deepEqual(
      listed.map((f) => f.slice(f.lastIndexOf("/") + 1)),
      modulesOf(readFileSync(entry, "utf8")).map((m) => m.file),
    );
  });
});
