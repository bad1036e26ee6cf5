// Unit tests of page.js, pling-mcp's caller inside the page, in Node with a
// fake window: the same source the facade evaluates in the page's isolated
// world. Run: node --test mcpfacade/page.test.mjs (make test-client).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const ORIGIN = "https://shop.example";
const source = readFileSync(new URL("./page.js", import.meta.url), "utf8");

// load evaluates page.js in a context of its own whose window answers every
// request with answer(envelope), as the page's surface would. It returns the
// request function and the longest text JSON.stringify made in the context.
function load(answer) {
  const listeners = [];
  let longest = 0;
  const ctx = {
    location: { origin: ORIGIN },
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    addEventListener: (type, fn) => type === "message" && listeners.push(fn),
  };
  ctx.window = ctx;
  ctx.postMessage = (msg) => {
    if (msg.kind !== "request") return;
    const data = answer(msg.envelope);
    setImmediate(() => {
      for (const fn of listeners) fn({ source: win, origin: ORIGIN, data });
    });
  };
  vm.createContext(ctx);
  const win = vm.runInContext("window", ctx); // the context's own global, as the page's window
  const stringify = vm.runInContext("JSON.stringify", ctx);
  vm.runInContext("JSON", ctx).stringify = (...args) => {
    const s = stringify(...args);
    if (typeof s === "string") longest = Math.max(longest, s.length);
    return s;
  };
  vm.runInContext(source, ctx);
  return { request: ctx.__plingMCPFacade.request, longest: () => longest };
}

const reply = (id, result) => ({ channel: "pling.surface", kind: "response", envelope: { protocol: "pling.surface/0.1", id, ok: true, result } });
const describe = (id) => JSON.stringify({ protocol: "pling.surface/0.1", id, method: "describe" });
const MAX = 1 << 20;

test("an answer within the bound is handed over whole", async () => {
  const p = load((env) => reply(env.id, { rows: [1.5, true, null, "é\n"] }));
  const text = await p.request(describe("d-1"), "", 1000, MAX, ORIGIN);
  assert.deepEqual(JSON.parse(text).envelope.result, { rows: [1.5, true, null, "é\n"] });
});

// The walk that sizes an answer before it is encoded must count what the
// encoding writes: a number counted as one byte is up to 24 in JSON, a
// control character in a string six, so an answer the walk let through
// was encoded at many times the bound before the bound refused it.
for (const [name, value] of [
  ["numbers", () => Array.from({ length: 400_000 }, (_, i) => -1.2345678901234567e-300 * (i + 1))],
  ["booleans", () => new Array(400_000).fill(false)],
  ["escaped characters", () => "\u0001".repeat(900_000)],
  // Structured clones keep wrapper objects: JSON writes their values.
  ["boxed booleans", () => Array.from({ length: 340_000 }, () => new Boolean(false))],
  ["boxed strings", () => [new String("\u0001".repeat(900_000))]],
]) {
  test(`an answer of ${name} larger than the bound is refused before it is encoded`, async () => {
    const big = value();
    const p = load((env) => reply(env.id, { big }));
    await assert.rejects(p.request(describe("d-2"), "", 5000, MAX, ORIGIN), /larger than the bound/);
    assert.ok(p.longest() <= MAX, `encoded ${p.longest()} characters for a bound of ${MAX}`);
  });
}

// Random answers: whatever the bound, nothing longer than it is encoded,
// and an answer that fits is handed over (the walk counts each value as
// JSON writes it, never much more).
test("the walk never lets the encoding pass the bound, and refuses nothing that fits", async () => {
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const strings = ["", "a", '"\\', "\u0001\n", "é", "😀", "\ud800", "x\udc00y", "\u2028"];
  const value = (depth) => {
    switch (depth > 3 ? rand(5) : rand(8)) {
      case 0: return strings[rand(strings.length)].repeat(1 + rand(40));
      case 1: return [0, -1.2345678901234567e-300, 1e21, 42, NaN][rand(5)];
      case 2: return [true, false, null, undefined][rand(4)];
      case 3: return new Date(rand(2) ? 0 : NaN);
      case 4: return new Number(-1.5e-300);
      case 5: return Array.from({ length: rand(6) }, () => value(depth + 1));
      default: {
        const o = {};
        for (let i = rand(5); i > 0; i--) o[strings[rand(strings.length)] + i] = value(depth + 1);
        return o;
      }
    }
  };
  for (let i = 0; i < 300; i++) {
    const result = { v: value(0) };
    let seen;
    const p = load((env) => (seen = reply(env.id, result)));
    const bound = 16 + rand(400);
    const got = await p.request(describe(`d-${i}`), "", 1000, bound, ORIGIN).then((t) => t, (e) => e);
    assert.ok(p.longest() <= bound, `encoded ${p.longest()} for a bound of ${bound}: ${JSON.stringify(result)}`);
    const size = Buffer.byteLength(JSON.stringify(seen));
    if (size * 2 + 64 <= bound) assert.equal(typeof got, "string", `refused ${size} bytes under a bound of ${bound}: ${got}`);
    const roomy = load((env) => reply(env.id, result));
    assert.equal(typeof (await roomy.request(describe(`e-${i}`), "", 1000, size * 2 + 64, ORIGIN)), "string", `refused ${size} bytes`);
  }
});
