// pling-shared.js: rate limits and replay claims that hold across tabs,
// reloads and replicas, as the limiter and guard createSurface accepts.
//
//   createSurface({ ..., shared: "indexeddb", rateLimit: { maxRequests: 60, windowMs: 60_000 }, replay: true })
//     every tab of the origin shares one budget and one set of claims, kept
//     in IndexedDB, with no backend.
//   createSurface({ ..., rateLimit: { limiter: httpLimiter("/pling/state") }, replay: { guard: httpGuard("/pling/state") } })
//     the page's backend decides (redisstate.Handler in Go, on Redis), so
//     every replica and every browser of a session shares them.
//
// Each fails closed: a store that cannot answer, answers late or answers
// something malformed makes the call reject, and the kernel refuses the
// request with RATE_LIMIT_UNAVAILABLE or REPLAY_GUARD_UNAVAILABLE.

const DB_NAME = "pling-shared";
const DB_VERSION = 1;
const WINDOWS = "windows"; // {key: [app, limiterKey], times: [ms...], expires}
const CLAIMS = "claims"; // {key: [app, sessionId, requestId], expires}
// Expired entries one decision deletes: more than the one it may add, so
// the store shrinks back to what is still inside a window.
const SWEEP = 8;
const DEFAULT_TIMEOUT_MS = 5000;

const { isSafeInteger, isFinite: numberIsFinite } = Number;
const { stringify: jsonStringify, parse: jsonParse } = JSON;
const { keys: objectKeys, freeze } = Object;

function positive(name, v, integer) {
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}

function withTimeout(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`pling-shared: ${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------
// IndexedDB: one readwrite transaction per decision. Transactions of one
// origin whose scopes overlap run one after another, in every tab, so the
// database itself serialises the tabs: no lock is needed around it.

const connections = new WeakMap(); // IDBFactory -> Promise<IDBDatabase>

function open(factory) {
  let p = connections.get(factory);
  if (p !== undefined) return p;
  p = new Promise((resolve, reject) => {
    if (!factory || typeof factory.open !== "function") {
      throw new Error("pling-shared: IndexedDB is not available");
    }
    const req = factory.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      for (const name of [WINDOWS, CLAIMS]) {
        if (!db.objectStoreNames.contains(name)) {
          db.createObjectStore(name, { keyPath: "key" }).createIndex("expires", "expires");
        }
      }
    };
    // Another tab holds an older version open: waiting could be forever.
    req.onblocked = () => reject(new Error("pling-shared: the database upgrade is blocked by another tab"));
    req.onerror = () => reject(req.error || new Error("pling-shared: the database could not be opened"));
    req.onsuccess = () => {
      const db = req.result;
      // A newer version elsewhere, or the browser closing the database:
      // let go, and open again on the next decision.
      const forget = () => {
        if (connections.get(factory) === p) connections.delete(factory);
      };
      db.onversionchange = () => {
        forget();
        db.close();
      };
      db.onclose = forget;
      resolve(db);
    };
  });
  // A failed open is not remembered: the next decision tries again.
  p.catch(() => {
    if (connections.get(factory) === p) connections.delete(factory);
  });
  connections.set(factory, p);
  return p;
}

// decide runs step(store, done) in one readwrite transaction of storeName
// and resolves with what step passed to done once the transaction has
// committed: a decision is only reported when it is stored.
function decide(factory, storeName, nowMs, step) {
  return open(factory).then(
    (db) =>
      new Promise((resolve, reject) => {
        // Relaxed: the commit is reported once the browser holds it, not
        // after a flush to disk. A reload, a crash of the tab or of the
        // browser keeps it; only the machine losing power may not.
        const tx = db.transaction(storeName, "readwrite", { durability: "relaxed" });
        let result;
        let decided = false;
        tx.oncomplete = () => (decided ? resolve(result) : reject(new Error("pling-shared: no decision")));
        tx.onabort = () => reject(tx.error || new Error("pling-shared: the transaction was aborted"));
        tx.onerror = () => reject(tx.error || new Error("pling-shared: the transaction failed"));
        // A throw in a request's handler (a write over quota, say) aborts
        // the transaction; catching it keeps it from reaching the page.
        const guarded = (f) => () => {
          try {
            f();
          } catch (err) {
            reject(err);
            try {
              tx.abort();
            } catch {
              // already finished
            }
          }
        };
        const store = tx.objectStore(storeName);
        sweep(store, nowMs, guarded);
        step(store, (r) => {
          result = r;
          decided = true;
        }, guarded);
      }),
  );
}

// sweep deletes up to SWEEP entries whose window ended before nowMs.
function sweep(store, nowMs, guarded) {
  let n = 0;
  const req = store.index("expires").openCursor(IDBKeyRange.upperBound(nowMs));
  req.onsuccess = guarded(() => {
    const cursor = req.result;
    if (!cursor || n >= SWEEP) return;
    n++;
    cursor.delete();
    cursor.continue();
  });
}

/**
 * A sliding-window limiter in IndexedDB: at most maxRequests admitted per
 * windowMs per key (the kernel's key is the session id), over every tab of
 * the origin and across reloads.
 */
export function indexedDBLimiter(options) {
  const { app = "", maxRequests, windowMs, timeoutMs = DEFAULT_TIMEOUT_MS, indexedDB: factory = globalThis.indexedDB } = options || {};
  if (typeof app !== "string") throw new TypeError("indexedDBLimiter: app must be a string");
  positive("indexedDBLimiter: maxRequests", maxRequests, true);
  positive("indexedDBLimiter: windowMs", windowMs, false);
  positive("indexedDBLimiter: timeoutMs", timeoutMs, false);
  return freeze({
    allow(key, nowMs) {
      const now = typeof nowMs === "number" && numberIsFinite(nowMs) ? nowMs : Date.now();
      const run = decide(factory, WINDOWS, now, (store, done, guarded) => {
        const id = [app, String(key)];
        const get = store.get(id);
        get.onsuccess = guarded(() => {
          const rec = get.result;
          const times = rec && Array.isArray(rec.times) ? rec.times.filter((t) => typeof t === "number" && now - t < windowMs) : [];
          if (times.length < maxRequests) {
            times.push(now);
            store.put({ key: id, times, expires: now + windowMs });
            done({ allowed: true });
            return;
          }
          // The oldest admitted time leaves the window at oldest+windowMs. A
          // clock that went back keeps entries counted (closed) but never
          // asks for more than one window of patience.
          let wait = times.reduce((a, t) => (t < a ? t : a), now) + windowMs - now;
          if (!(wait > 0 && wait <= windowMs)) wait = windowMs;
          done({ allowed: false, retryAfterMs: Math.ceil(wait) });
        });
      });
      return withTimeout(run, timeoutMs, "the IndexedDB limiter");
    },
  });
}

/**
 * A replay guard in IndexedDB: a (session, request id) pair is claimed once
 * per window over every tab of the origin and across reloads.
 */
export function indexedDBGuard(options) {
  const { app = "", timeoutMs = DEFAULT_TIMEOUT_MS, indexedDB: factory = globalThis.indexedDB } = options || {};
  if (typeof app !== "string") throw new TypeError("indexedDBGuard: app must be a string");
  positive("indexedDBGuard: timeoutMs", timeoutMs, false);
  return freeze({
    claim(sessionId, requestId, windowMs) {
      const now = Date.now();
      const run = decide(factory, CLAIMS, now, (store, done, guarded) => {
        const id = [app, String(sessionId), String(requestId)];
        const get = store.get(id);
        get.onsuccess = guarded(() => {
          const rec = get.result;
          if (rec && !(rec.expires <= now)) {
            done("replayed");
            return;
          }
          store.put({ key: id, expires: now + windowMs });
          done("claimed");
        });
      });
      return withTimeout(run, timeoutMs, "the IndexedDB guard");
    },
  });
}

/**
 * What createSurface does with its `shared` option: "indexeddb" replaces
 * the in-page limiter and guard with indexedDBLimiter and indexedDBGuard,
 * keeping maxRequests, windowMs and the app name. Returns the options.
 */
export function applyShared(options) {
  const { shared, rateLimit, replay, app } = options;
  if (shared === undefined) return options;
  if (shared !== "indexeddb") throw new TypeError('createSurface: shared must be "indexeddb"');
  if (!rateLimit && !replay) throw new TypeError("createSurface: shared needs rateLimit or replay to share");
  if ((rateLimit && rateLimit.limiter !== undefined) || (replay && typeof replay === "object" && replay.guard !== undefined)) {
    throw new TypeError("createSurface: shared replaces the limiter and the guard; give shared or your own, not both");
  }
  if (rateLimit) {
    const { maxRequests, windowMs } = rateLimit;
    options.rateLimit = { maxRequests, windowMs, limiter: indexedDBLimiter({ app: app ?? "", maxRequests, windowMs }) };
  }
  if (replay) {
    options.replay = { guard: indexedDBGuard({ app: app ?? "" }) };
    if (typeof replay === "object" && replay.windowMs !== undefined) options.replay.windowMs = replay.windowMs;
  }
  return options;
}

// ---------------------------------------------------------------------------
// HTTP: the page's backend decides (see redisstate.Handler). The backend
// names the session from its own login; the body never carries one.

/**
 * A limiter and a guard that POST to url: {"op":"allow"} and
 * {"op":"claim","requestId":...}. Options: timeoutMs (default 2000),
 * headers (a CSRF token, say), credentials (default "same-origin").
 */
export function httpAdapter(url, options = {}) {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, headers = {}, credentials = "same-origin", fetch: fetchFn = globalThis.fetch } = options;
  if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("httpAdapter: url must be a string or a URL");
  positive("httpAdapter: timeoutMs", timeoutMs, false);
  if (typeof fetchFn !== "function") throw new TypeError("httpAdapter: no fetch");
  const target = String(url);
  const fixedHeaders = { ...headers, "Content-Type": "application/json" };

  // The whole exchange, body included, is bounded: the abort ends the
  // request, and the race answers even if something ignores the abort.
  function post(body) {
    const ctrl = new AbortController();
    return withTimeout(exchange(body, ctrl.signal), timeoutMs, target).finally(() => ctrl.abort());
  }

  async function exchange(body, signal) {
    const res = await fetchFn(target, {
      method: "POST",
      headers: fixedHeaders,
      body: jsonStringify(body),
      credentials,
      cache: "no-store",
      redirect: "error",
      signal,
    });
    if (!res || res.status !== 200) throw new Error(`pling-shared: ${target} answered ${res && res.status}`);
    const value = jsonParse(await res.text());
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("pling-shared: malformed answer");
    return value;
  }

  const only = (v, names) => objectKeys(v).every((k) => names.includes(k));
  return freeze({
    async allow() {
      const v = await post({ op: "allow" });
      if (v.allowed === true && only(v, ["allowed"])) return { allowed: true };
      const ms = v.retryAfterMs;
      if (v.allowed === false && only(v, ["allowed", "retryAfterMs"]) && typeof ms === "number" && numberIsFinite(ms) && ms > 0) {
        return { allowed: false, retryAfterMs: ms };
      }
      throw new Error("pling-shared: malformed rate decision");
    },
    async claim(_sessionId, requestId) {
      const v = await post({ op: "claim", requestId: String(requestId) });
      if ((v.claim === "claimed" || v.claim === "replayed") && only(v, ["claim"])) return v.claim;
      throw new Error("pling-shared: malformed claim");
    },
  });
}

/** The limiter of httpAdapter(url, options), for rateLimit.limiter. */
export function httpLimiter(url, options) {
  const { allow } = httpAdapter(url, options);
  return freeze({ allow });
}

/** The guard of httpAdapter(url, options), for replay.guard. */
export function httpGuard(url, options) {
  const { claim } = httpAdapter(url, options);
  return freeze({ claim });
}
