// pling-surface.js: the in-page runtime of the pling.surface/0.1 agent surface.
//
//   import { loadSurface } from "./pling/pling-surface.js";
//   const { createSurface, defineRegistry } = await loadSurface();
//   const surface = createSurface({ registry, execute });
//   surface.listen({ allowedOrigins: [] });
//
// The protocol kernel is Go compiled to WebAssembly (surface.wasm, run by
// the glue in pling-glue.js). This module loads it once per page, adapts the
// page's options to the kernel's host interface, and carries the postMessage
// transport. See README.md beside this file for the guide and threat model.

import { goGlue, randomUint32s } from "./pling-glue.js";

export const SURFACE_PROTOCOL = "pling.surface/0.1";
export const DEFAULT_SURFACE_RECORD_LIMIT = 8;
export const MAX_SURFACE_RECORD_LIMIT = 100;

const CHANNEL = "pling.surface";
// Names shared with wasm/main.go.
// One Go program per page, even when this module is loaded under two URLs.
const LOAD_KEY = Symbol.for("pling.surface.runtime");

const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
const DEFAULT_EXECUTE_TIMEOUT_MS = 30000;
const MAX_DEPTH = 64; // the kernel allows 32; deeper input is refused here without recursing further
const MAX_CHANNELS = 64; // private channels open at once per listen()
const DEFAULT_CHANNELS_PER_ORIGIN = 16;
const DEFAULT_CHANNEL_IDLE_MS = 10 * 60 * 1000;
const AUTHENTICATE_TIMEOUT_MS = 10000;
const MAX_ID_BYTES = 256; // surface.MaxIDBytes

// Built-ins are captured when the module is evaluated, so that code which
// later patches Object, JSON, Promise, the prototypes of events, ports and
// typed arrays (a polyfill adding toJSON, or a hostile script) cannot change
// how requests and sessions are read, where replies go, or who receives a
// private channel. Methods are called through uncurryThis (the original
// Function.prototype.call bound to the original method), never looked up on
// the object at call time. See "Threat model" in README.md.
const {
  getOwnPropertyDescriptor,
  getOwnPropertyNames,
  getPrototypeOf,
  setPrototypeOf,
  keys: objectKeys,
  hasOwn,
  freeze,
  defineProperty,
  create: objectCreate,
  assign: objectAssign,
} = Object;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const FunctionPrototype = Function.prototype;
const { isArray } = Array;
const { stringify: jsonStringify, parse: jsonParse } = JSON;
const { isFinite: numberIsFinite, isSafeInteger } = Number;
const stringCharCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
const { apply: reflectApply } = Reflect;
const { max: mathMax, min: mathMin, ceil: mathCeil } = Math; // a time limit or a bound computed with a later script's Math would be its
const uncurryThis = FunctionPrototype.bind.bind(FunctionPrototype.call);
const PromiseCtor = Promise;
const StringCtor = String;
const PromisePrototype = Promise.prototype;
const PromisePrototypeThen = PromisePrototype.then;
const promiseThen = uncurryThis(PromisePrototypeThen);
const SymbolSpecies = Symbol.species;
const promiseSpeciesGetter = getOwnPropertyDescriptor(PromiseCtor, SymbolSpecies).get;
const dateGetTime = uncurryThis(Date.prototype.getTime);
const stringStartsWith = uncurryThis(String.prototype.startsWith);
const MapCtor = Map;
const mapGet = uncurryThis(Map.prototype.get);
const mapSet = uncurryThis(Map.prototype.set);
const mapDelete = uncurryThis(Map.prototype.delete);
const mapForEach = uncurryThis(Map.prototype.forEach);
const mapSize = uncurryThis(getOwnPropertyDescriptor(Map.prototype, "size").get);
const arrayPush = uncurryThis(ArrayPrototype.push);
// The getter of a property, own or inherited; undefined for an own data
// property (Annex B, in every browser and in Node).
const lookupGetter = typeof ObjectPrototype.__lookupGetter__ === "function" ? uncurryThis(ObjectPrototype.__lookupGetter__) : undefined;
const WeakMapCtor = WeakMap;
const weakMapGet = uncurryThis(WeakMap.prototype.get);
const weakMapSet = uncurryThis(WeakMap.prototype.set);
const weakMapDelete = uncurryThis(WeakMap.prototype.delete);
const Uint8ArrayCtor = Uint8Array;
const typedArrayBuffer = uncurryThis(getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), "buffer").get);
const typedArrayLength = uncurryThis(getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), "length").get);
const setTimer = globalThis.setTimeout;
const queueMicro = globalThis.queueMicrotask;
const clearTimer = globalThis.clearTimeout;

/** The original method name of C.prototype, uncurried; undefined where C is missing. */
function capturedMethod(C, name) {
  const d = typeof C === "function" ? getOwnPropertyDescriptor(C.prototype, name) : undefined;
  return d !== undefined && typeof d.value === "function" ? uncurryThis(d.value) : undefined;
}
/** The original getter of C.prototype[name], uncurried; undefined where C is missing. */
function capturedGetter(C, name) {
  const d = typeof C === "function" ? getOwnPropertyDescriptor(C.prototype, name) : undefined;
  return d !== undefined && typeof d.get === "function" ? uncurryThis(d.get) : undefined;
}
const eventDataOf = capturedGetter(globalThis.MessageEvent, "data");
const eventOriginOf = capturedGetter(globalThis.MessageEvent, "origin");
const eventSourceOf = capturedGetter(globalThis.MessageEvent, "source");
const eventPortsOf = capturedGetter(globalThis.MessageEvent, "ports");
const stopImmediatePropagation = capturedMethod(globalThis.Event, "stopImmediatePropagation");
const addListener = capturedMethod(globalThis.EventTarget, "addEventListener");
const portPostMessage = capturedMethod(globalThis.MessagePort, "postMessage");
const portClose = capturedMethod(globalThis.MessagePort, "close");
const portStart = capturedMethod(globalThis.MessagePort, "start");
const TextEncoderCtor = globalThis.TextEncoder;
const TextDecoderCtor = globalThis.TextDecoder;
const responseStatusOf = capturedGetter(globalThis.Response, "status");
const responseText = capturedMethod(globalThis.Response, "text");
const AbortControllerCtor = globalThis.AbortController;
const abortSignalOf = capturedGetter(globalThis.AbortController, "signal");
const abortController = capturedMethod(globalThis.AbortController, "abort");
const FETCH = globalThis.fetch;
const WebAssemblyNS = globalThis.WebAssembly;
const WA_INSTANTIATE = WebAssemblyNS.instantiate;
const WA_INSTANTIATE_STREAMING = typeof WebAssemblyNS.instantiateStreaming === "function" ? WebAssemblyNS.instantiateStreaming : undefined;
const responseArrayBuffer = capturedMethod(globalThis.Response, "arrayBuffer");
// XMLHttpRequest, for httpAdapter: fetch resolves its Promise with the
// Response, and resolving looks up then on it, where a later script could
// hand back a Response of its own; an XMLHttpRequest answers by events.
const XHR = globalThis.XMLHttpRequest;
const xhrOpen = capturedMethod(XHR, "open");
const xhrSend = capturedMethod(XHR, "send");
const xhrAbort = capturedMethod(XHR, "abort");
const xhrSetHeader = capturedMethod(XHR, "setRequestHeader");
const xhrStatusOf = capturedGetter(XHR, "status");
const xhrTextOf = capturedGetter(XHR, "responseText");
const xhrURLOf = capturedGetter(XHR, "responseURL");
const xhrSetCredentials = typeof XHR === "function" ? uncurryThis(getOwnPropertyDescriptor(XHR.prototype, "withCredentials").set) : undefined;
const URLCtor = globalThis.URL;
const urlHrefOf = capturedGetter(globalThis.URL, "href");
// The document's base URL when this module was evaluated: httpAdapter
// resolves its address against it once, so a <base> a later script inserts
// cannot send the page's limiter and guard to a server of its own.
const BASE_AT_LOAD = baseAtLoad();
function baseAtLoad() {
  try {
    const doc = globalThis.document;
    const base = doc !== undefined && doc !== null ? doc.baseURI : undefined;
    return typeof base === "string" ? base : undefined;
  } catch {
    return undefined;
  }
}
const textEncodeInto = capturedMethod(globalThis.TextEncoder, "encodeInto");
const textDecode = capturedMethod(globalThis.TextDecoder, "decode");
// The page's own window, when this module runs in one. window is an
// unforgeable property of the global: a later script cannot replace it. Its
// postMessage is an own property that a later script could replace.
const PAGE_WINDOW = typeof globalThis.Window === "function" && globalThis.window === globalThis ? globalThis : undefined;
const windowPostMessage = PAGE_WINDOW !== undefined ? PAGE_WINDOW.postMessage : undefined;

// WebMCP's registry and its registerTool as the page had them when this
// module was evaluated, and the random source of the bridge's request ids
// (see webmcpKit).
const MODEL_CONTEXT = modelContextAtLoad();
const MODEL_CONTEXT_REGISTER = MODEL_CONTEXT !== undefined ? methodOf(MODEL_CONTEXT, "registerTool") : undefined;
const CRYPTO = globalThis.crypto;
const cryptoGetRandomValues = capturedMethod(globalThis.Crypto, "getRandomValues");

function modelContextAtLoad() {
  try {
    const doc = globalThis.document;
    const mc = doc !== undefined && doc !== null ? doc.modelContext : undefined;
    return mc !== null && typeof mc === "object" ? mc : undefined;
  } catch {
    return undefined;
  }
}

const SESSION_CODES = freeze(["SESSION_REQUIRED", "SESSION_INVALID", "SESSION_EXPIRED", "SESSION_REVOKED"]);
const OPTION_NAMES = freeze([
  "registry", "execute", "app", "expose", "session", "recordLimit", "maxRecordLimit",
  "rateLimit", "replay", "onAudit", "onAuditError", "executeTimeoutMs", "shared",
]);
const LISTEN_OPTION_NAMES = freeze(["allowedOrigins", "authenticate", "maxMessageBytes", "channelIdleMs", "maxChannelsPerOrigin"]);
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

function isThenable(v) {
  return thenOf(v) !== undefined;
}

/**
 * Calls ok(value) once v settles, fail(reason) if it rejects, or ok(v) at
 * once when v is a value. Never looks then up on Promise.prototype at call
 * time and never resolves a Promise with v itself.
 */
function whenSettled(v, ok, fail) {
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
function settledText(v, map) {
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
function pending() {
  let resolve;
  let reject;
  const promise = new SurfacePromise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { __proto__: null, promise, resolve, reject };
}

/** A promise made here resolves with v without a then lookup on it: v has a then of its own. */
function unthenable(v) {
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
function pageJSON(value) {
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

/**
 * A list to fill by assignment. An array asks its prototypes for a setter
 * of every index it grows into (push included), and a later script can put
 * one on Object.prototype or Array.prototype: this one has no prototype, so
 * no such setter is handed what goes in (a private channel's records, say).
 */
const newList = () => setPrototypeOf([], null);
const arrayFrom = Array.from;
const ArrayCtor = Array;
/** A plain array of a list's elements, defined rather than assigned: Array.from over an array-like with no iterator. */
const plainArray = (list) => reflectApply(arrayFrom, ArrayCtor, [list]);

/** Adds v at the end of a by definition, not by assignment: no setter on an index runs. */
function append(a, v) {
  defineProperty(a, a.length, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
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

/**
 * o[key] when o holds key itself (its own getter runs), else undefined: an
 * option a later script put on Object.prototype is no option.
 */
function own(o, key) {
  return o !== null && (typeof o === "object" || typeof o === "function") && hasOwn(o, key) ? o[key] : undefined;
}

/** own(o, key), or dflt when o has no such member of its own: an option is never one a later script put on Object.prototype. */
function ownOr(o, key, dflt) {
  const v = own(o, key);
  return v === undefined ? dflt : v;
}

/**
 * obj[name] found on obj or a prototype of its own class, never on
 * Object.prototype or Function.prototype, where a later script could have
 * put it; undefined when only those hold it.
 */
function methodOf(obj, name) {
  for (let o = obj; o !== null && o !== undefined && o !== ObjectPrototype && o !== FunctionPrototype; o = getPrototypeOf(o)) {
    if (hasOwn(o, name)) return obj[name];
  }
  return undefined;
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

/**
 * A part of a registry spec: spec[name] when the spec holds it itself (its
 * own getter runs), else undefined, so that a member a later script puts on
 * Object.prototype (feedback, state, ids, ...) is never read as the page's.
 */
function part(spec, name) {
  return hasOwn(spec, name) ? valueOf(spec[name]) : undefined;
}

function isLazySource(r) {
  return r !== null && typeof r === "object" && !isArray(r) &&
    typeof methodOf(r, "count") === "function" && typeof methodOf(r, "slice") === "function" && typeof methodOf(r, "get") === "function";
}

/** The ids of rows, read by index (no map, no iterator a later script could replace). */
function idsOf(rows, max) {
  const out = newList();
  const n = isArray(rows) ? (rows.length < max ? rows.length : max) : 0;
  for (let i = 0; i < n; i++) out[i] = rows[i] && methodOf(rows[i], "id");
  return plainArray(out);
}

/**
 * Builds a registry from plain parts. Each part is a value or a function
 * returning it; records is an array or a lazy source
 * { count(), slice(offset, limit), get(id), ids?(max) } so that a large
 * table is read by its window only. Only the spec's own members are parts,
 * and the view is read with the built-ins captured at load.
 */
export function defineRegistry(spec) {
  if (spec === null || typeof spec !== "object") throw new TypeError("defineRegistry needs an object");
  const registry = {
    actions() {
      const a = part(spec, "actions");
      return a === undefined ? [] : a;
    },
    view(query) {
      const route = part(spec, "route");
      const regions = part(spec, "regions");
      const state = part(spec, "state");
      const feedback = part(spec, "feedback");
      const unavailable = part(spec, "unavailable");
      const ids = ownValue(query, "ids");
      const offset = ownValue(query, "offset");
      const limit = ownValue(query, "limit");
      const max = ownValue(query, "maxRecordIds");
      const source = part(spec, "records");
      let records = [];
      let recordIds = [];
      let total = 0;
      const picked = newList();
      if (isArray(source)) {
        total = source.length;
        if (ids !== undefined) {
          const wanted = new MapCtor();
          for (let i = 0; i < ids.length; i++) mapSet(wanted, ids[i], true);
          for (let i = 0; i < source.length && picked.length < mapSize(wanted); i++) {
            const r = source[i];
            if (r && mapGet(wanted, methodOf(r, "id")) === true) picked[picked.length] = r;
          }
        } else if (limit > 0) {
          const end = offset + limit < total ? offset + limit : total;
          for (let i = offset; i < end; i++) picked[picked.length] = source[i];
        }
        records = plainArray(picked);
        recordIds = idsOf(source, max);
      } else if (isLazySource(source)) {
        total = source.count();
        if (ids !== undefined) {
          for (let i = 0; i < ids.length; i++) {
            const r = source.get(ids[i]);
            if (r) picked[picked.length] = r;
          }
          records = plainArray(picked);
        } else if (limit > 0) {
          records = source.slice(offset, limit);
        }
        // ids is optional: Object.prototype.ids, a later script's, is not the source's.
        recordIds = typeof methodOf(source, "ids") === "function" ? source.ids(max) : idsOf(source.slice(0, max), max);
      } else if (source !== undefined && source !== null) {
        throw new TypeError("registry records must be an array or a lazy source { count, slice, get }");
      }
      // One literal: defined, never assigned, so no setter on
      // Object.prototype takes a member away.
      return {
        route,
        regions,
        state,
        feedback,
        unavailable,
        records,
        recordIds,
        recordIdsTotal: total,
        recordsTotal: total,
      };
    },
  };
  if (hasOwn(spec, "version") && spec.version !== undefined) {
    defineProperty(registry, "version", { __proto__: null, value: () => part(spec, "version"), writable: true, enumerable: true, configurable: true });
  }
  return registry;
}

// ---------------------------------------------------------------------------
// Host adapter: the page's options as the Go bridge wants them. Page-owned
// values (actions, views, results, sessions) are encoded with JSON.stringify
// here: they come from the page's own code, not from a caller.

/**
 * The session's fields as they cross to the kernel, or null for no session.
 * Only own data properties are read: no getter runs, nothing inherited counts
 * (an Object.prototype.revokedAt is not a revocation), and a Date is read
 * with the original getTime. Anything else the page keeps on the object (a
 * token, say) stays in the page.
 */
function sessionFields(s) {
  if (s === null || s === undefined) return null;
  if (typeof s !== "object") throw new TypeError("a session must be an object");
  return {
    __proto__: null,
    agentId: ownValue(s, "agentId"),
    sessionId: ownValue(s, "sessionId"),
    userId: ownValue(s, "userId"),
    expiresAt: sessionTime(ownValue(s, "expiresAt")),
    scope: sessionScope(ownValue(s, "scope")),
    delegationId: ownValue(s, "delegationId"),
    revokedAt: sessionTime(ownValue(s, "revokedAt")),
  };
}

// NOT_JSON stands for a value the kernel must refuse (an object where a
// string or a number belongs): it encodes as {}.
const NOT_JSON = freeze({ __proto__: null });

function sessionTime(t) {
  if (t === null || typeof t !== "object") return t;
  try {
    return dateGetTime(t);
  } catch {
    return NOT_JSON;
  }
}

/** A copy of the scope's own elements, or NOT_JSON when it is not a plain array. */
function sessionScope(scope) {
  if (scope === undefined || scope === null || typeof scope !== "object") return scope;
  try {
    if (!isArray(scope) || getPrototypeOf(scope) !== ArrayPrototype) return NOT_JSON;
    const n = ownValue(scope, "length");
    const out = [];
    for (let i = 0; i < n; i++) {
      const d = getOwnPropertyDescriptor(scope, i);
      if (d === undefined || !hasOwn(d, "value")) return NOT_JSON;
      defineProperty(out, i, { __proto__: null, value: d.value, writable: true, enumerable: true, configurable: true });
    }
    return out;
  } catch {
    return NOT_JSON;
  }
}

const SESSION_KEYS = freeze(["agentId", "sessionId", "userId", "expiresAt", "scope", "delegationId", "revokedAt"]);

/** One field's JSON: primitives through JSON.stringify (which calls no toJSON on them), the scope's strings one by one. */
function fieldJSON(v) {
  if (v === null || typeof v !== "object") return typeof v === "number" || typeof v === "string" || typeof v === "boolean" ? jsonStringify(v) : "null";
  if (v === NOT_JSON || !isArray(v)) return "{}";
  let text = "[";
  for (let i = 0; i < v.length; i++) text += (i > 0 ? "," : "") + fieldJSON(v[i]);
  return text + "]";
}

/** The fields' JSON text, written here: no toJSON, no patched JSON, no setter. */
function fieldsText(f) {
  let text = "{";
  for (let i = 0; i < SESSION_KEYS.length; i++) {
    const v = f[SESSION_KEYS[i]];
    if (v === undefined) continue;
    text += (text.length > 1 ? "," : "") + jsonStringify(SESSION_KEYS[i]) + ":" + fieldJSON(v);
  }
  return text + "}";
}

function sessionText(s) {
  const f = sessionFields(s);
  return f === null ? null : fieldsText(f);
}

const isPrimitive = (v) => v === null || (typeof v !== "object" && typeof v !== "function");

/**
 * The values session text is made of, when that text is a function of them
 * alone (primitives, and the copied scope of strings); else undefined. The
 * six fields first, in SNAPSHOT_KEYS order, then the scope's strings.
 */
const SNAPSHOT_KEYS = freeze(["agentId", "sessionId", "userId", "expiresAt", "delegationId", "revokedAt"]);
function sessionSnapshot(f) {
  if (f === null) return undefined;
  const { agentId, sessionId, userId, expiresAt, scope, delegationId, revokedAt } = f;
  const snap = [agentId, sessionId, userId, expiresAt, delegationId, revokedAt];
  for (let i = 0; i < snap.length; i++) if (!isPrimitive(snap[i])) return undefined;
  if (!isArray(scope)) return undefined;
  for (let i = 0; i < scope.length; i++) {
    if (typeof scope[i] !== "string") return undefined;
    defineProperty(snap, snap.length, { __proto__: null, value: scope[i], writable: true, enumerable: true, configurable: true });
  }
  return snap;
}

/**
 * Whether the session s still reads as the snapshot snap, read the way
 * sessionFields reads it (own data properties only) but without copying
 * anything: a session that did not change costs a compare, not a copy of
 * its scope.
 */
function sameSession(s, snap) {
  if (s === null || typeof s !== "object") return false;
  for (let i = 0; i < SNAPSHOT_KEYS.length; i++) {
    let v = ownValue(s, SNAPSHOT_KEYS[i]);
    if (i === 3 || i === 5) v = sessionTime(v); // expiresAt, revokedAt
    if (v !== snap[i]) return false;
  }
  const scope = ownValue(s, "scope");
  try {
    if (!isArray(scope) || getPrototypeOf(scope) !== ArrayPrototype) return false;
    const n = ownValue(scope, "length");
    if (n !== snap.length - SNAPSHOT_KEYS.length) return false;
    for (let i = 0; i < n; i++) {
      if (!ownDataIs(scope, i, snap[SNAPSHOT_KEYS.length + i])) return false;
    }
  } catch {
    return false;
  }
  return true;
}

/**
 * Whether obj's own data property key holds v, read without running a
 * getter. An own data property is one lookupGetter answers undefined for
 * (it stops at an own property): no descriptor object is made, which for
 * a scope of 50 elements was most of a request's session read. A setter
 * without a getter reads as undefined, never a scope's string.
 */
function ownDataIs(obj, key, v) {
  if (lookupGetter === undefined) {
    const d = getOwnPropertyDescriptor(obj, key);
    return d !== undefined && hasOwn(d, "value") && d.value === v;
  }
  return hasOwn(obj, key) && lookupGetter(obj, key) === undefined && obj[key] === v;
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
      return settledText(s, sessionText);
    }
    if (!repeats || settles) return sessionText(s);
    if (last !== undefined && sameSession(s, last)) return true;
    last = undefined;
    const f = sessionFields(s);
    const snap = sessionSnapshot(f);
    const text = f === null ? null : fieldsText(f);
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
    // Own data only: Object.prototype.allowed is no decision.
    const allowed = ownValue(d, "allowed");
    const retry = ownValue(d, "retryAfterMs");
    if (typeof allowed !== "boolean") return FAILED;
    if (allowed) return retry === undefined || retry === 0 ? 0 : FAILED;
    return typeof retry === "number" && retry > 0 && retry !== Infinity ? retry : FAILED;
  } catch {
    return FAILED;
  }
}

function makeLane() {
  const io = new Uint8ArrayCtor(LANE_BYTES);
  const entryIO = new Uint8ArrayCtor(LANE_BYTES);
  const ioBuffer = typedArrayBuffer(io);
  const decoder = new TextDecoderCtor();
  const encoder = new TextEncoderCtor();
  let depth = 0; // host functions running page code
  // The original encodeInto and decode, and views made here rather than by
  // subarray (which asks the array's constructor for a species): a later
  // script patching TextEncoder, TextDecoder or Uint8Array sees no text.
  const write = (buffer, text) => {
    const r = textEncodeInto(encoder, text, buffer);
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
          params[i] = textDecode(decoder, new Uint8ArrayCtor(ioBuffer, at, p));
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
      let r;
      try {
        r = f();
      } finally {
        depth--;
      }
      return r;
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
  // Read through the Map methods captured at load, never its iterator: a
  // later script's Map.prototype[Symbol.iterator] could hide every wait.
  const waiting = new MapCtor(); // call id -> { at, expire }
  let timer;
  let timerAt = Infinity;
  const arm = (at) => {
    if (timer !== undefined) clearTimer(timer);
    timerAt = at;
    // The timer captured at load: a later script's setTimeout that never
    // fires would otherwise lift every time limit.
    timer = setTimer(sweep, mathMax(0, at - now()));
  };
  function sweep() {
    timer = undefined;
    timerAt = Infinity;
    const t = now();
    let next = Infinity;
    mapForEach(waiting, (w, id) => {
      if (w.at <= t) {
        mapDelete(waiting, id);
        try {
          w.expire();
        } catch {
          // the kernel is gone; nothing waits for this call any more
        }
      } else if (w.at < next) {
        next = w.at;
      }
    });
    if (next !== Infinity) arm(next);
  }
  return {
    /** Calls expire() once ms pass, unless finish(id) came first. */
    start(id, ms, expire) {
      const at = now() + ms;
      mapSet(waiting, id, { __proto__: null, at, expire });
      if (at < timerAt) arm(at);
    },
    /** True when the call was still waiting: its answer is the one that counts. */
    finish(id) {
      return mapDelete(waiting, id);
    },
  };
}

function resultText(r) {
  const text = r === undefined ? "null" : pageJSON(r);
  return text === undefined ? "null" : text;
}

function checkPositive(name, v, integer) {
  if (v === undefined) return;
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}

/**
 * An object the kernel wrote as JSON text (a call's context, a view query,
 * an audit event) that inherits nothing: a member it leaves out (a
 * delegation, a record, ids, a code) reads as undefined, never as what a
 * later script put on Object.prototype. Its prototype is NOTHING, frozen
 * and empty, rather than null: V8 gives objects made on one prototype one
 * shape, where setPrototypeOf(o, null) took 1.6 µs an object, four times
 * an invoke.
 */
const NOTHING = freeze(objectCreate(null));
const QUERIES_KEPT = 4; // view queries a host keeps, by text
function bareJSON(text) {
  return objectAssign(objectCreate(NOTHING), jsonParse(text));
}

function buildHost(options, lane, deadlines, entries) {
  const { registry, execute, expose, session, rateLimit, replay, onAudit, onAuditError } = options;
  const { texts, answer, run } = lane;
  let parked; // the executor's Promise, until wait takes it
  // The view queries last read, by their text: the kernel asks the same few
  // again and again (a description's window, the record of an invoke, before
  // and after), and a query is frozen, so the one made for a text is handed
  // to the registry again rather than parsed, copied and frozen anew.
  const queryTexts = newList();
  const queryValues = newList();
  let queryNext = 0;
  const queryOf = (text) => {
    for (let i = 0; i < queryTexts.length; i++) {
      if (queryTexts[i] === text) return queryValues[i];
    }
    const query = bareJSON(text);
    if (query.ids !== undefined) freeze(query.ids);
    freeze(query);
    queryTexts[queryNext] = text;
    queryValues[queryNext] = query;
    queryNext = (queryNext + 1) % QUERIES_KEPT;
    return query;
  };
  // No prototype: a name the kernel looks for and the page did not give
  // (session, version, expose, ...) cannot be supplied by Object.prototype.
  const host = {
    __proto__: null,
    io: lane.io,
    entryIO: lane.entryIO,
    actions: () => answer(run(() => pageJSON(registry.actions()))),
    view: (queryJSON) => {
      const query = queryOf(texts(queryJSON)[0]);
      const v = run(() => registry.view(query));
      return isThenable(v) ? settledText(v, pageJSON) : answer(run(() => pageJSON(v)));
    },
    // An executor that answers at once is answered at once: the kernel then
    // has no Promise to wait for. A throw fails the call either way.
    execute: (idIn, argsIn, contextIn) => {
      const t = texts(idIn, argsIn, contextIn);
      const r = run(() => execute(t[0], t[1], freeze(bareJSON(t[2]))));
      if (!isThenable(r)) return answer(run(() => resultText(r)));
      // Kept here for the wait that follows at once: handing the Promise
      // to the kernel would make it a JS value Go tracks and finalizes.
      // wait maps its value to text as it settles, with no Promise between.
      parked = r;
      return PARKED;
    },
  };
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
    let settled = (v) => give(encode(kind, v));
    if (promise === undefined) {
      // The executor's thenable, parked by execute just before: its value
      // becomes the result's text here, and a throw fails the call.
      promise = parked;
      parked = undefined;
      settled = (v) => {
        let code = FAILED;
        try {
          code = encode(kind, resultText(v));
        } catch {
          // not JSON: the call fails
        }
        give(code);
      };
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
    whenSettled(promise, settled, () => give(FAILED));
  };
  host.held = () => {
    const text = held;
    held = undefined;
    return text;
  };
  if (typeof methodOf(registry, "version") === "function") host.version = () => run(() => registry.version());
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
        append(out, yes);
      }
      // Written here, not by JSON.stringify: a toJSON planted on
      // Array.prototype while the predicate ran would answer for it.
      let text = "[";
      for (let i = 0; i < out.length; i++) text += (i > 0 ? "," : "") + (out[i] === true ? "true" : "false");
      return answer(text + "]");
    };
  }
  if (session !== undefined) {
    const getter = sessionGetter(session, true);
    host.session = () => answer(run(getter));
  }
  if (rateLimit && rateLimit.limiter !== undefined) {
    const limiter = rateLimit.limiter;
    // A decision as the kernel reads it: own data members only, on an
    // object without a prototype (Object.prototype.allowed decides nothing).
    const decision = (d) => (d !== null && typeof d === "object"
      ? { __proto__: null, allowed: ownValue(d, "allowed"), retryAfterMs: ownValue(d, "retryAfterMs") }
      : d);
    host.allow = (key, nowMs) => {
      const r = run(() => limiter.allow(key, nowMs));
      return isThenable(r) ? r : decision(r);
    };
  }
  if (replay && typeof replay === "object" && replay.guard !== undefined) {
    const guard = replay.guard;
    host.claim = (sessionId, requestId, windowMs) => run(() => guard.claim(sessionId, requestId, windowMs));
  }
  if (onAudit !== undefined) {
    host.audit = (eventJSON) => {
      eventJSON = texts(eventJSON)[0];
      const event = freeze(bareJSON(eventJSON));
      const r = run(() => onAudit(event));
      if (!isThenable(r)) return r;
      // The reply does not wait for the sink; its failure, or its not
      // settling within the host time limit, still reaches onAuditError.
      let over = false;
      const failed = (reason) => {
        if (over) return;
        over = true;
        if (host.auditError !== undefined) host.auditError(reason, String(reason && reason.message), eventJSON);
      };
      const id = {};
      deadlines.start(id, HOST_TIMEOUT_MS, () => failed(new Error("timed out")));
      whenSettled(r, () => {
        over = true;
        deadlines.finish(id);
      }, (reason) => {
        deadlines.finish(id);
        failed(reason);
      });
      return undefined;
    };
  }
  if (onAuditError !== undefined) {
    host.auditError = (reason, message, eventJSON) => {
      try {
        const r = run(() => onAuditError(reason !== undefined ? reason : new Error(message), freeze(bareJSON(eventJSON))));
        if (isThenable(r)) whenSettled(r, () => {}, () => {});
      } catch {
        // onAuditError is the last resort; its own failure goes nowhere.
      }
    };
  }
  return host;
}

/**
 * The kernel's config from the options ownOptions copied. Its objects and
 * expose's array have no prototype, so no setter or toJSON a later script
 * put on a prototype takes a member away as it is built and encoded.
 */
function buildConfig(options) {
  const { app, expose, recordLimit, maxRecordLimit, rateLimit, replay, executeTimeoutMs } = options;
  const config = { __proto__: null, app, recordLimit, maxRecordLimit, executeTimeoutMs: executeTimeoutMs ?? DEFAULT_EXECUTE_TIMEOUT_MS };
  if (isArray(expose)) config.expose = expose;
  if (rateLimit) {
    config.rateLimit = rateLimit.limiter !== undefined
      ? { __proto__: null }
      : { __proto__: null, maxRequests: rateLimit.maxRequests, windowMs: rateLimit.windowMs };
  }
  if (replay === true) config.replay = { __proto__: null };
  else if (replay) config.replay = { __proto__: null, windowMs: replay.windowMs };
  return config;
}

/**
 * The page's options as the surface keeps them: own members only, the
 * rateLimit and replay objects copied the same way onto objects without a
 * prototype, expose's ids by index. What a later script put on
 * Object.prototype (limiter, guard, shared, onAudit, ...) is no option,
 * and nothing read later goes through a prototype it could change.
 */
function ownOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("createSurface needs an options object");
  const names = objectKeys(options);
  for (let i = 0; i < names.length; i++) {
    if (!listIncludes(OPTION_NAMES, names[i])) throw new TypeError(`createSurface: unknown option ${jsonStringify(names[i])}`);
  }
  const o = { __proto__: null };
  for (let i = 0; i < OPTION_NAMES.length; i++) o[OPTION_NAMES[i]] = own(options, OPTION_NAMES[i]);
  const { rateLimit, replay, expose } = o;
  if (rateLimit !== null && typeof rateLimit === "object") {
    o.rateLimit = { __proto__: null, maxRequests: own(rateLimit, "maxRequests"), windowMs: own(rateLimit, "windowMs"), limiter: own(rateLimit, "limiter") };
  }
  if (replay !== null && typeof replay === "object") {
    o.replay = { __proto__: null, windowMs: own(replay, "windowMs"), guard: own(replay, "guard") };
  }
  if (isArray(expose)) {
    const ids = newList();
    const n = own(expose, "length");
    for (let i = 0; i < n; i++) append(ids, own(expose, i));
    o.expose = ids;
  }
  return o;
}

/** Checks the options ownOptions copied. */
function validateOptions(options) {
  const { registry, execute, app, expose, session, rateLimit, replay } = options;
  if (registry === null || (typeof registry !== "object" && typeof registry !== "function")) {
    throw new TypeError("createSurface: options.registry is required");
  }
  if (typeof registry.actions !== "function" || typeof registry.view !== "function") {
    throw new TypeError("createSurface: the registry needs actions() and view() functions");
  }
  const version = methodOf(registry, "version");
  if (version !== undefined && typeof version !== "function") {
    throw new TypeError("createSurface: registry.version must be a function");
  }
  if (typeof execute !== "function") throw new TypeError("createSurface: options.execute is required and must be a function");
  if (app !== undefined && typeof app !== "string") throw new TypeError("createSurface: app must be a string");
  if (expose !== undefined && typeof expose !== "function") {
    let ok = isArray(expose);
    for (let i = 0; ok && i < expose.length; i++) ok = typeof expose[i] === "string" && expose[i] !== "";
    if (!ok) throw new TypeError("createSurface: expose must be an array of capability ids or a function");
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
  if (options.onAudit !== undefined && typeof options.onAudit !== "function") throw new TypeError("createSurface: onAudit must be a function");
  if (options.onAuditError !== undefined && typeof options.onAuditError !== "function") {
    throw new TypeError("createSurface: onAuditError must be a function");
  }
}

// ---------------------------------------------------------------------------
// Entries: the module exports through which every call enters the kernel.
// Each runs the kernel's steps synchronously and returns; the answer goes
// to host.reply before it does, or, when a host function answered with a
// Promise, after host.wait has had it settled (see hostbridge/step_js.go).
// No Go goroutine and no js.FuncOf callback is on the way, so an export
// may be called at any time, page code that the kernel runs included.

const entriesOf = new WeakMapCtor(); // a module's exports -> entries

// Every this many export calls, the Go runtime is resumed once with
// nothing to do, so that its finalizers run: JS values the bridge made
// while answering (a host's Promise, a limiter's decision object) are only
// released then.
const RESUME_EVERY = 256;

/**
 * The exports of a Go object of wasm_exec.js, for fromRuntime: a host that
 * runs the module itself. Its glue looks built-ins up as it runs, so what
 * "Threat model" promises against later scripts holds only for the glue
 * loadSurface runs (pling-glue.js).
 */
function kernelOfGo(go) {
  if (go === null || typeof go !== "object") return undefined;
  const exports = go._inst && go._inst.exports;
  if (!exports || typeof go._resume !== "function") return undefined;
  return { __proto__: null, exports, resume: () => go._resume(), exited: () => go.exited === true };
}

const EXPORT_NAMES = freeze(["pling_init", "pling_entry_key", "pling_handle", "pling_describe", "pling_answer", "pling_close"]);

/**
 * Entries into a kernel ({exports, resume, exited}) for runtime, bound to a
 * per-load secret: the two words given to the module's pling_init, drawn
 * here (or given by a host that set them itself), which every export call
 * carries. undefined: not this runtime's module, or its secret is someone
 * else's.
 */
function makeEntries(kernel, runtime, given) {
  if (kernel === undefined) return undefined;
  const exports = kernel.exports;
  const known = weakMapGet(entriesOf, exports);
  if (known !== undefined) return known.key === runtime.entryKey ? known : undefined;
  for (let i = 0; i < EXPORT_NAMES.length; i++) if (typeof exports[EXPORT_NAMES[i]] !== "function") return undefined;
  const key = exports.pling_entry_key();
  let k0;
  let k1;
  if (given !== undefined) {
    if (!isArray(given) || given.length !== 2) return undefined;
    k0 = given[0] | 0;
    k1 = given[1] | 0;
  } else {
    const words = randomUint32s(2);
    k0 = words[0] | 0;
    k1 = words[1] | 0 || 1;
    if (exports.pling_init(k0, k1) !== 0) return undefined; // set by someone else
  }
  const resume = kernel.resume;
  const exited = kernel.exited;
  const handleExport = exports.pling_handle;
  const describeExport = exports.pling_describe;
  const answerExport = exports.pling_answer;
  const closeExport = exports.pling_close;
  let calls = 0;
  let resumeArmed = false;
  const idleResume = () => {
    resumeArmed = false;
    if (!exited()) resume();
  };
  const entered = (r) => {
    if (exited()) throw new Error("the surface runtime exited");
    if (++calls % RESUME_EVERY === 0 && !resumeArmed) {
      resumeArmed = true;
      setTimer(idleResume, 0);
    }
    return r === 0;
  };
  // Work deferred until no export is on the stack (see later). An export
  // call answers one call, so one is usually deferred at a time: it waits in
  // first, and only further ones go to a list. The list has no prototype, so
  // it is filled by assignment, which no setter a later script put on an
  // index can see; defining the index instead (append) turned the array
  // into a dictionary on every request.
  let depth = 0;
  let first; // the first deferred call, or undefined
  let more; // the calls deferred after it (a newList), or undefined
  let flushing = false;
  const flush = () => {
    flushing = false;
    const f = first;
    const list = more;
    first = undefined;
    more = undefined;
    try {
      if (f !== undefined) f();
    } catch {
      // one answer's failure does not keep the others
    }
    for (let i = 0; list !== undefined && i < list.length; i++) {
      try {
        list[i]();
      } catch {
        // as above
      }
    }
  };
  const inside = (call) => {
    depth++;
    try {
      return call();
    } finally {
      if (--depth === 0 && first !== undefined && !flushing) {
        flushing = true;
        queueMicro(flush);
      }
    }
  };
  const entries = {
    key,
    /**
     * A request of n bytes in entryIO, answered to host.reply(token, ...);
     * false: refused. session: the call brings its own session getter
     * (host.sessionFor).
     */
    handle: (slot, n, token, shared, session) =>
      entered(inside(() => handleExport(k0, k1, slot, n, token, (shared ? 1 : 0) | (session ? 2 : 0)))),
    /** A describe with its input n bytes in entryIO (-1: none); false: refused. */
    describe: (slot, n, token) => entered(inside(() => describeExport(k0, k1, slot, n, token))),
    /** The settled value of the Promise waited for under ticket. */
    answer: (ticket, code) => entered(inside(() => answerExport(k0, k1, ticket, code))),
    /** Closes the instance under slot. */
    close: (slot) => entered(inside(() => closeExport(k0, k1, slot))),
    /**
     * Runs f once no export is on the stack: at once outside one, else
     * in a microtask queued as the outermost export call returns. An
     * answer is posted from there rather than from inside the kernel's
     * call into JS: the same task and order, without wasm frames under
     * the caller's code, and from a short stack, which matters to
     * postMessage: while a DevTools session has its Runtime domain on
     * (DevTools open, pling-mcp, any CDP driver), Chromium captures a
     * stack trace of up to 200 frames at every post, so a post's cost
     * grows with the depth it is made from.
     */
    later: (f) => {
      if (depth === 0) f();
      else if (first === undefined) first = f;
      else {
        if (more === undefined) more = newList();
        more[more.length] = f;
      }
    },
  };
  weakMapSet(entriesOf, exports, entries);
  // Another module's runtime: its slots are not this runtime's.
  return key === runtime.entryKey ? entries : undefined;
}

// ---------------------------------------------------------------------------
// The window transport. One hub per window takes the message events there
// and hands them to the surfaces listening on it. The page's hub is added
// when this module is evaluated. The window is the only target of a message
// event, and its listeners run in the order they were added (capture or
// not; measured in Chromium 156), so the hub runs before every listener a
// later script adds: a connect message, which carries a private channel's
// port, stops at the hub with stopImmediatePropagation, and no later
// listener sees it or its port.

const hubs = new MapCtor(); // window -> hub

function hubFor(win) {
  let hub = mapGet(hubs, win);
  if (hub === undefined) {
    hub = makeHub(win);
    mapSet(hubs, win, hub);
  }
  return hub;
}

function makeHub(win) {
  const hub = { __proto__: null, entries: new MapCtor() }; // listen() entries, in order
  const onMessage = (event) => {
    try {
      route(hub, event);
    } catch {
      // A listener never throws into the page.
    }
  };
  // Leaving the page (a navigation, a close, the back-forward cache) frees
  // every private channel; a caller connects again on return.
  const onPageHide = (event) => {
    if (event.isTrusted !== true) return; // a script's dispatchEvent is no navigation
    mapForEach(hub.entries, (entry) => {
      try {
        entry.dropChannels();
      } catch {
        // the others still go
      }
    });
  };
  if (win === PAGE_WINDOW && addListener !== undefined) {
    addListener(win, "message", onMessage, true);
    addListener(win, "pagehide", onPageHide, true);
  } else {
    // A stand-in window (tests, other hosts) brings its own methods.
    win.addEventListener("message", onMessage, true);
    win.addEventListener("pagehide", onPageHide, true);
  }
  return hub;
}

if (PAGE_WINDOW !== undefined) hubFor(PAGE_WINDOW);

/** A field of a message event through the original getter; a stand-in event's own data property. */
function eventField(event, get, name) {
  if (get !== undefined) {
    try {
      return get(event);
    } catch {
      // not a platform MessageEvent: a host's stand-in
    }
  }
  return ownValue(event, name);
}

/**
 * Whether data is a request in spec 03's own form, without the wrapper: a
 * protocol naming pling.surface and no ok (which only replies carry).
 */
function isBareRequest(data) {
  const p = ownValue(data, "protocol");
  return typeof p === "string" && stringStartsWith(p, "pling.surface/") && !hasOwn(data, "ok");
}

function route(hub, event) {
  if (event.isTrusted !== true) return;
  const data = eventField(event, eventDataOf, "data");
  if (!isPlainObject(data)) return;
  let kind;
  let bare = false;
  if (hasOwn(data, "channel")) {
    if (ownValue(data, "channel") !== CHANNEL) return;
    kind = ownValue(data, "kind");
    if (kind !== "request" && kind !== "connect") return;
  } else if (isBareRequest(data)) {
    kind = "request";
    bare = true;
  } else {
    return;
  }
  if (kind === "connect" && stopImmediatePropagation !== undefined) {
    try {
      stopImmediatePropagation(event);
    } catch {
      // a stand-in event
    }
  }
  const source = eventField(event, eventSourceOf, "source");
  const origin = eventField(event, eventOriginOf, "origin");
  if (source === null || source === undefined || typeof origin !== "string" || origin === "null") return;
  const hasApp = !bare && hasOwn(data, "app");
  const app = hasApp ? ownValue(data, "app") : undefined;
  let first;
  let count = 0;
  let others; // the surfaces served past the first: one that listens twice is served once
  mapForEach(hub.entries, (entry) => {
    if (!entry.accepts(source, origin) || (hasApp && entry.app !== app)) return;
    if (first === undefined) first = entry;
    else {
      if (entry.owner === first.owner) return;
      if (others === undefined) others = newList();
      for (let i = 0; i < others.length; i++) if (others[i].owner === entry.owner) return;
      append(others, entry);
    }
    count++;
  });
  if (kind === "request" && !bare) {
    if (count === 0) return;
    // Without app a describe goes to every surface (discovery); anything
    // else would run on each of them, so with several it must name one.
    if (count > 1 && !hasApp && ownValue(ownValue(data, "envelope"), "method") !== "describe") {
      postTo(source, { channel: CHANNEL, kind: "response", envelope: failure(requestIdOf(ownValue(data, "envelope")), "INVALID_REQUEST", "several surfaces listen here: name the app") }, origin);
      return;
    }
    serveEntry(first, data, source, origin);
    if (others !== undefined) for (let i = 0; i < others.length; i++) serveEntry(others[i], data, source, origin);
    return;
  }
  if (kind === "connect") {
    const ports = eventField(event, eventPortsOf, "ports");
    const port = ports !== null && typeof ports === "object" && ownValue(ports, "length") > 0 ? ownValue(ports, 0) : undefined;
    if (port === undefined || port === null) return;
    const real = isPlatformPort(port);
    // Nobody here may take it: no answer, as for any sender not served.
    if (count === 1) first.connect(data, origin, port, real);
    else if (count > 1) refusePort(port, real); // several surfaces: the connect must name its app
    return;
  }
  if (bare && count > 0) {
    // A bare request reaches one surface or none: with several, it must
    // come wrapped with app, or it would run on each.
    if (count === 1) first.request(data, source, origin, true);
    else postTo(source, failure(requestIdOf(data), "INVALID_REQUEST", "several surfaces listen here: wrap the request and name its app"), origin);
  }
}

function serveEntry(entry, data, source, origin) {
  try {
    entry.request(data, source, origin, false);
  } catch {
    // one surface's failure does not keep the message from the others
  }
}

const portOnMessageOf = capturedGetter(globalThis.MessagePort, "onmessage");

/** Whether port is the platform's MessagePort (a stand-in has its own methods). */
function isPlatformPort(port) {
  if (portOnMessageOf === undefined || portPostMessage === undefined) return false;
  try {
    portOnMessageOf(port);
    return true;
  } catch {
    return false;
  }
}

function portSend(port, real, message) {
  try {
    if (real) portPostMessage(port, message);
    else reflectApply(ownValue(port, "postMessage"), port, [message]);
  } catch {
    // the port is gone
  }
}

function portEnd(port, real) {
  try {
    if (real) portClose(port);
    else reflectApply(ownValue(port, "close"), port, []);
  } catch {
    // already closed
  }
}

function portListen(port, real, onMessage, onClose) {
  if (real) {
    addListener(port, "message", onMessage);
    addListener(port, "close", onClose);
    portStart(port);
  } else {
    defineProperty(port, "onmessage", { __proto__: null, value: onMessage, writable: true, enumerable: true, configurable: true });
  }
}

function refusePort(port, real) {
  portSend(port, real, { channel: CHANNEL, kind: "refused" });
  portEnd(port, real);
}

/** Posts message to a window at targetOrigin, through the original postMessage for the page's own window. */
function postTo(target, message, targetOrigin) {
  try {
    if (target === PAGE_WINDOW && windowPostMessage !== undefined) reflectApply(windowPostMessage, target, [message, targetOrigin]);
    else reflectApply(target.postMessage, target, [message, targetOrigin]);
  } catch {
    // the sender is gone
  }
}

// ---------------------------------------------------------------------------
// What pling-webmcp.js takes from here.

/**
 * A copy of plain data whose objects, and with lists its arrays too, have no
 * prototype: whoever reads it (the WebMCP bridge reading a reply, the
 * browser serializing a tool's answer and looking for then and toJSON)
 * finds its own members only, never one a later script put on
 * Object.prototype or Array.prototype. Accessors read as undefined;
 * functions are kept (a tool's execute).
 */
function bareData(v, lists, depth) {
  if (v === null || typeof v !== "object") return v;
  if (depth > 256) throw new TypeError("data nested deeper than 256");
  if (isArray(v)) {
    const out = lists ? newList() : [];
    const n = ownValue(v, "length");
    for (let i = 0; i < n; i++) {
      defineProperty(out, i, { __proto__: null, value: bareData(ownValue(v, i), lists, depth + 1), writable: true, enumerable: true, configurable: true });
    }
    return out;
  }
  const out = objectCreate(null);
  const names = objectKeys(v);
  for (let i = 0; i < names.length; i++) {
    defineProperty(out, names[i], { __proto__: null, value: bareData(ownValue(v, names[i]), lists, depth + 1), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

const HEX = "0123456789abcdef";

/**
 * A version 4 UUID from the crypto source captured at load: a later script
 * that replaced crypto.randomUUID cannot make the bridge's request ids
 * predictable (and claim the agent's next id first). Undefined without Web
 * Crypto.
 */
function randomUUID() {
  if (cryptoGetRandomValues === undefined || CRYPTO === undefined) return undefined;
  const b = new Uint8ArrayCtor(16);
  cryptoGetRandomValues(CRYPTO, b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  let s = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
    s += HEX[b[i] >> 4] + HEX[b[i] & 15];
  }
  return s;
}

/**
 * The built-ins and helpers pling-webmcp.js uses where a later script
 * could otherwise read or change what crosses between an agent and the
 * surface: it is loaded on first use, by when any global may have been
 * replaced, so it imports these, captured when this module was evaluated.
 * Not for pages: the bridge's own plumbing.
 */
export const webmcpKit = freeze({
  __proto__: null,
  modelContext: MODEL_CONTEXT,
  registerTool: MODEL_CONTEXT_REGISTER,
  apply: reflectApply,
  isArray,
  hasOwn,
  keys: objectKeys,
  ownValue,
  stringify: jsonStringify,
  randomUUID,
  /** Objects and arrays without prototypes: for what goes to the browser. */
  bare: (v) => bareData(v, true, 0),
  /** Objects without prototypes, arrays as they are: for what the bridge reads. */
  bareObjects: (v) => bareData(v, false, 0),
});

// ---------------------------------------------------------------------------
// The API bound to one runtime.

function bind(runtime, entries, withStats) {
  const lane = makeLane(); // one per Go program: its surfaces take turns
  const deadlines = makeDeadlines();
  function createSurface(options) {
    const snapshot = ownOptions(options);
    validateOptions(snapshot);
    applyShared(snapshot); // shared: "indexeddb" swaps in the IndexedDB limiter and guard
    // Answers to calls taken through the entries, and the session getters
    // of those that brought one, by token.
    const replies = new MapCtor();
    const sessions = new MapCtor();
    const host = buildHost(snapshot, lane, deadlines, entries);
    host.reply = (token, out, capsId, capsText) => {
      const reply = mapGet(replies, token);
      if (reply === undefined) return;
      mapDelete(replies, token);
      mapDelete(sessions, token);
      reply(out, capsId, capsText);
    };
    // The kernel's reply to unansweredToken could not be handed over (see
    // answerer.unanswered in hostbridge): the call fails here, unless it
    // was answered.
    host.unansweredToken = 0;
    host.unanswered = () => {
      const token = host.unansweredToken;
      host.unansweredToken = 0;
      host.reply(token, undefined);
    };
    // No getter for the token answers undefined: no session, which the
    // kernel refuses for a call that was to bring its own.
    host.sessionFor = (token) => {
      const getter = mapGet(sessions, token);
      return getter === undefined ? undefined : getter();
    };
    const inst = runtime.create(host, jsonStringify(buildConfig(snapshot)));
    // Read once, and only its own members (the runtime makes it without a
    // prototype): every later call goes to this slot, whatever a later
    // script puts on Object.prototype.
    const slot = inst !== null && typeof inst === "object" ? ownValue(inst, "slot") : undefined;
    const maxRequestBytes = ownValue(inst, "maxRequestBytes");
    const maxResponseBytes = ownValue(inst, "maxResponseBytes");
    if (typeof slot !== "number" || typeof maxRequestBytes !== "number" || typeof maxResponseBytes !== "number") {
      const error = ownValue(inst, "error");
      throw new Error(`createSurface: ${typeof error === "string" ? error : "the runtime refused the options"}`);
    }
    // Tokens are drawn at random, never 0 (no call), never one in use: a
    // script cannot name a call in flight by counting.
    const nextToken = () => {
      for (;;) {
        const t = randomUint32s(1)[0] >>> 1;
        if (t !== 0 && mapGet(replies, t) === undefined) return t;
      }
    };
    const app = snapshot.app;
    // The listeners' and the WebMCP bridge's stops, kept with the Map
    // methods captured at load: a later script's Set.prototype.add would be
    // handed each, and its iterator could keep close() from calling them.
    const stops = new MapCtor();
    let closed = false;

    // The capability list the kernel last sent in shared mode, decoded once.
    // Answers that name it leave it out and get this object back in; it only
    // ever goes into postMessage, whose structured clone copies it, so no
    // caller can change it.
    let sharedCaps = { __proto__: null, id: 0, list: undefined };

    // Asks the kernel for the answer to JSON text, through the handle
    // export, and calls done(answer) once: the kernel answers by calling
    // host.reply under the call's token. No Promise is resolved with an
    // answer here, so a then planted on Object.prototype never sees one.
    const ask = (text, sessionFn, shared, done) => {
      let answered = false;
      const finish = (a) => {
        if (answered) return;
        answered = true;
        entries.later(() => done(a));
      };
      const reply = (outIn, capsId, capsIn) => {
        const t = lane.texts(outIn, capsIn);
        const out = t[0];
        const capsText = t[1];
        if (capsId === undefined) {
          finish({ __proto__: null, out });
          return;
        }
        if (capsText !== undefined) {
          sharedCaps = { __proto__: null, id: 0, list: undefined };
          try {
            sharedCaps = { __proto__: null, id: capsId, list: jsonParse(capsText) };
          } catch (e) {
            finish({ __proto__: null, out, shared: true });
            throw e; // so the kernel knows the list was not kept
          }
        }
        finish({ __proto__: null, out, caps: sharedCaps.id === capsId ? sharedCaps.list : undefined, shared: true });
      };
      const n = lane.toEntry(text);
      if (typeof n !== "number") {
        // More UTF-8 bytes than entryIO holds, which is the kernel's
        // request limit: what the kernel itself would answer.
        finish({ __proto__: null, out: TOO_LARGE });
        return;
      }
      const token = nextToken();
      mapSet(replies, token, reply);
      if (sessionFn !== undefined) mapSet(sessions, token, sessionFn);
      let taken = false;
      try {
        taken = entries.handle(slot, n, token, shared === true, sessionFn !== undefined);
      } finally {
        // Refused, or the runtime is gone: nothing will answer this token.
        if (!taken) {
          mapDelete(replies, token);
          mapDelete(sessions, token);
        }
      }
      if (!taken) finish({ __proto__: null, out: undefined });
    };

    // Sends JSON text to the kernel and calls done(envelope) once; the
    // answer is an envelope, never a throw.
    // shared: the envelope is only ever posted (see sharedCaps).
    const call = (id, text, sessionFn, shared, done) => {
      const fail = () => done(failure(id, "INTERNAL_ERROR", "internal error"));
      const take = (answer) => {
        try {
          if (answer === null) return fail();
          const out = answer.out;
          if (typeof out !== "string") return fail();
          if (out.length > maxResponseBytes) return done(failure(id, "INTERNAL_ERROR", "response is larger than the size limit"));
          const envelope = jsonParse(out);
          if (answer.shared) {
            if (answer.caps === undefined || !isPlainObject(envelope.result)) return fail();
            // Defined, not assigned: a setter on Object.prototype.capabilities sees nothing.
            defineProperty(envelope.result, "capabilities", { __proto__: null, value: answer.caps, writable: true, enumerable: true, configurable: true });
          }
          done(envelope);
        } catch {
          fail();
        }
      };
      try {
        ask(text, sessionFn, shared, take);
      } catch {
        // The Go program has exited, or the instance was closed under us.
        take(null);
      }
    };

    // Reads a request and calls done(envelope) once with its answer.
    const serve = (request, sessionFn, budget, shared, done) => {
      const id = requestIdOf(request);
      if (closed) return done(failure(id, "INTERNAL_ERROR", "surface is closed"));
      let text;
      try {
        text = toRequestJSON(request, budget);
      } catch (e) {
        const message = e instanceof RequestError ? e.message : "request could not be read";
        return done(failure(id, "INVALID_REQUEST", message));
      }
      call(id, text, sessionFn, shared, done);
    };

    // Its own then and constructor (pending): a page's await on it asks no
    // Promise.prototype a later script patched, which could read or
    // rewrite the answer.
    function handle(request) {
      const p = pending();
      try {
        serve(request, undefined, maxRequestBytes, false, (envelope) => p.resolve(unthenable(envelope)));
      } catch {
        p.resolve(unthenable(failure("", "INTERNAL_ERROR", "internal error")));
      }
      return p.promise;
    }

    // Answers through a Promise with its own then and constructor
    // (pending), waiting on nothing: neither the page's await on it nor
    // the wait for the kernel asks a Promise or Promise.prototype a later
    // script replaced, which could read or rewrite the description.
    function describe(input) {
      const result = pending();
      const settle = (out) => {
        try {
          const answer = jsonParse(out);
          if (answer.ok === true) {
            result.resolve(unthenable(answer.result));
            return;
          }
          const { code, message } = answer.error;
          result.reject(listIncludes(SESSION_CODES, code) ? new SurfaceSessionError(code, message) : protocolError(code, message));
        } catch {
          result.reject(protocolError("INTERNAL_ERROR", "internal error"));
        }
      };
      if (closed) {
        result.reject(protocolError("INTERNAL_ERROR", "surface is closed"));
        return result.promise;
      }
      let text;
      if (input !== undefined) {
        try {
          text = toRequestJSON(input, maxRequestBytes);
        } catch (e) {
          result.reject(protocolError("INVALID_REQUEST", e instanceof RequestError ? e.message : "describe input could not be read"));
          return result.promise;
        }
      }
      try {
        const n = text === undefined ? -1 : lane.toEntry(text);
        if (typeof n !== "number") {
          settle(DESCRIBE_TOO_LARGE);
          return result.promise;
        }
        const token = nextToken();
        mapSet(replies, token, (out) => settle(lane.texts(out)[0]));
        let taken = false;
        try {
          taken = entries.describe(slot, n, token);
        } finally {
          if (!taken) mapDelete(replies, token);
        }
        if (!taken) settle(undefined);
      } catch {
        result.reject(protocolError("INTERNAL_ERROR", "internal error"));
      }
      return result.promise;
    }

    // Every message is an object literal: defined, never assigned, so a
    // setter on Object.prototype (envelope, app, ...) captures nothing.
    const responseMessage = (envelope) =>
      app !== undefined ? { channel: CHANNEL, kind: "response", app, envelope } : { channel: CHANNEL, kind: "response", envelope };
    const connectedMessage = () => (app !== undefined ? { channel: CHANNEL, kind: "connected", app } : { channel: CHANNEL, kind: "connected" });

    function listen(listenOptions) {
      if (closed) throw new Error("listen: the surface is closed");
      const o = listenOptions === undefined ? {} : listenOptions;
      if (o === null || typeof o !== "object") throw new TypeError("listen options must be an object");
      const names = objectKeys(o);
      for (let i = 0; i < names.length; i++) {
        if (!listIncludes(LISTEN_OPTION_NAMES, names[i])) throw new TypeError(`listen: unknown option ${jsonStringify(names[i])}`);
      }
      // Own members only, as for createSurface: a later script's
      // Object.prototype.allowedOrigins or authenticate is no option.
      const origins = own(o, "allowedOrigins") === undefined ? [] : own(o, "allowedOrigins");
      if (!isArray(origins)) throw new TypeError("listen: allowedOrigins must be an array of origins");
      const allowed = [];
      for (let i = 0; i < origins.length; i++) {
        const origin = ownValue(origins, i);
        if (!isSerializedOrigin(origin)) {
          throw new TypeError(`listen: ${jsonStringify(String(origin))} is not an origin such as "https://example.com"`);
        }
        append(allowed, origin);
      }
      const authenticate = own(o, "authenticate");
      if (authenticate !== undefined && typeof authenticate !== "function") {
        throw new TypeError("listen: authenticate must be a function");
      }
      const maxMessageBytes = own(o, "maxMessageBytes");
      const channelIdleMs = own(o, "channelIdleMs");
      const maxChannelsPerOrigin = own(o, "maxChannelsPerOrigin");
      checkPositive("listen: maxMessageBytes", maxMessageBytes, true);
      checkPositive("listen: channelIdleMs", channelIdleMs, false);
      checkPositive("listen: maxChannelsPerOrigin", maxChannelsPerOrigin, true);
      const budget = mathMin(maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, maxRequestBytes);
      const idleMs = channelIdleMs ?? DEFAULT_CHANNEL_IDLE_MS;
      const perOriginMax = mathMin(maxChannelsPerOrigin ?? DEFAULT_CHANNELS_PER_ORIGIN, MAX_CHANNELS);
      const win = PAGE_WINDOW !== undefined ? PAGE_WINDOW : globalThis.window; // a stand-in window in tests
      if (!win || (win !== PAGE_WINDOW && typeof win.addEventListener !== "function") || !win.location) {
        throw new TypeError("listen: needs a window");
      }
      const ownOrigin = win.location.origin;
      const hub = hubFor(win);
      // One surface listens for an app name (or for none) at a time: a
      // second one, a later script's, would take connects meant for the
      // first and starve its callers.
      mapForEach(hub.entries, (other) => {
        if (other.app === app && other.owner !== api) throw new Error(`listen: another surface listens ${app === undefined ? "without an app name" : `for app ${jsonStringify(app)}`}`);
      });
      const channels = new MapCtor(); // port -> channel, open
      const perOrigin = new MapCtor(); // origin -> channels open or being authenticated
      let held = 0;
      let stopped = false;

      const reserve = (origin) => {
        mapSet(perOrigin, origin, (mapGet(perOrigin, origin) ?? 0) + 1);
        held++;
      };
      const release = (origin) => {
        const n = mapGet(perOrigin, origin) - 1;
        if (n > 0) mapSet(perOrigin, origin, n);
        else mapDelete(perOrigin, origin);
        held--;
      };
      // Frees a channel: closing the page's end, saying so first (say) so
      // that the caller's pending calls end at once (Chromium fires no
      // MessagePort close event).
      const free = (ch, say) => {
        if (!ch.open) return;
        ch.open = false;
        clearTimer(ch.timer);
        mapDelete(channels, ch.port);
        release(ch.origin);
        if (say) portSend(ch.port, ch.real, { channel: CHANNEL, kind: "closed" });
        portEnd(ch.port, ch.real);
      };
      const touch = (ch) => {
        clearTimer(ch.timer);
        ch.timer = setTimer(() => free(ch, true), idleMs);
      };

      const onPortMessage = (ch, event) => {
        if (!ch.open || stopped || closed || event.isTrusted !== true) return;
        const data = eventField(event, eventDataOf, "data");
        if (!isPlainObject(data)) return;
        let bare = false;
        if (hasOwn(data, "channel")) {
          if (ownValue(data, "channel") !== CHANNEL) return;
          const kind = ownValue(data, "kind");
          if (kind === "close") {
            free(ch, false);
            return;
          }
          if (kind !== "request") return;
          if (hasOwn(data, "app") && ownValue(data, "app") !== app) return;
        } else if (isBareRequest(data)) {
          bare = true;
        } else {
          return;
        }
        touch(ch);
        const reply = (envelope) => {
          if (ch.open) portSend(ch.port, ch.real, bare ? envelope : responseMessage(envelope));
        };
        if (bare) {
          serve(data, ch.sessionFn, budget, true, reply);
          return;
        }
        const envelope = ownValue(data, "envelope");
        if (!onlyMembers(data, REQUEST_MEMBERS)) {
          reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
          return;
        }
        serve(envelope, ch.sessionFn, budget, true, reply);
      };

      const entry = {
        __proto__: null,
        owner: api,
        app,
        accepts: (source, origin) => (source === win ? origin === ownOrigin : listIncludes(allowed, origin)),
        request(data, source, origin, bare) {
          if (stopped || closed) return;
          // Only to the sender, and only while it is still at the origin
          // the request came from: never "*".
          const reply = (envelope) => postTo(source, bare ? envelope : responseMessage(envelope), origin);
          if (bare) {
            serve(data, undefined, budget, true, reply);
            return;
          }
          const envelope = ownValue(data, "envelope");
          if (!onlyMembers(data, REQUEST_MEMBERS)) {
            reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
            return;
          }
          serve(envelope, undefined, budget, true, reply);
        },
        connect(data, origin, port, real) {
          const refuse = () => refusePort(port, real);
          if (stopped || closed || !onlyMembers(data, CONNECT_MEMBERS) || held >= MAX_CHANNELS ||
            (mapGet(perOrigin, origin) ?? 0) >= perOriginMax) {
            refuse();
            return;
          }
          reserve(origin);
          const open = (sessionFn) => {
            if (stopped || closed) {
              release(origin);
              refuse();
              return;
            }
            const ch = { __proto__: null, port, real, origin, sessionFn, timer: undefined, open: true };
            mapSet(channels, port, ch);
            portListen(port, real, (e) => {
              try {
                onPortMessage(ch, e);
              } catch {
                // A listener never throws into the page.
              }
            }, () => free(ch, false));
            touch(ch);
            portSend(port, real, connectedMessage());
          };
          if (authenticate === undefined) {
            open(undefined);
            return;
          }
          let decided = false;
          const decide = (result) => {
            if (decided) return;
            decided = true;
            clearTimer(timer);
            if (result === null || (typeof result !== "object" && typeof result !== "function")) {
              release(origin);
              refuse();
              return;
            }
            const getter = sessionGetter(result);
            open(() => lane.run(getter));
          };
          const timer = setTimer(() => decide(null), AUTHENTICATE_TIMEOUT_MS);
          let r;
          try {
            // The credential goes to the page's authenticate and nowhere
            // else: not to the kernel, the audit, or a reply.
            r = authenticate(freeze({ credential: ownValue(data, "credential"), origin }));
          } catch {
            decide(null);
            return;
          }
          whenSettled(r, decide, () => decide(null));
        },
        dropChannels() {
          mapForEach(channels, (ch) => free(ch, true));
        },
      };

      const stop = () => {
        if (stopped) return;
        stopped = true;
        mapDelete(hub.entries, entry);
        entry.dropChannels();
        mapDelete(stops, stop);
      };
      // How many private channels are open or being opened (authenticate
      // has not answered yet) now.
      defineProperty(stop, "channels", { __proto__: null, value: () => held });
      mapSet(hub.entries, entry, entry);
      mapSet(stops, stop, stop);
      return stop;
    }

    function close() {
      if (closed) return;
      closed = true;
      const all = newList();
      mapForEach(stops, (stop) => {
        all[all.length] = stop;
      });
      for (let i = 0; i < all.length; i++) all[i]();
      try {
        entries.close(slot);
      } catch {
        // the Go program is gone already
      }
    }

    // Opt-in WebMCP tools (pling-webmcp.js, loaded on first use). close()
    // stops the bridge with the listeners.
    // It answers through pending, not as an async function: resolving with
    // the bridge would look up then on it, and a then a later script put on
    // Object.prototype would be handed the bridge (and could stop it).
    function webmcp(webmcpOptions) {
      const result = pending();
      if (closed) {
        result.reject(new Error("webmcp: the surface is closed"));
        return result.promise;
      }
      promiseThen(import("./pling-webmcp.js"), (mod) => {
        try {
          if (closed) throw new Error("webmcp: the surface is closed");
          const stop = () => bridge.stop();
          const bridge = mod.bridgeWebMCP(api, webmcpOptions, () => mapDelete(stops, stop));
          if (bridge.supported) mapSet(stops, stop, stop);
          // The bridge has no prototype: resolving with it finds no then.
          whenSettled(bridge.ready, () => result.resolve(bridge), result.reject);
        } catch (err) {
          result.reject(err);
        }
      }, result.reject);
      return result.promise;
    }

    const api = freeze({ describe, handle, listen, close, webmcp });
    return api;
  }

  // Its own then (unthenable): resolving loadSurface's Promise with it
  // asks no then a later script put on Object.prototype.
  const api = {
    SURFACE_PROTOCOL,
    DEFAULT_SURFACE_RECORD_LIMIT,
    MAX_SURFACE_RECORD_LIMIT,
    SurfaceSessionError,
    defineRegistry,
    createSurface,
  };
  // The runtime's counters (calls entered, Promises waited for) say when an
  // agent's call is in flight: only a page that asks for them gets them.
  if (withStats === true) {
    const stats = runtime.stats;
    defineProperty(api, "stats", { __proto__: null, value: () => stats(), enumerable: true });
  }
  return freeze(unthenable(api));
}

function isRuntime(rt) {
  return rt !== null && typeof rt === "object" && typeof rt.create === "function" && rt.protocol === SURFACE_PROTOCOL;
}

/**
 * Binds the API to a runtime object that was started some other way (the
 * one wasm/main.go publishes). loadSurface is the usual entry point.
 * options.go, the wasm_exec.js Go object that runs the module, is
 * required: every call enters the kernel through the module's exports.
 */
export function fromRuntime(runtime, options = {}) {
  if (!isRuntime(runtime)) throw new TypeError(`fromRuntime: not a ${SURFACE_PROTOCOL} runtime`);
  if (options === null || typeof options !== "object") throw new TypeError("fromRuntime options must be an object");
  const entries = makeEntries(kernelOfGo(options.go), runtime, options.secret);
  if (entries === undefined) throw new TypeError("fromRuntime: options.go must be the Go object that runs this runtime");
  return bind(runtime, entries, own(options, "stats") === true);
}

const runtimeEntries = new WeakMapCtor(); // runtime started here -> its entries

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
// They live in this file, not in a module of their own, so that loading the
// surface is one request for its script: a module it imported would be a
// second request, made only once this one had arrived and been parsed.
// pling-shared.js re-exports them for pages that import them from there.

const DB_NAME = "pling-shared";
const WINDOWS = "windows"; // {key: [app, sha256 of the limiter's key], times: [ms...], expires}
const CLAIMS = "claims"; // {key: [app, sha256 of session and request id], expires}
const STORES = freeze([WINDOWS, CLAIMS]);
// Expired entries one decision deletes: more than the one it may add, so
// the store shrinks back to what is still inside a window.
const SWEEP = 8;
const DEFAULT_TIMEOUT_MS = 5000;
// More admitted times than any limiter keeps: a record holding more was not
// written here, and is refused rather than read to its end.
const MAX_TIMES = 1 << 16;
const ErrorCtor = Error;
const dateNow = Date.now;

function positive(name, v, integer) {
  const ok = typeof v === "number" && (integer ? isSafeInteger(v) : numberIsFinite(v)) && v > 0;
  if (!ok) throw new TypeError(`${name} must be a positive ${integer ? "integer" : "number"}`);
}

// What it resolves with never passes through a Promise.race or a finally
// that a later script could have replaced; a decision is a string or an
// object without a prototype, so resolving with it looks up no then.
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

const IDB_NATIVE = typeof globalThis.IDBFactory === "function";
// The page's factory when this module was evaluated: the default of the
// indexedDB option, never read again from a global a later script could
// redefine. Reading it throws in some sandboxed documents.
const INDEXED_DB = indexedDBAtLoad();
function indexedDBAtLoad() {
  try {
    const f = globalThis.indexedDB;
    return f !== null && typeof f === "object" ? f : undefined;
  } catch {
    return undefined;
  }
}
function idbMethod(C, name) {
  if (IDB_NATIVE) return capturedMethod(globalThis[C], name) ?? idbMissing;
  return (o, ...args) => reflectApply(o[name], o, args);
}
function idbGetter(C, name) {
  if (IDB_NATIVE) return capturedGetter(globalThis[C], name) ?? idbMissing;
  return (o) => o[name];
}
function idbMissing() {
  throw new ErrorCtor("pling-shared: this browser's IndexedDB lacks a method the runtime uses");
}
const idbFactoryOpen = idbMethod("IDBFactory", "open");
const idbFactoryDelete = idbMethod("IDBFactory", "deleteDatabase");
const idbRequestResult = idbGetter("IDBRequest", "result");
const idbRequestError = idbGetter("IDBRequest", "error");
const idbStoreNames = idbGetter("IDBDatabase", "objectStoreNames");
const idbCreateStore = idbMethod("IDBDatabase", "createObjectStore");
const idbTransaction = idbMethod("IDBDatabase", "transaction");
const idbClose = idbMethod("IDBDatabase", "close");
const domStringListContains = idbMethod("DOMStringList", "contains");
const idbTxStore = idbMethod("IDBTransaction", "objectStore");
const idbTxAbort = idbMethod("IDBTransaction", "abort");
const idbTxError = idbGetter("IDBTransaction", "error");
const idbStoreGet = idbMethod("IDBObjectStore", "get");
const idbStorePut = idbMethod("IDBObjectStore", "put");
const idbStoreIndex = idbMethod("IDBObjectStore", "index");
const idbCreateIndex = idbMethod("IDBObjectStore", "createIndex");
const idbStoreKeyPath = idbGetter("IDBObjectStore", "keyPath");
const idbStoreAutoIncrement = idbGetter("IDBObjectStore", "autoIncrement");
const idbIndexNames = idbGetter("IDBObjectStore", "indexNames");
const idbIndexOpenCursor = idbMethod("IDBIndex", "openCursor");
const idbIndexKeyPath = idbGetter("IDBIndex", "keyPath");
const idbIndexUnique = idbGetter("IDBIndex", "unique");
const idbIndexMultiEntry = idbGetter("IDBIndex", "multiEntry");
const idbCursorDelete = idbMethod("IDBCursor", "delete");
const idbCursorContinue = idbMethod("IDBCursor", "continue");
const IDBKeyRangeCtor = IDB_NATIVE ? globalThis.IDBKeyRange : undefined;
const idbUpperBound = IDBKeyRangeCtor !== undefined ? IDBKeyRangeCtor.upperBound : undefined;
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

/**
 * What createSurface does with its `shared` option: "indexeddb" replaces
 * the in-page limiter and guard with indexedDBLimiter and indexedDBGuard,
 * keeping maxRequests, windowMs and the app name. Returns the options.
 */
export function applyShared(options) {
  const shared = own(options, "shared");
  const rateLimit = own(options, "rateLimit");
  const replay = own(options, "replay");
  const app = own(options, "app");
  if (shared === undefined) return options;
  if (shared !== "indexeddb") throw new TypeError('createSurface: shared must be "indexeddb"');
  if (!rateLimit && !replay) throw new TypeError("createSurface: shared needs rateLimit or replay to share");
  if ((rateLimit && own(rateLimit, "limiter") !== undefined) || (replay && typeof replay === "object" && own(replay, "guard") !== undefined)) {
    throw new TypeError("createSurface: shared replaces the limiter and the guard; give shared or your own, not both");
  }
  if (rateLimit) {
    const maxRequests = own(rateLimit, "maxRequests");
    const windowMs = own(rateLimit, "windowMs");
    defineProperty(options, "rateLimit", { __proto__: null, value: { __proto__: null, maxRequests, windowMs,
      limiter: indexedDBLimiter({ __proto__: null, app: app ?? "", maxRequests, windowMs }) }, writable: true, enumerable: true, configurable: true });
  }
  if (replay) {
    const windowMs = typeof replay === "object" ? own(replay, "windowMs") : undefined;
    defineProperty(options, "replay", { __proto__: null, value: { __proto__: null, windowMs, guard: indexedDBGuard({ __proto__: null, app: app ?? "" }) },
      writable: true, enumerable: true, configurable: true });
  }
  return options;
}

// ---------------------------------------------------------------------------
// HTTP: the page's backend decides (see redisstate.Handler). The backend
// names the session from its own login; the body never carries one.

/**
 * A limiter and a guard that POST to url: {"op":"allow"} and
 * {"op":"claim","requestId":...}. Options: timeoutMs (default 5000),
 * headers (a CSRF token, say), credentials (default "same-origin"), fetch
 * (default the page's fetch as it was when this module was evaluated).
 *
 * A script that runs after the surface loaded must not turn the backend's
 * "replayed" into "claimed", or a refusal into an admission: the request
 * body is written here, the Response is read through its original getter
 * and method (a stand-in fetch's answer through its own status and text),
 * the answer is parsed and checked in the callback that received it, and
 * no Promise is awaited or resolved with an object a then could be planted
 * on.
 */
export function httpAdapter(url, options) {
  const timeoutMs = ownOr(options, "timeoutMs", DEFAULT_TIMEOUT_MS);
  const headers = ownOr(options, "headers", {});
  const credentials = ownOr(options, "credentials", "same-origin");
  const fetchFn = ownOr(options, "fetch", FETCH);
  if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("httpAdapter: url must be a string or a URL");
  positive("httpAdapter: timeoutMs", timeoutMs, false);
  if (typeof fetchFn !== "function") throw new TypeError("httpAdapter: no fetch");
  // Absolute now: fetch would resolve a relative address against the
  // document's base at each request, which a later script can move.
  const target = BASE_AT_LOAD !== undefined && URLCtor !== undefined && urlHrefOf !== undefined ? urlHrefOf(new URLCtor(StringCtor(url), BASE_AT_LOAD)) : StringCtor(url);
  const fixedHeaders = { __proto__: null, ...headers, "Content-Type": "application/json" };
  // The page's own fetch, when it gave one, is the page's to trust; the
  // default goes by XMLHttpRequest (see XHR), where the page has one and
  // the credentials can be expressed there.
  const useXHR = fetchFn === FETCH && XHR !== undefined && credentials !== "omit";

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
const ALLOWED = freeze(["allowed"]);
const DENIED = freeze(["allowed", "retryAfterMs"]);
const CLAIM = freeze(["claim"]);

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

// ---------------------------------------------------------------------------
// Loading.

function resolveURL(given, fallback) {
  if (given === undefined) return urlHrefOf(new URLCtor(fallback, import.meta.url));
  return urlHrefOf(new URLCtor(String(given), BASE_AT_LOAD ?? import.meta.url));
}

// instantiate compiles the module as it arrives, with the fetch and
// WebAssembly functions captured when this module was evaluated.
async function instantiate(url, imports) {
  if (WA_INSTANTIATE_STREAMING !== undefined) {
    try {
      const source = await reflectApply(WA_INSTANTIATE_STREAMING, WebAssemblyNS, [FETCH(url), imports]);
      return ownValue(source, "instance");
    } catch {
      // Served without application/wasm, or no streaming here: fall back.
    }
  }
  const response = await FETCH(url);
  const status = responseStatusOf(response);
  if (status < 200 || status > 299) throw new Error(`loadSurface: fetching ${url} failed with HTTP ${status}`);
  const source = await reflectApply(WA_INSTANTIATE, WebAssemblyNS, [await responseArrayBuffer(response), imports]);
  return ownValue(source, "instance");
}

// startRuntime starts surface.wasm on the glue of pling-glue.js: its global
// object is a record of the glue's, so the runtime wasm/main.go publishes
// reaches ready here and nowhere else (nothing goes on globalThis).
async function startRuntime(options) {
  const wasmURL = resolveURL(options.wasmURL, "./surface.wasm");
  let runtime;
  const glue = goGlue({
    ready: (rt) => {
      if (runtime === undefined) runtime = rt;
    },
    exit: undefined,
  });
  const instance = await instantiate(wasmURL, glue.importObject);
  const exports = glue.run(instance); // main runs until it waits, publishing its runtime on the way
  if (glue.exited()) throw new Error("loadSurface: the surface runtime exited");
  if (!isRuntime(runtime)) throw new Error("loadSurface: the surface runtime did not start");
  const entries = makeEntries({ __proto__: null, exports, resume: glue.resume, exited: glue.exited }, runtime, undefined);
  if (entries === undefined) throw new Error("loadSurface: the surface runtime refused its entries");
  weakMapSet(runtimeEntries, runtime, entries);
  return runtime;
}

let startedHere; // the start loadSurface made in this module

/**
 * Loads wasm_exec.js and surface.wasm (by default the files beside this
 * module), starts the runtime once per page, and resolves to the API.
 * Later calls reuse the running runtime; their URLs are not used.
 */
export function loadSurface(options = {}) {
  if (options === null || typeof options !== "object") {
    return Promise.reject(new TypeError("loadSurface options must be an object"));
  }
  // The start this module made is kept here: the global, which lets a copy
  // of this module loaded under another URL share it, is one a later
  // script could replace.
  let started = startedHere !== undefined ? startedHere : globalThis[LOAD_KEY];
  if (started === undefined) {
    started = startRuntime(options);
    startedHere = started;
    Object.defineProperty(globalThis, LOAD_KEY, { value: started, configurable: true, writable: true });
    started.catch(() => {
      if (startedHere === started) startedHere = undefined;
      if (globalThis[LOAD_KEY] === started) delete globalThis[LOAD_KEY];
    });
  }
  // Answered through a Promise of its own (pending), resolved here with
  // the API bound to a runtime this module started: a later call, made
  // once the surface loaded, gets the real API whatever a later script put
  // on Promise.prototype, Object.prototype or the global.
  const out = pending();
  whenSettled(started, (runtime) => {
    try {
      const entries = weakMapGet(runtimeEntries, runtime);
      if (entries === undefined) {
        // A runtime some other script started: its Go object is not ours.
        throw new Error("loadSurface: the surface runtime was started without this loader; bind it with fromRuntime(runtime, { go })");
      }
      out.resolve(bind(runtime, entries, own(options, "stats") === true));
    } catch (e) {
      out.reject(e);
    }
  }, out.reject);
  return out.promise;
}
