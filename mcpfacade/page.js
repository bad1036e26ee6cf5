// The facade's caller inside the page. It runs in an isolated world of the
// page's main frame, as an extension's content script does: it shares the
// DOM and the window's message events with the page, not the page's
// JavaScript. What it posts reaches the page's surface as a message from the
// page's own window and origin, which is what the surface's listener
// accepts. Evaluated once per world; the result is the request function.
(() => {
  const KEY = "__plingMCPFacade";
  if (globalThis[KEY]) return true;
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
    let text;
    try {
      text = JSON.stringify(d);
    } catch (err) {
      text = null;
    }
    for (const w of list) w(text);
  });

  // send posts envelope and resolves with the response message that answers
  // its id, as JSON text. While no surface has answered in this document,
  // a describe is posted again every RESEND_MS with the same id: describe
  // changes nothing and is not replay-guarded, and the first answer wins.
  // An invoke is posted exactly once.
  function send(envelope, app, timeoutMs) {
    const id = envelope.id;
    const msg = { channel: CHANNEL, kind: "request", envelope };
    if (app) msg.app = app;
    return new Promise((resolve, reject) => {
      let resend = 0;
      const done = (reply) => {
        clearTimeout(timer);
        clearInterval(resend);
        if (reply === null) reject(new Error("the response could not be read"));
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

  let probes = 0;

  Object.defineProperty(globalThis, KEY, {
    value: Object.freeze({
      // request sends one request envelope (JSON text). A retry with the
      // same id waits alongside the first attempt: one answer serves both.
      // The first invoke in a document that has not answered yet waits for
      // a describe to be answered, so it is not posted into the void.
      async request(text, app, timeoutMs) {
        const envelope = JSON.parse(text);
        if (!answered && envelope.method !== "describe") {
          const deadline = Date.now() + timeoutMs;
          probes += 1;
          await send({ protocol: envelope.protocol, id: `pling-mcp-ready-${probes}-${Date.now().toString(36)}`, method: "describe", input: { limit: 0 } }, app, timeoutMs);
          timeoutMs = Math.max(1, deadline - Date.now());
        }
        return send(envelope, app, timeoutMs);
      },
    }),
  });
  return true;
})();
