// webmcp-kit.js: what pling-webmcp.js, loaded when a page asks for WebMCP,
// takes from the first script.

import { CRYPTO, Uint8ArrayCtor, cryptoGetRandomValues, defineProperty, freeze, hasOwn, isArray, jsonStringify, newList, objectCreate, objectKeys, reflectApply } from "./intrinsics.js";

const TypeErrorCtor = TypeError;
import { methodOf, ownValue } from "./values.js";

// WebMCP's registry and its registerTool as the page had them when this
// module was evaluated (see webmcpKit).
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
  defineProperty,
  objectCreate,
  newList,
  TypeError: TypeErrorCtor,
  Uint8Array: Uint8ArrayCtor,
  crypto: CRYPTO,
  getRandomValues: cryptoGetRandomValues,
});
