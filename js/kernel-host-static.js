// kernel-host-static.js: kernel-host.js as a package build has it: the
// kernel's host is part of the first script, evaluated with it (see
// kernel-host.js for why a bundler's chunk must not bring it).

import { freeze } from "./intrinsics.js";
import * as mod from "./pling-kernel.js";

const loaded = freeze({ __proto__: null, mod, error: undefined });

/** Calls done({ mod }) with the host's namespace, at once. */
export function loadHost(done) {
  done(loaded);
}
