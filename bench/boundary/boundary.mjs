// Times each way across the Go/JS boundary in Node, medians of batches.
//   node boundary.mjs boundary.wasm
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const goroot = execFileSync("go", ["env", "GOROOT"]).toString().trim();
await import(path.join(goroot, "lib", "wasm", "wasm_exec.js"));

// The JS halves of the text host calls: a view answer of the size the
// bench page's registry gives for one record.
const viewText = JSON.stringify({ route: "/orders?status=all", state: { filter: "all", page: 1, rows: 48 },
  regions: [{ id: "orders", label: "Orders", description: "Open orders of this shop" }, { id: "toolbar", label: "Toolbar" }],
  records: [{ id: "SO-1002", kind: "order", fields: { customer: "Brightwater Dental 1", amount: 79.18, status: "approved", note: "Call before delivery (1)" } }],
  recordIds: [], recordIdsTotal: 48, recordsTotal: 48, feedback: [], unavailable: [] });
const io = new Uint8Array(64 * 1024);
const decoder = new TextDecoder();
const encoder = new TextEncoder();
globalThis.boundaryIO = io;
globalThis.boundaryText = (q) => (q.length > 0 ? viewText : "");
globalThis.boundaryLane = (n) => (decoder.decode(io.subarray(0, n)).length > 0 ? encoder.encodeInto(viewText, io).written : 0);

const go = new globalThis.Go();
let memory;
go.importObject.boundary = { echo: (p, n) => new Uint8Array(memory.buffer, p, n)[0] };
const { instance } = await WebAssembly.instantiate(fs.readFileSync(process.argv[2]), go.importObject);
memory = instance.exports.mem;
const ready = new Promise((resolve) => (globalThis.boundaryReady = resolve));
go.run(instance);
await ready;

const e = instance.exports;
const jsFn = () => 1;
const cases = {
  "js.FuncOf call into Go": () => globalThis.boundaryFuncOf(),
  "js.FuncOf call that calls a JS function": () => globalThis.boundaryFuncOfCallsJS(jsFn),
  "js.FuncOf call that hands a goroutine work": () => globalThis.boundaryFuncOfHandOff(1),
  "//go:wasmexport call that hands a goroutine work, then _resume()": () => (e.boundary_handoff(1), go._resume()),
  "//go:wasmexport call": () => e.boundary_export(1),
  "//go:wasmexport call that calls a //go:wasmimport function": () => e.boundary_export_import(7),
  "//go:wasmexport park and resume a goroutine": () => (e.boundary_start(1), e.boundary_settle(2)),
  // These enter Go once and make 10 host calls; the figure is per host call.
  "host call from Go, a text each way as JS strings": [() => e.boundary_text_strings(10), 10],
  "host call from Go, a text each way through a shared Uint8Array": [() => e.boundary_text_lane(10), 10],
};
const batch = 500;
for (const [name, c] of Object.entries(cases)) {
  const [f, calls] = typeof c === "function" ? [c, 1] : c;
  for (let i = 0; i < batch; i++) f();
  const per = [];
  for (let r = 0; r < 15; r++) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) f();
    per.push(((performance.now() - t) * 1000) / batch / calls);
  }
  per.sort((a, b) => a - b);
  console.log(`${per[7].toFixed(3).padStart(8)} µs  ${name}`);
}
process.exit(0);
