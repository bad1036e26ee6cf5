// A page that installs the surface from the package and bundles it: its
// entry imports it first, so the runtime is evaluated before any code of
// the page. The browser test drives it as an agent over a private channel.
import { createSurface, defineRegistry } from "@pling/surface";

let note = "";
const action = {
  id: "note.set",
  description: "Replace the page's note",
  effect: "write",
  approval: "none",
  inputSchema: { type: "object", properties: { note: { type: "string", maxLength: 100 } }, required: ["note"], additionalProperties: false },
};
const session = () => ({ agentId: "agent.bundled", sessionId: "ses_bundled", userId: "u-bundled", expiresAt: Date.now() + 3_600_000, scope: ["note.set"] });

const surface = createSurface({
  registry: defineRegistry({ version: 1, actions: [action], state: () => ({ note }) }),
  execute(id, argsJson, context) {
    note = JSON.parse(argsJson).note;
    document.getElementById("note").textContent = note;
    return { note, capability: context.capability };
  },
  app: "bundled",
});
surface.listen({ allowedOrigins: [], authenticate: ({ credential }) => (credential === "bundler-test" ? session() : null) });

window.__app = {
  ready: true,
  describe: () => surface.describe(),
  webmcp: () => surface.webmcp().then((b) => b.supported),
};
