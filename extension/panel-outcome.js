// The Result section: what a call came to, titled in the panel's own
// words with the page's code and message beside them as the page's words,
// the reply envelope, and the changes the page reported. Each kind of
// outcome looks different, and only a known status reads as done.

import { BOUNDS, TEXT } from "./panel-bounds.js";
import { $, el } from "./panel-dom.js";
import { pageText, pageCode, safeJSON } from "./panel-words.js";

const PROTOCOL_HINTS = {
  SESSION_REVOKED: "The person revoked this agent's session in the page. Nothing ran.",
  SESSION_EXPIRED: "The agent's session has expired. Nothing ran; the person can grant a new one.",
  SESSION_REQUIRED: "The page has granted no session to an agent. Nothing ran.",
  SESSION_INVALID: "The page could not establish the agent's session. Nothing ran.",
  CAPABILITY_NOT_EXPOSED: "This capability is not offered to this session (any more). Nothing ran.",
  INVALID_REQUEST: "The page refused the input. Nothing ran.",
  RATE_LIMITED: "Too many calls: the page asks to wait.",
  REPLAY_DETECTED: "The page already received a call with this request id. It did not run again.",
  INTERNAL_ERROR: "The page failed to handle the call; whether it ran is not known.",
  MALFORMED_RESPONSE: "The reply does not follow the protocol; it is not taken as a result. Whether the call ran is unknown.",
  REPLY_OUT_OF_BOUNDS: "The reply is larger than this extension reads; it was dropped unread. Whether the call ran is unknown.",
};

// The codes the client gives a reply it refused to read: they come from
// the extension, never from the page.
const CLIENT_PROTOCOL_CODES = Object.freeze({ MALFORMED_RESPONSE: true, REPLY_OUT_OF_BOUNDS: true });

const CLIENT_HINTS = {
  NAVIGATED: "The page navigated while the call was waiting.",
  PAGE_GONE: "The page went away while the call was waiting.",
  CLOSED: "The channel to the page's surface ended. The next call connects again.",
  TIMEOUT: "No reply in time: the page may be busy or stuck.",
  NO_SURFACE: "No agent surface answered on this page.",
  ORIGIN_CHANGED: "The page changed origin; nothing was sent.",
};

// hint is the panel's own words for a code, or "": codes are the page's
// strings, and one named like an inherited property ("constructor") is
// not a hint.
function hint(hints, code) {
  return typeof code === "string" && Object.hasOwn(hints, code) ? hints[code] : "";
}

export function showWaiting(id) {
  const box = $("ext-outcome");
  box.dataset.outcome = "waiting";
  delete box.dataset.code;
  box.replaceChildren(el("strong", {}, "Waiting"), el("div", {}, "Invoking ", pageCode(id), "…"));
  $("ext-after").hidden = true;
  $("ext-response").textContent = "";
}

export function showOutcome(outcome) {
  const box = $("ext-outcome");
  const lines = [];
  let kind = outcome.kind;
  let title;
  let code = null; // the page's code: its words, beside our title
  let ownCode = false; // the code is the extension's own, not the page's
  if (outcome.kind === "protocol-error") {
    const e = outcome.error;
    title = "Protocol failure";
    code = e.code;
    // The client refused the reply itself: the code and its message are
    // the extension's words about what the page sent, not the page's.
    ownCode = Object.hasOwn(CLIENT_PROTOCOL_CODES, e.code);
    if (ownCode) title = "Reply refused by the extension";
    lines.push(hint(PROTOCOL_HINTS, e.code) || "The page did not run the call.");
    if (e.message) lines.push(ownCode ? `The extension says: ${e.message}` : el("span", {}, "The page says: ", pageText(e.message, TEXT.long)));
    if (outcome.retryAfterMs) lines.push(`Try again in ${Math.ceil(outcome.retryAfterMs / 1000)} s.`);
    for (const v of (e.violations || []).slice(0, 5)) lines.push(el("span", {}, pageCode(v.instancePath || v.path || "/", 80), ": ", pageText(v.message || v.keyword, TEXT.short)));
    if (outcome.effectUnknown && !/unknown/.test(hint(PROTOCOL_HINTS, e.code))) lines.push("An earlier attempt reached the page; whether it ran is unknown.");
  } else if (outcome.kind === "business-error") {
    title = outcome.approval === "denied" ? "Approval denied" : outcome.approval === "unknown" ? "Approval status unknown" : "Business failure";
    code = outcome.error.code;
    if (outcome.error.message) lines.push(el("span", {}, "The page says: ", pageText(outcome.error.message, TEXT.long)));
    if (outcome.approval === "unknown") lines.push("The page cannot say whether a person approved; it is not treated as approved.");
  } else if (outcome.approval === "pending") {
    kind = "pending-approval";
    title = "Approval pending: not done yet";
    const t = resultTitle(outcome.result);
    if (t) lines.push(el("span", {}, "The page says: ", pageText(t, TEXT.short)));
    lines.push("A person must confirm or reject it in the page; this extension cannot approve.");
  } else {
    title = outcome.approval === "granted" ? "Approved and done" : "Success";
    const t = resultTitle(outcome.result);
    lines.push(t ? el("span", {}, "The page says: ", pageText(t, TEXT.short)) : "The capability ran.");
  }
  if (outcome.forgeable) lines.push(el("span", { class: "forgeable", "data-testid": "ext-forgeable" }, "This answer came over the page window: another script on the page could have forged it."));
  else if (outcome.transport === "port") lines.push(el("span", { class: "via" }, "Came on the private channel, which only this extension reads."));
  box.dataset.outcome = kind;
  box.dataset.code = code ?? "";
  box.dataset.transport = outcome.transport ?? "";
  // The title is the panel's; the page's code follows on a line of its own.
  if (code) lines.unshift(ownCode ? el("span", {}, "Code, the extension's own: ", el("code", {}, code)) : el("span", {}, "Code, in the page's words: ", pageCode(code, 60)));
  box.replaceChildren(el("strong", { "data-testid": "ext-outcome-title" }, title), ...lines.map((l) => el("div", {}, l)));
  $("ext-response").replaceChildren(outcome.envelope ? pageText(safeJSON(outcome.envelope, BOUNDS.stateChars, 2), BOUNDS.stateChars, "span", true) : "(not kept)");
  showAfter(outcome.after);
}

function resultTitle(result) {
  return result && typeof result === "object" && typeof result.title === "string" ? result.title : "";
}

export function showClientError(err) {
  const box = $("ext-outcome");
  box.dataset.outcome = "client-error";
  box.dataset.code = err.code || "";
  const lines = [hint(CLIENT_HINTS, err.code)];
  if (err.message && err.message !== lines[0]) lines.push(err.pageWords ? pageText(err.message, TEXT.long) : err.message);
  if (err.effectUnknown) lines.push("Whether the call ran is unknown: look at the page before repeating it.");
  box.replaceChildren(el("strong", { "data-testid": "ext-outcome-title" }, `Not completed · ${err.code}`), ...lines.filter(Boolean).map((l) => el("div", {}, l)));
  $("ext-after").hidden = true;
  $("ext-response").textContent = "";
}

function showAfter(after) {
  const box = $("ext-after");
  if (!after || typeof after !== "object") {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const items = [];
  for (const r of (after.records || []).slice(0, BOUNDS.listItems)) {
    if (r.removed) items.push(el("li", { "data-record": r.id }, pageCode(r.id), " is no longer on the page"));
    for (const [k, v] of Object.entries(r.fields || {}).slice(0, BOUNDS.listItems)) {
      items.push(el("li", { "data-record": r.id, "data-field": k }, pageCode(r.id), " ", pageText(k, 40), " → ", pageText(typeof v === "string" ? JSON.stringify(v) : safeJSON(v, TEXT.short), TEXT.short)));
    }
  }
  for (const [k, v] of Object.entries(after.state || {}).slice(0, BOUNDS.listItems)) items.push(el("li", { "data-state": k }, "state.", pageText(k, 40), " → ", pageText(safeJSON(v, TEXT.short), TEXT.short)));
  if (after.recordsOmitted || after.stateOmitted) items.push(el("li", { class: "hint" }, "more changes were left out"));
  box.replaceChildren(el("strong", {}, "Changes the page reported"), el("ul", {}, ...items));
  box.hidden = false;
}
