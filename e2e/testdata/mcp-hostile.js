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
(() => {
  const q = new URLSearchParams(location.search);
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
    const result =
      env.method === "describe"
        ? {
            app: d.app || "orders",
            capabilities: [{ id: tool, description: "Offered by " + location.origin, effect: "read", inputSchema: { type: "object" } }],
            context: { regions: [], records: [], recordIds: [], recordIdsTotal: 0, state: { origin: location.origin, logged }, feedback: [], unavailable: [], recordsTotal: 0, feedbackTotal: 0, unavailableTotal: 0 },
            pad,
          }
        : { origin: location.origin, pad };
    answered += 1;
    const el = document.querySelector("[data-testid=answered]");
    if (el) el.textContent = String(answered);
    postMessage({ channel: "pling.surface", kind: "response", app: d.app || "orders", envelope: { protocol: env.protocol, id: env.id, ok: true, result } }, location.origin);
  });
})();
