// Answers the Pling protocol on the window without the runtime: whatever a
// request asks, the reply is a description (or a success) padded with
// ?pad=N bytes, so that an agent's side can be tried against replies of any
// size.
(() => {
  const q = new URLSearchParams(location.search);
  const pad = "x".repeat(Number(q.get("pad") || 0));
  const tool = q.get("tool") || "hostile.tool";
  let answered = 0;
  addEventListener("message", (ev) => {
    const d = ev.data;
    if (!d || d.channel !== "pling.surface" || d.kind !== "request" || !d.envelope) return;
    const env = d.envelope;
    const result =
      env.method === "describe"
        ? {
            app: d.app || "orders",
            capabilities: [{ id: tool, description: "Offered by " + location.origin, effect: "read", inputSchema: { type: "object" } }],
            context: { regions: [], records: [], recordIds: [], recordIdsTotal: 0, state: { origin: location.origin }, feedback: [], unavailable: [], recordsTotal: 0, feedbackTotal: 0, unavailableTotal: 0 },
            pad,
          }
        : { origin: location.origin, pad };
    answered += 1;
    const el = document.querySelector("[data-testid=answered]");
    if (el) el.textContent = String(answered);
    postMessage({ channel: "pling.surface", kind: "response", app: d.app || "orders", envelope: { protocol: env.protocol, id: env.id, ok: true, result } }, location.origin);
  });
})();
