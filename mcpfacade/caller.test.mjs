// Unit tests of what pling-mcp evaluates in the page's isolated world (the
// client library's classic build, then caller.js), in Node with a fake
// window: the same source the facade embeds. Run: node --test
// mcpfacade/caller.test.mjs (make test-client).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const ORIGIN = "https://shop.example";
const source = readFileSync(new URL("./pling-client.classic.js", import.meta.url), "utf8") + "\n" + readFileSync(new URL("./caller.js", import.meta.url), "utf8");

// load evaluates the caller in a context of its own whose window answers
// every request with answer(envelope), as the page's surface would, once it
// listens (after listenAfterMs). It returns the request function, the
// requests posted, and the longest text JSON.stringify made in the context.
function load(answer, { origin = ORIGIN, listenAfterMs = 0 } = {}) {
  const listeners = [];
  const posted = [];
  let longest = 0;
  const started = Date.now();
  const ctx = {
    location: { origin },
    crypto: globalThis.crypto,
    setTimeout,
    clearTimeout,
    addEventListener: (type, fn) => type === "message" && listeners.push(fn),
    removeEventListener: (type, fn) => type === "message" && listeners.splice(listeners.indexOf(fn) >>> 0, 1),
  };
  ctx.window = ctx;
  ctx.postMessage = (msg) => {
    if (msg.kind !== "request") return;
    posted.push(msg);
    if (Date.now() - started < listenAfterMs) return; // nothing listens yet
    const data = answer(msg.envelope);
    setImmediate(() => {
      for (const fn of [...listeners]) fn({ source: win, origin, data, isTrusted: true });
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
  assert.equal(vm.runInContext(source, ctx), true);
  return { request: ctx.__plingMCPFacade.request, posted, longest: () => longest };
}

const reply = (id, result) => ({ channel: "pling.surface", kind: "response", envelope: { protocol: "pling.surface/0.1", id, ok: true, result } });
const describe = (id) => JSON.stringify({ protocol: "pling.surface/0.1", id, method: "describe" });
const invoke = (id) => JSON.stringify({ protocol: "pling.surface/0.1", id, method: "invoke", capability: "orders.search", input: {} });
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
]) {
  test(`an answer of ${name} larger than the bound is refused before it is encoded`, async () => {
    const big = value();
    const p = load((env) => reply(env.id, { big }));
    await assert.rejects(p.request(describe("d-2"), "", 5000, MAX, ORIGIN), /larger than the bound/);
    assert.ok(p.longest() <= MAX, `encoded ${p.longest()} characters for a bound of ${MAX}`);
  });
}

// Structured clones carry what JSON cannot: wrapper objects, dates,
// undefined. Such an answer is not the surface's, and is refused unread.
for (const [name, value] of [
  ["boxed booleans", () => Array.from({ length: 340_000 }, () => new Boolean(false))],
  ["boxed strings", () => [new String("\u0001".repeat(900_000))]],
  ["a date", () => new Date(0)],
  ["undefined", () => undefined],
]) {
  test(`an answer holding ${name} is refused as not JSON, unencoded`, async () => {
    const v = value();
    const p = load((env) => reply(env.id, { v }));
    await assert.rejects(p.request(describe("d-3"), "", 5000, MAX, ORIGIN), /not readable as JSON/);
    assert.equal(p.longest(), 0);
  });
}

// Random JSON answers: whatever the bound, nothing longer than it is
// encoded, and an answer that fits is handed over.
test("the walk never lets the encoding pass the bound, and refuses nothing that fits", async () => {
  let seed = 7;
  const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const strings = ["", "a", '"\\', "\u0001\n", "é", "😀", "\ud800", "x\udc00y", "\u2028"];
  const value = (depth) => {
    switch (depth > 3 ? rand(4) : rand(6)) {
      case 0: return strings[rand(strings.length)].repeat(1 + rand(40));
      case 1: return [0, -1.2345678901234567e-300, 1e21, 42][rand(4)];
      case 2: return [true, false, null][rand(3)];
      case 3: return rand(1000) / 7;
      case 4: return Array.from({ length: rand(6) }, () => value(depth + 1));
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

test("a document of another origin gets nothing, not even a describe", async () => {
  const p = load((env) => reply(env.id, {}), { origin: "https://elsewhere.example" });
  await assert.rejects(p.request(describe("d-4"), "", 1000, MAX, ORIGIN), /another origin: https:\/\/elsewhere\.example/);
  assert.equal(p.posted.length, 0);
});

test("a describe is asked again until the page listens; the first invoke waits for one", async () => {
  const p = load((env) => reply(env.id, {}), { listenAfterMs: 300 });
  const text = await p.request(invoke("i-1"), "", 5000, MAX, ORIGIN);
  assert.equal(JSON.parse(text).envelope.id, "i-1");
  const methods = p.posted.map((m) => m.envelope.method);
  assert.deepEqual(methods.slice(-1), ["invoke"], "the invoke is posted once, after a describe was answered");
  assert.ok(methods.filter((m) => m === "describe").length >= 2, `posted ${methods}`);
  // Answered now: a later describe is posted once.
  const before = p.posted.length;
  await p.request(describe("d-5"), "", 1000, MAX, ORIGIN);
  assert.equal(p.posted.length - before, 1);
});
