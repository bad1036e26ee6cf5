// pling-shared.js: rate limits and replay claims that hold across tabs,
// reloads and replicas, as the limiter and guard createSurface accepts.
//
//   createSurface({ ..., shared: "indexeddb", rateLimit: { maxRequests: 60, windowMs: 60_000 }, replay: true })
//     every tab of the origin shares one budget and one set of claims, kept
//     in IndexedDB, with no backend.
//   createSurface({ ..., rateLimit: { limiter: httpLimiter("/pling/state") }, replay: { guard: httpGuard("/pling/state") } })
//     the page's backend decides (redisstate.Handler in Go, on Redis), so
//     every replica and every browser of a session shares them.
//
// Each fails closed: a store that cannot answer, answers late or answers
// something malformed makes the call reject, and the kernel refuses the
// request with RATE_LIMIT_UNAVAILABLE or REPLAY_GUARD_UNAVAILABLE.
//
// The code lives in pling-surface.js, so that a page that loads the surface
// makes one request for its script; this module names the same functions.

export { applyShared, httpAdapter, httpGuard, httpLimiter, indexedDBGuard, indexedDBLimiter } from "./pling-surface.js";
