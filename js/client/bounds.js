// bounds.js: the protocol's names on the window and every default and
// bound the client applies. One place, so that a change to a timeout or a
// size limit is read once and holds for every transport.

export const CHANNEL = "pling.surface";
export const SURFACE_PROTOCOL = "pling.surface/0.1";

// Defaults. An invoke waits longer than the page runtime's own bound on its
// executor (30 s), so a slow but healthy call is not reported as lost.
export const DEFAULT_DESCRIBE_TIMEOUT_MS = 10_000;
export const DEFAULT_INVOKE_TIMEOUT_MS = 35_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
// A connect or discover message posted before the page listens is dropped
// without an answer, so it is posted again at this interval until answered.
export const REPOST_INTERVAL_MS = 250;
export const DEFAULT_DISCOVER_SETTLE_MS = 200;
// How many applications discover() keeps unless told otherwise (the
// extension's panel offers 20), and the longest app name it keeps: the
// surface's own bound on ids (surface.MaxIDBytes), in UTF-8 bytes. Each
// answer kept is bounded by DEFAULT_LIMITS.replyBytes besides.
export const DEFAULT_DISCOVER_APPS = 20;
export const MAX_APP_BYTES = 256;
export const DEFAULT_PAGE_LIMIT = 20;
// How many records records() reads unless told otherwise: every window it
// asks for brings at least one record or ends the walk, so this also bounds
// how many describes a page can draw out of one loop.
export const DEFAULT_RECORDS_MAX = 1000;
// How many request ids a client remembers to refuse reusing one for another intent.
export const REMEMBERED_IDS = 1024;

/**
 * The most a reply may weigh before anything reads it. replyBytes is the
 * reply's JSON size as estimated by a walk that stops as soon as it passes
 * the bound (the surface itself never answers more than 1 MiB); depth is the
 * reply grammar's nesting limit.
 */
export const DEFAULT_LIMITS = Object.freeze({ replyBytes: 1 << 20, depth: 128 });
