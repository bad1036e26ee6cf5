// Bounds and deadlines the panel keeps for itself. The page may be
// hostile: what it sends is bounded before the panel shows it, and every
// wait on it ends at a deadline kept here, on the panel's own thread. A
// leaf: it imports nothing, so every other part can import it.

export const RECORDS_PER_PAGE = 8;

// Bounds on what the panel shows of a description. Beyond them the panel
// says which bound was passed instead of rendering (the client library has
// already refused replies over 1 MiB or nested deeper than 128).
export const BOUNDS = Object.freeze({
  capabilities: 1000, // capabilities in one description
  schemaBytes: 64 * 1024, // one input schema, as JSON
  schemaDepth: 16, // nesting of one input schema
  properties: 100, // input members of one capability
  enumValues: 1000, // values of one enum
  recordIds: 1000, // ids offered in the record picker
  listItems: 50, // feedback, unavailable, after-changes shown
  stateChars: 20000, // the state shown as JSON
});
// Longest page text shown, by where it appears.
export const TEXT = Object.freeze({ id: 120, short: 200, long: 1000 });
// Capabilities rendered per frame: a long list never blocks the panel for
// more than a frame's worth of work at a time.
export const CHUNK = 40;

// Deadlines, kept by the panel: the content script shares the page's
// thread, so a page that busy-loops freezes the client's own timers.
const params = new URLSearchParams(location.search);
const deadlineCap = params.has("deadlineMs") ? Math.max(500, Number(params.get("deadlineMs")) || 0) : Infinity;
export const DEADLINE_MS = Object.freeze({
  attach: Math.min(5000, deadlineCap),
  "pling.discover": Math.min(8000, deadlineCap),
  "pling.describe": Math.min(20000, deadlineCap),
  "pling.page": Math.min(20000, deadlineCap),
  "pling.invoke": Math.min(40000, deadlineCap), // the client's own 35 s, plus the way back
});
