// Type declarations for pling-surface.js (pling.surface/0.1). The
// protocol's messages are declared once, in pling-protocol.d.ts.

import type {
  Capability,
  Description,
  DescribeInput,
  DescribeRequest,
  ErrorCode,
  InvokeRequest,
  Observation,
  ProtocolFailure,
  RecordView,
  Violation,
} from "./pling-protocol.js";

export declare const SURFACE_PROTOCOL: "pling.surface/0.1";
export declare const DEFAULT_SURFACE_RECORD_LIMIT: 8;
export declare const MAX_SURFACE_RECORD_LIMIT: 100;

// ---------------------------------------------------------------------------
// Registry contract (what a page implements; defineRegistry builds one).

export type Effect = "read" | "write" | "destructive";
export type Approval = "none" | "ask" | "always";

/** Makes an action a folded per-record template; its id is then `name@kind`. */
export interface RecordTemplate {
  kind: string;
  /** Input member that names the record. Default "record". */
  param?: string;
  /** Records the template can target now. */
  total: number;
  /** How many of them are out of view. */
  offscreen?: number;
}

export interface Action {
  id: string;
  description?: string;
  /** JSON Schema (draft 2020-12) of the input, self-contained (no remote $ref). */
  inputSchema?: object;
  effect?: Effect;
  approval?: Approval;
  fidelity?: string;
  source?: string;
  scopePath?: string[];
  handoff?: string;
  flowSteps?: string[];
  offscreen?: boolean;
  record?: RecordTemplate;
}

export interface SurfaceRecord {
  id: string;
  kind?: string;
  fields?: Record<string, unknown>;
  offscreen?: boolean;
  /**
   * Template id -> concrete action id the executor runs for this record.
   * Omitted: every template of the record's kind applies as "<template>:<id>".
   */
  actions?: Record<string, string>;
}

export interface Region {
  id: string;
  label?: string;
  description?: string;
}

export interface Feedback {
  level?: string;
  message: string;
  /** Id of the record the message is about. */
  record?: string;
}

export interface Unavailable {
  id: string;
  reason?: string;
}

/** What the runtime asks the registry for on one read. */
export interface ViewQuery {
  readonly offset: number;
  /** 0 asks for no records at all. */
  readonly limit: number;
  /** When set, exactly these records (offset and limit are then 0). */
  readonly ids?: readonly string[];
  /** recordIds may stop here. */
  readonly maxRecordIds: number;
}

export interface View {
  route?: string;
  regions?: Region[];
  records?: SurfaceRecord[];
  recordIds?: string[];
  recordIdsTotal?: number;
  recordsTotal?: number;
  state?: Record<string, unknown>;
  feedback?: Feedback[];
  unavailable?: Unavailable[];
}

export interface Registry {
  /**
   * Optional cheap change signal: a number or string that changes whenever
   * the actions change. While it is unchanged the runtime reuses the
   * actions it parsed last time.
   */
  version?(): number | string;
  actions(): Action[];
  /** Page-owned: encoded with JSON.stringify by the runtime. */
  view(query: ViewQuery): View | Promise<View>;
}

/** A record source that answers by window, so a 100,000-row table costs its window. */
export interface LazyRecords {
  count(): number;
  slice(offset: number, limit: number): SurfaceRecord[];
  get(id: string): SurfaceRecord | undefined;
  /** The first `max` record ids; without it the runtime uses slice(0, max). */
  ids?(max: number): string[];
}

type ValueOrGetter<T> = T | (() => T);

export interface RegistrySpec {
  actions?: ValueOrGetter<Action[]>;
  records?: ValueOrGetter<SurfaceRecord[] | LazyRecords>;
  route?: ValueOrGetter<string | undefined>;
  regions?: ValueOrGetter<Region[] | undefined>;
  state?: ValueOrGetter<Record<string, unknown> | undefined>;
  feedback?: ValueOrGetter<Feedback[] | undefined>;
  unavailable?: ValueOrGetter<Unavailable[] | undefined>;
  version?: ValueOrGetter<number | string>;
}

export declare function defineRegistry(spec: RegistrySpec): Registry;

// ---------------------------------------------------------------------------
// Sessions, services, audit.

export interface SurfaceSession {
  agentId: string;
  sessionId: string;
  userId: string;
  /** Milliseconds since the epoch (a Date is accepted too). */
  expiresAt: number | Date;
  /** Capability ids (folded template ids included) this session may see and call. Required; [] allows nothing. */
  scope: string[];
  delegationId?: string;
  /** Milliseconds since the epoch; revoked from then on. */
  revokedAt?: number | Date;
}

export type SessionSource =
  | SurfaceSession
  | null
  | (() => SurfaceSession | null | Promise<SurfaceSession | null>);

export interface RateLimitDecision {
  allowed: boolean;
  /** Required (> 0) when allowed is false; absent or 0 when allowed. */
  retryAfterMs?: number;
}

export interface SurfaceRateLimiter {
  allow(key: string, nowMs: number): RateLimitDecision | Promise<RateLimitDecision>;
}

export interface SurfaceReplayGuard {
  claim(sessionId: string, requestId: string, windowMs: number): "claimed" | "replayed" | Promise<"claimed" | "replayed">;
}

export interface SurfaceAuditEvent {
  requestId: string;
  method: string;
  capability?: string;
  recordId?: string;
  sessionId?: string;
  agentId?: string;
  userId?: string;
  delegationId?: string;
  outcome: "ok" | "business_error" | "protocol_error";
  /** Protocol error code when outcome is "protocol_error". */
  code?: SurfaceErrorCode;
  /** The result's approval status when it reported one; "pending" means the invoke completed but is not done. */
  approval?: "pending" | "granted" | "denied" | "unknown";
  durationMs: number;
  /** RFC 3339 time the request finished. */
  time: string;
}

/** What the executor receives as its third argument. Ids only, never credentials. */
export interface CallContext {
  readonly requestId: string;
  readonly capability: string;
  readonly record?: string;
  readonly sessionId?: string;
  readonly agentId?: string;
  readonly userId?: string;
  readonly delegationId?: string;
}

/** Any JSON value; a business failure is `{ error: { code, message } }`. */
export type ExecResult = unknown;

export interface SurfaceOptions {
  registry: Registry;
  /** The page's existing executor. argsJson is the business input as JSON text (numbers exact). */
  execute(id: string, argsJson: string, context: CallContext): ExecResult | Promise<ExecResult>;
  app?: string;
  /** Page-level upper bound. A function is asked once per action id whenever the registry's actions are re-read; only `true` exposes. Default: everything. */
  expose?: readonly string[] | ((id: string) => boolean);
  /** Evaluated on every call. Omitted: open mode (local debugging only). null: no session, every call fails with SESSION_REQUIRED. */
  session?: SessionSource;
  /** Default 8. */
  recordLimit?: number;
  /** Default 100. */
  maxRecordLimit?: number;
  /** Default off. */
  rateLimit?: { maxRequests: number; windowMs: number; limiter?: undefined } | { limiter: SurfaceRateLimiter; maxRequests?: number; windowMs?: number };
  /** Default off; true: five-minute window, in-page guard. */
  replay?: boolean | { windowMs?: number; guard?: SurfaceReplayGuard };
  onAudit?(event: SurfaceAuditEvent): void | Promise<void>;
  onAuditError?(error: unknown, event: SurfaceAuditEvent): void | Promise<void>;
  /** Default 30000. */
  executeTimeoutMs?: number;
  /**
   * "indexeddb": rateLimit and replay are kept in IndexedDB (pling-shared.js), so every
   * tab of the origin shares one budget and one set of claims, across reloads. Needs
   * rateLimit {maxRequests, windowMs} or replay; excludes your own limiter and guard.
   * When IndexedDB fails, requests are refused with *_UNAVAILABLE. Default: in-page.
   */
  shared?: "indexeddb";
  /** The kernel's file. Default: surface.wasm beside pling-surface.js (its content-hashed name in a built site). The first surface to start the kernel decides. */
  wasmURL?: string | URL;
  /** "idle": fetch, compile, start and warm the kernel when the page is idle, so that a first describe is about as fast as a later one. Default: nothing before first contact. */
  prefetch?: "idle";
  /** "eager": start the kernel now (the page pays for it at load). Default: when the surface is first called. */
  start?: "eager";
}

/** How long the kernel's start took, in milliseconds (0 for a kernel started before). */
export interface StartTimings {
  readonly fetchMs: number;
  readonly compileMs: number;
  /** Instantiating, Go's start and the surface's instance in the kernel. */
  readonly startMs: number;
  /** Whether the kernel compiled while it downloaded (then fetchMs is the time to the response's headers and compileMs the rest). */
  readonly streamed: boolean;
}

// ---------------------------------------------------------------------------
// Protocol.

export type SurfaceErrorCode = ErrorCode;

export type SessionErrorCode = "SESSION_REQUIRED" | "SESSION_INVALID" | "SESSION_EXPIRED" | "SESSION_REVOKED";




export type { Capability, CapabilityRecord, DescribeInput, DescribeRequest, InvokeRequest, RecordView } from "./pling-protocol.js";
export type SurfaceRequest = DescribeRequest | InvokeRequest;
export type SurfaceDescription = Description;
export type SurfaceObservation = Observation;
export type SurfaceViolation = Violation;
export type SurfaceProtocolFailure = ProtocolFailure;







export type SurfaceResponse =
  | { protocol: typeof SURFACE_PROTOCOL; id: string; ok: true; result: SurfaceDescription }
  | { protocol: typeof SURFACE_PROTOCOL; id: string; ok: true; result: ExecResult; after?: SurfaceObservation }
  | { protocol: typeof SURFACE_PROTOCOL; id: string; ok: false; error: SurfaceProtocolFailure };

// ---------------------------------------------------------------------------
// Errors.

export declare class SurfaceSessionError extends Error {
  constructor(code: SessionErrorCode, message: string);
  readonly name: "SurfaceSessionError";
  readonly code: SessionErrorCode;
}

/** describe() rejects with this for protocol failures other than session ones. */
export interface SurfaceProtocolError extends Error {
  code: SurfaceErrorCode;
}

// ---------------------------------------------------------------------------
// postMessage transport.

export interface AuthenticateInput {
  /** Whatever the connecting window sent; it never reaches the kernel, the audit or a reply. */
  readonly credential: unknown;
  /** Exact origin of the connecting window. */
  readonly origin: string;
}

export interface ListenOptions {
  /** Exact origins of other windows allowed to send requests. Default []: only the page's own window. */
  allowedOrigins?: readonly string[];
  /** Verifies a private channel's credential. Omitted: a channel gets the surface's own session. */
  authenticate?(input: AuthenticateInput): SessionSource | undefined | false | Promise<SessionSource | undefined | false>;
  /** Largest request accepted, in bytes of JSON. Default 65536 (also the kernel's ceiling). */
  maxMessageBytes?: number;
  /** A private channel with no request for this long is closed. Default 600000 (10 minutes). */
  channelIdleMs?: number;
  /** Private channels one origin may hold at once (open or authenticating). Default 16; at most 64 per listen in all. */
  maxChannelsPerOrigin?: number;
}

/** Stops the listener and closes its channels. */
export interface ListenHandle {
  (): void;
  /** Private channels held now: open, or waiting for authenticate. */
  channels(): number;
}

export interface RequestMessage {
  channel: "pling.surface";
  kind: "request";
  app?: string;
  envelope: SurfaceRequest;
}

export interface ResponseMessage {
  channel: "pling.surface";
  kind: "response";
  app?: string;
  envelope: SurfaceResponse;
}

export interface ConnectMessage {
  channel: "pling.surface";
  kind: "connect";
  app?: string;
  credential?: unknown;
}

export interface ConnectedMessage {
  channel: "pling.surface";
  kind: "connected";
  app?: string;
}

export interface RefusedMessage {
  channel: "pling.surface";
  kind: "refused";
}

/** Posted by the page on a channel it closes (idle, navigation, stop, close). */
export interface ClosedMessage {
  channel: "pling.surface";
  kind: "closed";
}

/** Posted by a caller on its channel to have the page free it now. */
export interface CloseMessage {
  channel: "pling.surface";
  kind: "close";
}

// ---------------------------------------------------------------------------
// The surface and the loader.

export interface AgentSurface {
  /** Direct in-page describe: no rate limit, no audit. Rejects with SurfaceSessionError or SurfaceProtocolError. */
  describe(input?: DescribeInput): Promise<SurfaceDescription>;
  /** Answers one request. Never rejects: every failure is an ok:false envelope. */
  handle(request: unknown): Promise<SurfaceResponse>;
  /** Starts the postMessage transport (wrapped and bare envelopes, private channels); returns a function that stops it. */
  listen(options?: ListenOptions): ListenHandle;
  /** Stops every listener and releases the kernel. Later calls fail with INTERNAL_ERROR. */
  close(): void;
  /** Offers the effective capabilities as WebMCP tools (loads pling-webmcp.js); resolves after the first registration. See pling-webmcp.d.ts. */
  webmcp(options?: import("./pling-webmcp.js").WebMCPOptions): Promise<import("./pling-webmcp.js").WebMCPBridge>;
  /**
   * Starts the kernel if nothing has, and resolves once this surface is made in it;
   * rejects with what the kernel refused (a registry it cannot read, say) or why it did not start.
   */
  ready(): Promise<StartTimings>;
}

/**
 * Makes a surface at once; the kernel starts when the surface is first called
 * (an agent's message, handle, describe, webmcp or ready). Throws TypeError on
 * invalid options; what only the kernel can check rejects ready() and fails calls
 * with INTERNAL_ERROR.
 */
export declare function createSurface(options: SurfaceOptions): AgentSurface;

export interface SurfaceAPI {
  readonly SURFACE_PROTOCOL: typeof SURFACE_PROTOCOL;
  readonly DEFAULT_SURFACE_RECORD_LIMIT: typeof DEFAULT_SURFACE_RECORD_LIMIT;
  readonly MAX_SURFACE_RECORD_LIMIT: typeof MAX_SURFACE_RECORD_LIMIT;
  readonly SurfaceSessionError: typeof SurfaceSessionError;
  defineRegistry(spec: RegistrySpec): Registry;
  /** Throws TypeError on invalid options (registry and execute are required). */
  createSurface(options: SurfaceOptions): AgentSurface;
  /** The runtime's counters; only with loadSurface({ stats: true }). */
  stats?(): { liveFuncs: number; pendingAwaits: number; surfaces: number; fastEntries: number };
}

export interface LoadOptions {
  /** Default: surface.wasm beside this module. */
  wasmURL?: string | URL;
  /**
   * Adds stats() to the API: the runtime's counters, which tell when an
   * agent's call is in flight. Default: false.
   */
  stats?: boolean;
}

/** Starts the runtime now (once per page) and resolves when it is up; its createSurface then throws what the kernel refuses. */
export declare function loadSurface(options?: LoadOptions): Promise<SurfaceAPI>;

/** The runtime object wasm/main.go publishes (advanced use: a runtime started without loadSurface). */
export interface SurfaceRuntime {
  readonly protocol: typeof SURFACE_PROTOCOL;
  create(host: object, configJSON: string): object;
  /** Names this runtime to the module's entry exports (see fromRuntime). */
  readonly entryKey: number;
  stats(): { liveFuncs: number; pendingAwaits: number; surfaces: number; fastEntries: number };
}

export interface FromRuntimeOptions {
  /**
   * The wasm_exec.js Go object running the module (required): every call
   * enters the kernel through the module's exports. fromRuntime throws a
   * TypeError without it, or with a Go object running another module.
   */
  go: object;
  /**
   * The two words the host gave the module's pling_init, if it gave them;
   * without, fromRuntime draws and gives them.
   */
  secret?: [number, number];
  /** As LoadOptions.stats. */
  stats?: boolean;
}

// fromRuntime, for a host that runs the module itself: pling-kernel.d.ts.

/**
 * @internal What pling-webmcp.js takes from this module: WebMCP's registry
 * and built-ins as they were when the module was evaluated. Not for pages.
 */
export declare const webmcpKit: object;

declare global {
  interface Window {
    /** Defined by pling-surface.global.js. */
    PlingSurface?: { loadSurface(options?: LoadOptions): Promise<SurfaceAPI> };
  }
}

/** The backend's limiter and guard, also named by pling-shared.js (which has IndexedDB's). */
export { applyShared, httpAdapter, httpGuard, httpLimiter } from "./pling-shared.js";
