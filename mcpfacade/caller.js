// pling-mcp's caller inside the page: the client library's request (its
// classic build, pling-client.classic.js, is evaluated just before this in
// the same world) with what the facade adds: the origin check, the bound on
// the encoded reply, and a describe before a document's first invoke. It
// runs in an isolated world of the page's main frame, as an extension's
// content script does: it shares the DOM and the window's message events
// with the page, not the page's JavaScript. What it posts reaches the
// page's surface as a message from the page's own window and origin, which
// is what the surface's listener accepts. Evaluated once per world.
(() => {
  const KEY = "__plingMCPFacade";
  // Own property only: an element with this id is a named property of the
  // window, in this world too, and would stand for the facade.
  if (Object.prototype.hasOwnProperty.call(globalThis, KEY)) return true;
  const { request, ClientErrorCode } = globalThis.PlingClient;
  // Markers the facade reads in a rejection: the page answered, and the
  // answer was refused (so the request is not sent again).
  const TOO_LARGE = "pling-mcp: reply larger than the bound";
  const UNREADABLE = "pling-mcp: reply not readable as JSON";
  const OTHER_ORIGIN = "pling-mcp: the page is on another origin: ";
  // Whether a surface has answered in this document yet. Until one has, a
  // message may be posted before the page's surface listens, and is lost:
  // a describe is posted again until answered, an invoke waits for one.
  let answered = false;
  let probes = 0;

  // send resolves with the message that answers envelope, as JSON text of
  // at most maxBytes bytes of UTF-8: the library refuses an answer over the
  // bound before anything encodes it, and the text is measured after.
  async function send(envelope, app, timeoutMs, maxBytes) {
    let reply;
    try {
      reply = await request(envelope, { app: app || undefined, timeoutMs, replyBytes: maxBytes, repost: !answered && envelope.method === "describe" });
    } catch (err) {
      if (!err || err.code !== ClientErrorCode.REPLY_REFUSED) throw err;
      answered = true;
      throw new Error(err.bound === "replyBytes" ? TOO_LARGE : UNREADABLE);
    }
    answered = true;
    const text = JSON.stringify(reply);
    if (utf8Length(text, maxBytes) > maxBytes) throw new Error(TOO_LARGE);
    return text;
  }

  // utf8Length is the UTF-8 length of s, counted only as far as past limit.
  function utf8Length(s, limit) {
    if (s.length > limit || s.length * 3 <= limit) return s.length;
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

  Object.defineProperty(globalThis, KEY, {
    value: Object.freeze({
      // request sends one request envelope (JSON text). A retry with the
      // same id is posted again and waits alongside the first attempt: one
      // answer serves both. The first invoke in a document that has not
      // answered yet waits for a describe to be answered, so it is not
      // posted into the void.
      async request(text, app, timeoutMs, maxBytes, origin) {
        // The facade is bound to one origin: a document of another one
        // (the tab navigated away) gets nothing, not even a describe.
        if (origin && location.origin !== origin) throw new Error(OTHER_ORIGIN + location.origin);
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
