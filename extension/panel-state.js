// What the panel knows of the tab it shows, shared by all its parts: one
// object, so a navigation (which bumps generation) is seen by every
// answer still on its way, whichever part awaits it. A leaf.

export const state = {
  windowId: null, // the window this side panel lives in
  tabId: null,
  documentId: null, // the document the content script was injected into
  origin: null, // that document's origin: where the next call goes
  app: null, // the application chosen on the page
  appName: null, // the app the surface said it is, as the page's words
  description: null, // the last description shown
  transport: null, // how the last answer came: "port" or "window"
  stale: false, // the page navigated since the description was read
  selected: null, // capability id
  records: { offset: 0, list: [], total: 0, nextOffset: null },
  generation: 0, // bumped on every navigation: answers for an older page are dropped
  rendering: 0, // bumped on every render of the list: a stale chunked render stops
};
