// The extension page. It runs as the side panel (following the active tab of
// its own window) or as a tab opened at panel.html?tab=<tabId> (pinned to
// that tab). It never talks to the page directly: it injects the content
// script into the tab (which the person gave it with the toolbar button)
// and asks it to call the surface. It holds no page credential.
//
// The page may be hostile. So: every wait has a deadline kept here, not on
// the page's thread; what the page sends is bounded before it is shown;
// the page's words are shown as the page's words (bidi isolated, control
// and invisible characters made visible, length bounded) and never inside
// the panel's own badges, which come from a closed set; and a navigation
// clears the form, so nothing typed for one page is sent to another.
//
// This module wires the panel to the browser: the tab it follows, the
// navigations that clear it, and the buttons. Each job is a module of its
// own (panel-*.js); they import downwards only, and none imports this one.

import { RECORDS_PER_PAGE } from "./panel-bounds.js";
import { invoke } from "./panel-call.js";
import { pageRecords } from "./panel-context.js";
import { refresh, describe, clearDescription } from "./panel-describe.js";
import { $, el } from "./panel-dom.js";
import { state } from "./panel-state.js";
import { setStatus, setNotice, showTransport } from "./panel-status.js";

// Opened as a tab, the panel is pinned to the tab its query names.
const params = new URLSearchParams(location.search);
const pinnedTab = params.has("tab") ? Number(params.get("tab")) : null;

// markNavigated forgets the page: its description, the selection and
// whatever was typed, so a draft for one page is never sent to the next.
function markNavigated() {
  const hadDraft = !$("ext-call").hidden;
  state.generation += 1;
  state.stale = true;
  state.origin = null;
  state.documentId = null;
  clearDescription();
  showTransport(null);
  $("ext-invoke").disabled = true;
  $("ext-invoke-origin").replaceChildren("Sends to ", el("code", { "data-origin": "" }, "(no page)"));
  // The old origin and title are the old page's: never shown over the new one.
  $("ext-target").replaceChildren("Page loading…");
  setStatus("navigated", "The page is loading…");
  setNotice(hadDraft ? "The page navigated: the form was cleared, so nothing typed for the previous page is sent to this one." : "The page navigated: what was shown is gone.");
}

// follow makes the panel show another tab of its window.
function follow(tabId) {
  if (tabId === state.tabId) return;
  state.tabId = tabId;
  state.app = null;
  markNavigated();
  setNotice("");
  refresh();
}

async function main() {
  $("ext-describe").addEventListener("click", () => {
    setNotice("");
    refresh();
  });
  $("ext-invoke").addEventListener("click", () => invoke());
  $("ext-form").addEventListener("submit", (e) => {
    e.preventDefault();
    invoke();
  });
  $("ext-app").addEventListener("change", (e) => {
    state.app = e.target.value || null;
    state.selected = null;
    state.generation += 1;
    describe();
  });
  $("ext-records-prev").addEventListener("click", () => pageRecords(state.records.offset - RECORDS_PER_PAGE));
  $("ext-records-next").addEventListener("click", () => state.records.nextOffset !== null && pageRecords(state.records.nextOffset));

  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (tabId !== state.tabId) return;
    if (info.status === "loading") markNavigated();
    else if (info.status === "complete") refresh();
  });
  if (pinnedTab === null) {
    // As the side panel: follow the tab the person looks at in this
    // panel's own window, never the window that happens to have focus.
    const own = await chrome.windows.getCurrent();
    state.windowId = own.id;
    chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
      if (windowId === state.windowId) follow(tabId);
    });
  }
  // The person pressed the toolbar button on this panel's tab: the
  // extension may read it now.
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || sender.tab || !msg || msg.type !== "pling.granted" || msg.tabId !== state.tabId) return;
    if ($("ext-status").dataset.state === "not-scriptable") refresh();
  });
  // The content script reports a surface that closed its channel.
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || !sender.tab || sender.tab.id !== state.tabId || !msg || msg.type !== "pling.ended") return;
    if (!msg.error || msg.error.code !== "CLOSED") return;
    // The content script closes a private channel after a call timed out
    // on it: then it was the extension that closed it, not the page.
    if (msg.closedHere === true) setStatus("closed", "The extension closed the private channel after the page did not answer in time; the next call opens a new one.", "CLOSED");
    else setStatus("closed", "The page's surface closed its channel; the next call opens a new one.", "CLOSED");
  });

  if (pinnedTab !== null) state.tabId = Number.isInteger(pinnedTab) ? pinnedTab : null;
  else {
    const [tab] = await chrome.tabs.query({ active: true, windowId: state.windowId });
    state.tabId = tab ? tab.id : null;
  }
  if (state.tabId === null) {
    setStatus("error", "No tab to look at.", "NO_TAB");
    return;
  }
  await refresh();
}

main();
