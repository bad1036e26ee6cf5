// What loading the surface costs the page's own JavaScript: everyday
// operations of page code, timed in this page before loadSurface() and again
// after it, in the same order, with the same warm-up. The surface makes some
// built-ins read-only when it loads; a built-in V8 no longer sees as it
// shipped can lose its fast path for every caller in the page, not only for
// the surface (Array.prototype.push, read-only, made every array's push
// about 8 times slower).
import { makePage } from "./fixture.js";

const page = makePage(48);
const rows = page.parts.records();
const view = {
  route: page.parts.route,
  regions: page.parts.regions,
  state: page.parts.state(),
  feedback: [],
  unavailable: [],
  records: rows.slice(0, 8),
  recordIds: rows.map((r) => r.id),
  recordIdsTotal: rows.length,
  recordsTotal: rows.length,
};
const text = JSON.stringify(view);
const memory = new DataView(new ArrayBuffer(4096));
const settled = Promise.resolve(0);
const add = (x) => x + 1;

// Each operation does a small batch of work and returns a number, so that
// nothing is optimised away.
const operations = [
  ["JSON.stringify of a 1.7 KB view", () => JSON.stringify(view).length],
  ["JSON.parse of it", () => JSON.parse(text).records.length],
  ["Array.prototype.push, 100 times", () => {
    const a = [];
    for (let i = 0; i < 100; i++) a.push(i);
    return a.length;
  }],
  ["Array.prototype.map over 48 rows", () => rows.map((r) => r.id).length],
  ["stores into a holey array, 20", () => {
    const a = new Array(20);
    for (let i = 0; i < 20; i++) a[i] = i;
    return a.length;
  }],
  ["new Map from 3 entries", () => new Map([[1, 2], [3, 4], [5, 6]]).size],
  ["Map set and get, 50 each", () => {
    const m = new Map();
    let s = 0;
    for (let i = 0; i < 50; i++) m.set(i & 7, i);
    for (let i = 0; i < 50; i++) s += m.get(i & 7);
    return s;
  }],
  ["Reflect.apply, 50 times", () => {
    let s = 0;
    for (let i = 0; i < 50; i++) s += Reflect.apply(add, null, [i]);
    return s;
  }],
  ["Function.prototype.call, 50 times", () => {
    let s = 0;
    for (let i = 0; i < 50; i++) s += add.call(null, i);
    return s;
  }],
  ["DataView set and get, 50 each", () => {
    let s = 0;
    for (let i = 0; i < 50; i++) {
      memory.setUint32(i * 4, i, true);
      s += memory.getUint32(i * 4, true);
    }
    return s;
  }],
  ["instanceof Promise, 20 times", () => {
    let s = 0;
    for (let i = 0; i < 20; i++) s += settled instanceof Promise ? 1 : 0;
    return s;
  }],
  ["Promise.resolve, 20 times", () => {
    let s = 0;
    for (let i = 0; i < 20; i++) s += Promise.resolve(i) === settled ? 0 : 1;
    return s;
  }],
  // Awaited, so timed with the microtasks it runs.
  ["await Promise.all of two, then", async () => (await Promise.all([settled, settled]).then(add)) ? 1 : 0, true],
];

const CALLS = 10_000; // per round
const WARM = 3; // rounds, untimed
const ROUNDS = 9; // rounds, timed

// samples times every operation's rounds, interleaved so that none runs
// against a machine the others did not meet: ns per call, one per round.
async function samples() {
  const out = operations.map(() => []);
  let sink = 0;
  for (let round = -WARM; round < ROUNDS; round++) {
    for (let k = 0; k < operations.length; k++) {
      const [, f, awaited] = operations[k];
      const t0 = performance.now();
      if (awaited) for (let i = 0; i < CALLS; i++) sink += await f();
      else for (let i = 0; i < CALLS; i++) sink += f();
      const ns = ((performance.now() - t0) * 1e6) / CALLS;
      if (round >= 0) out[k].push(ns);
    }
  }
  if (sink === -1) console.log(sink);
  return out;
}

async function run() {
  const before = await samples();
  const { loadSurface } = await import("/pling/pling-surface.js");
  await loadSurface();
  const after = await samples();
  return operations.map(([name], k) => ({ name, before: before[k], after: after[k] }));
}

window.__pageCost = { ready: true, isolated: globalThis.crossOriginIsolated === true, run };
