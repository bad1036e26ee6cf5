// Type declarations of pling.surface/0.1's messages, shared by the page
// runtime (pling-surface.d.ts) and the client library
// (client/pling-client.d.ts): one declaration per shape on the wire.

export type Protocol = "pling.surface/0.1";

/** The protocol's error codes. */
export type ErrorCode =
  | "INVALID_REQUEST"
  | "PROTOCOL_VERSION_UNSUPPORTED"
  | "METHOD_NOT_SUPPORTED"
  | "CAPABILITY_NOT_EXPOSED"
  | "RATE_LIMITED"
  | "RATE_LIMIT_UNAVAILABLE"
  | "REPLAY_DETECTED"
  | "REPLAY_GUARD_UNAVAILABLE"
  | "SESSION_REQUIRED"
  | "SESSION_INVALID"
  | "SESSION_EXPIRED"
  | "SESSION_REVOKED"
  | "INTERNAL_ERROR";

export interface DescribeInput {
  /** One id, or 1 to 20 ids: read these records in full. Excludes offset and limit. */
  record?: string | string[];
  offset?: number;
  /** Clamped to the surface's maxRecordLimit. */
  limit?: number;
  capabilities?: "full" | "changed";
}

export interface DescribeRequest {
  protocol: Protocol;
  id: string;
  method: "describe";
  input?: DescribeInput;
}

export interface InvokeRequest {
  protocol: Protocol;
  id: string;
  method: "invoke";
  capability: string;
  input?: Record<string, unknown>;
}

export interface Violation {
  instancePath: string;
  keyword: string;
  message: string;
}

export interface CapabilityRecord {
  /** The input member that names the target record. */
  param: string;
  total: number;
  offscreen?: number;
}

export interface Capability {
  id: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  /** What the page declares; a value other than these is treated as a change. */
  effect?: "read" | "write" | "destructive" | (string & {});
  approval?: "none" | "ask" | "always" | (string & {});
  fidelity?: string;
  source?: string;
  scopePath?: string[];
  handoff?: string;
  flowSteps?: string[];
  offscreen?: boolean;
  /** Present on a folded per-record template (`name@kind`). */
  record?: CapabilityRecord;
}

export interface RecordView {
  id: string;
  kind?: string;
  fields?: Record<string, unknown>;
  offscreen?: boolean;
}

export interface Description {
  protocol: Protocol;
  app?: string;
  capabilities: Capability[];
  /** Set only when the list was cut. */
  capabilitiesTotal?: number;
  /** True when capabilities: "changed" was asked and the list is unchanged (capabilities is then []). */
  capabilitiesUnchanged?: boolean;
  context: {
    route?: string;
    regions: { id: string; label?: string; description?: string }[];
    regionsTotal?: number;
    records: RecordView[];
    recordIds: string[];
    recordIdsTotal: number;
    state: Record<string, unknown>;
    stateTotal?: number;
    feedback: { level?: string; message: string; record?: string }[];
    unavailable: { id: string; reason?: string }[];
    recordsTotal: number;
    feedbackTotal: number;
    unavailableTotal: number;
  };
}

/** Observed changes after an invoke: increments, not a snapshot, not a proof of authority. */
export interface Observation {
  records?: { id: string; fields?: Record<string, unknown>; fieldsOmitted?: number; removed?: boolean }[];
  recordsOmitted?: number;
  state?: Record<string, unknown>;
  stateOmitted?: number;
}

export interface ProtocolFailure {
  code: ErrorCode;
  message: string;
  /** With RATE_LIMITED. */
  retryAfterMs?: number;
  /** With INVALID_REQUEST when the input fails the capability's schema. */
  violations?: Violation[];
}
