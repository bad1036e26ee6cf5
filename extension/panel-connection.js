// The panel's connection to the page. It never talks to the page itself:
// it injects the content script (which holds the client library) into the
// tab's top frame and asks it, in that document only, to call the
// surface. Every wait ends at the panel's own deadline.

import { DEADLINE_MS } from "./panel-bounds.js";
import { state } from "./panel-state.js";
import { showTarget } from "./panel-status.js";

export class PanelError extends Error {
  constructor(plain) {
    super(plain.message || plain.code);
    this.code = plain.code || "EXTENSION_ERROR";
    this.effectUnknown = plain.effectUnknown === true;
    // A message from the content script's client can carry the page's
    // strings (a code, an id): it is shown as the page's words.
    this.pageWords = plain.pageWords === true;
  }
}

// withDeadline settles with what p settles with, or fails at the deadline.
function withDeadline(p, ms, onLate) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(onLate()), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// attach injects the content script into the tab's top frame. It works only
// where the person gave the extension this tab with the toolbar button
// (activeTab): the extension holds no standing access to any site.
async function attach() {
  const gen = state.generation;
  let results;
  try {
    results = await withDeadline(
      chrome.scripting.executeScript({ target: { tabId: state.tabId, frameIds: [0] }, files: ["pling-client.classic.js", "content.js"] }),
      DEADLINE_MS.attach,
      () => new PanelError({ code: "TIMEOUT", message: `The page did not let the extension in within ${DEADLINE_MS.attach / 1000} s: it may be busy.` }),
    );
  } catch (err) {
    if (err instanceof PanelError) throw err;
    throw new PanelError({
      code: "NOT_SCRIPTABLE",
      message: "The extension may not read this page. Press the Pling button in the toolbar while this tab is shown to let it; browser pages and the web store cannot be read at all.",
    });
  }
  // The tab navigated while the script went in: that document is gone.
  if (gen !== state.generation) throw new PanelError({ code: "PAGE_GONE", message: "The page navigated while the extension started on it." });
  const r = results && results[0];
  if (!r || !r.result || typeof r.result.origin !== "string") throw new PanelError({ code: "NOT_SCRIPTABLE", message: "The extension could not start on this page." });
  state.documentId = r.documentId ?? null;
  state.origin = r.result.origin;
  showTarget(r.result);
}

export async function ask(message) {
  if (state.origin === null) await attach();
  const type = message.type;
  const ms = DEADLINE_MS[type];
  const gen = state.generation;
  const options = state.documentId ? { documentId: state.documentId } : { frameId: 0 };
  let reply;
  try {
    reply = await withDeadline(
      chrome.tabs.sendMessage(state.tabId, message, options),
      ms,
      () =>
        new PanelError({
          code: "TIMEOUT",
          message: `The page did not answer within ${ms / 1000} s; it may be busy or stuck.${type === "pling.invoke" ? " Whether the call ran is unknown: look at the page before calling again." : ""}`,
          effectUnknown: type === "pling.invoke",
        }),
    );
  } catch (err) {
    if (err instanceof PanelError) throw err;
    const text = String(err && err.message);
    // Not delivered: the document the panel attached to is gone.
    const delivered = !/Could not establish connection|Receiving end does not exist|No tab with id|No frame with id|Invalid document/i.test(text);
    if (!delivered && gen === state.generation) state.origin = null;
    throw new PanelError({
      code: "PAGE_GONE",
      message: delivered ? "The page went away before it answered." : "The page this panel was talking to is gone (it navigated, reloaded or closed). Nothing was sent.",
      effectUnknown: delivered && type === "pling.invoke",
    });
  }
  if (!reply || typeof reply !== "object") throw new PanelError({ code: "PAGE_GONE", message: "The page did not answer." });
  if (!reply.ok) throw new PanelError({ ...(reply.error || {}), pageWords: true });
  const value = reply.value;
  if (value && value.outcome) value.outcome = withParts(value.outcome, type);
  return value;
}

// withParts puts back what the content script leaves inside the envelope
// (see its forPanel): a success's result, a description, an invoke's after.
function withParts(outcome, type) {
  const e = outcome.envelope;
  if (!outcome.ok || !e || typeof e !== "object" || e.ok !== true) return outcome;
  const parts = { result: e.result };
  if (type === "pling.describe") parts.description = e.result;
  else if (e.after !== undefined && e.after !== null) parts.after = e.after;
  return { ...outcome, ...parts };
}
