// intrinsics.js: every built-in the runtime uses, captured when the first
// script is evaluated (see "Threat model" in README.md). Every other module
// takes them from here, so one loaded later binds to what was captured first.

// Built-ins are captured when the module is evaluated, so that code which
// later patches Object, JSON, Promise, the prototypes of events, ports and
// typed arrays (a polyfill adding toJSON, or a hostile script) cannot change
// how requests and sessions are read, where replies go, or who receives a
// private channel. Methods are called through uncurryThis (the original
// Function.prototype.call bound to the original method), never looked up on
// the object at call time. See "Threat model" in README.md.
export const {
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
export const ObjectPrototype = Object.prototype;
export const ArrayPrototype = Array.prototype;
export const FunctionPrototype = Function.prototype;
export const { isArray } = Array;
export const { stringify: jsonStringify, parse: jsonParse } = JSON;
export const { isFinite: numberIsFinite, isSafeInteger } = Number;
export const stringCharCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
export const { apply: reflectApply } = Reflect;
export const { max: mathMax, min: mathMin, ceil: mathCeil } = Math; // a time limit or a bound computed with a later script's Math would be its
export const uncurryThis = FunctionPrototype.bind.bind(FunctionPrototype.call);
export const PromiseCtor = Promise;
export const StringCtor = String;
export const PromisePrototype = Promise.prototype;
export const PromisePrototypeThen = PromisePrototype.then;
export const promiseThen = uncurryThis(PromisePrototypeThen);
export const SymbolSpecies = Symbol.species;
export const promiseSpeciesGetter = getOwnPropertyDescriptor(PromiseCtor, SymbolSpecies).get;
export const dateGetTime = uncurryThis(Date.prototype.getTime);
export const stringStartsWith = uncurryThis(String.prototype.startsWith);
export const MapCtor = Map;
export const mapGet = uncurryThis(Map.prototype.get);
export const mapSet = uncurryThis(Map.prototype.set);
export const mapDelete = uncurryThis(Map.prototype.delete);
export const mapForEach = uncurryThis(Map.prototype.forEach);
export const mapSize = uncurryThis(getOwnPropertyDescriptor(Map.prototype, "size").get);
// The getter of a property, own or inherited; undefined for an own data
// property (Annex B, in every browser and in Node).
export const lookupGetter = typeof ObjectPrototype.__lookupGetter__ === "function" ? uncurryThis(ObjectPrototype.__lookupGetter__) : undefined;
export const WeakMapCtor = WeakMap;
export const weakMapGet = uncurryThis(WeakMap.prototype.get);
export const weakMapSet = uncurryThis(WeakMap.prototype.set);
export const weakMapDelete = uncurryThis(WeakMap.prototype.delete);
export const Uint8ArrayCtor = Uint8Array;
export const typedArrayBuffer = uncurryThis(getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), "buffer").get);
export const typedArrayLength = uncurryThis(getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), "length").get);
export const setTimer = globalThis.setTimeout;
export const queueMicro = globalThis.queueMicrotask;
export const clearTimer = globalThis.clearTimeout;

/** The original method name of C.prototype, uncurried; undefined where C is missing. */
function capturedMethod(C, name) {
  const d = typeof C === "function" ? getOwnPropertyDescriptor(C.prototype, name) : undefined;
  return d !== undefined && typeof d.value === "function" ? uncurryThis(d.value) : undefined;
}
/** The original getter of C.prototype[name], uncurried; undefined where C is missing. */
export function capturedGetter(C, name) {
  const d = typeof C === "function" ? getOwnPropertyDescriptor(C.prototype, name) : undefined;
  return d !== undefined && typeof d.get === "function" ? uncurryThis(d.get) : undefined;
}
export const eventDataOf = capturedGetter(globalThis.MessageEvent, "data");
export const eventOriginOf = capturedGetter(globalThis.MessageEvent, "origin");
export const eventSourceOf = capturedGetter(globalThis.MessageEvent, "source");
export const eventPortsOf = capturedGetter(globalThis.MessageEvent, "ports");
export const stopImmediatePropagation = capturedMethod(globalThis.Event, "stopImmediatePropagation");
export const addListener = capturedMethod(globalThis.EventTarget, "addEventListener");
export const portPostMessage = capturedMethod(globalThis.MessagePort, "postMessage");
export const portClose = capturedMethod(globalThis.MessagePort, "close");
export const portStart = capturedMethod(globalThis.MessagePort, "start");
export const MessageChannelCtor = globalThis.MessageChannel;
export const channelPort1Of = capturedGetter(globalThis.MessageChannel, "port1");
export const channelPort2Of = capturedGetter(globalThis.MessageChannel, "port2");
export const TextEncoderCtor = globalThis.TextEncoder;
export const TextDecoderCtor = globalThis.TextDecoder;
export const responseStatusOf = capturedGetter(globalThis.Response, "status");
export const responseText = capturedMethod(globalThis.Response, "text");
export const AbortControllerCtor = globalThis.AbortController;
export const abortSignalOf = capturedGetter(globalThis.AbortController, "signal");
export const abortController = capturedMethod(globalThis.AbortController, "abort");
export const FETCH = globalThis.fetch;
const WebAssemblyNS = globalThis.WebAssembly;
export const WA_MODULE = WebAssemblyNS.Module;
export const WA_INSTANCE = WebAssemblyNS.Instance;
export const WA_COMPILE_STREAMING = typeof WebAssemblyNS.compileStreaming === "function" ? WebAssemblyNS.compileStreaming : undefined;
// A brand check: WebAssembly.Module.exports throws for anything but a Module.
export const WA_MODULE_EXPORTS = WA_MODULE.exports;
// Resolving a Promise with an object asks the object for then, up its
// prototypes, where a script that runs later could answer with a function
// of its own and resolve with another object. Two Promises on the kernel's
// way are resolved with objects of one class each: fetch's with a
// Response, compileStreaming's with a WebAssembly.Module. A then that is
// undefined, defined on those two prototypes now and not configurable, ends
// every such lookup there (kernel.js streams only where both holds).
export const THEN_ENDS_AT_KERNEL_CLASSES = endThen(globalThis.Response) && endThen(WA_MODULE);
function endThen(C) {
  if (typeof C !== "function") return false;
  const proto = C.prototype;
  const d = getOwnPropertyDescriptor(proto, "then");
  if (d !== undefined) return hasOwn(d, "value") && d.value === undefined && d.writable === false && d.configurable === false;
  try {
    defineProperty(proto, "then", { __proto__: null, value: undefined, writable: false, enumerable: false, configurable: false });
    return true;
  } catch {
    return false;
  }
}
export const REQUEST_IDLE = typeof globalThis.requestIdleCallback === "function" ? globalThis.requestIdleCallback : undefined;
// XMLHttpRequest, for httpAdapter: fetch resolves its Promise with the
// Response, and resolving looks up then on it, where a later script could
// hand back a Response of its own; an XMLHttpRequest answers by events.
export const XHR = globalThis.XMLHttpRequest;
export const xhrOpen = capturedMethod(XHR, "open");
export const xhrSend = capturedMethod(XHR, "send");
export const xhrAbort = capturedMethod(XHR, "abort");
export const xhrSetHeader = capturedMethod(XHR, "setRequestHeader");
export const xhrStatusOf = capturedGetter(XHR, "status");
export const xhrTextOf = capturedGetter(XHR, "responseText");
export const xhrURLOf = capturedGetter(XHR, "responseURL");
export const xhrResponseOf = capturedGetter(XHR, "response");
export const xhrSetResponseType = typeof XHR === "function" ? uncurryThis(getOwnPropertyDescriptor(XHR.prototype, "responseType").set) : undefined;
export const xhrSetCredentials = typeof XHR === "function" ? uncurryThis(getOwnPropertyDescriptor(XHR.prototype, "withCredentials").set) : undefined;
export const URLCtor = globalThis.URL;
export const urlHrefOf = capturedGetter(globalThis.URL, "href");
// The document's base URL when this module was evaluated: httpAdapter
// resolves its address against it once, so a <base> a later script inserts
// cannot send the page's limiter and guard to a server of its own.
export const BASE_AT_LOAD = baseAtLoad();
function baseAtLoad() {
  try {
    const doc = globalThis.document;
    const base = doc !== undefined && doc !== null ? doc.baseURI : undefined;
    return typeof base === "string" ? base : undefined;
  } catch {
    return undefined;
  }
}
export const textEncodeInto = capturedMethod(globalThis.TextEncoder, "encodeInto");
export const textDecode = capturedMethod(globalThis.TextDecoder, "decode");
// The page's own window, when this module runs in one. window is an
// unforgeable property of the global: a later script cannot replace it. Its
// postMessage is an own property that a later script could replace.
export const PAGE_WINDOW = typeof globalThis.Window === "function" && globalThis.window === globalThis ? globalThis : undefined;
export const windowPostMessage = PAGE_WINDOW !== undefined ? PAGE_WINDOW.postMessage : undefined;

export const CRYPTO = globalThis.crypto;
export const cryptoGetRandomValues = capturedMethod(globalThis.Crypto, "getRandomValues");

/** Random bits from the crypto captured at load: per-load secrets, tokens. */
export function randomUint32s(n) {
  const a = new Uint32ArrayCtor(n);
  cryptoGetRandomValues(CRYPTO, a);
  return a;
}

// What the Go glue (pling-glue.js) calls, captured here with the rest: the
// glue is loaded when the kernel starts, after any later script.
export const { construct: reflectConstruct, get: reflectGet, set: reflectSet, deleteProperty: reflectDeleteProperty } = Reflect;
export const functionBind = FunctionPrototype.bind;
export const hasInstance = FunctionPrototype[Symbol.hasInstance];
const protoGetter = (proto, name) => uncurryThis(getOwnPropertyDescriptor(proto, name).get);
export const DataViewCtor = DataView;
export const dvGetUint32 = uncurryThis(DataView.prototype.getUint32);
export const dvGetInt32 = uncurryThis(DataView.prototype.getInt32);
export const dvGetFloat64 = uncurryThis(DataView.prototype.getFloat64);
export const dvSetUint32 = uncurryThis(DataView.prototype.setUint32);
export const dvSetInt32 = uncurryThis(DataView.prototype.setInt32);
export const dvSetFloat64 = uncurryThis(DataView.prototype.setFloat64);
export const dvSetUint8 = uncurryThis(DataView.prototype.setUint8);
export const Uint32ArrayCtor = Uint32Array;
export const Uint8ClampedArrayCtor = Uint8ClampedArray;
const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
export const typedSet = uncurryThis(TypedArrayPrototype.set);
export const typedByteOffset = protoGetter(TypedArrayPrototype, "byteOffset");
// undefined for anything but a typed array: a brand check that no
// Symbol.hasInstance or constructor a later script defines can answer.
export const typedTag = protoGetter(TypedArrayPrototype, Symbol.toStringTag);
export const instanceExports = protoGetter(WebAssembly.Instance.prototype, "exports");
export const memoryBuffer = protoGetter(WebAssembly.Memory.prototype, "buffer");
export const mapHas = uncurryThis(Map.prototype.has);
export const textEncoder = new TextEncoder();
export const textDecoder = new TextDecoder("utf-8");
export const textEncode = uncurryThis(TextEncoder.prototype.encode);
export const mathFloor = Math.floor;
export const PERFORMANCE = globalThis.performance;
export const performanceNow = uncurryThis(PERFORMANCE.now);
const CONSOLE = globalThis.console;
/** The console's log, bound to the console as it was at load; undefined without one. */
export const consoleLog = CONSOLE !== undefined && typeof CONSOLE.log === "function" ? reflectApply(functionBind, CONSOLE.log, [CONSOLE]) : undefined;
export const stringLastIndexOf = uncurryThis(String.prototype.lastIndexOf);
export const stringSlice = uncurryThis(String.prototype.slice);

/**
 * A list to fill by assignment. An array asks its prototypes for a setter
 * of every index it grows into (push included), and a later script can put
 * one on Object.prototype or Array.prototype: this one has no prototype, so
 * no such setter is handed what goes in (a private channel's records, say).
 */
export const newList = () => setPrototypeOf([], null);
const arrayFrom = Array.from;
const ArrayCtor = Array;
/** A plain array of a list's elements, defined rather than assigned: Array.from over an array-like with no iterator. */
export const plainArray = (list) => reflectApply(arrayFrom, ArrayCtor, [list]);

/** Adds v at the end of a by definition, not by assignment: no setter on an index runs. */
export function append(a, v) {
  defineProperty(a, a.length, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
}

export function listIncludes(list, v) {
  for (let i = 0; i < list.length; i++) if (list[i] === v) return true;
  return false;
}

export const now = typeof performance === "object" && typeof performance.now === "function"
  ? performance.now.bind(performance)
  : Date.now;

export const ErrorCtor = Error;
export const dateNow = Date.now;

export const IDB_NATIVE = typeof globalThis.IDBFactory === "function";
// The page's factory when this module was evaluated: the default of the
// indexedDB option, never read again from a global a later script could
// redefine. Reading it throws in some sandboxed documents.
export const INDEXED_DB = indexedDBAtLoad();
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
export function idbMissing() {
  throw new ErrorCtor("pling-shared: this browser's IndexedDB lacks a method the runtime uses");
}
export const idbFactoryOpen = idbMethod("IDBFactory", "open");
export const idbFactoryDelete = idbMethod("IDBFactory", "deleteDatabase");
export const idbRequestResult = idbGetter("IDBRequest", "result");
export const idbRequestError = idbGetter("IDBRequest", "error");
export const idbStoreNames = idbGetter("IDBDatabase", "objectStoreNames");
export const idbCreateStore = idbMethod("IDBDatabase", "createObjectStore");
export const idbTransaction = idbMethod("IDBDatabase", "transaction");
export const idbClose = idbMethod("IDBDatabase", "close");
export const domStringListContains = idbMethod("DOMStringList", "contains");
export const idbTxStore = idbMethod("IDBTransaction", "objectStore");
export const idbTxAbort = idbMethod("IDBTransaction", "abort");
export const idbTxError = idbGetter("IDBTransaction", "error");
export const idbStoreGet = idbMethod("IDBObjectStore", "get");
export const idbStorePut = idbMethod("IDBObjectStore", "put");
export const idbStoreIndex = idbMethod("IDBObjectStore", "index");
export const idbCreateIndex = idbMethod("IDBObjectStore", "createIndex");
export const idbStoreKeyPath = idbGetter("IDBObjectStore", "keyPath");
export const idbStoreAutoIncrement = idbGetter("IDBObjectStore", "autoIncrement");
export const idbIndexNames = idbGetter("IDBObjectStore", "indexNames");
export const idbIndexOpenCursor = idbMethod("IDBIndex", "openCursor");
export const idbIndexKeyPath = idbGetter("IDBIndex", "keyPath");
export const idbIndexUnique = idbGetter("IDBIndex", "unique");
export const idbIndexMultiEntry = idbGetter("IDBIndex", "multiEntry");
export const idbCursorDelete = idbMethod("IDBCursor", "delete");
export const idbCursorContinue = idbMethod("IDBCursor", "continue");
export const IDBKeyRangeCtor = IDB_NATIVE ? globalThis.IDBKeyRange : undefined;
export const idbUpperBound = IDBKeyRangeCtor !== undefined ? IDBKeyRangeCtor.upperBound : undefined;
