// kernel-host.js: how the first script reaches the kernel's host
// (pling-kernel.js): imported when the kernel first starts, beside the
// download of surface.wasm, so that a visitor no agent speaks to never
// fetches it.
//
// A package build bundles kernel-host-static.js in its place, which holds
// the host in the first script (see internal/sitebuild): a page's bundler
// would load a split chunk through its own loader, whose Promises a script
// that ran later can answer with a host of its own making. Here the import
// is the browser's, resolved with the module's namespace, which has no
// then to look up.

import { importKernel } from "./assets.js";
import { freeze } from "./intrinsics.js";
import { whenSettled } from "./values.js";

// { mod } once imported. A failed import is not kept, so the next start
// asks again.
let loaded;

/** Calls done({ mod }) with the host's namespace, or done({ error }). */
export function loadHost(done) {
  if (loaded !== undefined) {
    done(loaded);
    return;
  }
  try {
    whenSettled(importKernel(), (mod) => {
      loaded = freeze({ __proto__: null, mod, error: undefined });
      done(loaded);
    }, (e) => done(freeze({ __proto__: null, mod: undefined, error: e })));
  } catch (e) {
    done(freeze({ __proto__: null, mod: undefined, error: e }));
  }
}
