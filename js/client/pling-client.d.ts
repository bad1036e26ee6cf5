// Type declarations for pling-client.js (the caller's side of pling.surface/0.1).
// The protocol's messages are declared once, in ../pling-protocol.d.ts.

import type { Capability, Description, ErrorCode, InvokeRequest, Observation, RecordView, Violation } from "../pling-protocol.js";

export declare const SURFACE_PROTOCOL: "pling.surface/0.1";

/** Codes of the errors the client itself raises. They are never a surface's codes. */
export declare const ClientErrorCode: Readonly<{
  /** No reply in time, after every allowed attempt. */
  TIMEOUT: "TIMEOUT";
  /** The page navigated away or was unloaded (pagehide). */
  NAVIGATED: "NAVIGATED";
  /** The surface closed the private channel, or close() was called. */
  CLOSED: "CLOSED";
  /** The page refused the private channel (its authenticate said no). */
  REFUSED: "REFUSED";
  /** Nothing answered a connect or discover in time. */
  NO_SURFACE: "NO_SURFACE";
  /** The caller's AbortSignal fired. */
  ABORTED: "ABORTED";
  /** A call the client will not send (bad arguments, not JSON, unknown option). */
  INVALID_ARGUMENT: "INVALID_ARGUMENT";
  /** A folded template was called without a record id. */
  RECORD_REQUIRED: "RECORD_REQUIRED";
  /** The record id is not among the complete recordIds of the description. */
  RECORD_NOT_REFERENCEABLE: "RECORD_NOT_REFERENCEABLE";
  /** A request id was offered for another intent than the one it was used for. */
  ID_REUSED: "ID_REUSED";
  /** page() or records() got a protocol failure; see SurfaceClientError.outcome. */
  PROTOCOL_FAILURE: "PROTOCOL_FAILURE";
  /** No window, no crypto, or a page with an opaque origin. */
  UNSUPPORTED_ENVIRONMENT: "UNSUPPORTED_ENVIRONMENT";
  /** request(): the page answered, and the answer was refused unread (see SurfaceClientError.bound). */
  REPLY_REFUSED: "REPLY_REFUSED";
}>;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** Codes the client puts on outcomes it classified conservatively. */
export declare const OutcomeCode: Readonly<{
  /** protocol-error: the reply does not follow the protocol (ok not boolean, wrong version, no code). */
  MALFORMED_RESPONSE: "MALFORMED_RESPONSE";
  /** business-error: result.approval.status is "denied". */
  APPROVAL_DENIED: "APPROVAL_DENIED";
  /** business-error: an approval status the client does not know. Never a grant. */
  APPROVAL_STATUS_UNKNOWN: "APPROVAL_STATUS_UNKNOWN";
  /** protocol-error: the reply is larger or deeper than the client reads (error.bound names the bound); it is not kept. */
  REPLY_OUT_OF_BOUNDS: "REPLY_OUT_OF_BOUNDS";
}>;

/** The protocol error codes of pling.surface/0.1, plus any code a newer surface may send. */
export type SurfaceErrorCode = ErrorCode | "MALFORMED_RESPONSE" | (string & {});

export type { Capability, CapabilityRecord, Description, InvokeRequest, Observation, RecordView, Violation } from "../pling-protocol.js";

export interface ResponseEnvelope {
  protocol: string;
  id: string;
  ok: boolean;
  result?: unknown;
  after?: Observation;
  error?: { code: string; message: string; retryAfterMs?: number; violations?: Violation[] };
}

/** Where approval stands: "none" when the result reports none; "unknown" is never a grant. */
export type ApprovalState = "none" | "pending" | "granted" | "denied" | "unknown";

interface OutcomeBase {
  /** The request id the reply answers. */
  id: string;
  approval: ApprovalState;
  /** The raw response envelope. */
  envelope: unknown;
  /** How many times the request was posted (same id every time). */
  attempts?: number;
  /**
   * Set on a protocol failure that answers an invoke sent again with the
   * same id (a retry, or an id given by the caller): the copy before it may
   * have reached the surface and run. For REPLAY_DETECTED the client first
   * waits for that copy's own reply. Set too on an invoke answered by a
   * malformed or oversize reply.
   */
  effectUnknown?: boolean;
  /** The transport the answer came on (set on outcomes of calls). */
  transport?: "port" | "window";
  /**
   * true when the answer came over the page window, where any script of the
   * page could have swallowed the real reply and posted this one instead.
   */
  forgeable?: boolean;
}

/**
 * ok:true without result.error. For an invoke, check `approval`: "pending"
 * means a person must still decide in the page.
 */
export interface SuccessOutcome extends OutcomeBase {
  kind: "success";
  ok: true;
  result: unknown;
  after?: Observation;
  /** Set on a describe. */
  description?: Description;
  approval: "none" | "pending" | "granted";
}

/** ok:true with result.error, or an approval that was denied or is unknown. */
export interface BusinessErrorOutcome extends OutcomeBase {
  kind: "business-error";
  ok: true;
  result: unknown;
  after?: Observation;
  error: { code: string; message: string };
}

/** ok:false (or a reply the client cannot read): the exchange did not safely produce a business result. */
export interface ProtocolErrorOutcome extends OutcomeBase {
  kind: "protocol-error";
  ok: false;
  error: { code: SurfaceErrorCode; message: string; retryAfterMs?: number; violations?: Violation[]; bound?: "replyBytes" | "depth" };
  /** With RATE_LIMITED: how long to wait. */
  retryAfterMs?: number;
}

export type Outcome = SuccessOutcome | BusinessErrorOutcome | ProtocolErrorOutcome;
export type DescribeOutcome = (SuccessOutcome & { description: Description }) | ProtocolErrorOutcome;

/** The one error type the client raises. */
export declare class SurfaceClientError extends Error {
  name: "SurfaceClientError";
  code: ClientErrorCode;
  /** True when an invoke was sent and no reply was read: it may have run. */
  effectUnknown: boolean;
  attempts: number;
  /** The envelope that was sent; pass it to client.retry() for a transport retry. */
  request?: InvokeRequest | { protocol: string; id: string; method: "describe"; input?: unknown };
  /** REPLY_REFUSED: the bound the answer passed; absent when it was not JSON. */
  bound?: "replyBytes" | "depth";
  /** With PROTOCOL_FAILURE: the outcome that caused it. */
  outcome?: ProtocolErrorOutcome;
  toJSON(): { name: string; code: ClientErrorCode; message: string; effectUnknown: boolean; attempts: number; requestId?: string };
}

/** The minimal window the client needs (the page's window in a content script). */
export interface ClientWindow {
  location: { origin: string };
  postMessage(message: unknown, targetOrigin: string, transfer?: unknown[]): void;
  addEventListener(type: string, listener: (event: any) => void): void;
  removeEventListener(type: string, listener: (event: any) => void): void;
}

export interface ConnectOptions {
  /** The application to talk to; several surfaces on one page are told apart by it. */
  app?: string;
  /**
   * "auto" (default without a credential): the private channel where the
   * page offers it, else the window (client.privateRefused says why).
   * "port" (default with a credential): the page's private MessagePort
   * channel or nothing; replies reach this client only. "window": requests
   * and replies on the window, where the page's other scripts can read and
   * forge them (outcomes carry forgeable: true).
   */
  transport?: "auto" | "port" | "window";
  /** Handed to the page's authenticate on the private channel, posted once. Implies transport "port". */
  credential?: unknown;
  /** Default: globalThis.window. */
  window?: ClientWindow;
  /** Per-attempt timeout of describe. Default 10000. */
  describeTimeoutMs?: number;
  /** Per-attempt timeout of invoke. Default 35000 (more than the page's 30 s executor bound). */
  invokeTimeoutMs?: number;
  /** How long to wait for the page to accept the private channel. Default 5000. */
  connectTimeoutMs?: number;
  /** Default: globalThis.MessageChannel. */
  MessageChannel?: new () => { port1: any; port2: any };
}

export interface CallOptions {
  /** Per-attempt timeout in milliseconds. */
  timeoutMs?: number;
  /** Transport retries after a timeout, with the same id. describe: 1, invoke: 0. */
  retries?: number;
  signal?: AbortSignal;
}

export interface InvokeOptions extends CallOptions {
  /**
   * Reuse this request id: only for retrying the same intent (same
   * capability and input), for example after a reconnect. Another intent
   * with a used id fails with ID_REUSED.
   */
  id?: string;
  /** The target record of a folded template; placed under the template's record parameter. */
  record?: string;
  /** The description to check the record against. Default: the client's last one. */
  description?: Description;
}

export interface Page {
  records: RecordView[];
  recordsTotal: number;
  offset: number;
  limit: number;
  /** The offset of the next window, or null after the last one. */
  nextOffset: number | null;
  description: Description;
}

export interface SurfaceClient {
  /** The application this client talks to (undefined: whichever surface answers). */
  readonly app: string | undefined;
  readonly transport: "port" | "window";
  /** Why an "auto" client talks over the window: the page refused a private channel, or nothing answered connect. */
  readonly privateRefused: "REFUSED" | "NO_SURFACE" | undefined;
  readonly closed: boolean;
  /** Resolves with the error that ended the client (NAVIGATED, or CLOSED after close() or a closed channel). */
  readonly ended: Promise<SurfaceClientError>;
  /** The last successful description, used to check record ids. */
  readonly lastDescription: Description | undefined;
  describe(
    input?: { record?: string | string[]; offset?: number; limit?: number; capabilities?: "full" | "changed" },
    options?: CallOptions,
  ): Promise<DescribeOutcome>;
  invoke(capability: string, input?: Record<string, unknown> | null, options?: InvokeOptions): Promise<Outcome>;
  /** Sends an invoke again with the same id (error.request after a TIMEOUT). */
  retry(request: InvokeRequest, options?: CallOptions): Promise<Outcome>;
  page(options?: { offset?: number; limit?: number } & CallOptions): Promise<Page>;
  /**
   * Every record from offset on, window by window. Stops after max records
   * (default 1000; a non-negative integer, never Infinity, since recordsTotal
   * is the page's claim), at a window without records, or at recordsTotal.
   */
  records(options?: { offset?: number; limit?: number; max?: number } & CallOptions): AsyncGenerator<RecordView, void, undefined>;
  /** Ends the client; calls still waiting fail with CLOSED. */
  close(): void;
}

export declare function connect(options?: ConnectOptions): Promise<SurfaceClient>;

/**
 * Finds the surfaces of the page: one entry per application that answered,
 * the first maxApps to answer. An answer naming an app of more than 256
 * bytes of UTF-8 is ignored. Unknown options are refused.
 */
export declare function discover(options?: {
  window?: ClientWindow;
  /** How long to wait for a first answer. Default 5000. */
  timeoutMs?: number;
  /** How long to keep collecting after the first answer. Default 200. */
  settleMs?: number;
  /** The most applications kept; discover resolves as soon as this many answered. A positive integer, default 20. */
  maxApps?: number;
}): Promise<ReadonlyArray<{ app: string | undefined; outcome: DescribeOutcome }>>;

/**
 * Posts one request envelope on the window and resolves with the message
 * that answers its id, as the page posted it, once it is within the bounds.
 * With repost, the envelope is posted again with the same id until an
 * answer comes (for a describe, which has no effect). Rejects with TIMEOUT,
 * or REPLY_REFUSED for an answer larger or deeper than the bounds (bound
 * says which) or not JSON. Unknown options are refused.
 */
export declare function request(
  envelope: { id: string; method?: string; [member: string]: unknown },
  options?: {
    window?: ClientWindow;
    /** Only an answer from this application's surface; it is named in the request. */
    app?: string;
    /** Default 10000. */
    timeoutMs?: number;
    /** The most the answer may weigh as JSON, in bytes of UTF-8. Default 1 MiB. */
    replyBytes?: number;
    repost?: boolean;
  },
): Promise<{ channel: "pling.surface"; kind: "response"; app?: string; envelope: ResponseEnvelope }>;

/** What a reply must answer: the request id and app (each checked when given). */
export interface Expect {
  id?: string;
  app?: string;
  askedChanged?: boolean;
  limits?: { replyBytes: number; depth: number };
}
/** Reads a reply (an envelope or the window wrapper around it) by the shared reply grammar, as exactly one kind. */
export declare function classify(reply: unknown, method: "describe", expect?: Expect): DescribeOutcome;
export declare function classify(reply: unknown, method?: "invoke", expect?: Expect): Outcome;

export declare function findCapability(description: Description | undefined, capabilityId: string): Capability | undefined;
/** The record parameter of a folded template, or undefined for a plain capability. */
export declare function recordParam(capability: Capability | undefined): string | undefined;
/** true: in recordIds or the records shown; false: neither, and recordIds is complete; undefined: recordIds was cut short. */
export declare function isReferenceable(description: Description | undefined, recordId: string): boolean | undefined;
/** A fresh, unpredictable request id. */
export declare function newRequestId(): string;
