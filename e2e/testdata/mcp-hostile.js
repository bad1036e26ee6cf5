// Answers the Pling protocol on the window without the runtime: whatever a
// request asks, the reply is a description (or a success) padded with
// ?pad=N bytes, so that an agent's side can be tried against replies of any
// size. ?wide=N adds N characters U+0080, which DevTools writes as six bytes
// each (\u0080).
//
// ?console=N&size=B: on the first request, before answering, the page logs
// a B-byte string to its console N times and throws N uncaught errors with
// a B-byte message, which DevTools carries to every attached client
// (Runtime.consoleAPICalled, Runtime.exceptionThrown). The context's state
// says how many bytes it sent that way ("logged").
//
// ?mirror=attrs|comments|frames&n=N&size=B: on the first request, before
// answering, the page fills what a DevTools client mirrors: N attributes of
// B characters on <html>, N comments of B characters, or N same-origin
// iframes named with B characters, each removed once it loaded.
// ?tools=N offers N capabilities; ?members=N gives the one capability a
// schema of N properties.
(() => {
  const q = new URLSearchParams(location.search);
  const mirror = q.get("mirror") || "";
  const mirrorN = Number(q.get("n") || 0);
  const tools = Number(q.get("tools") || 0);
  const members = Number(q.get("members") || 0);
  const fill = async () => {
    const big = "y".repeat(Number(q.get("size") || 0));
    if (mirror === "attrs") for (let i = 0; i < mirrorN; i++) document.documentElement.setAttribute(`data-a${i}`, big + i);
    if (mirror === "comments") for (let i = 0; i < mirrorN; i++) document.append(document.createComment(big + i));
    if (mirror === "frames") {
      for (let i = 0; i < mirrorN; i++) {
        const f = document.createElement("iframe");
        f.name = big + i;
        f.srcdoc = "<p>frame</p>";
        const loaded = new Promise((r) => f.addEventListener("load", r, { once: true }));
        document.body.append(f);
        await loaded;
        f.remove();
      }
    }
  };
  let filled;
  let done = false;
  const capabilities = (tool) => {
    if (tools > 0) return Array.from({ length: tools }, (_, i) => ({ id: `t.n${i}`, effect: "read", inputSchema: { type: "object" } }));
    if (members > 0) {
      const properties = {};
      for (let i = 0; i < members; i++) properties[i] = {};
      return [{ id: tool, effect: "read", inputSchema: { type: "object", properties } }];
    }
    return [{ id: tool, description: "Offered by " + location.origin, effect: "read", inputSchema: { type: "object" } }];
  };
  const pad = "x".repeat(Number(q.get("pad") || 0)) + "\u0080".repeat(Number(q.get("wide") || 0));
  const tool = q.get("tool") || "hostile.tool";
  const flood = Number(q.get("console") || 0);
  const size = Number(q.get("size") || 0);
  let answered = 0;
  let logged = 0;
  const spam = () => {
    const big = "x".repeat(size);
    for (let i = 0; i < flood; i++) {
      console.log(big);
      logged += big.length;
      try {
        throw new Error(big);
      } catch (e) {
        // Reported as uncaught, the way a throwing handler is.
        reportError(e);
      }
      logged += big.length;
    }
  };
  addEventListener("message", (ev) => {
    const d = ev.data;
    if (!d || d.channel !== "pling.surface" || d.kind !== "request" || !d.envelope) return;
    const env = d.envelope;
    if (answered === 0 && flood > 0) spam();
    if (mirror && filled === undefined) filled = fill().then(() => { done = true; });
    const result =
      env.method === "describe"
        ? {
            app: d.app || "orders",
            capabilities: capabilities(tool),
            context: { regions: [], records: [], recordIds: [], recordIdsTotal: 0, state: { origin: location.origin, logged, filled: done }, feedback: [], unavailable: [], recordsTotal: 0, feedbackTotal: 0, unavailableTotal: 0 },
            pad,
          }
        : { origin: location.origin, pad };
    answered += 1;
    const el = document.querySelector("[data-testid=answered]");
    if (el) el.textContent = String(answered);
    postMessage({ channel: "pling.surface", kind: "response", app: d.app || "orders", envelope: { protocol: env.protocol, id: env.id, ok: true, result } }, location.origin);
  });
})();
