// window-transport.js: talking to the page over window.postMessage, where
// every script of the page reads and can answer: the window transport of a
// client, discover (which surfaces are here) and request (one round trip
// for callers that read the answer themselves). Messages posted before the
// page listens are lost, so discover and request post again until answered.

import { CHANNEL, SURFACE_PROTOCOL, DEFAULT_DESCRIBE_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, REPOST_INTERVAL_MS, DEFAULT_DISCOVER_SETTLE_MS, DEFAULT_DISCOVER_APPS, MAX_APP_BYTES, DEFAULT_LIMITS } from "./bounds.js";
import { ClientErrorCode, clientError } from "./errors.js";
import { isObject, freeze, newRequestId, checkWindow, positive, nonNegativeInteger } from "./checks.js";
import { inspectReply } from "./reply-size.js";
import { classify } from "./classify.js";

// windowTransport is a client's transport over the window. Like the port's,
// it delivers response envelopes to hooks.onEnvelope (with false: anyone
// could have posted them); the window itself never ends, pagehide aside.
export function windowTransport(win, app, hooks) {
  const origin = win.location.origin;
  const listener = (event) => {
    // Only replies posted to this window by this window's own origin, and
    // only real ones: a page script's dispatchEvent is not a reply.
    if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
    const d = event.data;
    if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response") return;
    if (app !== undefined && d.app !== app) return;
    hooks.onEnvelope(d, false);
  };
  win.addEventListener("message", listener);
  return {
    kind: "window",
    private: false,
    send(envelope) {
      const msg = { channel: CHANNEL, kind: "request" };
      if (app !== undefined) msg.app = app;
      msg.envelope = envelope;
      win.postMessage(msg, origin);
    },
    close() {
      win.removeEventListener("message", listener);
    },
  };
}

// utf8Within reports whether s takes at most max bytes of UTF-8, reading at
// most max of its code units (each takes one byte or more).
function utf8Within(s, max) {
  if (s.length > max) return false;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
        continue;
      }
    }
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return bytes <= max;
}

const DISCOVER_OPTIONS = ["window", "timeoutMs", "settleMs", "maxApps"];

/**
 * Finds the surfaces on this page: posts one describe with no app and no
 * records on the window and collects the answers for a short while.
 * Resolves to [{ app, outcome }], one per application that answered, at
 * most maxApps of them (20 unless given; the first to answer), and ends as
 * soon as that many did. An answer naming an app of more than 256 bytes
 * is ignored.
 */
export async function discover(options = {}) {
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "discover options must be an object");
  for (const k of Object.keys(options)) {
    if (!DISCOVER_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `discover: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const timeoutMs = positive("timeoutMs", options.timeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  const settleMs = positive("settleMs", options.settleMs, DEFAULT_DISCOVER_SETTLE_MS);
  const maxApps = nonNegativeInteger("maxApps", options.maxApps, DEFAULT_DISCOVER_APPS);
  if (maxApps === 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "maxApps must be at least 1");
  const origin = win.location.origin;
  const envelope = { protocol: SURFACE_PROTOCOL, id: newRequestId(), method: "describe", input: { limit: 0 } };
  return new Promise((resolve, reject) => {
    const found = new Map(); // app -> outcome
    let settleTimer;
    let repost;
    const finish = (err) => {
      clearTimeout(repost);
      clearTimeout(timer);
      clearTimeout(settleTimer);
      win.removeEventListener("message", onMessage);
      win.removeEventListener("pagehide", onHide);
      if (err) reject(err);
      else resolve([...found].map(([app, outcome]) => freeze({ app, outcome })));
    };
    const onMessage = (event) => {
      if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
      const d = event.data;
      if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response" || !isObject(d.envelope) || d.envelope.id !== envelope.id) return;
      const app = typeof d.app === "string" ? d.app : undefined;
      // A name no surface would use is not kept, nor looked at further.
      if (found.has(app) || (app !== undefined && !utf8Within(app, MAX_APP_BYTES))) return;
      // Discovery asks on the window, where any script of the page can answer.
      found.set(app, freeze({ ...classify(d, "describe", { id: envelope.id }), transport: "window", forgeable: true }));
      if (found.size >= maxApps) finish(null);
      else if (found.size === 1) {
        clearTimeout(repost);
        settleTimer = setTimeout(() => finish(null), settleMs);
      }
    };
    const onHide = (event) => {
      if (event && event.isTrusted === true) finish(clientError(ClientErrorCode.NAVIGATED, "the page navigated away"));
    };
    const post = () => win.postMessage({ channel: CHANNEL, kind: "request", envelope }, origin);
    win.addEventListener("message", onMessage);
    win.addEventListener("pagehide", onHide);
    // The same id each time: a describe has no effect, and several answers
    // from one application count once.
    repost = repostUntilAnswered(post, (t) => (repost = t));
    const timer = setTimeout(() => finish(clientError(ClientErrorCode.NO_SURFACE, `no surface answered within ${timeoutMs} ms`)), timeoutMs);
    post();
  });
}

// repostUntilAnswered posts again after REPOST_INTERVAL_MS * 2, and then
// after each wait twice the last (up to 2 s), so a page slow to answer is
// not handed a queue of copies; every timer it sets is handed to armed,
// for the caller to clear once an answer came.
function repostUntilAnswered(post, armed) {
  let wait = REPOST_INTERVAL_MS * 2;
  const again = () => {
    post();
    wait = Math.min(wait * 2, 2000);
    armed(setTimeout(again, wait));
  };
  return setTimeout(again, wait);
}

const REQUEST_OPTIONS = ["window", "app", "timeoutMs", "replyBytes", "repost"];

/**
 * Posts one request envelope on the window and resolves with the message
 * that answers its id, as the page posted it, once inspectReply has found
 * it within the bounds: the round trip under callers that read the page's
 * answer themselves (pling-mcp, through the extension or DevTools). With
 * repost, the envelope (a describe: it has no effect) is posted again with
 * the same id until an answer comes, as discover posts; otherwise once.
 * Rejects with TIMEOUT, or with REPLY_REFUSED when the answer is larger or
 * deeper than the bounds (error.bound says which) or not JSON.
 */
export function request(envelope, options = {}) {
  if (!isObject(envelope) || typeof envelope.id !== "string") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "request needs an envelope with a string id");
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "request options must be an object");
  for (const k of Object.keys(options)) {
    if (!REQUEST_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `request: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const app = options.app;
  if (app !== undefined && (typeof app !== "string" || app === "")) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "app must be a non-empty string");
  const timeoutMs = positive("timeoutMs", options.timeoutMs, DEFAULT_DESCRIBE_TIMEOUT_MS);
  const limits = { replyBytes: positive("replyBytes", options.replyBytes, DEFAULT_LIMITS.replyBytes), depth: DEFAULT_LIMITS.depth };
  const origin = win.location.origin;
  const msg = { channel: CHANNEL, kind: "request" };
  if (app !== undefined) msg.app = app;
  msg.envelope = envelope;
  return new Promise((resolve, reject) => {
    let repost;
    const finish = (err, reply) => {
      clearTimeout(timer);
      clearTimeout(repost);
      win.removeEventListener("message", onMessage);
      if (err) reject(err);
      else resolve(reply);
    };
    const onMessage = (event) => {
      if (event.isTrusted !== true || event.source !== win || event.origin !== origin) return;
      const d = event.data;
      if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response" || !isObject(d.envelope) || d.envelope.id !== envelope.id) return;
      if (app !== undefined && d.app !== app) return;
      const wrong = inspectReply(d, limits);
      if (wrong) finish(clientError(ClientErrorCode.REPLY_REFUSED, wrong.message, { bound: wrong.bound }));
      else finish(null, d);
    };
    const post = () => win.postMessage(msg, origin);
    win.addEventListener("message", onMessage);
    const timer = setTimeout(() => finish(clientError(ClientErrorCode.TIMEOUT, `no reply to ${envelope.method} ${envelope.id} within ${timeoutMs} ms`, { request: envelope })), timeoutMs);
    if (options.repost === true) repost = repostUntilAnswered(post, (t) => (repost = t));
    post();
  });
}
