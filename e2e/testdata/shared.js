// The shared-limits test page. Query parameters choose the store and the
// limits; ?fail= (shared-env.js, run before this module) makes IndexedDB
// fail.
import { loadSurface } from "/pling/pling-surface.js";
import { httpLimiter, httpGuard } from "/pling/pling-shared.js";

const params = new URLSearchParams(location.search);
const store = params.get("store") || "indexeddb";
const max = Number(params.get("max") || "5");
const windowMs = Number(params.get("window") || "60000");

const executed = []; // request ids this page's executor ran, in order

const { createSurface, defineRegistry } = await loadSurface();
const registry = defineRegistry({
  actions: [{
    id: "orders.search",
    description: "Search the orders",
    inputSchema: { type: "object", properties: { query: { type: "string" } }, additionalProperties: false },
    effect: "read",
    approval: "none",
  }],
});

const options = {
  registry,
  app: params.get("app") || "shared-e2e",
  execute: (id, argsJson, context) => {
    executed.push(context.requestId);
    return { title: "Searched" };
  },
  session: () => ({
    agentId: "agent.e2e",
    sessionId: "ses_shared",
    userId: "u-shared",
    expiresAt: Date.now() + 3_600_000,
    scope: ["orders.search"],
  }),
};
const replay = params.get("replay") !== "off";
const limit = max > 0;
if (store === "indexeddb") {
  options.shared = "indexeddb";
  if (limit) options.rateLimit = { maxRequests: max, windowMs };
  if (replay) options.replay = { windowMs };
} else {
  // The backend knows its limits; the page only asks.
  if (limit) options.rateLimit = { limiter: httpLimiter("/pling/state", { timeoutMs: 5000 }) };
  if (replay) options.replay = { windowMs, guard: httpGuard("/pling/state", { timeoutMs: 5000 }) };
}
const surface = createSurface(options);

function invoke(id) {
  return surface.handle({ protocol: "pling.surface/0.1", id, method: "invoke", capability: "orders.search", input: { query: "x" } });
}

// mine counts this page's app's entries in a store of the shared
// database: all of them, and those whose window ended by beforeMs (now
// when omitted).
function mine(name, beforeMs) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open("pling-shared");
    req.onerror = () => reject(req.error);
    req.onsuccess = () => {
      const db = req.result;
      const all = db.transaction(name).objectStore(name).getAll();
      all.onsuccess = () => {
        db.close();
        const before = beforeMs ?? Date.now();
        const ours = all.result.filter((e) => e.key[0] === options.app);
        resolve({ total: ours.length, expired: ours.filter((e) => e.expires <= before).length });
      };
      all.onerror = () => reject(all.error);
    };
  });
}

// openDB opens the shared database as any script of the origin can, at
// its current version or at version.
function openDB(version, upgrade) {
  return new Promise((resolve, reject) => {
    const req = version === undefined ? indexedDB.open("pling-shared") : indexedDB.open("pling-shared", version);
    req.onupgradeneeded = () => upgrade && upgrade(req.result, req.transaction);
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(new Error("blocked"));
    req.onsuccess = () => resolve(req.result);
  });
}

// dump is every record of both stores, as a later script reads them.
async function dump() {
  const db = await openDB();
  const out = {};
  for (const name of db.objectStoreNames) {
    out[name] = await new Promise((resolve, reject) => {
      const all = db.transaction(name).objectStore(name).getAll();
      all.onsuccess = () => resolve(all.result);
      all.onerror = () => reject(all.error);
    });
  }
  db.close();
  return out;
}

// breakSchema upgrades the database the way a script of the origin could:
// to a version of its own, changing the stores as kind says.
const breakages = {
  version: () => {},
  deleted: (db) => {
    db.deleteObjectStore("claims");
    db.deleteObjectStore("windows");
  },
  keypath: (db) => {
    db.deleteObjectStore("claims");
    db.createObjectStore("claims", { keyPath: "id" }).createIndex("expires", "expires");
  },
  index: (db, tx) => tx.objectStore("windows").deleteIndex("expires"),
};
async function breakSchema(kind) {
  const current = await openDB();
  const version = current.version + 7;
  current.close();
  (await openDB(version, breakages[kind])).close();
  return version;
}

// tripwires plants an accessor on every configurable property of
// IndexedDB's constructors and prototypes, of EventTarget, of the global
// object, and on Object.prototype and Array.prototype for the names the
// IndexedDB code reads, each doing what the property did. It answers
// hits(), the names whose accessor was reached from pling-surface.js, and
// remove(), which puts every property back.
function tripwires() {
  const hits = new Set();
  const planted = [];
  // Whether the accessor's caller is the runtime; the lookups this makes
  // reach accessors too, which then only answer.
  let busy = false;
  const fromRuntime = () => {
    if (busy) return false;
    busy = true;
    try {
      const frames = String(new Error().stack).split("\n").slice(3, 4);
      return frames.some((f) => f.includes("/pling/pling-surface.js"));
    } finally {
      busy = false;
    }
  };
  const plant = (obj, key, label) => {
    const d = Object.getOwnPropertyDescriptor(obj, key);
    if (!d || !d.configurable) return;
    const name = `${label}.${String(key)}`;
    Object.defineProperty(obj, key, {
      configurable: true,
      enumerable: d.enumerable,
      get() {
        if (fromRuntime()) hits.add(name);
        return d.get ? d.get.call(this) : d.value;
      },
      set(v) {
        if (fromRuntime()) hits.add(name + " (set)");
        if (d.set) d.set.call(this, v);
        else Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
    });
    planted.push([obj, key, d]);
  };
  const classes = ["IDBFactory", "IDBRequest", "IDBOpenDBRequest", "IDBDatabase", "IDBTransaction", "IDBObjectStore",
    "IDBIndex", "IDBCursor", "IDBCursorWithValue", "IDBKeyRange", "IDBVersionChangeEvent", "DOMStringList", "EventTarget", "Event"];
  for (const c of classes) {
    const C = globalThis[c];
    for (const k of Reflect.ownKeys(C)) if (k !== "prototype") plant(C, k, c);
    for (const k of Reflect.ownKeys(C.prototype)) plant(C.prototype, k, c + ".prototype");
  }
  for (const k of Reflect.ownKeys(globalThis)) if (k !== "__shared" && k !== "__sharedReady") plant(globalThis, k, "globalThis");
  // Not result nor an index: with an accessor there, the runtime refuses
  // every call before it reaches the kernel (README, threat model).
  for (const k of ["then", "constructor", "key", "times", "expires", "db", "error", "durability", "keyPath", "autoIncrement",
    "unique", "multiEntry", "upper", "lower", "length", "catch", "finally"]) {
    if (!Object.getOwnPropertyDescriptor(Object.prototype, k)) {
      Object.defineProperty(Object.prototype, k, { configurable: true, value: undefined, writable: true });
      planted.push([Object.prototype, k, undefined]);
    }
    plant(Object.prototype, k, "Object.prototype");
  }
  for (const k of Reflect.ownKeys(Array.prototype)) plant(Array.prototype, k, "Array.prototype");
  return {
    hits: () => [...hits].sort(),
    remove() {
      for (const [obj, key, d] of planted.reverse()) {
        if (d) Object.defineProperty(obj, key, d);
        else delete obj[key];
      }
    },
  };
}

window.__shared = {
  tripwires,
  dump,
  breakSchema,
  executed,
  invoke,
  // Answers by code for ids, all sent at once.
  async burst(ids) {
    const replies = await Promise.all(ids.map(invoke));
    return replies.map((r) => (r.ok ? "ok" : r.error.code));
  },
  mine,
};
document.querySelector('[data-testid="status"]').textContent = "ready";
window.__sharedReady = true;
