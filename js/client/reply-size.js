// reply-size.js: how much a page's reply weighs, measured before anything
// reads it. A page chooses what it sends, so the walk is bounded by the
// budget, never by the reply.

import { DEFAULT_LIMITS } from "./bounds.js";

// What a string takes in the reply's JSON, in UTF-8 bytes: a control
// character is written as six, a character past U+007F as two or three.
// Counting UTF-16 units instead let a reply of control characters six
// times the budget through.
const NOT_PLAIN = /[\u0000-\u001f"\\\u007f-\uffff]/;
function jsonBytes(s) {
  if (!NOT_PLAIN.test(s)) return s.length + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c < 0xd800 || c > 0xdfff) n += 3;
    else if (c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a pair: one character of four bytes
      i++;
    } else n += 6; // a lone surrogate, written \udXXX
  }
  return n;
}

/**
 * Walks a reply once, in time bounded by limits.replyBytes rather than by
 * what the page sent, and says what is wrong with it: a size or depth past
 * the limits (bound is set), a value JSON cannot carry, or two members of
 * one object whose names differ only in case (a Go or case-insensitive
 * reader would take the other one). "" when nothing is.
 */
export function inspectReply(value, limits = DEFAULT_LIMITS) {
  let budget = limits.replyBytes;
  let named = false; // an array with members other than its elements
  // A string's JSON bytes, plus extra (a member name's colon and comma). A
  // string longer than what is left is not scanned: it is over either way,
  // so the walk stays bounded by the budget, not by the string.
  const weigh = (s, extra) => (s.length + 2 + extra > budget ? budget + 1 : jsonBytes(s) + extra);
  const stack = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop();
    if (depth > limits.depth) return { bound: "depth", message: `the reply is nested deeper than ${limits.depth}` };
    if (v === null || v === true) budget -= 4;
    else if (v === false) budget -= 5;
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) return { message: "the reply holds a number JSON cannot carry" };
      budget -= String(v).length;
    } else if (typeof v === "string") budget -= weigh(v, 0);
    else if (Array.isArray(v)) {
      // Brackets and commas; and every element takes at least one more
      // byte, so a huge array is refused by its length, untouched.
      budget -= 1 + v.length;
      if (v.length > budget) budget = -1;
      if (budget < 0) break;
      // A structured clone keeps an array's named members, which JSON
      // would drop: they are weighed like the rest, and the reply is
      // malformed.
      const keys = Object.keys(v);
      if (keys.length !== v.length) {
        named = true;
        for (let i = v.length; i < keys.length && budget >= 0; i++) {
          budget -= weigh(keys[i], 2);
          stack.push([v[keys[i]], depth + 1]);
        }
        if (budget < 0) break;
      }
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], depth + 1]);
    } else if (typeof v === "object" && Object.prototype.toString.call(v) === "[object Object]") {
      budget -= 2;
      const seen = new Set();
      for (const k in v) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        budget -= weigh(k, 2);
        if (budget < 0) break;
        const folded = k.toUpperCase().toLowerCase();
        if (seen.has(folded)) return { message: `the reply has two members named ${JSON.stringify(k)} up to case` };
        seen.add(folded);
        stack.push([v[k], depth + 1]);
      }
    } else return { message: `the reply holds a ${typeof v === "object" ? "non-JSON object" : typeof v}` };
    if (budget < 0) break;
  }
  if (budget < 0) return { bound: "replyBytes", message: `the reply is larger than ${limits.replyBytes} bytes` };
  if (named) return { message: "the reply holds an array with members other than its elements" };
  return null;
}
