// Types of pling-shared.js: limiters and replay guards shared across tabs,
// reloads and replicas. Each rejects (and the kernel refuses the request
// with RATE_LIMIT_UNAVAILABLE or REPLAY_GUARD_UNAVAILABLE) when its store
// fails, answers late or answers something malformed.

import type { SurfaceRateLimiter, SurfaceReplayGuard, SurfaceOptions } from "./pling-surface.js";

export interface IndexedDBLimiterOptions {
  /** Namespaces the budget: apps of one origin never share it. Default "". */
  app?: string;
  maxRequests: number;
  windowMs: number;
  /** One decision's bound, waiting for other tabs' decisions and the database's open included. Default 5000. */
  timeoutMs?: number;
  /**
   * Default: globalThis.indexedDB as it was when pling-surface.js was
   * evaluated. In a browser it must be a real IDBFactory: its methods are
   * those IndexedDB's prototypes had at load, never looked up on it.
   */
  indexedDB?: IDBFactory;
}

export interface IndexedDBGuardOptions {
  app?: string;
  timeoutMs?: number;
  /** As IndexedDBLimiterOptions.indexedDB. */
  indexedDB?: IDBFactory;
}

/** A sliding window in IndexedDB, one budget for every tab of the origin, kept across reloads. */
export declare function indexedDBLimiter(options: IndexedDBLimiterOptions): SurfaceRateLimiter;

/** Claims in IndexedDB, one per (session, request id) per window for every tab of the origin, kept across reloads. */
export declare function indexedDBGuard(options?: IndexedDBGuardOptions): SurfaceReplayGuard;

export interface HTTPAdapterOptions {
  /** The whole exchange's bound. Default 5000. */
  timeoutMs?: number;
  /** Extra request headers (a CSRF token, say). */
  headers?: Record<string, string>;
  /** Default "same-origin": the backend reads its own session cookie. */
  credentials?: RequestCredentials;
  /** Default globalThis.fetch as it was when the surface's module was evaluated. An answer that is not a Response needs its own status and text. */
  fetch?: typeof fetch;
}

/** POSTs {"op":"allow"} and {"op":"claim","requestId"} to url (redisstate.Handler). The backend names the session. */
export declare function httpAdapter(url: string | URL, options?: HTTPAdapterOptions): SurfaceRateLimiter & SurfaceReplayGuard;
export declare function httpLimiter(url: string | URL, options?: HTTPAdapterOptions): SurfaceRateLimiter;
export declare function httpGuard(url: string | URL, options?: HTTPAdapterOptions): SurfaceReplayGuard;

/** What createSurface does with options.shared. */
export declare function applyShared<T extends SurfaceOptions>(options: T): T;
