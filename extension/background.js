// The toolbar button opens the side panel in the window it was pressed in.
// Pressing it is also what gives the extension the tab (activeTab): the
// extension has no standing access to any site. (With the side panel's own
// open-on-click behaviour, Chromium opens the panel without that grant.)
// An open panel showing that tab is told, so it reads the page at once.
chrome.action.onClicked.addListener((tab) => {
  chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
  chrome.runtime.sendMessage({ type: "pling.granted", tabId: tab.id }).catch(() => {});
});
