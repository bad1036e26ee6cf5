// A React app with the surface: the provider makes it once, and each
// component registers the action and the records it renders. The browser
// test mounts and unmounts <Exporter> and invokes <Order>'s action as an
// agent would.
import { SurfaceProvider, useAction, useRecords } from "@pling/surface/react";
import type { SurfaceSession } from "@pling/surface";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

const session = (): SurfaceSession => ({ agentId: "agent.react", sessionId: "ses_react", userId: "u-react", expiresAt: Date.now() + 3_600_000, scope: ["orders.note", "orders.export"] });

function Order({ id }: { id: string }) {
  const [note, setNote] = useState("");
  const [edits, setEdits] = useState(0);
  useRecords([{ id, kind: "order", fields: { note } }]);
  useAction({
    id: "orders.note",
    description: "Replace the note of the order on screen",
    effect: "write",
    approval: "none",
    inputSchema: { type: "object", properties: { note: { type: "string", maxLength: 100 } }, required: ["note"], additionalProperties: false },
  }, (input) => {
    setNote(input.note); // input is { note: string }: the handler is typed by the schema
    setEdits((n) => n + 1);
    return { note: input.note, edits: edits + 1 };
  });
  return <p data-testid="note" data-edits={edits}>{note}</p>;
}

function Exporter() {
  const [runs, setRuns] = useState(0);
  useAction({
    id: "orders.export",
    description: "Export the orders on screen",
    effect: "read",
    approval: "none",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
  }, () => {
    setRuns((n) => n + 1);
    return { exported: true };
  });
  return <p data-testid="exporter">{runs}</p>;
}

function App() {
  const [exporter, setExporter] = useState(false);
  useEffect(() => {
    (window as unknown as { __app: unknown }).__app = { ready: true, exporter: (on: boolean) => setExporter(on) };
  }, []);
  return (
    <SurfaceProvider app="react" listen={{ allowedOrigins: [], authenticate: ({ credential }) => (credential === "bundler-test" ? session() : null) }}>
      <Order id="SO-1" />
      {exporter && <Exporter />}
    </SurfaceProvider>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
