// Type declarations for pling-webmcp.js: a surface's capabilities as WebMCP tools.

import type { AgentSurface, Capability, SurfaceDescription, SurfaceObservation, SurfaceProtocolFailure, SurfaceResponse } from "./pling-surface.js";

export declare const WEBMCP_DEFAULT_POLL_MS: 2000;
export declare const WEBMCP_DEFAULT_RECORD_ENUM_LIMIT: 20;
export declare const WEBMCP_MAX_RECORD_ENUM_LIMIT: 100;
/** Names WebMCP accepts: 1 to 128 of A-Z a-z 0-9 _ . - */
export declare const WEBMCP_TOOL_NAME: RegExp;

export interface WebMCPOptions {
  /** How often describe() is read to follow the session, in ms. Default 2000; 0: only on refresh() and after each tool call. */
  pollMs?: number;
  /** Put before every tool name (up to 64 of A-Z a-z 0-9 _ . -). Default "". */
  prefix?: string;
  /** A template's record parameter lists the ids as an enum when the page has at most this many of its kind. 0 to 100, default 20; 0: never. */
  recordEnumLimit?: number;
  /** Also offer the read-only "page_context" tool (the description's context). Default true. */
  contextTool?: boolean;
  /** Mark tool output as holding content the page does not vouch for (user text, third-party data). Default false. The function gets the capability, or null for the context tool. */
  untrustedContent?: boolean | ((capability: Capability | null) => boolean);
  /** The WebMCP registry to use. Default: document.modelContext. */
  modelContext?: ModelContextLike;
  /** Told after the set of registered tools changed. */
  onChange?(tools: readonly WebMCPToolInfo[]): void;
}

export interface WebMCPToolInfo {
  readonly name: string;
  /** The surface capability id the tool invokes; null for the context tool. */
  readonly capability: string | null;
}

export interface WebMCPBridge {
  /** False when there was no document.modelContext: nothing is registered and the other members do nothing. */
  readonly supported: boolean;
  /** Settles after the first registration. */
  readonly ready: Promise<void>;
  /** The tools registered now. */
  readonly tools: readonly WebMCPToolInfo[];
  /** Reads describe() now and registers, unregisters or replaces tools to match. Call it when the page changed its session. */
  refresh(): Promise<void>;
  /** Unregisters every tool and stops following the surface. */
  stop(): void;
}

/**
 * What a tool call resolves to. It never throws: WebMCP gives a caller no
 * reason for a thrown error, so refusals are answers too. outcome uses the
 * audit's words.
 */
export type WebMCPToolOutput =
  /** Done. approval is present when a person approved it. */
  | { outcome: "ok"; approval?: "granted"; requestId: string; result: unknown; after?: SurfaceObservation }
  /** Not done yet: a person has to decide in the page (result.approval.status "pending"). */
  | { outcome: "pending_approval"; approval: "pending"; requestId: string; message: string; result: unknown; after?: SurfaceObservation }
  /**
   * The page's executor answered { error: { code, message } }, or the approval
   * was denied (APPROVAL_DENIED) or has a status the kernel does not know
   * (APPROVAL_STATUS_UNKNOWN).
   */
  | { outcome: "business_error"; isError: true; approval?: WebMCPApprovalStatus; requestId: string; error: { code: string; message: string }; after?: SurfaceObservation }
  /** The surface refused the request; nothing ran. requestId is absent when the bridge itself refused (a tool it took back). */
  | { outcome: "protocol_error"; isError: true; requestId?: string; error: SurfaceProtocolFailure };

/** result.approval.status as the kernel reports it. */
export type WebMCPApprovalStatus = "pending" | "granted" | "denied" | "unknown";

/** What the context tool resolves to. */
export interface WebMCPContextOutput {
  outcome: "ok";
  requestId: string;
  app?: string;
  context: SurfaceDescription["context"];
}

export interface WebMCPAnnotations {
  readOnlyHint: boolean;
  consequentialHint?: true;
  untrustedContentHint?: true;
}

export interface WebMCPToolDefinition {
  name: string;
  capability: string | null;
  /** For people: "Orders: set filter", "Order: update note" (toolTitle). */
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: WebMCPAnnotations;
}

/** The slice of WebMCP's ModelContext the bridge uses. */
export interface ModelContextLike {
  registerTool(
    tool: {
      name: string;
      title: string;
      description: string;
      inputSchema: object;
      annotations: WebMCPAnnotations;
      execute(input: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
    },
    options?: { signal?: AbortSignal },
  ): Promise<void> | void;
  /** Older implementations; called after the signal is aborted when present. */
  unregisterTool?(name: string): unknown;
}

/** Starts a bridge on any surface. surface.webmcp() is the usual entry point. */
export declare function bridgeWebMCP(surface: Pick<AgentSurface, "describe" | "handle">, options?: WebMCPOptions): WebMCPBridge;

// The pure mapping, exported for tests and for other bridges (an MCP facade).
export declare function toolDefinitions(
  description: SurfaceDescription,
  options?: Pick<WebMCPOptions, "prefix" | "recordEnumLimit" | "contextTool" | "untrustedContent"> & {
    /** Names handed out before, to their capability (null: the context tool); none moves to another. */
    names?: Map<string, string | null>;
  },
): WebMCPToolDefinition[];
export declare function toolBaseName(id: string, prefix?: string): string;
export declare function toolTitle(capability: Pick<Capability, "id">): string;
export declare function toolAnnotations(capability: Pick<Capability, "effect" | "approval">, untrustedContent?: boolean): WebMCPAnnotations;
export declare function toolInputSchema(capability: Capability, recordParam?: { name: string; description: string; ids: string[] | null } | null): Record<string, unknown>;
export declare function templateKind(id: string): string;
export declare function recordEnum(capability: Capability, context: SurfaceDescription["context"], limit: number): string[] | null;
export declare function toolResult(response: SurfaceResponse): WebMCPToolOutput;
/** A failure is answered as toolResult answers it. */
export declare function contextResult(response: SurfaceResponse): WebMCPContextOutput | Extract<WebMCPToolOutput, { outcome: "protocol_error" }>;
