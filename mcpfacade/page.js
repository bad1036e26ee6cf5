// The facade's caller inside the page. It runs in an isolated world of the
// page's main frame, as an extension's content script does: it shares the
// DOM and the window's message events with the page, not the page's
// JavaScript. What it posts reaches the page's surface as a message from the
// page's own window and origin, which is what the surface's listener
// accepts. Evaluated once per world; the result is the request function.
(() => {
  const KEY = "__plingMCPFacade";
  // Own property only: an element with this id is a named property of the
  // window, in this world too, and would stand for the facade.
  if (Object.prototype.hasOwnProperty.call(globalThis, KEY)) return true;
  const CHANNEL = "pling.surface";
  const RESEND_MS = 250;
  const waiters = new Map(); // envelope id -> [resolve, ...]
  // Whether a surface has answered in this document yet. Until one has, a
  // message may be posted before the page's surface listens, and is lost.
  let answered = false;

  addEventListener("message", (ev) => {
    // Only the page itself answers: a frame or another window posting a
    // response-shaped message is not the surface.
    if (ev.source !== window || ev.origin !== location.origin) return;
    const d = ev.data;
    if (!d || typeof d !== "object" || d.channel !== CHANNEL || d.kind !== "response") return;
    answered = true;
    const env = d.envelope;
    const id = env && typeof env === "object" && typeof env.id === "string" ? env.id : null;
    if (id === null || !waiters.has(id)) return;
    const list = waiters.get(id);
    waiters.delete(id);
    // Sized before it is encoded: a 300 MB answer costs a walk of at most
    // the bound, not a 300 MB string.
    let text = TOO_BIG;
    if (withinBound(d, maxReply)) {
      try {
        text = JSON.stringify(d);
      } catch (err) {
        text = null;
      }
    }
    for (const w of list) w(text);
  });

  // send posts envelope and resolves with the response message that answers
  // its id, as JSON text. While no surface has answered in this document,
  // a describe is posted again every RESEND_MS with the same id: describe
  // changes nothing and is not replay-guarded, and the first answer wins.
  // An invoke is posted exactly once.
  function send(envelope, app, timeoutMs, maxBytes) {
    const id = envelope.id;
    const msg = { channel: CHANNEL, kind: "request", envelope };
    if (app) msg.app = app;
    return new Promise((resolve, reject) => {
      let resend = 0;
      const done = (reply) => {
        clearTimeout(timer);
        clearInterval(resend);
        // The bound holds here, in the browser: a larger reply never
        // reaches pling-mcp's memory.
        if (reply === null) reject(new Error(UNREADABLE));
        else if (reply === TOO_BIG || utf8Length(reply, maxBytes) > maxBytes) reject(new Error(TOO_LARGE));
        else resolve(reply);
      };
      const timer = setTimeout(() => {
        clearInterval(resend);
        const list = waiters.get(id);
        if (list) {
          const rest = list.filter((w) => w !== done);
          if (rest.length) waiters.set(id, rest);
          else waiters.delete(id);
        }
        reject(new Error(`no response within ${timeoutMs} ms`));
      }, timeoutMs);
      const list = waiters.get(id) || [];
      list.push(done);
      waiters.set(id, list);
      postMessage(msg, location.origin);
      if (!answered && envelope.method === "describe") {
        resend = setInterval(() => {
          if (answered) clearInterval(resend);
          else postMessage(msg, location.origin);
        }, RESEND_MS);
      }
    });
  }

  // Markers the facade reads in a rejection: the page answered, and the
  // answer was refused (so the request is not sent again).
  const TOO_LARGE = "pling-mcp: reply larger than the bound";
  const UNREADABLE = "pling-mcp: reply not readable as JSON";
  const OTHER_ORIGIN = "pling-mcp: the page is on another origin: ";

  // utf8Length is the UTF-8 length of s, counted only as far as past limit.
  function utf8Length(s, limit) {
    if (s.length > limit) return s.length;
    if (s.length * 3 <= limit) return s.length;
    let n = 0;
    for (let i = 0; i < s.length && n <= limit; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        n += 4;
        i++;
      } else n += 3;
    }
    return n;
  }

  // The largest bound any request asked for: the walk below uses it.
  let maxReply = 0;
  const TOO_BIG = {};

  // withinBound walks v (the answer, as the page posted it) and reports
  // whether its JSON can fit in limit characters. It counts at least what
  // JSON.stringify writes for each value (a number's digits, a string's
  // escapes, a date's text), so an answer it passes is encoded in at most
  // limit characters. It stops as soon as the count passes limit, so its
  // work is bounded by limit whatever v is, cycles included.
  function withinBound(v, limit) {
    let n = 0;
    // text adds a string as JSON writes it: quotes, backslashes and
    // controls take two or six characters, a lone surrogate six. The scan
    // stops with the count, at most limit characters in all.
    const text = (s) => {
      n += s.length + 2;
      for (let i = 0; i < s.length && n <= limit; i++) {
        const c = s.charCodeAt(i);
        if (c < 0x20) n += 5;
        else if (c === 0x22 || c === 0x5c) n += 1;
        else if (c >= 0xd800 && c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
        else if (c >= 0xd800 && c < 0xe000) n += 5;
      }
    };
    const stack = [v];
    while (stack.length) {
      const x = stack.pop();
      if (typeof x === "string") text(x);
      else if (typeof x === "number") n += Number.isFinite(x) ? String(x).length : 4;
      else if (x && typeof x === "object") {
        const tag = Object.prototype.toString.call(x);
        if (Array.isArray(x)) {
          n += 2 + x.length;
          if (n > limit) return false;
          for (let i = 0; i < x.length; i++) stack.push(x[i]);
        } else if (tag === "[object Date]") n += 30; // an ISO date in quotes, or null
        else if (tag === "[object Number]") n += 24; // a boxed number: at most 24 digits and signs
        else if (tag === "[object Boolean]") n += 5; // a boxed boolean, written as true or false
        else if (tag === "[object String]") text(String.prototype.valueOf.call(x)); // a boxed string, written as the string
        else {
          const keys = Object.keys(x);
          n += 2;
          for (const k of keys) {
            text(k);
            n += 2;
            if (n > limit) return false;
            stack.push(x[k]);
          }
        }
      } else n += x === false ? 5 : 4; // true, null, or what JSON writes as null or leaves out
      if (n > limit) return false;
    }
    return true;
  }

  let probes = 0;

  Object.defineProperty(globalThis, KEY, {
    value: Object.freeze({
      // request sends one request envelope (JSON text). A retry with the
      // same id waits alongside the first attempt: one answer serves both.
      // The first invoke in a document that has not answered yet waits for
      // a describe to be answered, so it is not posted into the void.
      async request(text, app, timeoutMs, maxBytes, origin) {
        // The facade is bound to one origin: a document of another one
        // (the tab navigated away) gets nothing, not even a describe.
        if (origin && location.origin !== origin) throw new Error(OTHER_ORIGIN + location.origin);
        maxReply = Math.max(maxReply, maxBytes);
        const envelope = JSON.parse(text);
        if (!answered && envelope.method !== "describe") {
          const deadline = Date.now() + timeoutMs;
          probes += 1;
          await send({ protocol: envelope.protocol, id: `pling-mcp-ready-${probes}-${Date.now().toString(36)}`, method: "describe", input: { limit: 0 } }, app, timeoutMs, maxBytes);
          timeoutMs = Math.max(1, deadline - Date.now());
        }
        return send(envelope, app, timeoutMs, maxBytes);
      },
    }),
  });
  return true;
})();
