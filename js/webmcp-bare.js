// webmcp-bare.js: the WebMCP bridge's copies without prototypes and its
// request ids, made only with what the first script captured (webmcpKit):
// the bridge is loaded on first use, when any global may have been replaced.

import { webmcpKit as kit } from "./webmcp-kit.js";

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
  if (depth > 256) throw new kit.TypeError("data nested deeper than 256");
  if (kit.isArray(v)) {
    const out = lists ? kit.newList() : [];
    const n = kit.ownValue(v, "length");
    for (let i = 0; i < n; i++) {
      kit.defineProperty(out, i, { __proto__: null, value: bareData(kit.ownValue(v, i), lists, depth + 1), writable: true, enumerable: true, configurable: true });
    }
    return out;
  }
  const out = kit.objectCreate(null);
  const names = kit.keys(v);
  for (let i = 0; i < names.length; i++) {
    kit.defineProperty(out, names[i], { __proto__: null, value: bareData(kit.ownValue(v, names[i]), lists, depth + 1), writable: true, enumerable: true, configurable: true });
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
export function randomUUID() {
  if (kit.getRandomValues === undefined || kit.crypto === undefined) return undefined;
  const b = new kit.Uint8Array(16);
  kit.getRandomValues(kit.crypto, b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  let s = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
    s += HEX[b[i] >> 4] + HEX[b[i] & 15];
  }
  return s;
}

/** Objects and arrays without prototypes: for what goes to the browser. */
export const bare = (v) => bareData(v, true, 0);
/** Objects without prototypes, arrays as they are: for what the bridge reads. */
export const bareObjects = (v) => bareData(v, false, 0);
