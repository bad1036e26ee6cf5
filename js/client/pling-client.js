// pling-client.js: the caller's side of pling.surface/0.1. It lets a browser
// extension's content script (or any script running in the page's window)
// describe the page's agent surface and invoke its capabilities.
//
//   import { connect } from "./pling-client.js";
//   const client = await connect({ app: "orders" }); // or { app, transport: "port" }
//   const d = await client.describe();
//   const out = await client.invoke("update_note@order", { note: "Call Friday" }, { record: "SO-1002" });
//   if (out.kind === "success") ... else if (out.kind === "business-error") ... else /* protocol-error */ ...
//
// The entry of the library: the modules beside it hold the parts, one job
// each. No dependencies, no import.meta, only `import { ... } from "./x.js"`
// between them: a classic-script build (globalThis.PlingClient) is made of
// them by classic.mjs beside this file. See README.md beside this file.

import { SURFACE_PROTOCOL } from "./bounds.js";
import { ClientErrorCode, OutcomeCode, SurfaceClientError } from "./errors.js";
import { newRequestId } from "./checks.js";
import { classify } from "./classify.js";
import { findCapability, recordParam, isReferenceable } from "./description.js";
import { discover, request } from "./window-transport.js";
import { connect } from "./surface-client.js";

export {
  SURFACE_PROTOCOL,
  ClientErrorCode,
  OutcomeCode,
  SurfaceClientError,
  connect,
  discover,
  request,
  classify,
  findCapability,
  recordParam,
  isReferenceable,
  newRequestId,
};
