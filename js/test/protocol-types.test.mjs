// The protocol's messages are declared once, in js/pling-protocol.d.ts: the
// page runtime's and the client library's declarations import them, so the
// two cannot drift apart (they had: the same Capability with a closed
// effect in one and an open one in the other).
//
//   node --test js/test/protocol-types.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const read = (path) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
const declared = (src) => [...src.matchAll(/^export (?:interface|type) (\w+)\b/gm)].map((m) => m[1]);

const protocol = declared(read("pling-protocol.d.ts"));

test("the shared file declares the wire shapes", () => {
  for (const name of ["Capability", "Description", "RecordView", "Observation", "Violation", "InvokeRequest", "DescribeRequest", "ErrorCode"]) {
    assert.ok(protocol.includes(name), name);
  }
});

for (const file of ["pling-surface.d.ts", "client/pling-client.d.ts"]) {
  test(`${file} declares none of them again`, () => {
    const again = declared(read(file)).filter((n) => protocol.includes(n));
    assert.deepEqual(again, []);
  });
}
