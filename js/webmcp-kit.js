// webmcp-kit.js: what pling-webmcp.js, loaded when a page asks for WebMCP,
// takes from the first script.

import { CRYPTO, Uint8ArrayCtor, cryptoGetRandomValues, defineProperty, freeze, hasOwn, isArray, jsonStringify, newList, objectCreate, objectKeys, reflectApply } from "./intrinsics.js";
import { methodOf, ownValue } from "./values.js";

// WebMCP's registry and its registerTool as the page had them when this
// module was evaluated, and the random source of the bridge's request ids
// (see webmcpKit).
const MODEL_CONTEXT = modelContextAtLoad();
const MODEL_CONTEXT_REGISTER = MODEL_CONTEXT !== undefined ? methodOf(MODEL_CONTEXT, "registerTool") : undefined;

function modelContextAtLoad() {
  try {
    const doc = globalThis.document;
    const mc = doc !== undefined && doc !== null ? doc.modelContext : undefined;
    return mc !== null && typeof mc === "object" ? mc : undefined;
  } catch {
    return undefined;
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
