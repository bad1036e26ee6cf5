// Tests of asynchronous limiters and guards through the kernel: the
// adapters of pling-shared.js, and any adapter that answers later. They run
// under `make test-js` (hostbridge/sharedstore_js_test.go) with the Go
// kernel in the same process. An async decision is one more step of a
// request: whatever carries it, the counts below must hold.

import { httpAdapter, httpLimiter, httpGuard, indexedDBLimiter, indexedDBGuard } from "../pling-shared.js";
import { assert, eq, throwsType, tick } from "./harness.mjs";
import { fakeIndexedDB } from "./fakeidb.mjs";
import { readFile } from "node:fs/promises";

export { runOne } from "./harness.mjs";
export const tests = [];
const test = (name, fn) => tests.push({ name, fn });

const P = "pling.surface/0.1";
const invoke = (id, query = "x") => ({ protocol: P, id, method: "invoke", capability: "orders.search", input: { query } });
const session = () => ({ agentId: "agent-1", sessionId: "sess-1", userId: "user-1", expiresAt: Date.now() + 3_600_000, scope: ["orders.search"] });

function page(api, options = {}) {
  const registry = api.defineRegistry({
    actions: [{
      id: "orders.search", description: "Search", effect: "read", approval: "none",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, additionalProperties: false },
    }],
  });
  const execs = [];
  const surface = api.createSurface({
    registry,
    execute: async (id, argsJson, context) => {
      execs.push(context.requestId);
      await tick();
      return { ok: true };
    },
    session,
    app: "orders",
    ...options,
  });
  return { surface, execs };
}

const codes = (replies) => {
  const out = {};
  for (const r of replies) {
    const c = r.ok ? "ok" : r.error.code;
    out[c] = (out[c] || 0) + 1;
  }
  return out;
};

// A store shared by several surfaces (tabs, replicas) that answers after a
// delay, serialising its decisions as a database would.
function slowStore(max) {
  let chain = Promise.resolve();
  const admitted = new Map();
  const claims = new Set();
  const later = (f) => (chain = chain.then(() => tick(1)).then(f));
  return {
    limiter: { allow: (key) => later(() => {
      const n = admitted.get(key) || 0;
      if (n >= max) return { allowed: false, retryAfterMs: 1000 };
      admitted.set(key, n + 1);
      return { allowed: true };
    }) },
    guard: { claim: (s, r) => later(() => {
      const k = JSON.stringify([s, r]);
      if (claims.has(k)) return "replayed";
      claims.add(k);
      return "claimed";
    }) },
  };
}

test("an async limiter shared by three surfaces admits exactly its budget", async ({ api }) => {
  const store = slowStore(7);
  const tabs = [0, 1, 2].map(() => page(api, { rateLimit: { limiter: store.limiter } }));
  const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => tabs[i % 3].surface.handle(invoke(`r-${i}`))));
  eq(codes(replies), { ok: 7, RATE_LIMITED: 23 }, "answers");
  eq(tabs.reduce((n, t) => n + t.execs.length, 0), 7, "executions");
  for (const r of replies) if (!r.ok) eq(r.error.retryAfterMs, 1000, "retryAfterMs");
  for (const t of tabs) t.surface.close();
});

test("an async guard shared by three surfaces runs one id once", async ({ api }) => {
  const store = slowStore(1000);
  const tabs = [0, 1, 2].map(() => page(api, { replay: { guard: store.guard } }));
  const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => tabs[i % 3].surface.handle(invoke("same"))));
  eq(codes(replies), { ok: 1, REPLAY_DETECTED: 29 }, "answers");
  eq(tabs.reduce((n, t) => n + t.execs.length, 0), 1, "executions");
  for (const t of tabs) t.surface.close();
});

test("async limiter and guard together: both decisions hold", async ({ api }) => {
  const store = slowStore(5);
  const { surface, execs } = page(api, { rateLimit: { limiter: store.limiter }, replay: { guard: store.guard } });
  const ids = ["a", "a", "b", "b", "c", "d", "e", "f"];
  const replies = await Promise.all(ids.map((id) => surface.handle(invoke(id))));
  // Five pass the limiter; of those, repeated ids are refused as replays.
  eq(codes(replies).RATE_LIMITED, 3, "rate limited");
  eq(new Set(execs).size, execs.length, "an id ran twice");
  eq(execs.length, codes(replies).ok || 0, "executions");
  surface.close();
});

test("async failures refuse closed and never call the executor", async ({ api }) => {
  const cases = [
    ["limiter rejects", { rateLimit: { limiter: { allow: async () => { await tick(); throw new Error("down"); } } } }, "RATE_LIMIT_UNAVAILABLE"],
    ["limiter answers junk later", { rateLimit: { limiter: { allow: async () => { await tick(); return { allowed: "yes" }; } } } }, "RATE_LIMIT_UNAVAILABLE"],
    ["guard rejects", { replay: { guard: { claim: async () => { await tick(); throw new Error("down"); } } } }, "REPLAY_GUARD_UNAVAILABLE"],
    ["guard answers junk later", { replay: { guard: { claim: async () => { await tick(); return "maybe"; } } } }, "REPLAY_GUARD_UNAVAILABLE"],
  ];
  for (const [name, options, code] of cases) {
    const { surface, execs } = page(api, options);
    const replies = await Promise.all([1, 2, 3].map((i) => surface.handle(invoke(`f-${i}`))));
    eq(codes(replies), { [code]: 3 }, name);
    eq(execs.length, 0, `${name}: executions`);
    surface.close();
  }
});

// ---------------------------------------------------------------------------
// The HTTP adapter, over a fetch the test controls.

function fakeFetch(answer) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init, body: JSON.parse(init.body) });
    return answer(init);
  };
  return { fetch, calls };
}
const response = (status, text) => ({ status, text: async () => text });

test("httpAdapter: the backend's answers reach the kernel, the body names no session", async ({ api }) => {
  let n = 0;
  const { fetch, calls } = fakeFetch((init) => {
    const body = JSON.parse(init.body);
    if (body.op === "allow") return response(200, ++n <= 2 ? '{"allowed":true}' : '{"allowed":false,"retryAfterMs":1500}');
    return response(200, body.requestId === "dup" && calls.filter((c) => c.body.requestId === "dup").length > 1 ? '{"claim":"replayed"}' : '{"claim":"claimed"}');
  });
  const a = httpAdapter("/pling/state", { fetch });
  const { surface, execs } = page(api, { rateLimit: { limiter: httpLimiter("/pling/state", { fetch }) }, replay: { guard: httpGuard("/pling/state", { fetch }) } });
  eq((await surface.handle(invoke("dup"))).ok, true, "first");
  eq((await surface.handle(invoke("dup"))).error.code, "REPLAY_DETECTED", "second");
  const third = await surface.handle(invoke("x"));
  eq([third.error.code, third.error.retryAfterMs], ["RATE_LIMITED", 1500], "third");
  eq(execs, ["dup"], "executions");
  for (const c of calls) {
    eq(c.init.method, "POST", "method");
    eq(c.init.credentials, "same-origin", "credentials");
    assert(!("sessionId" in c.body) && !("key" in c.body), `the body names a session: ${JSON.stringify(c.body)}`);
  }
  assert(typeof a.allow === "function" && typeof a.claim === "function", "httpAdapter has both");
  surface.close();
});

test("httpAdapter fails closed on errors, statuses, malformed answers and timeouts", async ({ api }) => {
  const answers = [
    ["network error", () => Promise.reject(new TypeError("Failed to fetch"))],
    ["503", () => response(503, '{"error":"unavailable"}')],
    ["200 with an allowed answer to a claim", (init) => response(200, '{"allowed":true,"claim":"claimed"}')],
    ["not JSON", () => response(200, "<html>login</html>")],
    ["null", () => response(200, "null")],
    ["array", () => response(200, "[true]")],
    ["allowed as a string", () => response(200, '{"allowed":"true","claim":"yes"}')],
    ["deny without retry", () => response(200, '{"allowed":false}')],
    ["deny with a negative retry", () => response(200, '{"allowed":false,"retryAfterMs":-1}')],
    ["an extra member", () => response(200, '{"allowed":true,"claim":"claimed","x":1}')],
    ["redirect status", () => response(302, "")],
    ["never answers", (init) => new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(new Error("aborted"))))],
    ["body never ends", () => ({ status: 200, text: () => new Promise(() => {}) })],
  ];
  for (const [name, answer] of answers) {
    const { fetch } = fakeFetch(answer);
    for (const [kind, options, code] of [
      ["limiter", { rateLimit: { limiter: httpLimiter("/s", { fetch, timeoutMs: 50 }) } }, "RATE_LIMIT_UNAVAILABLE"],
      ["guard", { replay: { guard: httpGuard("/s", { fetch, timeoutMs: 50 }) } }, "REPLAY_GUARD_UNAVAILABLE"],
    ]) {
      const { surface, execs } = page(api, { ...options, executeTimeoutMs: 5000 });
      const r = await Promise.race([surface.handle(invoke("t-1")), tick(5000).then(() => ({ ok: false, error: { code: "HUNG" } }))]);
      eq([r.ok, r.error && r.error.code], [false, code], `${name} (${kind})`);
      eq(execs.length, 0, `${name} (${kind}): executions`);
      surface.close();
    }
  }
});

// What a script that runs after the surface loaded patches to make the
// backend's "replayed" read "claimed" and its refusal read as an admission.
// Each swap leaves every other value alone. The adapters are made first,
// as a page makes them; the patch comes later.
const forgeText = (t) => (typeof t === "string" ? t.replace('"replayed"', '"claimed"').replace(/^\{"allowed":false.*\}$/, '{"allowed":true}') : t);
const forgeValue = (v) => {
  if (v === "replayed") return "claimed";
  if (v !== null && typeof v === "object" && Object.hasOwn(v, "claim")) return { __proto__: null, claim: "claimed" };
  if (v !== null && typeof v === "object" && v.allowed === false) return { __proto__: null, allowed: true };
  return v;
};
const laterPatches = [
  ["Object.prototype.then answers every decision", () => {
    const then = function (ok) { ok(forgeValue(this)); };
    Object.defineProperty(Object.prototype, "then", { configurable: true,
      get() { return Object.hasOwn(this, "claim") || (Object.hasOwn(this, "allowed") && this.allowed === false) ? then : undefined; } });
    return () => delete Object.prototype.then;
  }],
  ["Promise.race", () => {
    const race = Promise.race;
    const then = Promise.prototype.then;
    Promise.race = function (ps) { return then.call(race.call(this, ps), forgeValue); };
    return () => { Promise.race = race; };
  }],
  ["Promise.prototype.finally", () => {
    const fin = Promise.prototype.finally;
    const then = Promise.prototype.then;
    Promise.prototype.finally = function (f) { return then.call(fin.call(this, f), forgeValue); };
    return () => { Promise.prototype.finally = fin; };
  }],
  ["Promise.prototype.then", () => {
    const then = Promise.prototype.then;
    Promise.prototype.then = function (ok, fail) { return then.call(this, typeof ok === "function" ? (v) => ok(forgeValue(v)) : ok, fail); };
    return () => { Promise.prototype.then = then; };
  }],
  ["Promise.prototype.constructor, so that await asks then", () => {
    const then = Promise.prototype.then;
    const ctor = Promise.prototype.constructor;
    Promise.prototype.constructor = function () {};
    Promise.prototype.then = function (ok, fail) { return then.call(this, typeof ok === "function" ? (v) => ok(forgeValue(v)) : ok, fail); };
    return () => { Promise.prototype.then = then; Promise.prototype.constructor = ctor; };
  }],
  ["Response.prototype.text", () => {
    const text = Response.prototype.text;
    const then = Promise.prototype.then;
    Response.prototype.text = function () { return then.call(text.call(this), forgeText); };
    return () => { Response.prototype.text = text; };
  }],
  ["Array.prototype.includes and every, with an extra member in the answer", () => {
    const { includes, every } = Array.prototype;
    Array.prototype.includes = function (v) { return v === "forged" || includes.call(this, v); };
    Array.prototype.every = function (f) { return every.call(this, (x, ...r) => x === "forged" || f(x, ...r)); };
    return () => { Array.prototype.includes = includes; Array.prototype.every = every; };
  }, '"forged":1,'],
];

test("httpAdapter: a later script's patched built-ins cannot turn the backend's answer", async ({ api }) => {
  assert(typeof Response === "function", "this runtime has no Response: the test would prove nothing");
  const registry = api.defineRegistry({ version: 1, actions: [{
    id: "orders.search", description: "Search", effect: "read", approval: "none",
    inputSchema: { type: "object", properties: { query: { type: "string" } }, additionalProperties: false },
  }] });
  // Each row runs against a backend whose claims of an id after the first
  // are "replayed" and which admits three requests; extra goes into every
  // answer. A surface's first call comes before the patch, as a page that
  // has been in use; what the later calls get is compared with a run where
  // nothing was patched (a toJSON planted on Object.prototype makes the
  // executor's result unreadable: INTERNAL_ERROR where it ran).
  const run = async (patch, extra) => {
    const claimed = new Set();
    let admitted = 0;
    const fetch = async (url, init) => {
      const body = JSON.parse(init.body);
      const text = body.op === "allow"
        ? (++admitted <= 3 ? "{" + extra + '"allowed":true}' : "{" + extra + '"allowed":false,"retryAfterMs":1500}')
        : "{" + extra + (claimed.has(body.requestId) ? '"claim":"replayed"}' : (claimed.add(body.requestId), '"claim":"claimed"}'));
      return new Response(text, { status: 200 });
    };
    const { surface, execs } = page(api, { registry, rateLimit: { limiter: httpLimiter("/s", { fetch }) }, replay: { guard: httpGuard("/s", { fetch }) } });
    const got = [];
    const call = async (id) => {
      const r = await surface.handle(invoke(id));
      got.push(r.ok ? "ok" : r.error.code === "INTERNAL_ERROR" && execs.includes(id) ? "ok" : r.error.code);
    };
    await call("warm");
    const restore = patch();
    try {
      for (const id of ["dup", "dup", "x", "y"]) await call(id);
    } finally {
      restore();
    }
    surface.close();
    return { got, execs };
  };
  const clean = await run(() => () => {}, "");
  eq(clean, { got: ["ok", "ok", "REPLAY_DETECTED", "RATE_LIMITED", "RATE_LIMITED"], execs: ["warm", "dup"] }, "nothing patched");
  const cleanExtra = await run(() => () => {}, '"forged":1,');
  eq(cleanExtra.execs, [], "nothing patched, answers with an extra member");
  for (const [name, patch, extra = ""] of laterPatches) {
    eq(await run(patch, extra), extra ? cleanExtra : clean, name);
  }
});

test("httpAdapter checks its options", () => {
  throwsType(() => httpAdapter(42), "url as a number");
  throwsType(() => httpAdapter("/s", { timeoutMs: 0 }), "zero timeout");
  throwsType(() => httpAdapter("/s", { fetch: "no" }), "fetch not a function");
});

// ---------------------------------------------------------------------------
// shared: "indexeddb" where IndexedDB is missing or fails.

test("shared: indexeddb without IndexedDB refuses closed", async ({ api }) => {
  assert(globalThis.indexedDB === undefined, "this runtime has IndexedDB: the test would prove nothing");
  const { surface, execs } = page(api, { shared: "indexeddb", rateLimit: { maxRequests: 5, windowMs: 1000 } });
  eq(codes(await Promise.all([1, 2].map((i) => surface.handle(invoke(`i-${i}`))))), { RATE_LIMIT_UNAVAILABLE: 2 }, "limiter");
  surface.close();
  const g = page(api, { shared: "indexeddb", replay: true });
  eq(codes(await Promise.all([1, 2].map((i) => g.surface.handle(invoke(`i-${i}`))))), { REPLAY_GUARD_UNAVAILABLE: 2 }, "guard");
  eq(execs.length + g.execs.length, 0, "executions");
  g.surface.close();
});

// Factories that fail as browsers do: an open that errors (private mode,
// quota), one that is blocked by another tab, one that never answers, and
// a database whose transactions abort (quota exceeded on write).
function failingFactory(kind) {
  return {
    open() {
      const req = {};
      setTimeout(() => {
        if (kind === "error") {
          req.error = new Error("QuotaExceededError");
          req.onerror && req.onerror();
        } else if (kind === "blocked") {
          req.onblocked && req.onblocked();
        } else if (kind === "abort") {
          req.result = {
            objectStoreNames: { contains: () => true },
            transaction() {
              const tx = {
                objectStore: () => ({
                  keyPath: "key",
                  autoIncrement: false,
                  indexNames: { contains: () => true },
                  index: () => ({ keyPath: "expires", unique: false, multiEntry: false, openCursor: () => ({}) }),
                  get: () => {
                    const g = {};
                    setTimeout(() => {
                      g.onsuccess && g.onsuccess();
                      tx.error = new Error("QuotaExceededError");
                      tx.onabort && tx.onabort();
                    });
                    return g;
                  },
                  put() {},
                }),
              };
              return tx;
            },
          };
          req.onsuccess && req.onsuccess();
        }
        // "hang": nothing ever happens
      });
      return req;
    },
  };
}

test("IndexedDB that fails, is blocked or hangs refuses closed", async ({ api }) => {
  globalThis.IDBKeyRange = globalThis.IDBKeyRange || { upperBound: (v) => v };
  try {
    for (const kind of ["error", "blocked", "abort", "hang"]) {
      const indexedDB = failingFactory(kind);
      const { surface, execs } = page(api, {
        rateLimit: { limiter: indexedDBLimiter({ app: "a", maxRequests: 5, windowMs: 1000, indexedDB, timeoutMs: 100 }) },
      });
      eq(codes([await surface.handle(invoke("k-1"))]), { RATE_LIMIT_UNAVAILABLE: 1 }, `${kind}: limiter`);
      surface.close();
      const g = page(api, { replay: { guard: indexedDBGuard({ app: "a", indexedDB: failingFactory(kind), timeoutMs: 100 }) } });
      eq(codes([await g.surface.handle(invoke("k-1"))]), { REPLAY_GUARD_UNAVAILABLE: 1 }, `${kind}: guard`);
      eq(execs.length + g.execs.length, 0, `${kind}: executions`);
      g.surface.close();
    }
  } finally {
    if (globalThis.IDBKeyRange && !globalThis.IDBKeyRange.only) delete globalThis.IDBKeyRange;
  }
});

test("shared checks its options", ({ api }) => {
  const registry = api.defineRegistry({ actions: [] });
  const execute = () => null;
  const rateLimit = { maxRequests: 5, windowMs: 1000 };
  throwsType(() => api.createSurface({ registry, execute, shared: "redis", rateLimit }), "unknown store");
  throwsType(() => api.createSurface({ registry, execute, shared: true, rateLimit }), "shared: true");
  throwsType(() => api.createSurface({ registry, execute, shared: "indexeddb" }), "nothing to share");
  throwsType(() => api.createSurface({ registry, execute, shared: "indexeddb", rateLimit: { limiter: { allow: () => ({ allowed: true }) } } }), "shared and a limiter");
  throwsType(() => api.createSurface({ registry, execute, shared: "indexeddb", replay: { guard: { claim: () => "claimed" } } }), "shared and a guard");
  throwsType(() => indexedDBLimiter({ maxRequests: 0, windowMs: 1 }), "zero maxRequests");
  throwsType(() => indexedDBGuard({ app: 3 }), "app as a number");
  api.createSurface({ registry, execute, shared: "indexeddb", rateLimit, replay: { windowMs: 60_000 } }).close();
});


test("the adapters take only their options' own members: a later script's Object.prototype.fetch or indexedDB is none", async ({ api }) => {
  const planted = [];
  const plant = { fetch: (url, init) => { planted.push(["fetch", init && init.body]); return Promise.resolve({ status: 200, text: () => '{"claim":"claimed"}' }); },
    credentials: "include", timeoutMs: 600_000,
    indexedDB: { open() { planted.push(["indexedDB"]); return {}; } } };
  for (const [k, v] of Object.entries(plant)) Object.defineProperty(Object.prototype, k, { configurable: true, writable: true, value: v });
  let http;
  let standIn;
  let idb;
  const seen = [];
  try {
    // No fetch of its own: the fetch captured at load (to a closed port here).
    http = httpGuard("http://127.0.0.1:9/pling/state", { timeoutMs: 2000 });
    // A fetch of its own: no credentials of its own, so the default.
    standIn = httpGuard("/pling/state", { fetch: (url, init) => {
      seen.push(init.credentials);
      return Promise.resolve({ status: 200, text: () => '{"claim":"claimed"}' });
    } });
    idb = indexedDBGuard({ app: "orders" });
  } finally {
    for (const k of Object.keys(plant)) delete Object.prototype[k];
  }
  const a = page(api, { replay: { guard: http } });
  const r = await a.surface.handle(invoke("own-1"));
  const r2 = await a.surface.handle(invoke("own-1"));
  eq([r.ok, r2.ok, a.execs.length], [false, false, 0], "the guard with the captured fetch: nothing claimed, nothing ran");
  const b = page(api, { replay: { guard: standIn } });
  eq((await b.surface.handle(invoke("own-2"))).ok, true, "the guard with its own fetch");
  eq(seen, ["same-origin"], "credentials the stand-in was handed");
  const c = page(api, { replay: { guard: idb } });
  const r3 = await c.surface.handle(invoke("own-3"));
  const r4 = await c.surface.handle(invoke("own-3"));
  eq([r3.ok, r4.ok, c.execs.length], [false, false, 0], "the IndexedDB guard without a database: nothing ran");
  eq(planted, [], "what the later script's members were handed");
  for (const p of [a, b, c]) p.surface.close();
});

// ---------------------------------------------------------------------------
// What a same-origin script finds in the database, and what it can break.

const DB = "pling-shared";
const vectors = JSON.parse(await readFile(new URL("../../testdata/claimkeys/keys.json", import.meta.url), "utf8"));

test("IndexedDB keys are the hashes of testdata/claimkeys, as redisstate's: a reader of the database sees no id", async () => {
  const idb = fakeIndexedDB();
  const guard = indexedDBGuard({ app: "orders", indexedDB: idb.factory });
  const limiter = indexedDBLimiter({ app: "orders", indexedDB: idb.factory, maxRequests: 100, windowMs: 60_000 });
  for (const v of vectors) {
    eq(await guard.claim(v.sessionId, v.requestId, 60_000), "claimed", `${v.name}: claim`);
    eq(await guard.claim(v.sessionId, v.requestId, 60_000), "replayed", `${v.name}: the same claim again`);
    eq((await limiter.allow(v.sessionId, Date.now())).allowed, true, `${v.name}: allow`);
  }
  const claims = idb.dump(DB, "claims").map((r) => r.key);
  const windows = idb.dump(DB, "windows").map((r) => r.key);
  eq(claims, vectors.map((v) => ["orders", v.sha256]), "claim keys");
  const sessions = [...new Set(vectors.map((v) => v.sessionId))];
  const hashOf = (s) => vectors.find((v) => v.sessionId === s && v.requestId === "")?.sha256;
  for (const s of sessions) {
    const h = hashOf(s);
    if (h !== undefined) assert(windows.some((k) => k[0] === "orders" && k[1] === h), `no window under the hash of ${s}: ${JSON.stringify(windows)}`);
  }
  eq(windows.length, sessions.length, "one window per session");
  const text = JSON.stringify([idb.dump(DB, "claims"), idb.dump(DB, "windows")]);
  for (const v of vectors) {
    // (an id of a few characters may turn up in hex by chance)
    if (v.sessionId.length > 5) assert(!text.includes(JSON.stringify(v.sessionId).slice(1, -1)), `the database shows session ${v.sessionId}`);
    if (v.requestId.length > 2) assert(!text.includes(v.requestId), `the database shows request ${v.requestId}`);
  }
});

test("through the kernel: a private-looking request id and the session never reach the database in clear", async ({ api }) => {
  const idb = fakeIndexedDB();
  const { surface, execs } = page(api, {
    rateLimit: { limiter: indexedDBLimiter({ app: "orders", indexedDB: idb.factory, maxRequests: 10, windowMs: 60_000 }) },
    replay: { guard: indexedDBGuard({ app: "orders", indexedDB: idb.factory }) },
  });
  const id = "private-call-7f3a9c";
  eq((await surface.handle(invoke(id))).ok, true, "first");
  eq((await surface.handle(invoke(id))).error?.code, "REPLAY_DETECTED", "again");
  eq(execs, [id], "executions");
  const text = JSON.stringify([idb.dump(DB, "claims"), idb.dump(DB, "windows")]);
  assert(!text.includes(id) && !text.includes("sess-1"), `the database shows an id: ${text}`);
  surface.close();
});

// A script of the origin upgrades the database its own way. Each leaves
// the database at a version above the surface's and closes it.
const breakages = [
  ["its own version, the schema intact", false, () => {}],
  ["both stores deleted", true, (db) => {
    db.deleteObjectStore("claims");
    db.deleteObjectStore("windows");
  }],
  ["claims keyed by another path", true, (db) => {
    db.deleteObjectStore("claims");
    db.createObjectStore("claims", { keyPath: "id" }).createIndex("expires", "expires");
  }],
  ["an auto-increment windows store", true, (db) => {
    db.deleteObjectStore("windows");
    db.createObjectStore("windows", { keyPath: "key", autoIncrement: true }).createIndex("expires", "expires");
  }],
  ["the expires index dropped", true, (db, tx) => tx.objectStore("claims").deleteIndex("expires")],
  ["the expires index made unique", true, (db, tx) => {
    tx.objectStore("windows").deleteIndex("expires");
    tx.objectStore("windows").createIndex("expires", "expires", { unique: true });
  }],
  ["a foreign store beside, ours intact", false, (db) => db.objectStoreNames.contains("mine") || db.createObjectStore("mine")],
];

function upgrade(idb, version, change) {
  return new Promise((resolve, reject) => {
    const req = idb.factory.open(DB, version);
    req.onupgradeneeded = () => {
      try {
        change(req.result, req.transaction);
      } catch (e) {
        reject(e);
        throw e;
      }
    };
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      req.result.close();
      resolve();
    };
  });
}

test("a broken or foreign schema is recreated: the call that finds it fails closed, the next runs, across reloads", async ({ api }) => {
  for (const [name, broken, change] of breakages) {
    const idb = fakeIndexedDB();
    // A reload: a page of its own, whose runtime has no connection yet.
    const load = () => {
      const factory = { open: idb.factory.open, deleteDatabase: idb.factory.deleteDatabase };
      return page(api, {
        rateLimit: { limiter: indexedDBLimiter({ app: "orders", indexedDB: factory, maxRequests: 100, windowMs: 60_000, timeoutMs: 1000 }) },
        replay: { guard: indexedDBGuard({ app: "orders", indexedDB: factory, timeoutMs: 1000 }) },
      });
    };
    const a = load();
    eq((await a.surface.handle(invoke("before"))).ok, true, `${name}: before`);
    await upgrade(idb, 9, change);
    for (const [when, p] of [["in the open page", a], ["after a reload", null]]) {
      if (when === "after a reload") await upgrade(idb, 20, change);
      const b = p ?? load();
      const first = await b.surface.handle(invoke(`first ${when}`));
      if (broken) eq(first.ok ? "ok" : first.error.code, "RATE_LIMIT_UNAVAILABLE", `${name}, ${when}: the call that finds the schema broken`);
      else eq(first.ok, true, `${name}, ${when}: a schema that is still ours`);
      eq((await b.surface.handle(invoke(`next ${when}`))).ok, true, `${name}, ${when}: the next call`);
      eq((await b.surface.handle(invoke(`next ${when}`))).error?.code, "REPLAY_DETECTED", `${name}, ${when}: the next id again`);
      if (p === null) b.surface.close();
    }
    // A reload after the repair: the claims made since are still there.
    const c = load();
    eq((await c.surface.handle(invoke("next after a reload"))).error?.code, "REPLAY_DETECTED", `${name}: a claim made after the repair, after a reload`);
    eq((await c.surface.handle(invoke("last"))).ok, true, `${name}: last`);
    a.surface.close();
    c.surface.close();
  }
});
