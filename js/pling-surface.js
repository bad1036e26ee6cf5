// pling-surface.js: the in-page runtime of the pling.surface/0.1 agent surface.
//
//   import { loadSurface } from "./pling/pling-surface.js";
//   const { createSurface, defineRegistry } = await loadSurface();
//   const surface = createSurface({ registry, execute });
//   surface.listen({ allowedOrigins: [] });
//
// The protocol kernel is Go compiled to WebAssembly (surface.wasm, run by
// Go's wasm_exec.js). This module loads it once per page, adapts the page's
// options to the kernel's host interface, and carries the postMessage
// transport. See README.md beside this file for the guide and threat model.

import { applyShared } from "./pling-shared.js";

export const SURFACE_PROTOCOL = "pling.surface/0.1";
export const DEFAULT_SURFACE_RECORD_LIMIT = 8;
export const MAX_SURFACE_RECORD_LIMIT = 100;

const CHANNEL = "pling.surface";
// Names shared with wasm/main.go.
const RUNTIME_NAME = "__plingSurfaceRuntime";
const READY_NAME = "__plingSurfaceReady";
// One Go program per page, even when this module is loaded under two URLs.
const LOAD_KEY = Symbol.for("pling.surface.runtime");

const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
const DEFAULT_EXECUTE_TIMEOUT_MS = 30000;
const MAX_DEPTH = 64; // the kernel allows 32; deeper input is refused here without recursing further
const MAX_PORTS = 64; // private channels open at once per listen()
const AUTHENTICATE_TIMEOUT_MS = 10000;
const MAX_ID_BYTES = 256; // surface.MaxIDBytes

// Built-ins are captured when the module is evaluated, so that code which
// later patches Object, JSON or the prototypes (a polyfill adding toJSON,
// say) cannot change how requests are read.
const {
  getOwnPropertyDescriptor,
  getOwnPropertyDescriptors,
  getPrototypeOf,
  keys: objectKeys,
  hasOwn,
  freeze,
} = Object;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const { isArray } = Array;
const { stringify: jsonStringify, parse: jsonParse } = JSON;
const { isFinite: numberIsFinite, isSafeInteger } = Number;
const PromiseResolve = Promise.resolve.bind(Promise);
const stringCharCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);

const SESSION_CODES = freeze(["SESSION_REQUIRED", "SESSION_INVALID", "SESSION_EXPIRED", "SESSION_REVOKED"]);
const OPTION_NAMES = freeze([
  "registry", "execute", "app", "expose", "session", "recordLimit", "maxRecordLimit",
  "rateLimit", "replay", "onAudit", "onAuditError", "executeTimeoutMs", "shared",
]);
const LISTEN_OPTION_NAMES = freeze(["allowedOrigins", "authenticate", "maxMessageBytes"]);
const REQUEST_MEMBERS = freeze(["channel", "kind", "app", "envelope"]);
const CONNECT_MEMBERS = freeze(["channel", "kind", "app", "credential"]);

/** Thrown by describe() when the session is missing, malformed, expired or revoked. */
export class SurfaceSessionError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "SurfaceSessionError";
    this.code = code;
  }
}

function protocolError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

function failure(id, code, message) {
  return { protocol: SURFACE_PROTOCOL, id, ok: false, error: { code, message } };
}

function isThenable(v) {
  return v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function";
}

function listIncludes(list, v) {
  for (let i = 0; i < list.length; i++) if (list[i] === v) return true;
  return false;
}

// ---------------------------------------------------------------------------
// Reading requests without running page code.

class RequestError extends Error {}

/**
 * Encodes a request as JSON text while running none of its code: only own
 * data properties of plain objects and arrays are read (through property
 * descriptors, so no getter runs), toJSON and toString are never called, an
 * accessor or an object with another prototype (Date, Map, class instances,
 * objects of another realm) is refused, and the output stops as soon as it
 * passes the byte budget. Strings are quoted by JSON.stringify on the string
 * itself, which escapes a lone surrogate as \udXXX; the kernel's strict
 * decoder then refuses it rather than reading a different string.
 *
 * An object member whose value is undefined is left out, as JSON.stringify
 * does; any other value JSON cannot hold (undefined in an array, a function,
 * a symbol, a bigint, NaN, Infinity) is refused rather than rewritten.
 * Proxies cannot be detected: their traps do run. Messages are structured
 * clones and never hold proxies; direct callers of handle() should pass
 * plain data.
 */
function toRequestJSON(value, budget) {
  let text = "";
  const stack = [];
  const put = (s) => {
    text += s;
    if (text.length > budget) throw new RequestError("request is larger than the size limit");
  };
  const write = (v, depth) => {
    switch (typeof v) {
      case "string":
        // A UTF-8 byte count is never below the UTF-16 length.
        if (v.length > budget) throw new RequestError("request is larger than the size limit");
        put(jsonStringify(v));
        return;
      case "number":
        if (!numberIsFinite(v)) throw new RequestError("request holds a number that is not finite");
        put(jsonStringify(v));
        return;
      case "boolean":
        put(v ? "true" : "false");
        return;
      case "object":
        if (v === null) {
          put("null");
          return;
        }
        break;
      default:
        throw new RequestError(`request holds a ${typeof v}, which is not JSON`);
    }
    if (depth >= MAX_DEPTH) throw new RequestError("request is nested deeper than the limit");
    for (let i = 0; i < depth; i++) {
      if (stack[i] === v) throw new RequestError("request holds a cycle");
    }
    stack[depth] = v;
    const proto = getPrototypeOf(v);
    if (isArray(v)) {
      if (proto !== ArrayPrototype) throw new RequestError("request holds an array that is not a plain array");
      const n = getOwnPropertyDescriptor(v, "length").value;
      if (n > budget) throw new RequestError("request is larger than the size limit");
      const descs = getOwnPropertyDescriptors(v);
      if (objectKeys(descs).length !== n + 1) {
        throw new RequestError("request holds an array with holes or extra properties");
      }
      put("[");
      for (let i = 0; i < n; i++) {
        if (!hasOwn(descs, i)) throw new RequestError("request holds an array with holes or extra properties");
        const d = descs[i];
        if (!hasOwn(d, "value")) throw new RequestError("request holds an accessor property");
        if (i > 0) put(",");
        write(d.value, depth + 1);
      }
      put("]");
      return;
    }
    if (proto !== ObjectPrototype && proto !== null) {
      throw new RequestError("request holds an object that is not a plain object");
    }
    const descs = getOwnPropertyDescriptors(v);
    const names = objectKeys(descs);
    put("{");
    let first = true;
    for (let i = 0; i < names.length; i++) {
      const d = descs[names[i]];
      if (!hasOwn(d, "value")) {
        if (d.enumerable) throw new RequestError("request holds an accessor property");
        continue;
      }
      if (!d.enumerable || d.value === undefined) continue;
      put(first ? jsonStringify(names[i]) : "," + jsonStringify(names[i]));
      put(":");
      first = false;
      write(d.value, depth + 1);
    }
    put("}");
  };
  write(value, 0);
  return text;
}

/** The value of an own data property, or undefined; never runs a getter. */
function ownValue(obj, key) {
  try {
    const d = getOwnPropertyDescriptor(obj, key);
    return d !== undefined && hasOwn(d, "value") ? d.value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The id of a request for replies the kernel never sees, or "". The kernel's
 * id rules apply (surface.MaxIDBytes): a well-formed string of 1 to 256 UTF-8
 * bytes, the one key of the request that reads "id" in any case. Anything
 * else is not echoed, so a refusal stays small whatever the request held.
 */
function requestIdOf(request) {
  if (request === null || typeof request !== "object") return "";
  const id = ownValue(request, "id");
  // A string has at least as many UTF-8 bytes as UTF-16 code units.
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_BYTES) return "";
  let bytes = 0;
  for (let i = 0; i < id.length; i++) {
    const c = stringCharCodeAt(id, i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = stringCharCodeAt(id, i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return "";
      bytes += 4;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return "";
    } else {
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    }
  }
  if (bytes > MAX_ID_BYTES) return "";
  try {
    const keys = objectKeys(request);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== "id" && k.length === 2 && (k[0] === "i" || k[0] === "I") && (k[1] === "d" || k[1] === "D")) return "";
    }
  } catch {
    return "";
  }
  return id;
}

function isPlainObject(v) {
  try {
    return v !== null && typeof v === "object" && getPrototypeOf(v) === ObjectPrototype;
  } catch {
    return false;
  }
}

/**
 * Whether s is written exactly as a browser reports event.origin: scheme,
 * "://", host and optional port, lower case, nothing after. Web origins are
 * checked by round-tripping through URL; other schemes (an extension's
 * chrome-extension://id, for one) have no origin in the URL standard, so
 * they are checked by form. "null" and "*" are never origins here.
 */
function isSerializedOrigin(s) {
  if (typeof s !== "string" || !/^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.\-\[\]:]+$/.test(s)) return false;
  if (/^https?:/.test(s)) {
    try {
      return new URL(s).origin === s;
    } catch {
      return false;
    }
  }
  return /^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.-]+(:[0-9]+)?$/.test(s);
}

function onlyMembers(obj, allowed) {
  const names = objectKeys(obj);
  for (let i = 0; i < names.length; i++) if (!listIncludes(allowed, names[i])) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Registry helper.

function valueOf(x) {
  return typeof x === "function" ? x() : x;
}

function isLazySource(r) {
  return r !== null && typeof r === "object" && !isArray(r) &&
    typeof r.count === "function" && typeof r.slice === "function" && typeof r.get === "function";
}

/**
 * Builds a registry from plain parts. Each part is a value or a function
 * returning it; records is an array or a lazy source
 * { count(), slice(offset, limit), get(id), ids?(max) } so that a large
 * table is read by its window only.
 */
export function defineRegistry(spec) {
  if (spec === null || typeof spec !== "object") throw new TypeError("defineRegistry needs an object");
  const registry = {
    actions() {
      const a = valueOf(spec.actions);
      return a === undefined ? [] : a;
    },
    view(query) {
      const view = {
        route: valueOf(spec.route),
        regions: valueOf(spec.regions),
        state: valueOf(spec.state),
        feedback: valueOf(spec.feedback),
        unavailable: valueOf(spec.unavailable),
      };
      const source = valueOf(spec.records);
      const ids = query.ids;
      const max = query.maxRecordIds;
      let records = [];
      let recordIds = [];
      let total = 0;
      if (isArray(source)) {
        total = source.length;
        if (ids !== undefined) {
          const wanted = new Set(ids);
          for (let i = 0; i < source.length && records.length < wanted.size; i++) {
            const r = source[i];
            if (r && wanted.has(r.id)) records.push(r);
          }
        } else if (query.limit > 0) {
          records = source.slice(query.offset, query.offset + query.limit);
        }
        const n = Math.min(total, max);
        for (let i = 0; i < n; i++) recordIds.push(source[i] && source[i].id);
      } else if (isLazySource(source)) {
        total = source.count();
        if (ids !== undefined) {
          for (const id of ids) {
            const r = source.get(id);
            if (r) records.push(r);
          }
        } else if (query.limit > 0) {
          records = source.slice(query.offset, query.limit);
        }
        recordIds = typeof source.ids === "function"
          ? source.ids(max)
          : source.slice(0, max).map((r) => r.id);
      } else if (source !== undefined && source !== null) {
        throw new TypeError("registry records must be an array or a lazy source { count, slice, get }");
      }
      view.records = records;
      view.recordIds = recordIds;
      view.recordIdsTotal = total;
      view.recordsTotal = total;
      return view;
    },
  };
  if (spec.version !== undefined) registry.version = () => valueOf(spec.version);
  return registry;
}

// ---------------------------------------------------------------------------
// Host adapter: the page's options as the Go bridge wants them. Page-owned
// values (actions, views, results, sessions) are encoded with JSON.stringify
// here: they come from the page's own code, not from a caller.

/** The session's fields as they cross to the kernel, or null for no session. */
function sessionFields(s) {
  if (s === null || s === undefined) return null;
  if (typeof s !== "object") throw new TypeError("a session must be an object");
  const time = (t) => (t instanceof Date ? t.getTime() : t);
  // Only the session's fields cross; anything else the page keeps on the
  // object (a token, say) stays in the page.
  return {
    agentId: s.agentId,
    sessionId: s.sessionId,
    userId: s.userId,
    expiresAt: time(s.expiresAt),
    scope: s.scope,
    delegationId: s.delegationId,
    revokedAt: time(s.revokedAt),
  };
}

function sessionText(s) {
  const f = sessionFields(s);
  return f === null ? null : jsonStringify(f);
}

const isPrimitive = (v) => v === null || (typeof v !== "object" && typeof v !== "function");

/**
 * The values session text is made of, when that text is a function of them
 * alone (primitives, and a plain array of strings for the scope); else
 * undefined.
 */
function sessionSnapshot(f) {
  if (f === null) return undefined;
  const { agentId, sessionId, userId, expiresAt, scope, delegationId, revokedAt } = f;
  const snap = [agentId, sessionId, userId, expiresAt, delegationId, revokedAt];
  for (let i = 0; i < snap.length; i++) if (!isPrimitive(snap[i])) return undefined;
  if (!isArray(scope) || getPrototypeOf(scope) !== ArrayPrototype || "toJSON" in scope) return undefined;
  for (let i = 0; i < scope.length; i++) {
    if (typeof scope[i] !== "string") return undefined;
    snap.push(scope[i]);
  }
  return snap;
}

function sameSnapshot(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A session getter for the bridge from a session object or getter.
 * repeats: answer true instead of the text when the session is the one whose
 * text it answered last, which saves encoding and copying it on every call.
 * Only the host's own getter may: the kernel keeps one last session per
 * getter it calls, and a private channel's getter shares it with others.
 * Once the page answers with a Promise, the getter always answers text,
 * because a late answer could arrive after a newer one.
 */
function sessionGetter(source, repeats) {
  let last; // snapshot of the session last answered as text
  let settles = false; // the page has answered with a Promise
  return () => {
    const s = typeof source === "function" ? source() : source;
    if (isThenable(s)) {
      settles = true;
      last = undefined;
      return PromiseResolve(s).then(sessionText);
    }
    if (!repeats || settles) return sessionText(s);
    const f = sessionFields(s);
    const snap = sessionSnapshot(f);
    if (snap !== undefined && last !== undefined && sameSnapshot(snap, last)) return true;
    last = undefined;
    const text = f === null ? null : jsonStringify(f);
    last = snap;
    return text;
  };
}

// ---------------------------------------------------------------------------
// The lane: texts between the kernel and the host cross as UTF-8 in two
// buffers the kernel copies to and from, not as JS strings, each of which
// costs the Go side a tracked and finalized value and extra crossings (see
// hostbridge/lane_js.go for the convention and why it is safe).

const LANE_BYTES = 64 * 1024;

// What the kernel asks for (surface.AskKind), and the codes of an answer
// that is not a text's length in entryIO (hostbridge/step_js.go).
const ASK_SESSION = 1;
const ASK_LIMIT = 2;
const ASK_VIEW = 3;
const ASK_CLAIM = 4;
const ASK_EXECUTE = 5;
const FAILED = -1;
const NO_SESSION = -2;
const TIMED_OUT = -3;
const HELD = -4;
// execute's answer when it parked the executor's Promise for wait.
const PARKED = -5;
// Bounds every awaited host Promise but the executor's, as
// hostbridge.DefaultHostTimeout does.
const HOST_TIMEOUT_MS = 10000;
const TOO_LARGE = jsonStringify(failure("", "INVALID_REQUEST", "request is larger than the size limit"));
const DESCRIBE_TOO_LARGE = jsonStringify({ ok: false, error: { code: "INVALID_REQUEST", message: "describe input is larger than the size limit" } });

/**
 * A limiter's decision as a number: 0 allowed, > 0 denied with that
 * retryAfterMs, FAILED for anything else (which the kernel answers with
 * RATE_LIMIT_UNAVAILABLE: nothing malformed lets a request by).
 */
function decisionCode(d) {
  try {
    if (d === null || typeof d !== "object") return FAILED;
    const allowed = d.allowed;
    const retry = d.retryAfterMs;
    if (typeof allowed !== "boolean") return FAILED;
    if (allowed) return retry === undefined || retry === 0 ? 0 : FAILED;
    return typeof retry === "number" && retry > 0 && retry !== Infinity ? retry : FAILED;
  } catch {
    return FAILED;
  }
}

function makeLane() {
  const io = new Uint8Array(LANE_BYTES);
  const entryIO = new Uint8Array(LANE_BYTES);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let depth = 0; // host functions running page code
  const write = (buffer, text) => {
    const r = encoder.encodeInto(text, buffer);
    return r.read === text.length ? r.written : text;
  };
  return {
    io,
    entryIO,
    /** The texts a host function was given: numbers are lengths of texts laid out in io. */
    texts(...params) {
      let at = 0;
      for (let i = 0; i < params.length; i++) {
        const p = params[i];
        if (typeof p === "number") {
          params[i] = decoder.decode(io.subarray(at, at + p));
          at += p;
        }
      }
      return params;
    },
    /** A text answer of a host function: its length in io when it fits, else the text. */
    answer(text) {
      return typeof text === "string" ? write(io, text) : text;
    },
    /**
     * A text for a call into the kernel: its length in entryIO when it fits
     * and no host function is running (a call made from page code inside
     * one goes as a string: the kernel may not have read entryIO yet).
     */
    toKernel(text) {
      return depth === 0 && typeof text === "string" ? write(entryIO, text) : text;
    },
    /**
     * A text for an export (see makeEntries): its length in entryIO, or,
     * when it does not fit, the text itself. An export copies what it is
     * given before anything else runs, so it may be written at any time.
     */
    toEntry(text) {
      return write(entryIO, text);
    },
    /** Runs page code on behalf of the kernel. */
    run(f) {
      depth++;
      try {
        return f();
      } finally {
        depth--;
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Time limits of the Promises the kernel waits for (the executor's, an
// async adapter's), kept here: one timer serves every wait. It is armed
// for the earliest deadline, left to fire rather than cleared when waits
// finish, and not re-armed when nothing waits.

const now = typeof performance === "object" && typeof performance.now === "function"
  ? performance.now.bind(performance)
  : Date.now;

function makeDeadlines() {
  const waiting = new Map(); // call id -> { at, expire }
  let timer;
  let timerAt = Infinity;
  const arm = (at) => {
    if (timer !== undefined) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(sweep, Math.max(0, at - now()));
  };
  function sweep() {
    timer = undefined;
    timerAt = Infinity;
    const t = now();
    let next = Infinity;
    for (const [id, w] of waiting) {
      if (w.at <= t) {
        waiting.delete(id);
        try {
          w.expire();
        } catch {
          // the kernel is gone; nothing waits for this call any more
        }
      } else if (w.at < next) {
        next = w.at;
      }
    }
    if (next !== Infinity) arm(next);
  }
  return {
    /** Calls expire() once ms pass, unless finish(id) came first. */
    start(id, ms, expire) {
      const at = now() + ms;
      waiting.set(id, { at, expire });
      if (at < timerAt) arm(at);
    },
    /** True when the call was still waiting: its answer is the one that counts. */
    finish(id) {
      return waiting.delete(id);
    },
  };
}

function resultText(r) {
  const text = r === undefined ? "null" : jsonStringify(r);
  return text === undefined ? "null" : text;
}

function checkPositive(name, v, integer) {
  if (v === undefined) return;
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}

function buildHost(options, lane, deadlines, entries) {
  const { registry, execute, expose, session, rateLimit, replay, onAudit, onAuditError } = options;
  const { texts, answer, run } = lane;
  let parked; // the executor's Promise, until wait takes it
  const host = {
    io: lane.io,
    entryIO: lane.entryIO,
    actions: () => answer(run(() => jsonStringify(registry.actions()))),
    view: (queryJSON) => {
      const query = jsonParse(texts(queryJSON)[0]);
      if (query.ids !== undefined) freeze(query.ids);
      const v = run(() => registry.view(freeze(query)));
      return isThenable(v) ? PromiseResolve(v).then((x) => jsonStringify(x)) : answer(run(() => jsonStringify(v)));
    },
    // An executor that answers at once is answered at once: the kernel then
    // has no Promise to wait for. A throw fails the call either way.
    execute: (id, argsJson, contextJSON) => {
      [id, argsJson, contextJSON] = texts(id, argsJson, contextJSON);
      const r = run(() => execute(id, argsJson, freeze(jsonParse(contextJSON))));
      if (!isThenable(r)) return answer(run(() => resultText(r)));
      const later = PromiseResolve(r).then(resultText);
      if (entries === undefined) return later;
      // Kept here for the wait that follows at once: handing the Promise
      // to the kernel would make it a JS value Go tracks and finalizes.
      parked = later;
      return PARKED;
    },
  };
  if (entries !== undefined) {
    // With the exports, the kernel hands every Promise a host function
    // answered to wait(ticket, kind, promise, limitMs) and returns; the
    // settled value goes back through the answer export, once, within
    // limitMs (see hostbridge/step_js.go).
    let held; // a text too long for entryIO, until the kernel takes it
    const textCode = (text) => {
      const n = lane.toEntry(text);
      if (typeof n === "number") return n;
      held = text;
      return HELD;
    };
    const encode = (kind, v) => {
      switch (kind) {
        case ASK_SESSION:
          if (v === null || v === undefined) return NO_SESSION;
          return typeof v === "string" ? textCode(v) : FAILED;
        case ASK_LIMIT:
          return decisionCode(v);
        case ASK_CLAIM:
          return v === "claimed" ? 1 : v === "replayed" ? 2 : FAILED;
        case ASK_VIEW:
        case ASK_EXECUTE:
          return typeof v === "string" ? textCode(v) : FAILED;
      }
      return FAILED;
    };
    host.wait = (ticket, kind, promise, limitMs) => {
      if (promise === undefined) {
        // The executor's Promise, parked by execute just before.
        promise = parked;
        parked = undefined;
      }
      // Its own key: the deadlines serve every surface of the runtime.
      const id = {};
      const give = (code) => {
        if (!deadlines.finish(id)) return; // the limit passed first
        try {
          entries.answer(ticket, code);
        } catch {
          // the kernel is gone; nothing waits for this call any more
        }
      };
      deadlines.start(id, limitMs, () => entries.answer(ticket, kind === ASK_EXECUTE ? TIMED_OUT : FAILED));
      PromiseResolve(promise).then(
        (v) => give(encode(kind, v)),
        () => give(FAILED),
      );
    };
    host.held = () => {
      const text = held;
      held = undefined;
      return text;
    };
  }
  if (typeof registry.version === "function") host.version = () => run(() => registry.version());
  if (typeof expose === "function") {
    host.expose = (idsJSON) => {
      const ids = jsonParse(texts(idsJSON)[0]);
      const out = [];
      for (let i = 0; i < ids.length; i++) {
        let yes = false;
        try {
          yes = run(() => expose(ids[i])) === true;
        } catch {
          yes = false; // a predicate that throws exposes nothing
        }
        out.push(yes);
      }
      return answer(jsonStringify(out));
    };
  }
  if (session !== undefined) {
    const getter = sessionGetter(session, true);
    host.session = () => answer(run(getter));
  }
  if (rateLimit && rateLimit.limiter !== undefined) {
    const limiter = rateLimit.limiter;
    host.allow = (key, nowMs) => run(() => limiter.allow(key, nowMs));
  }
  if (replay && typeof replay === "object" && replay.guard !== undefined) {
    const guard = replay.guard;
    host.claim = (sessionId, requestId, windowMs) => run(() => guard.claim(sessionId, requestId, windowMs));
  }
  if (onAudit !== undefined) {
    host.audit = (eventJSON) => {
      [eventJSON] = texts(eventJSON);
      const event = freeze(jsonParse(eventJSON));
      const r = run(() => onAudit(event));
      if (entries === undefined || !isThenable(r)) return r;
      // The reply does not wait for the sink; its failure, or its not
      // settling within the host time limit, still reaches onAuditError.
      withTimeout(r, HOST_TIMEOUT_MS).then(undefined, (reason) => {
        if (host.auditError !== undefined) host.auditError(reason, String(reason && reason.message), eventJSON);
      });
      return undefined;
    };
  }
  if (onAuditError !== undefined) {
    host.auditError = (reason, message, eventJSON) => {
      try {
        const r = run(() => onAuditError(reason !== undefined ? reason : new Error(message), freeze(jsonParse(eventJSON))));
        if (isThenable(r)) r.then(undefined, () => {});
      } catch {
        // onAuditError is the last resort; its own failure goes nowhere.
      }
    };
  }
  return host;
}

function buildConfig(options) {
  const { app, expose, recordLimit, maxRecordLimit, rateLimit, replay, executeTimeoutMs } = options;
  const config = { app, recordLimit, maxRecordLimit, executeTimeoutMs: executeTimeoutMs ?? DEFAULT_EXECUTE_TIMEOUT_MS };
  if (isArray(expose)) config.expose = expose.slice();
  if (rateLimit) {
    config.rateLimit = rateLimit.limiter !== undefined ? {} : { maxRequests: rateLimit.maxRequests, windowMs: rateLimit.windowMs };
  }
  if (replay === true) config.replay = {};
  else if (replay) config.replay = { windowMs: replay.windowMs };
  return config;
}

function validateOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("createSurface needs an options object");
  for (const name of objectKeys(options)) {
    if (!listIncludes(OPTION_NAMES, name)) throw new TypeError(`createSurface: unknown option ${jsonStringify(name)}`);
  }
  const { registry, execute, app, expose, session, rateLimit, replay } = options;
  if (registry === null || (typeof registry !== "object" && typeof registry !== "function")) {
    throw new TypeError("createSurface: options.registry is required");
  }
  if (typeof registry.actions !== "function" || typeof registry.view !== "function") {
    throw new TypeError("createSurface: the registry needs actions() and view() functions");
  }
  if (registry.version !== undefined && typeof registry.version !== "function") {
    throw new TypeError("createSurface: registry.version must be a function");
  }
  if (typeof execute !== "function") throw new TypeError("createSurface: options.execute is required and must be a function");
  if (app !== undefined && typeof app !== "string") throw new TypeError("createSurface: app must be a string");
  if (expose !== undefined && typeof expose !== "function") {
    if (!isArray(expose) || !expose.every((id) => typeof id === "string" && id !== "")) {
      throw new TypeError("createSurface: expose must be an array of capability ids or a function");
    }
  }
  if (session !== undefined && session !== null && typeof session !== "object" && typeof session !== "function") {
    throw new TypeError("createSurface: session must be a session object, a getter, or null");
  }
  checkPositive("recordLimit", options.recordLimit, true);
  checkPositive("maxRecordLimit", options.maxRecordLimit, true);
  checkPositive("executeTimeoutMs", options.executeTimeoutMs, false);
  if (rateLimit !== undefined && rateLimit !== null) {
    if (typeof rateLimit !== "object") throw new TypeError("createSurface: rateLimit must be an object");
    if (rateLimit.limiter !== undefined) {
      if (rateLimit.limiter === null || typeof rateLimit.limiter.allow !== "function") {
        throw new TypeError("createSurface: rateLimit.limiter needs an allow(key, nowMs) function");
      }
    } else {
      if (rateLimit.maxRequests === undefined || rateLimit.windowMs === undefined) {
        throw new TypeError("createSurface: rateLimit needs maxRequests and windowMs");
      }
      checkPositive("rateLimit.maxRequests", rateLimit.maxRequests, true);
      checkPositive("rateLimit.windowMs", rateLimit.windowMs, false);
    }
  }
  if (replay !== undefined && replay !== null && typeof replay !== "boolean") {
    if (typeof replay !== "object") throw new TypeError("createSurface: replay must be a boolean or an object");
    checkPositive("replay.windowMs", replay.windowMs, false);
    if (replay.guard !== undefined && (replay.guard === null || typeof replay.guard.claim !== "function")) {
      throw new TypeError("createSurface: replay.guard needs a claim(sessionId, requestId, windowMs) function");
    }
  }
  for (const name of ["onAudit", "onAuditError"]) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new TypeError(`createSurface: ${name} must be a function`);
    }
  }
}

function withTimeout(value, ms) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
  });
  return Promise.race([PromiseResolve(value), expired]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------
// Entries: the module exports through which every call enters the kernel.
// Each runs the kernel's steps synchronously and returns; the answer goes
// to host.reply before it does, or, when a host function answered with a
// Promise, after host.wait has had it settled (see hostbridge/step_js.go).
// No Go goroutine and no js.FuncOf callback is on the way, so an export
// may be called at any time, page code that the kernel runs included.

const entriesOf = new WeakMap(); // Go object -> entries

// Every this many export calls, the Go runtime is resumed once with
// nothing to do, so that its finalizers run: JS values the bridge made
// while answering (a Promise, a limiter's decision object) are only
// released then.
const RESUME_EVERY = 256;

function makeEntries(go, runtime) {
  if (go === null || typeof go !== "object") return undefined;
  const known = entriesOf.get(go);
  if (known !== undefined) return known.key === runtime.entryKey ? known : undefined;
  const exports = go._inst && go._inst.exports;
  const resume = go._resume;
  if (!exports || typeof resume !== "function" || typeof exports.pling_handle !== "function" ||
    typeof exports.pling_describe !== "function" || typeof exports.pling_answer !== "function" ||
    typeof exports.pling_entry_key !== "function") {
    return undefined;
  }
  const key = exports.pling_entry_key();
  let calls = 0;
  let resumeArmed = false;
  const idleResume = () => {
    resumeArmed = false;
    if (go.exited !== true) go._resume();
  };
  const entered = (r) => {
    if (go.exited === true) throw new Error("the surface runtime exited");
    if (++calls % RESUME_EVERY === 0 && !resumeArmed) {
      resumeArmed = true;
      setTimeout(idleResume, 0);
    }
    return r === 0;
  };
  const entries = {
    key,
    /**
     * A request of n bytes in entryIO, answered to host.reply(token, ...);
     * false: refused. session: the call brings its own session getter
     * (host.sessionFor).
     */
    handle: (slot, n, token, shared, session) =>
      entered(exports.pling_handle(slot, n, token, (shared ? 1 : 0) | (session ? 2 : 0))),
    /** A describe with its input n bytes in entryIO (-1: none); false: refused. */
    describe: (slot, n, token) => entered(exports.pling_describe(slot, n, token)),
    /** The settled value of the Promise waited for under ticket. */
    answer: (ticket, code) => entered(exports.pling_answer(ticket, code)),
  };
  entriesOf.set(go, entries);
  // Another module's runtime: its slots are not this runtime's.
  return key === runtime.entryKey ? entries : undefined;
}

// ---------------------------------------------------------------------------
// The API bound to one runtime.

function bind(runtime, entries) {
  const lane = makeLane(); // one per Go program: its surfaces take turns
  const deadlines = makeDeadlines();
  function createSurface(options) {
    validateOptions(options);
    const snapshot = {};
    for (const name of OPTION_NAMES) snapshot[name] = options[name];
    applyShared(snapshot); // shared: "indexeddb" swaps in the limiter and guard of pling-shared.js
    // Answers to calls taken through the entries, and the session getters
    // of those that brought one, by token.
    const replies = new Map();
    const sessions = new Map();
    let lastToken = 0;
    const host = buildHost(snapshot, lane, deadlines, entries);
    if (entries !== undefined) {
      host.reply = (token, out, capsId, capsText) => {
        const reply = replies.get(token);
        if (reply === undefined) return;
        replies.delete(token);
        sessions.delete(token);
        reply(out, capsId, capsText);
      };
      // No getter for the token answers undefined: no session, which the
      // kernel refuses for a call that was to bring its own.
      host.sessionFor = (token) => {
        const getter = sessions.get(token);
        return getter === undefined ? undefined : getter();
      };
    }
    const inst = runtime.create(host, jsonStringify(buildConfig(snapshot)));
    if (inst === null || typeof inst !== "object" || typeof inst.handle !== "function") {
      throw new Error(`createSurface: ${inst && typeof inst.error === "string" ? inst.error : "the runtime refused the options"}`);
    }
    const byEntries = entries !== undefined && typeof inst.slot === "number";
    const nextToken = () => {
      lastToken = lastToken >= 0x7fffffff ? 1 : lastToken + 1;
      return lastToken;
    };
    const app = snapshot.app;
    const maxRequestBytes = inst.maxRequestBytes;
    const maxResponseBytes = inst.maxResponseBytes;
    const stops = new Set();
    let closed = false;

    // The capability list the kernel last sent in shared mode, decoded once.
    // Answers that name it leave it out and get this object back in; it only
    // ever goes into postMessage, whose structured clone copies it, so no
    // caller can change it.
    let sharedCaps = { id: 0, list: undefined };

    // Asks the kernel for the answer to JSON text. The kernel answers by
    // calling reply (which saves making and settling a Promise in Go); an
    // instance that answers with a Promise instead is awaited.
    const ask = (text, sessionFn, shared) =>
      new Promise((resolve) => {
        const reply = (out, capsId, capsText) => {
          [out, capsText] = lane.texts(out, capsText);
          if (capsId === undefined) {
            resolve({ out });
            return;
          }
          if (capsText !== undefined) {
            sharedCaps = { id: 0, list: undefined };
            try {
              sharedCaps = { id: capsId, list: jsonParse(capsText) };
            } catch (e) {
              resolve({ out, shared: true });
              throw e; // so the kernel knows the list was not kept
            }
          }
          resolve({ out, caps: sharedCaps.id === capsId ? sharedCaps.list : undefined, shared: true });
        };
        if (byEntries) {
          const n = lane.toEntry(text);
          if (typeof n !== "number") {
            // More UTF-8 bytes than entryIO holds, which is the kernel's
            // request limit: what the kernel itself would answer.
            resolve({ out: TOO_LARGE });
            return;
          }
          const token = nextToken();
          replies.set(token, reply);
          if (sessionFn !== undefined) sessions.set(token, sessionFn);
          let taken = false;
          try {
            taken = entries.handle(inst.slot, n, token, shared === true, sessionFn !== undefined);
          } finally {
            // Refused, or the runtime is gone: nothing will answer this token.
            if (!taken) {
              replies.delete(token);
              sessions.delete(token);
            }
          }
          if (!taken) resolve({ out: undefined });
          return;
        }
        const request = lane.toKernel(text);
        const r = inst.handle(request, sessionFn, reply, shared === true);
        if (r !== undefined) resolve(PromiseResolve(r).then((out) => ({ out })));
      });

    // Sends JSON text to the kernel; the answer is an envelope, never a rejection.
    // shared: the envelope is only ever posted (see sharedCaps).
    const call = async (id, text, sessionFn, shared) => {
      try {
        const answer = await ask(text, sessionFn, shared);
        const out = answer.out;
        if (typeof out !== "string") return failure(id, "INTERNAL_ERROR", "internal error");
        if (out.length > maxResponseBytes) return failure(id, "INTERNAL_ERROR", "response is larger than the size limit");
        const envelope = jsonParse(out);
        if (answer.shared) {
          if (answer.caps === undefined || !isPlainObject(envelope.result)) return failure(id, "INTERNAL_ERROR", "internal error");
          envelope.result.capabilities = answer.caps;
        }
        return envelope;
      } catch {
        // The Go program has exited, or the instance was closed under us.
        return failure(id, "INTERNAL_ERROR", "internal error");
      }
    };

    const serve = (request, sessionFn, budget, shared) => {
      const id = requestIdOf(request);
      if (closed) return PromiseResolve(failure(id, "INTERNAL_ERROR", "surface is closed"));
      let text;
      try {
        text = toRequestJSON(request, budget);
      } catch (e) {
        const message = e instanceof RequestError ? e.message : "request could not be read";
        return PromiseResolve(failure(id, "INVALID_REQUEST", message));
      }
      return call(id, text, sessionFn, shared);
    };

    async function handle(request) {
      try {
        return await serve(request, undefined, maxRequestBytes);
      } catch {
        return failure("", "INTERNAL_ERROR", "internal error");
      }
    }

    async function describe(input) {
      if (closed) throw protocolError("INTERNAL_ERROR", "surface is closed");
      let text;
      if (input !== undefined) {
        try {
          text = toRequestJSON(input, maxRequestBytes);
        } catch (e) {
          throw protocolError("INVALID_REQUEST", e instanceof RequestError ? e.message : "describe input could not be read");
        }
      }
      let answer;
      try {
        const out = await new Promise((resolve) => {
          const done = (out) => resolve(lane.texts(out)[0]);
          if (byEntries) {
            const n = text === undefined ? -1 : lane.toEntry(text);
            if (typeof n !== "number") {
              resolve(DESCRIBE_TOO_LARGE);
              return;
            }
            const token = nextToken();
            replies.set(token, done);
            let taken = false;
            try {
              taken = entries.describe(inst.slot, n, token);
            } finally {
              if (!taken) replies.delete(token);
            }
            if (!taken) resolve(undefined);
            return;
          }
          const r = inst.describe(text, done);
          if (r !== undefined) resolve(r);
        });
        answer = jsonParse(out);
      } catch {
        throw protocolError("INTERNAL_ERROR", "internal error");
      }
      if (answer.ok === true) return answer.result;
      const { code, message } = answer.error;
      if (listIncludes(SESSION_CODES, code)) throw new SurfaceSessionError(code, message);
      throw protocolError(code, message);
    }

    const responseMessage = (envelope) => {
      const msg = { channel: CHANNEL, kind: "response" };
      if (app !== undefined) msg.app = app;
      msg.envelope = envelope;
      return msg;
    };

    function listen(listenOptions) {
      if (closed) throw new Error("listen: the surface is closed");
      const o = listenOptions === undefined ? {} : listenOptions;
      if (o === null || typeof o !== "object") throw new TypeError("listen options must be an object");
      for (const name of objectKeys(o)) {
        if (!listIncludes(LISTEN_OPTION_NAMES, name)) throw new TypeError(`listen: unknown option ${jsonStringify(name)}`);
      }
      const origins = o.allowedOrigins === undefined ? [] : o.allowedOrigins;
      if (!isArray(origins)) throw new TypeError("listen: allowedOrigins must be an array of origins");
      const allowed = [];
      for (const origin of origins) {
        if (!isSerializedOrigin(origin)) {
          throw new TypeError(`listen: ${jsonStringify(String(origin))} is not an origin such as "https://example.com"`);
        }
        allowed.push(origin);
      }
      const authenticate = o.authenticate;
      if (authenticate !== undefined && typeof authenticate !== "function") {
        throw new TypeError("listen: authenticate must be a function");
      }
      checkPositive("listen: maxMessageBytes", o.maxMessageBytes, true);
      const budget = Math.min(o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, maxRequestBytes);
      const win = globalThis.window;
      if (!win || typeof win.addEventListener !== "function" || !win.location) {
        throw new TypeError("listen: needs a window");
      }
      const ownOrigin = win.location.origin;
      const ports = [];
      let stopped = false;

      const onPortMessage = (port, event, sessionFn) => {
        try {
          if (stopped || closed || event.isTrusted !== true) return;
          const data = event.data;
          if (!isPlainObject(data) || ownValue(data, "channel") !== CHANNEL || ownValue(data, "kind") !== "request") return;
          if (hasOwn(data, "app") && ownValue(data, "app") !== app) return;
          const reply = (envelope) => {
            try {
              port.postMessage(responseMessage(envelope));
            } catch {
              // the port is gone
            }
          };
          const envelope = ownValue(data, "envelope");
          if (!onlyMembers(data, REQUEST_MEMBERS)) {
            reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
            return;
          }
          serve(envelope, sessionFn, budget, true).then(reply);
        } catch {
          // A listener never throws into the page.
        }
      };

      const connect = async (event, data, origin) => {
        const port = event.ports && event.ports[0];
        if (!port) return;
        const refuse = () => {
          try {
            port.postMessage({ channel: CHANNEL, kind: "refused" });
            port.close();
          } catch {
            // the port is gone
          }
        };
        if (!onlyMembers(data, CONNECT_MEMBERS) || ports.length >= MAX_PORTS) {
          refuse();
          return;
        }
        let sessionFn;
        if (authenticate !== undefined) {
          let result = null;
          try {
            // The credential goes to the page's authenticate and nowhere
            // else: not to the kernel, the audit, or a reply.
            result = await withTimeout(authenticate(freeze({ credential: ownValue(data, "credential"), origin })), AUTHENTICATE_TIMEOUT_MS);
          } catch {
            result = null;
          }
          if (result === null || (typeof result !== "object" && typeof result !== "function")) {
            refuse();
            return;
          }
          const getter = sessionGetter(result);
          sessionFn = () => lane.run(getter);
        }
        if (stopped || closed || ports.length >= MAX_PORTS) {
          refuse();
          return;
        }
        ports.push(port);
        port.onmessage = (e) => onPortMessage(port, e, sessionFn);
        const hello = { channel: CHANNEL, kind: "connected" };
        if (app !== undefined) hello.app = app;
        try {
          port.postMessage(hello);
        } catch {
          // the port is gone
        }
      };

      const onMessage = (event) => {
        try {
          if (stopped || closed || event.isTrusted !== true) return;
          const data = event.data;
          // Filtered here, before any call into the kernel: most messages
          // on a page (this surface's own replies included) are not ours.
          if (!isPlainObject(data) || ownValue(data, "channel") !== CHANNEL) return;
          const kind = ownValue(data, "kind");
          if (kind !== "request" && kind !== "connect") return;
          const source = event.source;
          const origin = event.origin;
          if (source === null || source === undefined || typeof origin !== "string" || origin === "null") return;
          if (source === win) {
            if (origin !== ownOrigin) return;
          } else if (!listIncludes(allowed, origin)) {
            return;
          }
          if (hasOwn(data, "app") && ownValue(data, "app") !== app) return;
          if (kind === "connect") {
            connect(event, data, origin);
            return;
          }
          const reply = (envelope) => {
            try {
              // Only to the sender, and only while it is still at the origin
              // the request came from: never "*".
              source.postMessage(responseMessage(envelope), origin);
            } catch {
              // the sender is gone
            }
          };
          const envelope = ownValue(data, "envelope");
          if (!onlyMembers(data, REQUEST_MEMBERS)) {
            reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
            return;
          }
          serve(envelope, undefined, budget, true).then(reply);
        } catch {
          // A listener never throws into the page.
        }
      };

      const stop = () => {
        if (stopped) return;
        stopped = true;
        win.removeEventListener("message", onMessage);
        for (const port of ports) {
          try {
            port.onmessage = null;
            // Say so before closing: browsers do not reliably fire a
            // MessagePort "close" event, and without this the caller's
            // pending calls could only end in a timeout.
            port.postMessage({ channel: CHANNEL, kind: "closed" });
            port.close();
          } catch {
            // already closed
          }
        }
        ports.length = 0;
        stops.delete(stop);
      };
      win.addEventListener("message", onMessage);
      stops.add(stop);
      return stop;
    }

    function close() {
      if (closed) return;
      closed = true;
      for (const stop of [...stops]) stop();
      try {
        inst.close();
      } catch {
        // the Go program is gone already
      }
    }

    // Opt-in WebMCP tools (pling-webmcp.js, loaded on first use). close()
    // stops the bridge with the listeners.
    async function webmcp(webmcpOptions) {
      if (closed) throw new Error("webmcp: the surface is closed");
      const { bridgeWebMCP } = await import("./pling-webmcp.js");
      if (closed) throw new Error("webmcp: the surface is closed");
      const stop = () => bridge.stop();
      const bridge = bridgeWebMCP(api, webmcpOptions, () => stops.delete(stop));
      if (bridge.supported) stops.add(stop);
      await bridge.ready;
      return bridge;
    }

    const api = freeze({ describe, handle, listen, close, webmcp });
    return api;
  }

  return freeze({
    SURFACE_PROTOCOL,
    DEFAULT_SURFACE_RECORD_LIMIT,
    MAX_SURFACE_RECORD_LIMIT,
    SurfaceSessionError,
    defineRegistry,
    createSurface,
  });
}

function isRuntime(rt) {
  return rt !== null && typeof rt === "object" && typeof rt.create === "function" && rt.protocol === SURFACE_PROTOCOL;
}

/**
 * Binds the API to a runtime object that was started some other way (the
 * one wasm/main.go publishes). loadSurface is the usual entry point.
 * options.go, the wasm_exec.js Go object that runs the module, lets calls
 * enter through the module's exports instead of js.FuncOf (faster); a Go
 * object that runs another module is ignored.
 */
export function fromRuntime(runtime, options = {}) {
  if (!isRuntime(runtime)) throw new TypeError(`fromRuntime: not a ${SURFACE_PROTOCOL} runtime`);
  if (options === null || typeof options !== "object") throw new TypeError("fromRuntime options must be an object");
  return bind(runtime, makeEntries(options.go, runtime));
}

const runtimeEntries = new WeakMap(); // runtime started here -> its entries

// ---------------------------------------------------------------------------
// Loading.

function resolveURL(given, fallback) {
  if (given === undefined) return new URL(fallback, import.meta.url).href;
  const base = globalThis.document ? globalThis.document.baseURI : import.meta.url;
  return new URL(String(given), base).href;
}

// instantiate compiles the module as it arrives. fetched is the request
// for url already under way, if any.
async function instantiate(url, imports, fetched) {
  if (typeof WebAssembly.instantiateStreaming === "function") {
    try {
      return (await WebAssembly.instantiateStreaming(fetched || fetch(url), imports)).instance;
    } catch {
      // Served without application/wasm, or no streaming here: fall back.
    }
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`loadSurface: fetching ${url} failed with HTTP ${response.status}`);
  return (await WebAssembly.instantiate(await response.arrayBuffer(), imports)).instance;
}

async function startRuntime(options) {
  const existing = globalThis[RUNTIME_NAME];
  if (isRuntime(existing)) return existing;
  const wasmURL = resolveURL(options.wasmURL, "./surface.wasm");
  const wasmExecURL = resolveURL(options.wasmExecURL, "./wasm_exec.js");
  let fetched;
  if (typeof globalThis.Go !== "function") {
    // The module's download starts now rather than after wasm_exec.js has
    // arrived: one round trip less before compilation can begin.
    if (typeof WebAssembly.instantiateStreaming === "function") {
      fetched = fetch(wasmURL);
      fetched.catch(() => {}); // a failure is reported where it is awaited
    }
    await import(wasmExecURL);
  }
  if (typeof globalThis.Go !== "function") throw new Error(`loadSurface: ${wasmExecURL} did not define Go`);
  const go = new globalThis.Go();
  const instance = await instantiate(wasmURL, go.importObject, fetched);
  let signal;
  const ready = new Promise((resolve) => {
    signal = resolve;
  });
  globalThis[READY_NAME] = signal;
  try {
    const exited = go.run(instance).then(() => {
      throw new Error("loadSurface: the surface runtime exited");
    });
    exited.catch(() => {});
    const runtime = await Promise.race([ready, exited]);
    if (!isRuntime(runtime)) throw new Error("loadSurface: the surface runtime did not start");
    const entries = makeEntries(go, runtime);
    if (entries !== undefined) runtimeEntries.set(runtime, entries);
    return runtime;
  } finally {
    delete globalThis[READY_NAME];
  }
}

/**
 * Loads wasm_exec.js and surface.wasm (by default the files beside this
 * module), starts the runtime once per page, and resolves to the API.
 * Later calls reuse the running runtime; their URLs are not used.
 */
export function loadSurface(options = {}) {
  if (options === null || typeof options !== "object") {
    return Promise.reject(new TypeError("loadSurface options must be an object"));
  }
  let started = globalThis[LOAD_KEY];
  if (started === undefined) {
    started = startRuntime(options);
    Object.defineProperty(globalThis, LOAD_KEY, { value: started, configurable: true, writable: true });
    started.catch(() => {
      if (globalThis[LOAD_KEY] === started) delete globalThis[LOAD_KEY];
    });
  }
  return started.then((runtime) => bind(runtime, runtimeEntries.get(runtime)));
}
