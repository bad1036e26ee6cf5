// The rules the page runtime's WebMCP bridge, the extension panel and the
// client library share with the Go side (pling-mcp, the Go client), run
// from the vectors under testdata/rules that the Go tests run too
// (mcpfacade/rules_test.go, client/vectors_test.go). A difference is a bug
// in one of them, not in the vector.
//
//   node --test js/test/rules.test.mjs

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { recordEnum, toolInputSchema, WEBMCP_DEFAULT_RECORD_ENUM_LIMIT } from "../pling-webmcp.js";
import { isReferenceable } from "../client/pling-client.js";

const rules = (name) => JSON.parse(readFileSync(new URL(`../../testdata/rules/${name}`, import.meta.url), "utf8"));
const plain = (v) => JSON.parse(JSON.stringify(v));

describe("capability to tool: record enum", () => {
  const { recordEnum: vectors } = rules("tools.json");
  for (const v of vectors) {
    test(v.name, () => {
      assert.deepEqual(recordEnum(v.capability, v.context, v.limit), v.enum);
    });
  }
});

describe("capability to tool: input schema", () => {
  const { inputSchema: vectors } = rules("tools.json");
  for (const v of vectors) {
    test(v.name, () => {
      const c = v.capability;
      let param = null;
      if (c.record) param = { name: c.record.param, ids: recordEnum(c, v.context, WEBMCP_DEFAULT_RECORD_ENUM_LIMIT), description: "" };
      const schema = plain(toolInputSchema(c, param));
      if (param) delete schema.properties[param.name].description;
      assert.deepEqual(schema, v.schema);
    });
  }
});

// The panel is an extension page (DOM, chrome.*): its rule is read from its
// source, where it is one regular expression.
describe("page text: the characters made visible", () => {
  const { visible, shown } = rules("pagetext.json");
  const src = readFileSync(new URL("../../extension/panel-words.js", import.meta.url), "utf8");
  const m = /^const HIDDEN = \/(.+)\/gu;$/m.exec(src);
  test("the panel's rule is where this test reads it", () => assert.ok(m));
  const hidden = new RegExp(m[1], "u");
  test("the panel makes each visible", () => {
    const missed = visible.filter((cp) => !hidden.test(String.fromCodePoint(cp)));
    assert.deepEqual(missed.map((cp) => cp.toString(16)), []);
  });
  test("the panel shows the others as themselves", () => {
    const caught = shown.filter((cp) => hidden.test(String.fromCodePoint(cp)));
    assert.deepEqual(caught.map((cp) => cp.toString(16)), []);
  });
});

describe("referenceability", () => {
  for (const v of rules("referenceable.json")) {
    test(v.name, () => {
      assert.equal(isReferenceable({ context: v.context }, v.id), v.want === null ? undefined : v.want);
    });
  }
});

// The protocol string: one value, written in each standalone file (the
// runtime's constants, the WebMCP bridge, the client library's bounds).
describe("the protocol string", () => {
  const { protocol } = rules("protocol.json");
  for (const file of ["constants.js", "pling-webmcp.js", "client/bounds.js"]) {
    test(file, () => {
      const src = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
      const found = [...src.matchAll(/^(?:export )?const (?:SURFACE_)?PROTOCOL = "([^"]*)";$/gm)].map((m) => m[1]);
      assert.deepEqual(found, [protocol]);
    });
  }
});
