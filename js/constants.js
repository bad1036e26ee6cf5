// constants.js: the protocol's names and the runtime's limits and defaults.

import { freeze } from "./intrinsics.js";

export const SURFACE_PROTOCOL = "pling.surface/0.1";
export const DEFAULT_SURFACE_RECORD_LIMIT = 8;
export const MAX_SURFACE_RECORD_LIMIT = 100;

export const CHANNEL = "pling.surface";

export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
export const DEFAULT_EXECUTE_TIMEOUT_MS = 30000;
export const MAX_DEPTH = 64; // the kernel allows 32; deeper input is refused here without recursing further
export const MAX_CHANNELS = 64; // private channels open at once per listen()
export const DEFAULT_CHANNELS_PER_ORIGIN = 16;
export const DEFAULT_CHANNEL_IDLE_MS = 10 * 60 * 1000;
export const AUTHENTICATE_TIMEOUT_MS = 10000;
export const MAX_ID_BYTES = 256; // surface.MaxIDBytes
// The kernel's request and response limits in the browser (surface.DefaultLimits).
export const KERNEL_MAX_REQUEST_BYTES = 64 * 1024;
export const KERNEL_MAX_RESPONSE_BYTES = 1 << 20;
// Calls a surface holds while its kernel starts; more are refused at once.
export const MAX_HELD = 256;

export const SESSION_CODES = freeze(["SESSION_REQUIRED", "SESSION_INVALID", "SESSION_EXPIRED", "SESSION_REVOKED"]);
export const OPTION_NAMES = freeze([
  "registry", "execute", "app", "expose", "session", "recordLimit", "maxRecordLimit",
  "rateLimit", "replay", "onAudit", "onAuditError", "executeTimeoutMs", "shared",
  "wasmURL", "prefetch", "start",
]);
export const LISTEN_OPTION_NAMES = freeze(["allowedOrigins", "authenticate", "maxMessageBytes", "channelIdleMs", "maxChannelsPerOrigin"]);
export const REQUEST_MEMBERS = freeze(["channel", "kind", "app", "envelope"]);
export const CONNECT_MEMBERS = freeze(["channel", "kind", "app", "credential"]);
