// The panel's "Desktop agents" section: whether pling-mcp's host is
// connected, the person's opt-in for the site in the tab ("Let desktop
// agents use this site"), which MCP clients are connected, each call they
// made (the audit's metadata: time, client, method, capability, request id,
// outcome; never the input), and the switch that cuts every agent off at
// once. The state lives in the background worker; this page shows it and
// asks for changes. Everything an agent or a page wrote is shown as text.

const params = new URLSearchParams(location.search);
const pinned = params.has("tab") ? Number(params.get("tab")) : null;
const q = (id) => document.querySelector(`[data-testid="${id}"]`);
let tabId = Number.isInteger(pinned) ? pinned : null;
let tabOrigin = null; // the origin of the tab's document, as the extension read it

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/gu;
const shown = (v, max = 120) => {
  const s = String(v ?? "").replace(HIDDEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
  return s.length > max ? s.slice(0, max) + "…" : s;
};

function agentsAsk(type, extra = {}) {
  return chrome.runtime.sendMessage({ type, tabId, ...extra }).then((r) => {
    if (!r || !r.ok) throw new Error(r ? r.error : "no answer");
    return r.value;
  });
}

// readOrigin asks the tab for its origin; it works only while the person's
// grant (the toolbar button) covers the tab.
async function readOrigin() {
  if (tabId === null) return null;
  try {
    const [r] = await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, func: () => location.origin });
    return r && typeof r.result === "string" ? r.result : null;
  } catch {
    return null;
  }
}

const HOST_WORDS = {
  ready: "pling-mcp's host is connected",
  connecting: "Connecting to pling-mcp's host…",
  busy: "Another browser serves desktop agents on this machine",
  disconnected: "pling-mcp's host is not running (run `pling-mcp install`, then reload the extension)",
  failed: "pling-mcp's host failed",
};

function renderAgents(s) {
  const host = q("agents-host");
  host.dataset.state = s.host.state;
  host.textContent = (HOST_WORDS[s.host.state] || shown(s.host.state, 20)) + (s.host.message && s.host.state !== "ready" ? `: ${shown(s.host.message, 300)}` : "");

  const allow = q("agents-site");
  const origin = tabOrigin || s.tabOrigin;
  q("agents-site-origin").textContent = origin ? shown(origin, 200) : "(no page given to the extension)";
  allow.disabled = !origin;
  allow.checked = !!origin && s.sites.includes(origin);
  allow.dataset.origin = origin || "";

  const off = q("agents-off");
  off.checked = s.off;
  q("agents-off-label").textContent = s.off ? "Desktop agents are cut off" : "Cut off every desktop agent now";

  const list = q("agents-clients");
  list.replaceChildren(
    ...(s.clients.length
      ? s.clients.map((c) => {
          const li = document.createElement("li");
          li.textContent = `${shown(c.client || "an MCP client", 100)} → ${shown(c.origin, 200)}${c.app ? ` (app ${shown(c.app, 60)})` : ""}`;
          return li;
        })
      : [Object.assign(document.createElement("li"), { className: "muted", textContent: "No desktop agent is connected." })]),
  );
  q("agents-clients").dataset.count = String(s.clients.length);

  const calls = q("agents-calls");
  calls.replaceChildren(
    ...s.calls.map((c) => {
      const li = document.createElement("li");
      li.dataset.outcome = shown(c.outcome, 40);
      li.textContent = `${new Date(c.at).toLocaleTimeString()} · ${shown(c.client, 60)} · ${shown(c.method, 20)}${c.capability ? " " + shown(c.capability) : ""} · ${shown(c.outcome, 40)}${c.requestId ? " · " + shown(c.requestId, 80) : ""}`;
      return li;
    }),
  );
}

async function refreshAgents() {
  try {
    renderAgents(await agentsAsk("pling.agents.state"));
  } catch (err) {
    q("agents-host").textContent = `The extension's worker did not answer: ${shown(err.message, 200)}`;
  }
}

async function followTab(id) {
  tabId = id;
  tabOrigin = await readOrigin();
  if (tabOrigin) await agentsAsk("pling.agents.grant", { origin: tabOrigin }).catch(() => {});
  refreshAgents();
}

async function startAgents() {
  q("agents-site").addEventListener("change", async (e) => {
    const origin = e.target.dataset.origin;
    if (!origin) return;
    renderAgents(await agentsAsk("pling.agents.site", { origin, allow: e.target.checked }));
  });
  q("agents-off").addEventListener("change", async (e) => {
    renderAgents(await agentsAsk("pling.agents.off", { off: e.target.checked }));
  });
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || sender.tab || !msg) return;
    if (msg.type === "pling.agents.changed") refreshAgents();
    if (msg.type === "pling.granted" && msg.tabId === tabId) followTab(tabId);
  });
  chrome.tabs.onUpdated.addListener((id, info) => {
    if (id === tabId && info.status === "complete") followTab(id);
  });
  if (pinned === null) {
    const own = await chrome.windows.getCurrent();
    chrome.tabs.onActivated.addListener(({ tabId: id, windowId }) => {
      if (windowId === own.id) followTab(id);
    });
    const [tab] = await chrome.tabs.query({ active: true, windowId: own.id });
    tabId = tab ? tab.id : null;
  }
  await followTab(tabId);
}

startAgents();
