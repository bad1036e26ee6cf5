// Two surfaces on one page, for the extension's browser tests.
import { loadSurface } from "/pling/pling-surface.js";

const { createSurface, defineRegistry } = await loadSurface();
const cards = ["C-1", "C-2", "C-3"];
const state = { deskCalls: 0 };

const board = createSurface({
  app: "board",
  registry: defineRegistry({
    actions: [
      {
        id: "pin@card",
        description: "Pin one card to the top of the board",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        effect: "write",
        approval: "none",
        record: { kind: "card", param: "card", total: cards.length },
      },
    ],
    records: cards.map((id) => ({ id, kind: "card", fields: { title: `Card ${id}` } })),
    state: () => ({ pinned: document.querySelector('[data-testid="pinned"]').textContent }),
  }),
  execute: (id) => {
    const card = id.slice("pin@card:".length);
    document.querySelector('[data-testid="pinned"]').textContent = card;
    return { title: `${card} pinned` };
  },
});
board.listen();

const desk = createSurface({
  app: "desk",
  registry: defineRegistry({
    actions: [
      {
        id: "desk.wait",
        description: "Start a job that does not finish while the page is open",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        effect: "write",
        approval: "none",
      },
    ],
  }),
  execute: () => {
    state.deskCalls += 1;
    document.querySelector('[data-testid="desk-calls"]').textContent = String(state.deskCalls);
    return new Promise(() => {});
  },
  executeTimeoutMs: 120000,
});
// Its private channel is for callers that prove who they are.
desk.listen({ authenticate: ({ credential }) => (credential === "only-the-page-knows" ? { agentId: "a", sessionId: "s", userId: "u", expiresAt: Date.now() + 60000, scope: ["desk.wait"] } : null) });

window.__two = Object.freeze({ ready: true, deskCalls: () => state.deskCalls });
