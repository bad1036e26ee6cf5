// Runs a GOOS=js test binary in Node as $GOROOT/lib/wasm/wasm_exec_node.js
// does, and also publishes the Go object as globalThis.__plingTestGo, so
// that the JS tests can bind the API to the module's entry exports
// (fromRuntime(runtime, { go })) the way loadSurface does in a page.
//
//   go test -exec="node --stack-size=8192 hostbridge/testdata/exec_node.js" ...
"use strict";

const { execFileSync } = require("child_process");
const path = require("path");

if (process.argv.length < 3) {
  console.error("usage: exec_node.js [wasm binary] [arguments]");
  process.exit(1);
}

globalThis.require = require;
globalThis.fs = require("fs");
globalThis.path = path;
globalThis.TextEncoder = require("util").TextEncoder;
globalThis.TextDecoder = require("util").TextDecoder;
globalThis.performance ??= require("perf_hooks").performance;
globalThis.crypto ??= require("crypto");

const goroot = process.env.GOROOT || execFileSync("go", ["env", "GOROOT"]).toString().trim();
require(path.join(goroot, "lib", "wasm", "wasm_exec.js"));

const go = new Go();
go.argv = process.argv.slice(2);
go.env = Object.assign({ TMPDIR: require("os").tmpdir() }, process.env);
go.exit = process.exit;
globalThis.__plingTestGo = go;
WebAssembly.instantiate(fs.readFileSync(process.argv[2]), go.importObject).then((result) => {
  process.on("exit", (code) => {
    if (code === 0 && !go.exited) {
      // Node exits when nothing is pending: a deadlock. Make Go say so.
      go._pendingEvent = { id: 0 };
      go._resume();
    }
  });
  return go.run(result.instance);
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
