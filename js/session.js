// session.js: a page's session as the kernel reads it.
//
// ---------------------------------------------------------------------------
// Host adapter: the page's options as the Go bridge wants them. Page-owned
// values (actions, views, results, sessions) are encoded with JSON.stringify
// here: they come from the page's own code, not from a caller.

import { ArrayPrototype, dateGetTime, defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, hasOwn, isArray, jsonStringify, lookupGetter } from "./intrinsics.js";
import { isThenable, ownValue, settledText } from "./values.js";

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
export function sessionGetter(source, repeats) {
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
