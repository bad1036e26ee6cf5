// The extension's content script. The panel injects it (after
// pling-client.classic.js, which defines PlingClient in the same isolated
// world) into the top frame of the tab it shows, only when a person has
// given the extension that tab (activeTab); the manifest declares no
// content script and no standing host access. It is the only part of the
// extension that talks to the page's surface, and it answers the panel's
// requests with the client's classified outcomes as plain data. It never
// reads or sends a page credential.
//
// Every answer names the origin of this document, and an invoke names the
// origin the panel showed next to its Invoke button: a call meant for one
// origin is never sent to another.
//
// The file's value is what the panel learns on injection: this document's
// origin and title.
(() => {
  const about = () => ({ origin: location.origin, title: String(document.title).slice(0, 300) });
  // Injected again into the same document (Refresh), one instance is enough.
  // Own property only: an element with this id would answer for it as a
  // named property of the window, in this world too, and turn the panel away.
  if (Object.prototype.hasOwnProperty.call(globalThis, "__plingExtensionContent")) return about();
  globalThis.__plingExtensionContent = true;

  const { connect, discover, ClientErrorCode } = globalThis.PlingClient;
  // The panel's app picker offers 20 applications: no more are collected
  // or sent to it, whatever the page answers.
  const APPS_SHOWN = 20;
  const clients = new Map(); // app -> Promise of a SurfaceClient
  const closedHere = new WeakSet(); // clients this script closed itself

  // clientFor returns a live client, connecting on first use and again once
  // the previous one ended. The client opens the page's private channel
  // where the page offers one, and otherwise says it talks over the window.
  async function clientFor(app) {
    const key = app ?? "";
    const existing = clients.get(key);
    if (existing) {
      const c = await existing.catch(() => null);
      if (c && !c.closed) return c;
      if (clients.get(key) === existing) clients.delete(key);
    }
    const opening = connect({ app, describeTimeoutMs: 5000, connectTimeoutMs: 3000 }).then((c) => {
      c.ended.then((reason) => {
        if (clients.get(key) === opening) clients.delete(key);
        tell({ type: "pling.ended", app: c.app ?? null, transport: c.transport, error: reason.toJSON(), closedHere: closedHere.has(c) });
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
  // may have been closed by the page without a word, so it is dropped: the
  // next call connects again.
  async function withClient(msg, fn) {
    const c = await clientFor(msg.app ?? undefined);
    try {
      return { ...(await fn(c)), app: c.app ?? null, transport: c.transport, privateRefused: c.privateRefused ?? null, origin: location.origin };
    } catch (err) {
      if (c.transport === "port" && err && err.code === ClientErrorCode.TIMEOUT) {
        closedHere.add(c); // the panel must not say the page closed it
        c.close();
      }
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

  // A refusal's code as the panel gets it from discovery: a protocol code is
  // a short name in capitals; anything else the page wrote is not passed on
  // (20 of them of a megabyte each would be the panel's 20 MB).
  const codeOf = (code) => (typeof code === "string" && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : "MALFORMED_RESPONSE");

  const handlers = {
    async "pling.discover"() {
      const found = await discover({ timeoutMs: 6000, maxApps: APPS_SHOWN });
      return {
        origin: location.origin,
        apps: found.map(({ app, outcome }) => ({ app: app ?? null, kind: outcome.kind, code: outcome.error ? codeOf(outcome.error.code) : null })),
      };
    },
    async "pling.describe"(msg) {
      return withClient(msg, async (c) => ({ outcome: forPanel(await c.describe(msg.input ?? undefined)) }));
    },
    async "pling.page"(msg) {
      return withClient(msg, async (c) => {
        const p = await c.page({ offset: msg.offset, limit: msg.limit });
        return { records: p.records, recordsTotal: p.recordsTotal, offset: p.offset, limit: p.limit, nextOffset: p.nextOffset };
      });
    },
    async "pling.invoke"(msg) {
      // The panel showed this origin next to Invoke; this document must be of it.
      if (msg.origin !== location.origin) {
        const err = new Error(`The call was meant for ${msg.origin}, but the page is now ${location.origin}. Nothing was sent.`);
        err.code = "ORIGIN_CHANGED";
        throw err;
      }
      return withClient(msg, async (c) => {
        const options = {};
        if (typeof msg.record === "string") options.record = msg.record;
        return { outcome: forPanel(await c.invoke(msg.capability, msg.input ?? {}, options)) };
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

  // Messaging copies what it carries as JSON, once for every reference: a
  // success names the reply's result as result, description and inside the
  // envelope, 3 MiB of messaging for a reply at the 1 MiB bound. The panel
  // takes those parts from the envelope (withParts).
  function forPanel(outcome) {
    if (!outcome.ok || !outcome.envelope) return outcome;
    const { result, description, after, ...rest } = outcome;
    return rest;
  }

  function plainError(err) {
    if (err && typeof err.toJSON === "function" && err.name === "SurfaceClientError") return err.toJSON();
    return { name: "Error", code: (err && err.code) || "EXTENSION_ERROR", message: String(err && err.message ? err.message : err), effectUnknown: false };
  }

  return about();
})();
