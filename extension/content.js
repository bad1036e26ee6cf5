// The extension's content script: it runs in an isolated world of the page,
// after pling-client.classic.js (which defines PlingClient in this world),
// and is the only part of the extension that talks to the page's surface.
// The extension page asks it to discover, describe, page records and invoke
// over chrome.runtime messaging; it answers with the client's classified
// outcomes as plain data. It never reads or sends a page credential.
(() => {
  // The panel may inject this file again into a tab that was open before
  // the extension was loaded; one instance per page is enough.
  if (globalThis.__plingExtensionContent) return;
  globalThis.__plingExtensionContent = true;

  const { connect, discover, ClientErrorCode } = globalThis.PlingClient;
  const clients = new Map(); // "<transport>:<app>" -> Promise of a SurfaceClient

  // clientFor returns a live client, connecting on first use and again once
  // the previous one ended. The window transport is the default: it reaches
  // whichever surface listens now, so it survives the page restarting its
  // listener. The private channel keeps replies from the page's other
  // scripts; it is used without a credential, so a page that demands one
  // refuses it.
  async function clientFor(app, privateChannel) {
    const transport = privateChannel ? "port" : "window";
    const key = `${transport}:${app ?? ""}`;
    const existing = clients.get(key);
    if (existing) {
      const c = await existing.catch(() => null);
      if (c && !c.closed) return c;
      if (clients.get(key) === existing) clients.delete(key);
    }
    const opening = connect({ app, transport, describeTimeoutMs: 5000 }).then((c) => {
      c.ended.then((reason) => {
        if (clients.get(key) === opening) clients.delete(key);
        tell({ type: "pling.ended", app: c.app ?? null, transport, error: reason.toJSON() });
      });
      return c;
    });
    clients.set(key, opening);
    opening.catch(() => {
      if (clients.get(key) === opening) clients.delete(key);
    });
    return opening;
  }

  // withClient runs one call. A private channel that let a call time out
  // may have been closed by the page without a word (Chromium does not
  // report a closed MessagePort), so it is dropped: the next call connects
  // again.
  async function withClient(msg, fn) {
    const c = await clientFor(msg.app ?? undefined, msg.private === true);
    try {
      return await fn(c);
    } catch (err) {
      if (c.transport === "port" && err && err.code === ClientErrorCode.TIMEOUT) c.close();
      throw err;
    }
  }

  // tell informs open extension pages; none being open is normal.
  function tell(message) {
    try {
      chrome.runtime.sendMessage(message).catch(() => {});
    } catch {
      // the extension was reloaded under this page
    }
  }

  const handlers = {
    async "pling.discover"() {
      const found = await discover({ timeoutMs: 4000 });
      return found.map(({ app, outcome }) => ({
        app: app ?? null,
        kind: outcome.kind,
        code: outcome.error ? outcome.error.code : null,
        capabilities: outcome.description ? outcome.description.capabilities.length : null,
      }));
    },
    async "pling.describe"(msg) {
      return withClient(msg, async (c) => ({ outcome: await c.describe(msg.input ?? undefined), app: c.app ?? null, transport: c.transport }));
    },
    async "pling.page"(msg) {
      return withClient(msg, async (c) => {
        const p = await c.page({ offset: msg.offset, limit: msg.limit });
        return { records: p.records, recordsTotal: p.recordsTotal, offset: p.offset, limit: p.limit, nextOffset: p.nextOffset };
      });
    },
    async "pling.invoke"(msg) {
      return withClient(msg, async (c) => {
        const options = {};
        if (typeof msg.record === "string") options.record = msg.record;
        return { outcome: await c.invoke(msg.capability, msg.input ?? {}, options), app: c.app ?? null, transport: c.transport };
      });
    },
  };

  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    // Only this extension's own pages talk to this script.
    if (sender.id !== chrome.runtime.id || !msg || typeof msg !== "object" || !Object.hasOwn(handlers, msg.type)) return false;
    handlers[msg.type](msg).then(
      (value) => sendResponse({ ok: true, value }),
      (err) => sendResponse({ ok: false, error: plainError(err) }),
    );
    return true; // the answer comes asynchronously
  });

  function plainError(err) {
    if (err && typeof err.toJSON === "function" && err.name === "SurfaceClientError") return err.toJSON();
    return { name: "Error", code: "EXTENSION_ERROR", message: String(err && err.message ? err.message : err), effectUnknown: false };
  }
})();
