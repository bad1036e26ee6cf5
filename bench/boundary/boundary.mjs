// Times each way across the Go/JS boundary in Node, medians of batches.
//   node boundary.mjs boundary.wasm
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const goroot = execFileSync("go", ["env", "GOROOT"]).toString().trim();
await import(path.join(goroot, "lib", "wasm", "wasm_exec.js"));

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
  "//go:wasmexport call": () => e.boundary_export(1),
  "//go:wasmexport call that calls a //go:wasmimport function": () => e.boundary_export_import(7),
  "//go:wasmexport park and resume a goroutine": () => (e.boundary_start(1), e.boundary_settle(2)),
};
const batch = 2000;
for (const [name, f] of Object.entries(cases)) {
  for (let i = 0; i < batch; i++) f();
  const per = [];
  for (let r = 0; r < 15; r++) {
    const t = performance.now();
    for (let i = 0; i < batch; i++) f();
    per.push(((performance.now() - t) * 1000) / batch);
  }
  per.sort((a, b) => a - b);
  console.log(`${per[7].toFixed(3).padStart(8)} µs  ${name}`);
}
process.exit(0);
