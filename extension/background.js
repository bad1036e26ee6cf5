// The toolbar button opens the side panel in the window it was pressed in.
// Pressing it is also what gives the extension the tab (activeTab): the
// extension has no standing access to any site. (With the side panel's own
// open-on-click behaviour, Chromium opens the panel without that grant.)
// An open panel showing that tab is told, so it reads the page at once.
chrome.action.onClicked.addListener((tab) => {
  chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
  chrome.runtime.sendMessage({ type: "pling.granted", tabId: tab.id }).catch(() => {});
  agents.granted(tab);
});

// ---------------------------------------------------------------------------
// Desktop agents: MCP clients on this machine reach a page through
// pling-mcp's native messaging host (see mcpfacade/README.md). The host is a
// relay; every decision is taken here, and a person sees and controls it in
// the panel:
//
//   - a site is reachable only after the person let desktop agents use it
//     (chrome.storage.local "agentSites"), and only in a tab the person gave
//     the extension with its button (activeTab), while that tab stays on the
//     site: closing it or going to another origin ends the reach;
//   - the switch "agentsOff" cuts every agent off at once: calls waiting
//     are answered CUT_OFF, and nothing more is sent;
//   - every call is listed with the metadata the page's audit keeps (time,
//     client, method, capability, request id, outcome), never its input.
//
// Requests reach the page through page.js, the same script pling-mcp's
// DevTools mode evaluates, in the extension's isolated world: the same
// origin check before posting, the same reply bound before encoding.
const agents = (() => {
  const HOST = "dev.pling.mcp";
  const CALLS_KEPT = 50;
  let port = null;
  let host = { state: "connecting", message: "" };
  let retryMs = 1000;
  let retryTimer = 0;
  const clients = new Map(); // agent number -> { client, origin, url, app, since }
  const pending = new Map(); // "agent:id" -> { agent, id, at }
  const calls = []; // newest first
  const grants = new Map(); // tab id -> origin, given by the toolbar button
  let sites = {}; // origin -> true: desktop agents may use it
  let off = false;
  const ready = chrome.storage.local.get(["agentSites", "agentsOff"]).then((v) => {
    sites = v.agentSites && typeof v.agentSites === "object" ? v.agentSites : {};
    off = v.agentsOff === true;
  });
  const grantsReady = chrome.storage.session.get("agentGrants").then((v) => {
    for (const [k, o] of Object.entries(v.agentGrants || {})) grants.set(Number(k), o);
  });
  const saveGrants = () => chrome.storage.session.set({ agentGrants: Object.fromEntries(grants) }).catch(() => {});

  const originOf = (url) => {
    try {
      const u = new URL(url);
      return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
    } catch {
      return null;
    }
  };

  function connect() {
    clearTimeout(retryTimer);
    if (port) return;
    try {
      port = chrome.runtime.connectNative(HOST);
    } catch (err) {
      host = { state: "failed", message: String(err && err.message) };
      return;
    }
    host = { state: "connecting", message: "" };
    port.onMessage.addListener(fromHost);
    port.onDisconnect.addListener(() => {
      const why = chrome.runtime.lastError ? chrome.runtime.lastError.message : "the host exited";
      port = null;
      clients.clear();
      pending.clear();
      if (host.state !== "busy") host = { state: "disconnected", message: why };
      changed();
      // Started again, later each time; a busy socket (another browser
      // serves agents) is looked at every half minute.
      const wait = host.state === "busy" ? 30000 : retryMs;
      retryMs = Math.min(retryMs * 2, 30000);
      retryTimer = setTimeout(connect, wait);
    });
  }

  function toHost(agent, msg) {
    if (!port) return;
    try {
      port.postMessage({ agent, msg });
    } catch {
      // the port closed; onDisconnect says so
    }
  }

  // tellAgents asks every connected agent to read the page's tools again.
  function tellAgents() {
    toHost(0, { type: "changed" });
  }

  // changed refreshes open panels and the agents' tool lists.
  function changed() {
    tellAgents();
    chrome.runtime.sendMessage({ type: "pling.agents.changed" }).catch(() => {});
  }

  function fromHost(m) {
    if (!m || typeof m !== "object") return;
    if (m.type === "host") {
      host = { state: String(m.state).slice(0, 20), message: String(m.message || "").slice(0, 500), pid: Number(m.pid) || 0 };
      if (m.state === "ready") retryMs = 1000;
      changed();
      return;
    }
    const agent = Number(m.agent);
    const msg = m.msg;
    if (!Number.isSafeInteger(agent) || agent <= 0 || !msg || typeof msg !== "object") return;
    const text = (v, n) => (typeof v === "string" ? v.slice(0, n) : "");
    switch (msg.type) {
      case "hello":
        clients.set(agent, { client: text(msg.client, 100), origin: text(msg.origin, 200), url: text(msg.url, 500), app: text(msg.app, 100), since: Date.now() });
        chrome.runtime.sendMessage({ type: "pling.agents.changed" }).catch(() => {});
        return;
      case "gone":
        clients.delete(agent);
        for (const [k, p] of pending) if (p.agent === agent) pending.delete(k);
        chrome.runtime.sendMessage({ type: "pling.agents.changed" }).catch(() => {});
        return;
      case "request":
        request(agent, msg).catch(() => {});
        return;
    }
  }

  function answer(agent, id, body) {
    const key = `${agent}:${id}`;
    if (!pending.has(key)) return false; // cut off, or the agent left
    pending.delete(key);
    toHost(agent, { type: "reply", id, ...body });
    return true;
  }

  const fail = (code, message, extra = {}) => ({ error: { code, message, ...extra } });

  // target finds the tab a request for origin goes to: one the person gave
  // the extension while it showed that origin, preferring one showing url.
  async function target(origin, url) {
    const ids = [...grants].filter(([, o]) => o === origin).map(([id]) => id);
    let best = null;
    for (const id of ids) {
      const tab = await chrome.tabs.get(id).catch(() => null);
      if (!tab) {
        grants.delete(id);
        saveGrants();
        continue;
      }
      if (best === null || tab.url === url) best = id;
    }
    return best;
  }

  async function request(agent, msg) {
    await ready;
    await grantsReady;
    const id = Number(msg.id);
    if (!Number.isSafeInteger(id)) return;
    const at = Date.now();
    pending.set(`${agent}:${id}`, { agent, id, at });
    const c = clients.get(agent) || {};
    const origin = typeof msg.origin === "string" ? msg.origin : "";
    let env = {};
    try {
      env = JSON.parse(msg.request);
    } catch {
      // answered below, as the page would not get it
    }
    const entry = {
      at,
      client: c.client || "an MCP client",
      origin: origin.slice(0, 200),
      method: typeof env.method === "string" ? env.method.slice(0, 20) : "?",
      capability: typeof env.capability === "string" ? env.capability.slice(0, 200) : "",
      requestId: typeof env.id === "string" ? env.id.slice(0, 80) : "",
      outcome: "waiting",
    };
    const record = (outcome) => {
      entry.outcome = outcome;
      chrome.runtime.sendMessage({ type: "pling.agents.changed" }).catch(() => {});
    };
    // A describe every poll would push every call out of the list: only
    // invokes and refusals are kept there.
    const keep = () => {
      calls.unshift(entry);
      calls.length = Math.min(calls.length, CALLS_KEPT);
    };
    if (entry.method === "invoke") keep();
    const refuse = (code, message) => {
      if (entry.method !== "invoke") keep();
      record(code);
      answer(agent, id, fail(code, message));
    };
    if (off) return refuse("CUT_OFF", "The person cut desktop agents off in the Pling extension's panel.");
    if (typeof msg.request !== "string" || originOf(origin) !== origin) return refuse("BAD_REQUEST", "The request names no page origin.");
    if (!sites[origin]) return refuse("NOT_OPTED_IN", `The person has not let desktop agents use ${origin} (the Pling extension's panel, on that site).`);
    const tabId = await target(origin, msg.url);
    if (tabId === null) return refuse("NO_TAB", `No tab of ${origin} is open and given to the Pling extension (its button, pressed on the page).`);
    const timeoutMs = Math.min(Math.max(Number(msg.timeoutMs) || 30000, 1), 120000);
    const maxBytes = Math.min(Math.max(Number(msg.maxBytes) || 0, 1024), 4 << 20);
    let out;
    try {
      // page.js first, then the call, both in that one document: if the
      // tab moved on in between, the second injection fails (NAVIGATED).
      const [loaded] = await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: ["page.js"] });
      const [res] = await chrome.scripting.executeScript({
        target: { tabId, documentIds: [loaded.documentId] },
        // A document being torn down (a reload under the call) may have
        // lost page.js already: that is a navigation, and nothing is posted.
        func: (text, app, t, max, o) => {
          const f = globalThis.__plingMCPFacade;
          if (!f || typeof f.request !== "function") return { gone: true };
          return f.request(text, app, t, max, o).then(
            (reply) => ({ reply }),
            (err) => ({ failed: String(err && err.message ? err.message : err) }),
          );
        },
        args: [msg.request, typeof msg.app === "string" ? msg.app : "", timeoutMs, maxBytes, origin],
      });
      out = res && res.result ? res.result : { failed: "no result from the page" };
    } catch (err) {
      // The tab closed, went to another site (and with it the grant), or
      // reloaded under the call.
      const text = String(err && err.message ? err.message : err);
      const tab = await chrome.tabs.get(tabId).catch(() => null);
      if (!tab) {
        grants.delete(tabId);
        saveGrants();
      }
      if (/Cannot access|permission/i.test(text)) {
        grants.delete(tabId);
        saveGrants();
        changed();
        return refuse("NO_TAB", `The tab left ${origin}, or the extension lost it: press its button on the page again.`);
      }
      record("NAVIGATED");
      answer(agent, id, fail("NAVIGATED", tab ? "The page navigated or reloaded while the call waited." : "The tab closed while the call waited."));
      if (!tab) changed();
      return;
    }
    if (out.gone) {
      record("NAVIGATED");
      answer(agent, id, fail("NAVIGATED", "The page navigated or reloaded while the call waited."));
      return;
    }
    if (typeof out.reply === "string") {
      record(outcomeOf(out.reply));
      answer(agent, id, { reply: out.reply });
      return;
    }
    const f = String(out.failed);
    const OTHER = "pling-mcp: the page is on another origin: ";
    if (f.includes(OTHER)) {
      record("OTHER_ORIGIN");
      answer(agent, id, fail("OTHER_ORIGIN", f, { found: f.slice(f.indexOf(OTHER) + OTHER.length).split(/\s/)[0] }));
    } else if (f.includes("pling-mcp: reply larger than the bound")) {
      record("REPLY_TOO_LARGE");
      answer(agent, id, fail("REPLY_TOO_LARGE", f));
    } else if (f.includes("pling-mcp: reply not readable as JSON")) {
      record("REPLY_UNREADABLE");
      answer(agent, id, fail("REPLY_UNREADABLE", f));
    } else {
      record("NO_ANSWER");
      answer(agent, id, fail("NO_ANSWER", f));
    }
  }

  // outcomeOf is the audit's word for a reply: ok, the refusal's code, or
  // the approval still to come. Only the protocol's short codes are kept.
  function outcomeOf(text) {
    let e;
    try {
      e = JSON.parse(text).envelope;
    } catch {
      return "unreadable";
    }
    const code = (c) => (typeof c === "string" && /^[A-Z][A-Z0-9_]{0,63}$/.test(c) ? c : "refused");
    if (!e || typeof e !== "object") return "unreadable";
    if (e.error) return code(e.error.code);
    const r = e.result;
    if (r && typeof r === "object") {
      if (r.error && typeof r.error === "object") return code(r.error.code);
      const a = r.approval && typeof r.approval === "object" ? r.approval.status : r.approval;
      if (a === "pending" || a === "denied" || a === "unknown") return `approval ${a}`;
    }
    return "ok";
  }

  // The extension's own pages (the panel, as a side panel or a tab) read
  // and change this state; a content script never can: its sender.url is
  // the page's, not the extension's. (Pages have no chrome.runtime here.)
  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || !msg || typeof msg !== "object") return false;
    if (sender.origin !== new URL(chrome.runtime.getURL("")).origin || !String(sender.url || "").startsWith(chrome.runtime.getURL(""))) return false;
    const handle = {
      "pling.agents.state": async () => state(msg.tabId),
      "pling.agents.site": async () => {
        const o = originOf(String(msg.origin));
        if (!o) throw new Error("not a site");
        if (msg.allow) {
          sites[o] = true;
          if (Number.isSafeInteger(msg.tabId)) {
            grants.set(msg.tabId, o);
            saveGrants();
          }
        } else delete sites[o];
        await chrome.storage.local.set({ agentSites: sites });
        changed();
        return state(msg.tabId);
      },
      "pling.agents.off": async () => {
        off = msg.off === true;
        await chrome.storage.local.set({ agentsOff: off });
        if (off) {
          for (const p of [...pending.values()]) answer(p.agent, p.id, fail("CUT_OFF", "The person cut desktop agents off in the Pling extension's panel."));
        }
        changed();
        return state(msg.tabId);
      },
      "pling.agents.grant": async () => {
        // The panel read this tab's origin through its own grant.
        const o = originOf(String(msg.origin));
        if (o && Number.isSafeInteger(msg.tabId)) {
          grants.set(msg.tabId, o);
          saveGrants();
          changed();
        }
        return state(msg.tabId);
      },
    }[msg.type];
    if (!handle) return false;
    Promise.all([ready, grantsReady])
      .then(handle)
      .then(
        (value) => sendResponse({ ok: true, value }),
        (err) => sendResponse({ ok: false, error: String(err && err.message) }),
      );
    return true;
  });

  function state(tabId) {
    if (!port) connect();
    return {
      host,
      off,
      sites: Object.keys(sites),
      tabOrigin: grants.get(tabId) ?? null,
      clients: [...clients.values()],
      calls,
    };
  }

  function granted(tab) {
    const o = originOf(tab.url);
    if (o && Number.isSafeInteger(tab.id)) {
      grants.set(tab.id, o);
      saveGrants();
      if (sites[o]) changed();
    }
  }

  // A granted tab that closes or starts loading another document may have
  // taken the site away: the agents read their tools again.
  chrome.tabs.onRemoved.addListener((tabId) => {
    if (grants.delete(tabId)) {
      saveGrants();
      changed();
    }
  });
  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (grants.has(tabId) && (info.status === "complete" || info.url)) changed();
  });

  // The worker connects whenever it starts: at browser start, after an
  // install or reload, and when anything wakes it.
  chrome.runtime.onStartup.addListener(connect);
  chrome.runtime.onInstalled.addListener(connect);
  connect();
  return { granted };
})();
