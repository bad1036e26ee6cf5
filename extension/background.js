// The toolbar button opens the side panel; everything else happens in the
// panel page and the content script.
chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
