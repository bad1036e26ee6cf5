// An IndexedDB in memory, for the shared-state tests under Node (which has
// none): what pling-surface.js's IndexedDB limiter and guard use, with the
// rules that matter to them. A database has a version and object stores
// with their key paths and indexes; opening below the current version fails
// with VersionError; an upgrade or a deletion first tells every open
// connection (versionchange) and is blocked while one stays open; a put
// whose value lacks the store's key path throws DataError; a transaction
// completes once no request of it is pending. Events are delivered through
// the on* members, as a page that sets onsuccess sees them; nothing here is
// an EventTarget. Keys are compared as their JSON text.

const later = (f) => setTimeout(f, 0);
const fire = (target, type) => {
  const f = target["on" + type];
  if (typeof f === "function") f.call(target, { type, target });
};
const domError = (name, message) => {
  const e = new Error(message);
  e.name = name;
  return e;
};
const clone = (v) => (v === undefined ? undefined : structuredClone(v));
const names = (m) => ({ contains: (n) => m.has(n), get length() { return m.size; } });

/**
 * fakeIndexedDB() is a factory ({open, deleteDatabase}) and, beside it, dump
 * (every record of a store of a database) for the tests to look into.
 */
export function fakeIndexedDB() {
  const dbs = new Map(); // name -> {version, stores: Map(name -> store)}
  const conns = new Set();
  const queue = []; // upgrades and deletions waiting for connections to close

  function makeStore(keyPath, autoIncrement) {
    return { keyPath, autoIncrement, indexes: new Map(), records: new Map() };
  }

  function txApi(db, storeNames, mode) {
    for (const n of storeNames) if (!db.stores.has(n)) throw domError("NotFoundError", `no store ${n}`);
    let pendingRequests = 0;
    let finished = false;
    const tx = {
      error: null,
      mode,
      objectStore(n) {
        if (!storeNames.includes(n)) throw domError("NotFoundError", `${n} is not in this transaction`);
        return storeApi(db.stores.get(n), tx);
      },
      abort() {
        if (finished) throw domError("InvalidStateError", "finished");
        finished = true;
        later(() => fire(tx, "abort"));
      },
    };
    // A request of this transaction; again, the same request answering
    // once more (a cursor's continue).
    tx._request = (run, again) => {
      if (finished) throw domError("TransactionInactiveError", "finished");
      const req = again || { result: undefined, error: null, transaction: tx };
      pendingRequests++;
      later(() => {
        pendingRequests--;
        if (finished) return;
        try {
          run(req);
          fire(req, "success");
        } catch (e) {
          req.error = e;
          fire(req, "error");
          fire(tx, "error");
          if (!finished) {
            finished = true;
            tx.error = e;
            fire(tx, "abort");
          }
          return;
        }
        tx._maybeComplete();
      });
      return req;
    };
    tx._maybeComplete = () => later(() => {
      if (!finished && pendingRequests === 0) {
        finished = true;
        fire(tx, "complete");
      }
    });
    tx._maybeComplete();
    return tx;
  }

  function indexApi(store, name, tx) {
    const ix = store.indexes.get(name);
    if (!ix) throw domError("NotFoundError", `no index ${name}`);
    return {
      keyPath: ix.keyPath,
      unique: ix.unique,
      multiEntry: ix.multiEntry,
      openCursor(range) {
        const upper = range && typeof range.upper === "number" ? range.upper : Infinity;
        let rows;
        let i = 0;
        const req = tx._request((r) => {
          rows = [...store.records.entries()].filter(([, v]) => typeof v[ix.keyPath] === "number" && v[ix.keyPath] <= upper);
          r.result = cursor();
        });
        function cursor() {
          if (i >= rows.length) return null;
          const [k] = rows[i];
          return {
            delete() { store.records.delete(k); },
            continue() {
              i++;
              tx._request((r) => { r.result = cursor(); }, req);
            },
          };
        }
        return req;
      },
    };
  }

  function storeApi(store, tx) {
    return {
      keyPath: store.keyPath,
      autoIncrement: store.autoIncrement,
      indexNames: names(store.indexes),
      index: (n) => indexApi(store, n, tx),
      createIndex(n, keyPath, opts = {}) {
        if (tx.mode !== "versionchange") throw domError("InvalidStateError", "not an upgrade");
        store.indexes.set(n, { keyPath, unique: !!opts.unique, multiEntry: !!opts.multiEntry });
        return indexApi(store, n, tx);
      },
      deleteIndex(n) {
        if (tx.mode !== "versionchange") throw domError("InvalidStateError", "not an upgrade");
        store.indexes.delete(n);
      },
      get(key) {
        const k = JSON.stringify(key);
        return tx._request((r) => { r.result = clone(store.records.get(k)); });
      },
      getAll() {
        return tx._request((r) => { r.result = [...store.records.values()].map(clone); });
      },
      put(value) {
        if (tx.mode === "readonly") throw domError("ReadOnlyError", "readonly");
        const key = typeof store.keyPath === "string" ? value[store.keyPath] : undefined;
        if (key === undefined) throw domError("DataError", "the value has no key at the store's key path");
        const v = clone(value);
        return tx._request((r) => {
          store.records.set(JSON.stringify(key), v);
          r.result = key;
        });
      },
      clear() {
        return tx._request(() => store.records.clear());
      },
    };
  }

  function dbApi(name, db) {
    const conn = {
      name,
      get version() { return db.version; },
      get objectStoreNames() { return names(db.stores); },
      closed: false,
      _upgrade: null,
      transaction(storeNames, mode = "readonly") {
        if (conn.closed) throw domError("InvalidStateError", "closed");
        const list = typeof storeNames === "string" ? [storeNames] : [...storeNames];
        return txApi(db, list, mode);
      },
      createObjectStore(n, opts = {}) {
        if (!conn._upgrade) throw domError("InvalidStateError", "not an upgrade");
        if (db.stores.has(n)) throw domError("ConstraintError", `${n} exists`);
        const s = makeStore(opts.keyPath ?? null, !!opts.autoIncrement);
        db.stores.set(n, s);
        return storeApi(s, conn._upgrade);
      },
      deleteObjectStore(n) {
        if (!conn._upgrade) throw domError("InvalidStateError", "not an upgrade");
        db.stores.delete(n);
      },
      close() {
        if (conn.closed) return;
        conn.closed = true;
        conns.delete(conn);
        later(run);
      },
    };
    return conn;
  }

  // Runs the queued upgrades and deletions whose database no other
  // connection holds open.
  function run() {
    for (let i = 0; i < queue.length; i++) {
      const op = queue[i];
      const holders = [...conns].filter((c) => c.name === op.name && c !== op.self);
      if (holders.length) {
        if (!op.told) {
          op.told = true;
          for (const c of holders) fire(c, "versionchange");
          later(run);
          return;
        }
        if (!op.blocked) {
          op.blocked = true;
          fire(op.req, "blocked");
        }
        continue;
      }
      queue.splice(i, 1);
      op.go();
      later(run);
      return;
    }
  }

  function open(name, version) {
    if (version !== undefined && !(Number.isSafeInteger(version) && version > 0)) throw new TypeError("bad version");
    const req = { result: undefined, error: null, transaction: null };
    later(() => {
      const db = dbs.get(name);
      const current = db ? db.version : 0;
      const want = version ?? (current || 1);
      if (want < current) {
        req.error = domError("VersionError", `the requested version (${want}) is less than the existing version (${current})`);
        fire(req, "error");
        return;
      }
      const succeed = (d) => {
        const c = dbApi(name, d);
        conns.add(c);
        req.result = c;
        fire(req, "success");
      };
      if (want === current) {
        succeed(db);
        return;
      }
      queue.push({ name, req, go: () => {
        const d = dbs.get(name) || { version: 0, stores: new Map() };
        dbs.set(name, d);
        const oldVersion = d.version;
        d.version = want;
        const c = dbApi(name, d);
        conns.add(c);
        const tx = { mode: "versionchange", objectStore: (n) => storeApi(d.stores.get(n), tx), abort() { tx.aborted = true; } };
        c._upgrade = tx;
        req.result = c;
        req.transaction = tx;
        try {
          fire(req, "upgradeneeded");
        } catch {
          tx.aborted = true;
        }
        c._upgrade = null;
        req.transaction = null;
        if (tx.aborted || c.closed) {
          conns.delete(c);
          d.version = oldVersion;
          req.result = undefined;
          req.error = domError("AbortError", "the upgrade was aborted");
          fire(req, "error");
          return;
        }
        fire(req, "success");
      } });
      run();
    });
    return req;
  }

  function deleteDatabase(name) {
    const req = { result: undefined, error: null };
    later(() => {
      queue.push({ name, req, go: () => {
        dbs.delete(name);
        fire(req, "success");
      } });
      run();
    });
    return req;
  }

  /** Every record of store in database name, in the order they were put. */
  function dump(name, store) {
    const db = dbs.get(name);
    const s = db && db.stores.get(store);
    return s ? [...s.records.values()].map(clone) : [];
  }

  return { factory: { open, deleteDatabase }, dump, dbs };
}
