// values.js: protocol errors, waiting for Promises without asking a
// prototype, writing the page's data as JSON, and reading requests.

import { MAX_DEPTH, MAX_ID_BYTES, SURFACE_PROTOCOL } from "./constants.js";
import { ArrayPrototype, FunctionPrototype, ObjectPrototype, PromiseCtor, PromisePrototype, PromisePrototypeThen, dateGetTime, defineProperty, freeze, getOwnPropertyDescriptor, getOwnPropertyNames, getPrototypeOf, hasOwn, isArray, jsonStringify, listIncludes, newList, numberIsFinite, objectKeys, promiseSpeciesGetter, promiseThen, reflectApply, setPrototypeOf, SymbolSpecies, stringCharCodeAt, uncurryThis } from "./intrinsics.js";

/** Thrown by describe() when the session is missing, malformed, expired or revoked. */
export class SurfaceSessionError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "SurfaceSessionError";
    this.code = code;
  }
}

export function protocolError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

export function failure(id, code, message) {
  return { protocol: SURFACE_PROTOCOL, id, ok: false, error: { code, message } };
}

// The refusals of a message too large to hand to the kernel, written once
// at load: JSON.stringify of an object asks its prototype for toJSON.
export const TOO_LARGE = jsonStringify(failure("", "INVALID_REQUEST", "request is larger than the size limit"));
export const DESCRIBE_TOO_LARGE = jsonStringify({ ok: false, error: { code: "INVALID_REQUEST", message: "describe input is larger than the size limit" } });

/**
 * The then method to wait for on v, or undefined when v is a value. Only a
 * native Promise, an object with a then of its own, or an instance of a class
 * whose prototype defines then counts: a plain object or a function is a
 * value whatever a later script puts on Object.prototype.then, so a session
 * or a result can never be swapped by one.
 */
function thenOf(v) {
  if (v === null || typeof v !== "object") return undefined;
  try {
    let o = getPrototypeOf(v);
    if (o === PromisePrototype) return PromisePrototypeThen;
    const own = getOwnPropertyDescriptor(v, "then");
    if (own !== undefined) return hasOwn(own, "value") && typeof own.value === "function" ? own.value : undefined;
    for (; o !== null && o !== ObjectPrototype && o !== ArrayPrototype && o !== FunctionPrototype; o = getPrototypeOf(o)) {
      const d = getOwnPropertyDescriptor(o, "then");
      if (d !== undefined) return hasOwn(d, "value") && typeof d.value === "function" ? d.value : undefined;
    }
  } catch {
    // a proxy that throws: a value, which reads as malformed
  }
  return undefined;
}

export function isThenable(v) {
  return thenOf(v) !== undefined;
}

/**
 * Calls ok(value) once v settles, fail(reason) if it rejects, or ok(v) at
 * once when v is a value. Never looks then up on Promise.prototype at call
 * time and never resolves a Promise with v itself.
 */
export function whenSettled(v, ok, fail) {
  const then = thenOf(v);
  if (then === undefined) {
    ok(v);
    return;
  }
  try {
    const proto = then === PromisePrototypeThen ? getPrototypeOf(v) : undefined;
    if (proto === PromisePrototype || proto === SurfacePromise.prototype || proto === QuietPromise.prototype) {
      if (proto !== QuietPromise.prototype && !speciesAsLoaded(v)) {
        try {
          setPrototypeOf(v, QuietPromise.prototype);
        } catch {
          // not extensible: waited for as it is
        }
      }
      promiseThen(v, ok, fail);
      return;
    }
    let done = false;
    reflectApply(then, v, [
      (x) => {
        if (!done) {
          done = true;
          whenSettled(x, ok, fail);
        }
      },
      (e) => {
        if (!done) {
          done = true;
          fail(e);
        }
      },
    ]);
  } catch (e) {
    fail(e);
  }
}

/**
 * Whether then on the native Promise v (of Promise.prototype or
 * SurfacePromise.prototype) would look up only what was there at load: no
 * own constructor on v, Promise.prototype.constructor still the Promise
 * data property, Promise[Symbol.species] still the getter of load. Then
 * nothing a later script planted runs, and v is waited for as it is.
 * Moving it to QuietPromise instead gives the initial Promise map a
 * transition, after which V8 no longer folds instanceof Promise for any
 * Promise of the page (2.8 times slower in row P); only a page whose
 * Promise was patched, which already lost that fast path, pays for it.
 */
function speciesAsLoaded(v) {
  if (getOwnPropertyDescriptor(v, "constructor") !== undefined) return false;
  const c = getOwnPropertyDescriptor(PromisePrototype, "constructor");
  if (c === undefined || !hasOwn(c, "value") || c.value !== PromiseCtor) return false;
  const s = getOwnPropertyDescriptor(PromiseCtor, SymbolSpecies);
  return s !== undefined && hasOwn(s, "get") && s.get === promiseSpeciesGetter;
}

/**
 * A Promise of map(value of v) for the kernel (a SurfacePromise): the
 * kernel reads its then, the original, so a later script's
 * Promise.prototype.then never sees the answer.
 */
export function settledText(v, map) {
  const p = pending();
  whenSettled(v, (x) => {
    try {
      p.resolve(map(x));
    } catch (e) {
      p.reject(e);
    }
  }, p.reject);
  return p.promise;
}

/**
 * The class of the Promises made here. Its prototype, frozen, holds the
 * original then and constructor, so whoever awaits one of them (the page,
 * or Promise.resolve) uses the original then, never a later script's.
 * Not own properties of each Promise: an own then or constructor on any
 * Promise makes V8 drop its fast paths for every Promise of the page
 * (Promise.all with a then 1.5 to 2 times slower, instanceof Promise 2.6).
 */
class SurfacePromise extends PromiseCtor {}
defineProperty(SurfacePromise.prototype, "then", { __proto__: null, value: PromisePrototypeThen });
defineProperty(SurfacePromise.prototype, "constructor", { __proto__: null, value: PromiseCtor });
freeze(SurfacePromise.prototype);

/**
 * The class a native Promise of the page's (an async executor's, session
 * getter's, ...) is moved to before the runtime waits for it, when a
 * script changed what waiting would look up (speciesAsLoaded): its
 * prototype holds the original then and a constructor whose species is
 * its own, all read-only, so waiting looks nothing up on Promise or
 * Promise.prototype, where a later script could stand and be handed the
 * page's answer.
 */
class QuietPromise extends PromiseCtor {}
defineProperty(QuietPromise, Symbol.species, { __proto__: null, value: QuietPromise });
defineProperty(QuietPromise.prototype, "then", { __proto__: null, value: PromisePrototypeThen });
defineProperty(QuietPromise.prototype, "constructor", { __proto__: null, value: QuietPromise });
freeze(QuietPromise.prototype);
freeze(QuietPromise);

/** A Promise (a SurfacePromise) with its resolve and reject. */
export function pending() {
  let resolve;
  let reject;
  const promise = new SurfacePromise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { __proto__: null, promise, resolve, reject };
}

/** A promise made here resolves with v without a then lookup on it: v has a then of its own. */
export function unthenable(v) {
  if (v !== null && typeof v === "object" && !hasOwn(v, "then")) {
    defineProperty(v, "then", { __proto__: null, value: undefined });
  }
  return v;
}

/**
 * JSON text of the page's own data (actions, views, results), written as
 * JSON.stringify writes it but without looking anything up on a built-in
 * prototype: an object's own enumerable members are read through their
 * descriptors (an own getter, the page's, runs), an array's elements by
 * index without asking its prototype for a hole, a Date through the
 * captured toISOString, a boxed primitive through the captured valueOf, and
 * a toJSON only where it was at load (on a built-in prototype: a polyfill
 * that ran before this module) or on the page's own classes. So a toJSON,
 * an index accessor or a Symbol.toPrimitive a later script plants is never
 * called and rewrites nothing.
 */
export function pageJSON(value) {
  const stack = newList();
  const write = (holder, key, v, depth) => {
    if (v !== null && (typeof v === "object" || typeof v === "function")) {
      const toJSON = toJSONFor(v);
      if (toJSON !== undefined) v = reflectApply(toJSON, v, [key]);
    }
    switch (typeof v) {
      case "string":
        return jsonStringify(v);
      case "number":
        return numberIsFinite(v) ? jsonStringify(v) : "null";
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        throw new TypeError("a BigInt is not JSON");
      case "object":
        if (v === null) return "null";
        break;
      default:
        return undefined; // undefined, a function, a symbol
    }
    const boxed = unboxed(v);
    if (boxed !== NOT_BOXED) return write(undefined, "", boxed, depth);
    for (let i = 0; i < depth; i++) if (stack[i] === v) throw new TypeError("the page's data holds a cycle");
    stack[depth] = v;
    let out;
    if (isArray(v)) {
      const n = ownValue(v, "length");
      out = "[";
      for (let i = 0; i < n; i++) {
        const d = getOwnPropertyDescriptor(v, i);
        const x = d === undefined ? undefined : hasOwn(d, "value") ? d.value : d.get === undefined ? undefined : reflectApply(d.get, v, []);
        const t = write(v, "" + i, x, depth + 1);
        out += (i > 0 ? "," : "") + (t === undefined ? "null" : t);
      }
      out += "]";
    } else {
      const names = objectKeys(v);
      out = "{";
      let first = true;
      for (let i = 0; i < names.length; i++) {
        const d = getOwnPropertyDescriptor(v, names[i]);
        if (d === undefined) continue;
        const x = hasOwn(d, "value") ? d.value : d.get === undefined ? undefined : reflectApply(d.get, v, []);
        const t = write(v, names[i], x, depth + 1);
        if (t === undefined) continue;
        out += (first ? "" : ",") + jsonStringify(names[i]) + ":" + t;
        first = false;
      }
      out += "}";
    }
    stack[depth] = undefined;
    return out;
  };
  const text = write(undefined, "", value, 0);
  return text === undefined ? "null" : text;
}

const BUILTIN_PROTOTYPES = freeze([ObjectPrototype, ArrayPrototype, FunctionPrototype, Date.prototype]);
// The toJSON each built-in prototype had at load (Date.prototype's own, a
// polyfill's): honoured as it was, whatever is there now.
const TOJSON_AT_LOAD = freeze([toJSONOf(ObjectPrototype), toJSONOf(ArrayPrototype), toJSONOf(FunctionPrototype), toJSONOf(Date.prototype)]);
const DATE_TOJSON = Date.prototype.toJSON;
const dateToISOString = uncurryThis(Date.prototype.toISOString);
function toJSONOf(proto) {
  const d = getOwnPropertyDescriptor(proto, "toJSON");
  return d !== undefined && hasOwn(d, "value") && typeof d.value === "function" ? d.value : undefined;
}
/** The toJSON to call for v, found by descriptors: a class's of the page's own, else a built-in prototype's at load. */
function toJSONFor(v) {
  for (let o = v; o !== null; o = getPrototypeOf(o)) {
    for (let i = 0; i < BUILTIN_PROTOTYPES.length; i++) {
      if (o === BUILTIN_PROTOTYPES[i]) {
        const f = TOJSON_AT_LOAD[i];
        return f === DATE_TOJSON ? dateToJSON : f;
      }
    }
    const f = toJSONOf(o);
    if (f !== undefined) return f;
  }
  return undefined;
}
/** Date.prototype.toJSON as the language defines it, with the captured toISOString. */
function dateToJSON() {
  const t = dateGetTime(this);
  return numberIsFinite(t) ? dateToISOString(this) : null;
}
const NOT_BOXED = freeze({ __proto__: null });
const numberValueOf = uncurryThis(Number.prototype.valueOf);
const stringValueOf = uncurryThis(String.prototype.valueOf);
const booleanValueOf = uncurryThis(Boolean.prototype.valueOf);
/** The primitive inside a Number, String or Boolean object (a brand check, no lookup), else NOT_BOXED. */
function unboxed(v) {
  const proto = getPrototypeOf(v);
  if (proto === ObjectPrototype || proto === ArrayPrototype || proto === null) return NOT_BOXED;
  try {
    return numberValueOf(v);
  } catch {
    // not a Number
  }
  try {
    return stringValueOf(v);
  } catch {
    // not a String
  }
  try {
    return booleanValueOf(v);
  } catch {
    // not a Boolean
  }
  return NOT_BOXED;
}

// ---------------------------------------------------------------------------
// Reading requests without running page code.

export class RequestError extends Error {}

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
export function toRequestJSON(value, budget) {
  let text = "";
  // The objects being read, by depth. No prototype: an index setter a later
  // script put on Object.prototype or Array.prototype would be handed each
  // of them, a private channel's request included, as it is stored.
  const stack = newList();
  const put = (s) => {
    text += s;
    if (text.length > budget) throw new RequestError("request is larger than the size limit");
  };
  // Members and elements read, written or not: a structured clone keeps
  // shared references, so one wide object of undefined members (written as
  // nothing) could be met thousands of times. Each one read counts against
  // the budget, which a member that is written costs at least as much of.
  let read = 0;
  const count = (n) => {
    read += n;
    if (read > budget) throw new RequestError("request is larger than the size limit");
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
      count(n);
      // One descriptor at a time: a descriptors object of every member
      // costs twice the walk.
      if (getOwnPropertyNames(v).length !== n + 1) {
        throw new RequestError("request holds an array with holes or extra properties");
      }
      put("[");
      for (let i = 0; i < n; i++) {
        const d = getOwnPropertyDescriptor(v, i);
        if (d === undefined) throw new RequestError("request holds an array with holes or extra properties");
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
    const names = getOwnPropertyNames(v);
    count(names.length);
    put("{");
    let first = true;
    for (let i = 0; i < names.length; i++) {
      const d = getOwnPropertyDescriptor(v, names[i]);
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
export function ownValue(obj, key) {
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
export function requestIdOf(request) {
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

/**
 * o[key] when o holds key itself (its own getter runs), else undefined: an
 * option a later script put on Object.prototype is no option.
 */
export function own(o, key) {
  return o !== null && (typeof o === "object" || typeof o === "function") && hasOwn(o, key) ? o[key] : undefined;
}

/** own(o, key), or dflt when o has no such member of its own: an option is never one a later script put on Object.prototype. */
export function ownOr(o, key, dflt) {
  const v = own(o, key);
  return v === undefined ? dflt : v;
}

/**
 * obj[name] found on obj or a prototype of its own class, never on
 * Object.prototype or Function.prototype, where a later script could have
 * put it; undefined when only those hold it.
 */
export function methodOf(obj, name) {
  for (let o = obj; o !== null && o !== undefined && o !== ObjectPrototype && o !== FunctionPrototype; o = getPrototypeOf(o)) {
    if (hasOwn(o, name)) return obj[name];
  }
  return undefined;
}

export function isPlainObject(v) {
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
export function isSerializedOrigin(s) {
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

export function onlyMembers(obj, allowed) {
  const names = objectKeys(obj);
  for (let i = 0; i < names.length; i++) if (!listIncludes(allowed, names[i])) return false;
  return true;
}
