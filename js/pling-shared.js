// ---------------------------------------------------------------------------
// Shared state: rate limits and replay claims that hold across tabs,
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
//
// IndexedDB's limiter and guard are in this module, which the first script
// loads only when a surface shared through IndexedDB first decides; the
// HTTP ones are the first script's (shared-http.js), named here too.

import { AbortControllerCtor, ErrorCtor, IDBKeyRangeCtor, IDB_NATIVE, INDEXED_DB, StringCtor, Uint8ArrayCtor, WeakMapCtor, XHR, abortController, abortSignalOf, addListener, clearTimer, dateNow, domStringListContains, freeze, hasOwn, idbClose, idbCreateIndex, idbCreateStore, idbCursorContinue, idbCursorDelete, idbFactoryDelete, idbFactoryOpen, idbIndexKeyPath, idbIndexMultiEntry, idbIndexNames, idbIndexOpenCursor, idbIndexUnique, idbMissing, idbRequestError, idbRequestResult, idbStoreAutoIncrement, idbStoreGet, idbStoreIndex, idbStoreKeyPath, idbStoreNames, idbStorePut, idbTransaction, idbTxAbort, idbTxError, idbTxStore, idbUpperBound, isArray, jsonParse, jsonStringify, mathCeil, numberIsFinite, objectKeys, reflectApply, responseStatusOf, responseText, setPrototypeOf, setTimer, stringCharCodeAt, typedArrayBuffer, typedArrayLength, weakMapDelete, weakMapGet, weakMapSet, xhrAbort, xhrOpen, xhrSend, xhrSetCredentials, xhrSetHeader, xhrStatusOf, xhrTextOf, xhrURLOf } from "./intrinsics.js";
import { DEFAULT_TIMEOUT_MS, positive } from "./shared-http.js";
import { onlyMembers, own, ownOr, ownValue, pending, whenSettled } from "./values.js";

const DB_NAME = "pling-shared";
const WINDOWS = "windows"; // {key: [app, sha256 of the limiter's key], times: [ms...], expires}
const CLAIMS = "claims"; // {key: [app, sha256 of session and request id], expires}
const STORES = freeze([WINDOWS, CLAIMS]);
// Expired entries one decision deletes: more than the one it may add, so
// the store shrinks back to what is still inside a window.
const SWEEP = 8;
// More admitted times than any limiter keeps: a record holding more was not
// written here, and is refused rather than read to its end.
const MAX_TIMES = 1 << 16;

// What it resolves with never passes through a Promise.race or a finally
// that a later script could have replaced; a decision is a string or an
// object without a prototype, so resolving with it looks up no then.

// ---------------------------------------------------------------------------
// IndexedDB: one readwrite transaction per decision. Transactions of one
// origin whose scopes overlap run one after another, in every tab, so the
// database itself serialises the tabs: no lock is needed around it.
//
// Every script of the origin can open the database, so what it shows is
// kept to what a decision needs: the app name, a SHA-256 of the session id
// and the request id (claimKey, as redisstate's Guard.Key names a claim in
// Redis), times. And a schema another script changed (its own version,
// stores deleted or keyed another way) is not a refusal for good: the
// decision that finds it fails closed and has the database recreated, so
// the next one runs.
//
// IndexedDB's methods and getters are those of its prototypes when this
// module was evaluated, called on the objects the browser made, never
// looked up on them; events are heard through the original
// addEventListener. In a runtime without IndexedDB (Node), a factory given
// as the indexedDB option is called through its own members instead.

// The range of entries whose window ended by nowMs. Without IndexedDB, a
// given factory's own IDBKeyRange if the runtime has one, else its bounds.
function endedBy(nowMs) {
  if (IDB_NATIVE) return reflectApply(idbUpperBound ?? idbMissing, IDBKeyRangeCtor, [nowMs]);
  const K = globalThis.IDBKeyRange;
  return K !== undefined ? K.upperBound(nowMs) : { __proto__: null, lower: undefined, upper: nowMs, lowerOpen: false, upperOpen: false };
}
// f runs on each type event of target: through the original
// addEventListener; without IndexedDB, through the target's own on* member.
function on(target, type, f) {
  if (IDB_NATIVE) addListener(target, type, f);
  else target["on" + type] = f;
}

// claimKey is the hex SHA-256 of the session id's length in UTF-8 bytes (8
// bytes, big-endian), the session id and the request id, as redisstate's
// Guard.Key: the vectors of testdata/claimkeys hold both to it. A
// limiter's key is hashed the same way with no request id (another store,
// so it names no claim).
function claimKey(sessionId, requestId) {
  const s = utf8(sessionId);
  const r = utf8(requestId);
  const n = typedArrayLength(s);
  const rn = typedArrayLength(r);
  const msg = new Uint8ArrayCtor(8 + n + rn);
  // The length as 8 bytes big-endian; an id is far below 2^32 bytes.
  msg[4] = (n >>> 24) & 0xff;
  msg[5] = (n >>> 16) & 0xff;
  msg[6] = (n >>> 8) & 0xff;
  msg[7] = n & 0xff;
  for (let i = 0; i < n; i++) msg[8 + i] = s[i];
  for (let i = 0; i < rn; i++) msg[8 + n + i] = r[i];
  return sha256Hex(msg);
}

// utf8 is the UTF-8 encoding of s, a lone surrogate as U+FFFD (the kernel
// accepts no id that holds one), written here with the charCodeAt captured
// at load.
function utf8(s) {
  const out = new Uint8ArrayCtor(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = stringCharCodeAt(s, i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = stringCharCodeAt(s, i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) {
      out[n++] = c;
    } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 0x3f);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return new Uint8ArrayCtor(typedArrayBuffer(out), 0, n);
}

// SHA-256 (FIPS 180-4) of msg, in lower-case hex. Synchronous and written
// here: crypto.subtle would answer through a Promise (and exists only in
// secure contexts), and a decision's transaction must begin with its key.
const SHA256_K = freeze([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const SHA256_HEX = "0123456789abcdef";
const Int32ArrayCtor = Int32Array;

function sha256Hex(msg) {
  const len = typedArrayLength(msg);
  const blocks = ((len + 8) >>> 6) + 1;
  const padded = new Uint8ArrayCtor(blocks * 64);
  for (let i = 0; i < len; i++) padded[i] = msg[i];
  padded[len] = 0x80;
  // The length in bits, big-endian, in the last 8 bytes (below 2^32 here).
  const bits = len * 8;
  const end = typedArrayLength(padded);
  padded[end - 5] = (bits / 0x100000000) & 0xff;
  padded[end - 4] = (bits >>> 24) & 0xff;
  padded[end - 3] = (bits >>> 16) & 0xff;
  padded[end - 2] = (bits >>> 8) & 0xff;
  padded[end - 1] = bits & 0xff;
  const w = new Int32ArrayCtor(64);
  let h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a;
  let h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
  for (let b = 0; b < blocks; b++) {
    const o = b * 64;
    for (let t = 0; t < 16; t++) {
      const p = o + t * 4;
      w[t] = (padded[p] << 24) | (padded[p + 1] << 16) | (padded[p + 2] << 8) | padded[p + 3];
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15];
      const y = w[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    let a = h0, bb = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + SHA256_K[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + bb) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  let out = "";
  const words = [h0, h1, h2, h3, h4, h5, h6, h7];
  for (let i = 0; i < 8; i++) {
    for (let shift = 28; shift >= 0; shift -= 4) out += SHA256_HEX[(words[i] >>> shift) & 0xf];
  }
  return out;
}

const connections = new WeakMapCtor(); // IDBFactory -> Promise of {db}

// open answers the factory's connection, opened on the first decision and
// kept until the browser closes it or another version of the database is
// asked for. Its Promise resolves with a record without a prototype: a
// database resolved directly would have then looked up on its prototypes.
function open(factory) {
  if (factory === null || typeof factory !== "object") {
    const out = pending();
    out.reject(new ErrorCtor("pling-shared: IndexedDB is not available"));
    return out.promise;
  }
  const p = weakMapGet(connections, factory);
  return p !== undefined ? p : connect(factory, false);
}

// connect opens the database at whatever version it has (a version another
// script asked for included: there is no version of the surface's own to
// refuse it by) and checks that its stores are the surface's. If they are
// not, the database is recreated and this decision fails; the next one
// waits for the new database. repairing: this is the open after a
// recreation, which does not start another.
function connect(factory, repairing) {
  const out = pending();
  const p = out.promise;
  weakMapSet(connections, factory, p);
  const forget = () => {
    if (weakMapGet(connections, factory) === p) weakMapDelete(connections, factory);
  };
  // A failed open is not remembered: the next decision tries again.
  whenSettled(p, () => {}, forget);
  try {
    const req = idbFactoryOpen(factory, DB_NAME);
    // Only a database that did not exist is upgraded by an open without a
    // version: it is empty.
    on(req, "upgradeneeded", () => {
      const db = idbRequestResult(req);
      try {
        createStores(db);
      } catch (e) {
        out.reject(e);
        idbClose(db); // aborts the upgrade
      }
    });
    on(req, "blocked", () => out.reject(new ErrorCtor("pling-shared: the database is held open by another tab")));
    on(req, "error", () => out.reject(idbRequestError(req) || new ErrorCtor("pling-shared: the database could not be opened")));
    on(req, "success", () => {
      const db = idbRequestResult(req);
      // Another version asked for elsewhere, or the browser closing the
      // database: let go, and open again on the next decision.
      on(db, "versionchange", () => {
        forget();
        idbClose(db);
      });
      on(db, "close", forget);
      let ours = false;
      try {
        ours = storesAreOurs(db);
      } catch {
        // a store missing from the transaction, a getter refused: not ours
      }
      if (ours) {
        out.resolve({ __proto__: null, db });
        return;
      }
      idbClose(db);
      if (!repairing) recreate(factory);
      out.reject(new ErrorCtor("pling-shared: the database's schema is not the surface's; it is recreated for the next decision"));
    });
  } catch (e) {
    out.reject(e);
  }
  return p;
}

// recreate deletes the database and opens it anew, as the connection the
// next decision waits for. The deletion waits while another connection
// stays open: the surface's own close when they are told (versionchange).
function recreate(factory) {
  const out = pending();
  const p = out.promise;
  weakMapSet(connections, factory, p);
  whenSettled(p, () => {}, () => {
    if (weakMapGet(connections, factory) === p) weakMapDelete(connections, factory);
  });
  try {
    const req = idbFactoryDelete(factory, DB_NAME);
    on(req, "error", () => out.reject(idbRequestError(req) || new ErrorCtor("pling-shared: the database could not be deleted")));
    on(req, "success", () => {
      weakMapDelete(connections, factory);
      whenSettled(connect(factory, true), out.resolve, out.reject);
    });
  } catch (e) {
    out.reject(e);
  }
}

function createStores(db) {
  const names = idbStoreNames(db);
  for (let i = 0; i < STORES.length; i++) {
    if (domStringListContains(names, STORES[i])) continue;
    const store = idbCreateStore(db, STORES[i], { __proto__: null, keyPath: "key", autoIncrement: false });
    idbCreateIndex(store, "expires", "expires", { __proto__: null, unique: false, multiEntry: false });
  }
}

// storesAreOurs: both stores, keyed by "key" without a key generator, each
// with a plain index of "expires". A store in a transaction of its own, as
// a list of names would be read through the array's iterator.
function storesAreOurs(db) {
  const names = idbStoreNames(db);
  for (let i = 0; i < STORES.length; i++) {
    if (!domStringListContains(names, STORES[i])) return false;
    const store = idbTxStore(idbTransaction(db, STORES[i], "readonly"), STORES[i]);
    if (idbStoreKeyPath(store) !== "key" || idbStoreAutoIncrement(store) !== false) return false;
    if (!domStringListContains(idbIndexNames(store), "expires")) return false;
    const index = idbStoreIndex(store, "expires");
    if (idbIndexKeyPath(index) !== "expires" || idbIndexUnique(index) !== false || idbIndexMultiEntry(index) !== false) return false;
  }
  return true;
}

// decide runs step(store, done) in one readwrite transaction of storeName
// and resolves with what step passed to done once the transaction has
// committed: a decision is only reported when it is stored.
function decide(factory, storeName, nowMs, step) {
  const out = pending();
  whenSettled(open(factory), (conn) => {
    try {
      // Relaxed: the commit is reported once the browser holds it, not
      // after a flush to disk. A reload, a crash of the tab or of the
      // browser keeps it; only the machine losing power may not.
      const tx = idbTransaction(conn.db, storeName, "readwrite", { __proto__: null, durability: "relaxed" });
      let result;
      let decided = false;
      on(tx, "complete", () => (decided ? out.resolve(result) : out.reject(new ErrorCtor("pling-shared: no decision"))));
      on(tx, "abort", () => out.reject(idbTxError(tx) || new ErrorCtor("pling-shared: the transaction was aborted")));
      on(tx, "error", () => out.reject(idbTxError(tx) || new ErrorCtor("pling-shared: the transaction failed")));
      // A throw in a request's handler (a write over quota, say) aborts
      // the transaction; catching it keeps it from reaching the page.
      const guarded = (f) => () => {
        try {
          f();
        } catch (err) {
          out.reject(err);
          try {
            idbTxAbort(tx);
          } catch {
            // already finished
          }
        }
      };
      const store = idbTxStore(tx, storeName);
      sweep(store, nowMs, guarded);
      step(store, (r) => {
        result = r;
        decided = true;
      }, guarded);
    } catch (e) {
      out.reject(e);
    }
  }, out.reject);
  return out.promise;
}

// sweep deletes up to SWEEP entries whose window ended before nowMs.
function sweep(store, nowMs, guarded) {
  let n = 0;
  const req = idbIndexOpenCursor(idbStoreIndex(store, "expires"), endedBy(nowMs));
  on(req, "success", guarded(() => {
    const cursor = idbRequestResult(req);
    if (!cursor || n >= SWEEP) return;
    n++;
    idbCursorDelete(cursor);
    idbCursorContinue(cursor);
  }));
}

/**
 * A sliding-window limiter in IndexedDB: at most maxRequests admitted per
 * windowMs per key (the kernel's key is the session id), over every tab of
 * the origin and across reloads.
 */
export function indexedDBLimiter(options) {
  const app = ownOr(options, "app", "");
  const maxRequests = own(options, "maxRequests");
  const windowMs = own(options, "windowMs");
  const timeoutMs = ownOr(options, "timeoutMs", DEFAULT_TIMEOUT_MS);
  const factory = ownOr(options, "indexedDB", INDEXED_DB);
  if (typeof app !== "string") throw new TypeError("indexedDBLimiter: app must be a string");
  positive("indexedDBLimiter: maxRequests", maxRequests, true);
  positive("indexedDBLimiter: windowMs", windowMs, false);
  positive("indexedDBLimiter: timeoutMs", timeoutMs, false);
  return freeze({
    allow(key, nowMs) {
      const now = typeof nowMs === "number" && numberIsFinite(nowMs) ? nowMs : dateNow();
      const run = decide(factory, WINDOWS, now, (store, done, guarded) => {
        const id = [app, claimKey(StringCtor(key), "")];
        const get = idbStoreGet(store, id);
        on(get, "success", guarded(() => {
          const times = inWindow(idbRequestResult(get), now, windowMs);
          if (times.length < maxRequests) {
            times[times.length] = now;
            idbStorePut(store, { __proto__: null, key: id, times, expires: now + windowMs });
            done({ __proto__: null, allowed: true });
            return;
          }
          // The oldest admitted time leaves the window at oldest+windowMs. A
          // clock that went back keeps entries counted (closed) but never
          // asks for more than one window of patience.
          let oldest = now;
          for (let i = 0; i < times.length; i++) if (times[i] < oldest) oldest = times[i];
          let wait = oldest + windowMs - now;
          if (!(wait > 0 && wait <= windowMs)) wait = windowMs;
          done({ __proto__: null, allowed: false, retryAfterMs: mathCeil(wait) });
        }));
      });
      return withTimeout(run, timeoutMs, "the IndexedDB limiter");
    },
  });
}

// inWindow: the admitted times of a window record still inside the window
// at now, read as own data; a record that is not one is an empty window.
// The list grows by assignment, which would ask Array.prototype and
// Object.prototype for a setter of each index: it has no prototype.
function inWindow(rec, now, windowMs) {
  const out = setPrototypeOf([], null);
  const times = own(rec, "times");
  if (!isArray(times)) return out;
  if (times.length > MAX_TIMES) throw new ErrorCtor("pling-shared: a window record the runtime did not write");
  for (let i = 0; i < times.length; i++) {
    const t = hasOwn(times, i) ? times[i] : undefined;
    if (typeof t === "number" && now - t < windowMs) out[out.length] = t;
  }
  return out;
}

/**
 * A replay guard in IndexedDB: a (session, request id) pair is claimed once
 * per window over every tab of the origin and across reloads.
 */
export function indexedDBGuard(options) {
  const app = ownOr(options, "app", "");
  const timeoutMs = ownOr(options, "timeoutMs", DEFAULT_TIMEOUT_MS);
  const factory = ownOr(options, "indexedDB", INDEXED_DB);
  if (typeof app !== "string") throw new TypeError("indexedDBGuard: app must be a string");
  positive("indexedDBGuard: timeoutMs", timeoutMs, false);
  return freeze({
    claim(sessionId, requestId, windowMs) {
      const now = dateNow();
      const run = decide(factory, CLAIMS, now, (store, done, guarded) => {
        const id = [app, claimKey(StringCtor(sessionId), StringCtor(requestId))];
        const get = idbStoreGet(store, id);
        on(get, "success", guarded(() => {
          const rec = idbRequestResult(get);
          if (rec !== undefined && !(own(rec, "expires") <= now)) {
            done("replayed");
            return;
          }
          idbStorePut(store, { __proto__: null, key: id, expires: now + windowMs });
          done("claimed");
        }));
      });
      return withTimeout(run, timeoutMs, "the IndexedDB guard");
    },
  });
}

export { applyShared, httpAdapter, httpGuard, httpLimiter } from "./shared-http.js";

// ---------------------------------------------------------------------------
// HTTP: the exchange of httpAdapter (shared-http.js), which checked its
// options and fixed its address and headers when the page called it.

const ALLOWED = freeze(["allowed"]);
const DENIED = freeze(["allowed", "retryAfterMs"]);
const CLAIM = freeze(["claim"]);

/** What httpAdapter's limiter and guard do, posting to adapter.target. */
export function backendAdapter(adapter) {
  const { target, headers: fixedHeaders, credentials, fetchFn, useXHR, timeoutMs } = adapter;
  // POSTs body (JSON text) and resolves with read(answer), read run on the
  // parsed answer as it arrives. The whole exchange, body included, is
  // bounded: the abort ends the request, and the time limit answers even if
  // something ignores the abort.
  function post(body, read) {
    const answer = pending();
    const fail = answer.reject;
    const step = (f) => (x) => {
      try {
        f(x);
      } catch (e) {
        fail(e);
      }
    };
    let ctrl;
    let xhr;
    if (useXHR) {
      step(() => {
        xhr = new XHR();
        xhrOpen(xhr, "POST", target, true);
        if (credentials === "include") xhrSetCredentials(xhr, true);
        const names = objectKeys(fixedHeaders);
        for (let i = 0; i < names.length; i++) xhrSetHeader(xhr, names[i], fixedHeaders[names[i]]);
        addListener(xhr, "load", step(() => {
          const status = xhrStatusOf(xhr);
          // XMLHttpRequest follows redirects: one is refused here, as fetch's redirect: "error" would.
          if (status !== 200 || xhrURLOf(xhr) !== target) throw new Error(`pling-shared: ${target} answered ${status}`);
          const value = jsonParse(xhrTextOf(xhr));
          if (value === null || typeof value !== "object" || isArray(value)) throw new Error("pling-shared: malformed answer");
          answer.resolve(read(value));
        }));
        const failed = () => fail(new Error(`pling-shared: ${target} did not answer`));
        addListener(xhr, "error", failed);
        addListener(xhr, "abort", failed);
        xhrSend(xhr, body);
      })();
    } else step(() => {
      ctrl = AbortControllerCtor !== undefined ? new AbortControllerCtor() : undefined;
      const init = { __proto__: null, method: "POST", headers: fixedHeaders, body, credentials, cache: "no-store", redirect: "error" };
      if (ctrl !== undefined) init.signal = abortSignalOf(ctrl);
      whenSettled(fetchFn(target, init), step((res) => {
        let status;
        let real = false;
        try {
          status = responseStatusOf(res);
          real = true;
        } catch {
          status = ownValue(res, "status"); // a stand-in's answer
        }
        if (status !== 200) throw new Error(`pling-shared: ${target} answered ${status}`);
        const text = real ? responseText(res) : reflectApply(ownValue(res, "text"), res, []);
        whenSettled(text, step((t) => {
          if (typeof t !== "string") throw new Error("pling-shared: malformed answer");
          const value = jsonParse(t);
          if (value === null || typeof value !== "object" || isArray(value)) throw new Error("pling-shared: malformed answer");
          answer.resolve(read(value));
        }), fail);
      }), fail);
    })();
    const out = withTimeout(answer.promise, timeoutMs, target);
    const end = () => {
      try {
        if (xhr !== undefined) xhrAbort(xhr);
        if (ctrl !== undefined) abortController(ctrl);
      } catch {
        // nothing left to end
      }
    };
    whenSettled(out, end, end);
    return out;
  }

  return freeze({
    allow() {
      return post('{"op":"allow"}', (v) => {
        const allowed = ownValue(v, "allowed");
        const ms = ownValue(v, "retryAfterMs");
        if (allowed === true && onlyMembers(v, ALLOWED)) return { __proto__: null, allowed: true };
        if (allowed === false && onlyMembers(v, DENIED) && typeof ms === "number" && numberIsFinite(ms) && ms > 0) {
          return { __proto__: null, allowed: false, retryAfterMs: ms };
        }
        throw new Error("pling-shared: malformed rate decision");
      });
    },
    claim(_sessionId, requestId) {
      return post('{"op":"claim","requestId":' + jsonStringify(StringCtor(requestId)) + "}", (v) => {
        const claim = ownValue(v, "claim");
        if ((claim === "claimed" || claim === "replayed") && onlyMembers(v, CLAIM)) return claim;
        throw new Error("pling-shared: malformed claim");
      });
    },
  });
}

/** Settles as promise does, or rejects once ms pass. */
function withTimeout(promise, ms, what) {
  const out = pending();
  const timer = setTimer(() => out.reject(new ErrorCtor(`pling-shared: ${what} timed out after ${ms} ms`)), ms);
  whenSettled(promise, (v) => {
    clearTimer(timer);
    out.resolve(v);
  }, (e) => {
    clearTimer(timer);
    out.reject(e);
  });
  return out.promise;
}
