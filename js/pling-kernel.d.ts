// pling-kernel.js: the kernel's host, loaded by the first script when the
// kernel starts. A host that runs surface.wasm on Go's wasm_exec.js (Node,
// a test harness) binds the API with fromRuntime.

import type { FromRuntimeOptions, SurfaceAPI, SurfaceRuntime } from "./pling-surface.js";

/** Binds the API to a runtime started some other way; every call enters through the module's exports. */
export declare function fromRuntime(runtime: SurfaceRuntime, options: FromRuntimeOptions): SurfaceAPI;

/** Starts a compiled surface.wasm on the runtime's own glue: what the first script does on first contact. Throws when it does not start. */
export declare function startModule(module: WebAssembly.Module): object;
