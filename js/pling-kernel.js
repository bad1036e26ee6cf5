// pling-kernel.js: the kernel's host, loaded when the kernel starts: the Go
// glue (pling-glue.js) and the host functions and entries the kernel calls
// and is called through (host.js).
//
// The first script (kernel.js) imports it when a surface is first called,
// while surface.wasm downloads, and hands it the compiled module. Everything
// it evaluates takes its built-ins from what the first script captured
// (bundled, its imports of the first script's modules name
// pling-surface.js), so a script that ran in between has nothing here to
// hook. A host that runs surface.wasm on Go's wasm_exec.js (Node, a test
// harness) imports fromRuntime from here.

import { bind } from "./api.js";
import { SURFACE_PROTOCOL } from "./constants.js";
import { ErrorCtor, WA_INSTANCE, freeze } from "./intrinsics.js";
import { isRuntime, kernelOf, kernelOfGo, makeEntries } from "./host.js";
import { goGlue } from "./pling-glue.js";
import { own } from "./values.js";

/**
 * Starts a compiled surface.wasm on the glue and returns its kernel
 * ({ runtime, entries, host }); throws when it does not start.
 */
export function startModule(module) {
  let runtime;
  const glue = goGlue({
    ready: (rt) => {
      if (runtime === undefined) runtime = rt;
    },
    exit: undefined,
  });
  const instance = new WA_INSTANCE(module, glue.importObject);
  const exports = glue.run(instance); // main runs until it waits, publishing its runtime on the way
  if (glue.exited()) throw new ErrorCtor("the surface runtime exited");
  if (!isRuntime(runtime)) throw new ErrorCtor("the surface runtime did not start");
  const entries = makeEntries({ __proto__: null, exports, resume: glue.resume, exited: glue.exited }, runtime, undefined);
  if (entries === undefined) throw new ErrorCtor("the surface runtime refused its entries");
  return kernelOf(runtime, entries);
}

/**
 * Binds the API to a runtime object that was started some other way (the
 * one wasm/main.go publishes). createSurface and loadSurface of
 * pling-surface.js are the usual entry points. options.go, the
 * wasm_exec.js Go object that runs the module, is required: every call
 * enters the kernel through the module's exports.
 */
export function fromRuntime(runtime, options = {}) {
  if (!isRuntime(runtime)) throw new TypeError(`fromRuntime: not a ${SURFACE_PROTOCOL} runtime`);
  if (options === null || typeof options !== "object") throw new TypeError("fromRuntime options must be an object");
  const entries = makeEntries(kernelOfGo(options.go), runtime, options.secret);
  if (entries === undefined) throw new TypeError("fromRuntime: options.go must be the Go object that runs this runtime");
  const kernel = kernelOf(runtime, entries);
  const source = freeze({ __proto__: null, up: () => kernel, start: (_url, done) => done(kernel, undefined), prefetch: () => {}, timings: () => NO_TIMINGS });
  return bind(source, own(options, "stats") === true);
}
const NO_TIMINGS = freeze({ __proto__: null, fetchMs: 0, compileMs: 0, startMs: 0, streamed: false });
