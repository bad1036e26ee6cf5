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

import { findCapability, recordParam, isReferenceable } from "./pling-client.js";

const RECORDS_PER_PAGE = 8;

// Bounds on what the panel shows of a description. Beyond them the panel
// says which bound was passed instead of rendering (the client library has
// already refused replies over 1 MiB or nested deeper than 128).
const BOUNDS = Object.freeze({
  capabilities: 1000, // capabilities in one description
  schemaBytes: 64 * 1024, // one input schema, as JSON
  schemaDepth: 16, // nesting of one input schema
  properties: 100, // input members of one capability
  enumValues: 1000, // values of one enum
  recordIds: 1000, // ids offered in the record picker
  listItems: 50, // feedback, unavailable, after-changes shown
  stateChars: 20000, // the state shown as JSON
});
// Longest page text shown, by where it appears.
const TEXT = Object.freeze({ id: 120, short: 200, long: 1000 });
// Capabilities rendered per frame: a long list never blocks the panel for
// more than a frame's worth of work at a time.
const CHUNK = 40;

// Deadlines, kept by the panel: the content script shares the page's
// thread, so a page that busy-loops freezes the client's own timers.
const params = new URLSearchParams(location.search);
const pinnedTab = params.has("tab") ? Number(params.get("tab")) : null;
const deadlineCap = params.has("deadlineMs") ? Math.max(500, Number(params.get("deadlineMs")) || 0) : Infinity;
const DEADLINE_MS = Object.freeze({
  attach: Math.min(5000, deadlineCap),
  "pling.discover": Math.min(8000, deadlineCap),
  "pling.describe": Math.min(20000, deadlineCap),
  "pling.page": Math.min(20000, deadlineCap),
  "pling.invoke": Math.min(40000, deadlineCap), // the client's own 35 s, plus the way back
});

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

// ---------------------------------------------------------------------------
// The page's words

// Characters that change how text around them reads without being seen:
// controls, bidi overrides and isolates, zero-width and other format
// characters, line separators, private-use and unassigned code points,
// variation selectors (the supplement's too) and blank fillers (the blank
// braille cell too). Each is shown as a visible ⟨U+XXXX⟩ instead.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

/**
 * pageText renders a value the page sent as the page's words: in its own
 * bidi isolate (bdi, dir=auto), hidden characters made visible, at most max
 * characters (the rest counted, outside the isolate). Never inside a badge.
 * With ownLines, line feeds are kept as line breaks: for JSON the panel
 * indented itself, where every line feed is the panel's (JSON escapes the
 * page's own controls inside strings).
 */
function pageText(value, max = TEXT.short, tag = "bdi", ownLines = false) {
  const s = typeof value === "string" ? value : value === undefined ? "" : safeJSON(value, max * 2);
  const chars = Array.from(s.length > max * 4 ? s.slice(0, max * 4) : s);
  const shown = chars.slice(0, max).join("");
  const node = el(tag, { class: "page-text", dir: "auto" });
  let at = 0;
  for (const m of shown.matchAll(HIDDEN)) {
    if (ownLines && m[0] === "\n") continue;
    if (m.index > at) node.append(shown.slice(at, m.index));
    const cp = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    node.append(el("span", { class: "ctl", title: "an invisible or control character the page sent" }, `⟨U+${cp}⟩`));
    at = m.index + m[0].length;
  }
  if (at < shown.length) node.append(shown.slice(at));
  const rest = s.length > max * 4 ? s.length - shown.length : chars.length - max;
  if (rest <= 0) return node;
  const wrap = el("span", {}, node, el("span", { class: "cut" }, `… ${rest} more characters`));
  return wrap;
}

function pageCode(value, max = TEXT.id) {
  return el("code", {}, pageText(value, max));
}

// Scripts one identifier may mix (Unicode's "highly restrictive" profile,
// UTS #39): Han with kana, Hangul or Bopomofo, and Latin.
const SCRIPTS = ["Latin", "Cyrillic", "Greek", "Armenian", "Georgian", "Cherokee", "Han", "Hiragana", "Katakana", "Hangul", "Bopomofo", "Arabic", "Hebrew", "Thai", "Devanagari"];
const SCRIPT_RES = SCRIPTS.map((name) => [name, new RegExp(`\\p{Script=${name}}`, "u")]);
const CJK_SETS = [["Latin", "Han", "Hiragana", "Katakana"], ["Latin", "Han", "Bopomofo"], ["Latin", "Han", "Hangul"]];

// scriptsOf names the scripts of a text's letters (its first 200), in the
// order they appear; a letter of none of SCRIPTS is "another script".
function scriptsOf(s) {
  const found = [];
  for (const ch of Array.from(s).slice(0, 200)) {
    if (!/\p{L}/u.test(ch)) continue;
    const hit = SCRIPT_RES.find(([, re]) => re.test(ch));
    const name = hit ? hit[0] : "another script";
    if (!found.includes(name)) found.push(name);
  }
  return found;
}

function mixesScripts(s) {
  const found = scriptsOf(s);
  return found.length > 1 && !CJK_SETS.some((set) => found.every((x) => set.includes(x)));
}

// lookalikeNote is the panel's warning beside an id or a title that may
// look like another: letters of several scripts (a Cyrillic "а" in
// "аpprove"), or, with foldedTwin, an id that differs from another only in
// letter case. null when there is nothing to say.
function lookalikeNote(s, testid, foldedTwin = false) {
  const notes = [];
  if (mixesScripts(s)) notes.push(`mixes scripts (${scriptsOf(s).join(", ")}): it may look like something it is not`);
  if (foldedTwin) notes.push("differs from another id only in letter case");
  if (!notes.length) return null;
  return el("span", { class: "lookalike", ...(testid ? { "data-testid": testid } : {}) }, ` ⚠ ${notes.join("; ")}`);
}

// safeJSON is JSON text of a value (as JSON.stringify writes it), cut at
// max characters. It stops writing at the cut rather than cutting what it
// wrote: indentation grows with depth, so a reply within the client's
// bounds (1 MiB, 128 levels) can be over a hundred million characters
// indented, seconds of the panel's thread.
function safeJSON(v, max, indent = 0) {
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return String(v);
  const step = " ".repeat(indent);
  const nl = indent ? "\n" : "";
  const colon = indent ? ": " : ":";
  let text = "";
  const put = (s) => {
    text += s;
    if (text.length > max) throw CUT;
  };
  const write = (x, pad) => {
    if (x === null || typeof x !== "object") {
      const s = JSON.stringify(x);
      put(s === undefined ? "null" : s);
      return;
    }
    const inner = pad + step;
    const array = Array.isArray(x);
    put(array ? "[" : "{");
    let first = true;
    const item = (key, value) => {
      put((first ? nl : "," + nl) + inner);
      first = false;
      if (key !== undefined) put(JSON.stringify(key) + colon);
      write(value, inner);
    };
    if (array) for (let i = 0; i < x.length; i++) item(undefined, x[i]);
    else {
      for (const k of Object.keys(x)) {
        const e = x[k];
        if (e !== undefined && typeof e !== "function" && typeof e !== "symbol") item(k, e);
      }
    }
    if (!first) put(nl + pad);
    put(array ? "]" : "}");
  };
  try {
    write(v, "");
    return text;
  } catch (err) {
    if (err !== CUT) return String(v);
    return `${text.slice(0, max)}… (cut at ${max} characters)`;
  }
}
const CUT = Symbol("cut");

// The panel's own words for the values the protocol defines. A value
// outside these sets gets no badge; it is shown as the page's words.
const EFFECTS = Object.freeze({ read: "reads", write: "writes", destructive: "destructive" });
const APPROVALS = Object.freeze({ none: null, ask: "may ask a person", always: "needs a person's approval" });

const state = {
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

// ---------------------------------------------------------------------------
// Talking to the content script

class PanelError extends Error {
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

async function ask(message) {
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

// ---------------------------------------------------------------------------
// Status, target, transport

function setStatus(kind, text, code) {
  const s = $("ext-status");
  s.dataset.state = kind;
  if (code) s.dataset.code = code;
  else delete s.dataset.code;
  s.textContent = text;
}

function setNotice(text) {
  const n = $("ext-notice");
  n.hidden = !text;
  n.textContent = text || "";
}

function showTarget(about) {
  const t = $("ext-target");
  // The origin is the browser's; the title is whatever the page chose
  // ("Private channel ✔ · verified by Pling"), so it is labelled as such.
  const title = about && typeof about.title === "string" && about.title ? about.title : "";
  t.replaceChildren(
    el("span", { "data-testid": "ext-target-origin" }, state.origin || ""),
    title ? " · " : "",
    title ? el("span", { class: "page-claim", "data-testid": "ext-target-title" }, "title, in the page's words: ", pageText(title, 80), lookalikeNote(title, "")) : "",
  );
  $("ext-invoke-origin").replaceChildren("Sends to ", el("code", { "data-origin": state.origin || "" }, state.origin || "(no page)"));
}

// showTransport says how answers travel: the private channel reaches this
// extension only; on the page window any script of the page can read the
// replies and forge them.
function showTransport(transport, privateRefused) {
  state.transport = transport;
  const t = $("ext-transport");
  t.hidden = !transport;
  t.dataset.transport = transport || "";
  if (transport === "port") t.textContent = "Private channel";
  else if (transport === "window") {
    t.textContent = privateRefused === "REFUSED" ? "Page window: the page refused a private channel; its scripts could forge answers" : "Page window: the page's scripts could forge answers";
  } else t.textContent = "";
}

// ---------------------------------------------------------------------------
// Describing the page

async function refresh() {
  const gen = ++state.generation;
  setStatus("connecting", "Looking for an agent surface on the page…");
  let found;
  try {
    found = await ask({ type: "pling.discover" });
  } catch (err) {
    if (gen !== state.generation) return;
    clearDescription();
    if (err.code === "NO_SURFACE") setStatus("no-surface", "This page offers no agent surface (nothing answered).", err.code);
    else if (err.code === "NOT_SCRIPTABLE") setStatus("not-scriptable", err.message, err.code);
    else setStatus("error", err.message, err.code);
    return;
  }
  if (gen !== state.generation) return;
  const apps = found.apps.slice(0, 20).map((f) => f.app);
  if (!apps.includes(state.app)) state.app = apps[0] ?? null;
  const picker = $("ext-app");
  picker.replaceChildren(...apps.map((a) => el("option", { value: a ?? "" }, a === null ? "(unnamed)" : pageText(a, 60, "span").textContent)));
  picker.value = state.app ?? "";
  picker.closest("label").hidden = apps.length < 2;
  await describe(gen);
}

async function describe(gen = state.generation) {
  let answer;
  try {
    answer = await ask({ type: "pling.describe", app: state.app });
  } catch (err) {
    if (gen !== state.generation) return;
    setStatus("error", err.message, err.code);
    showClientError(err);
    return;
  }
  if (gen !== state.generation) return;
  const { outcome } = answer;
  showTransport(answer.transport, answer.privateRefused);
  if (outcome.kind !== "success") {
    // What was shown stays (the page refused to describe itself, it did not
    // go away); a call from it is checked by the page again.
    setStatus("error", "The page's surface did not describe itself; its answer is under Result.", outcome.error.code);
    showOutcome(outcome);
    return;
  }
  const problem = descriptionProblem(outcome.description);
  if (problem) {
    clearDescription();
    setStatus("error", `Not shown: ${problem}`, "BOUND_EXCEEDED");
    return;
  }
  const d = outcome.description;
  state.description = d;
  state.stale = false;
  const c = d.context;
  const list = (c.records ?? []).slice(0, RECORDS_PER_PAGE);
  const total = Number.isInteger(c.recordsTotal) ? c.recordsTotal : list.length;
  state.records = { offset: 0, list, total, nextOffset: list.length < total ? list.length : null };
  // The status is the panel's own signal: the app's name, the page's
  // words, goes in the summary beside it.
  state.appName = answer.app;
  setStatus("connected", "Connected to the page's agent surface.");
  try {
    renderDescription();
  } catch (err) {
    // Whatever the page sent, the panel says what happened instead of hanging.
    clearDescription();
    setStatus("error", `The panel could not show this description: ${err && err.message}`, "RENDER_FAILED");
  }
}

// descriptionProblem names the first bound a description passes, or "".
function descriptionProblem(d) {
  if (d.capabilities.length > BOUNDS.capabilities) {
    return `the page lists ${d.capabilities.length} capabilities, more than the ${BOUNDS.capabilities} this panel shows.`;
  }
  return "";
}

// schemaProblem names the bound an input schema passes, or "": such a
// capability is listed but cannot be called from the panel.
function schemaProblem(schema) {
  if (schema === undefined || schema === null) return "";
  const text = safeJSON(schema, BOUNDS.schemaBytes + 1);
  if (text.length > BOUNDS.schemaBytes) return `its input schema is larger than ${BOUNDS.schemaBytes / 1024} KiB`;
  let deepest = 0;
  const stack = [[schema, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop();
    deepest = Math.max(deepest, depth);
    if (deepest > BOUNDS.schemaDepth) return `its input schema is nested deeper than ${BOUNDS.schemaDepth}`;
    if (v && typeof v === "object") for (const k of Object.keys(v)) stack.push([v[k], depth + 1]);
  }
  const props = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (props.length > BOUNDS.properties) return `its input has ${props.length} members, more than ${BOUNDS.properties}`;
  for (const name of props) {
    const p = schema.properties[name];
    if (isObject(p) && Array.isArray(p.enum) && p.enum.length > BOUNDS.enumValues) {
      return `its input member ${JSON.stringify(Array.from(name).slice(0, 40).join(""))} offers ${p.enum.length} values, more than ${BOUNDS.enumValues}`;
    }
  }
  return "";
}

function clearDescription() {
  state.description = null;
  state.selected = null;
  state.rendering += 1;
  $("ext-capabilities").replaceChildren();
  $("ext-call").hidden = true;
  $("ext-form").replaceChildren();
  $("ext-summary").textContent = "";
  $("ext-records").replaceChildren();
  $("ext-records-range").textContent = "";
  $("ext-records-prev").disabled = true;
  $("ext-records-next").disabled = true;
  $("ext-feedback").replaceChildren();
  $("ext-state").textContent = "";
}

function renderDescription() {
  const d = state.description;
  const c = d.context;
  $("ext-summary").replaceChildren(
    state.appName === null ? "" : el("span", { "data-testid": "ext-app-name" }, "App ", pageCode(state.appName, 60), " · "),
    [
      `${d.capabilities.length} ${d.capabilities.length === 1 ? "capability" : "capabilities"}`,
      `${Number.isInteger(c.recordsTotal) ? c.recordsTotal : (c.records ?? []).length} records`,
    ].join(" · "),
  );
  if (state.selected && !findCapability(d, state.selected)) state.selected = null;
  renderCapabilities(d.capabilities);
  renderCall();
  renderRecords();
  renderContext();
}

// renderCapabilities adds the list a chunk per frame.
function renderCapabilities(caps) {
  const run = ++state.rendering;
  const list = $("ext-capabilities");
  list.replaceChildren();
  list.dataset.rendered = "0";
  if (caps.length === 0) {
    list.append(el("li", { class: "hint" }, "This session may use no capability on this page."));
    list.dataset.complete = "true";
    return;
  }
  list.dataset.complete = "false";
  // Ids that differ only in letter case are each flagged.
  const folds = new Map();
  for (const c of caps) if (typeof c.id === "string") folds.set(c.id.toLowerCase(), (folds.get(c.id.toLowerCase()) ?? 0) + 1);
  let at = 0;
  const step = () => {
    if (run !== state.rendering) return;
    const end = Math.min(caps.length, at + CHUNK);
    const frag = document.createDocumentFragment();
    for (; at < end; at++) frag.append(capabilityItem(caps[at], typeof caps[at].id === "string" && folds.get(caps[at].id.toLowerCase()) > 1));
    list.append(frag);
    list.dataset.rendered = String(at);
    if (at < caps.length) requestAnimationFrame(step);
    else list.dataset.complete = "true";
  };
  step();
}

function capabilityItem(cap, foldedTwin = false) {
  const effectWord = Object.hasOwn(EFFECTS, cap.effect) ? EFFECTS[cap.effect] : undefined;
  const approval = cap.approval ?? "none";
  const approvalKnown = Object.hasOwn(APPROVALS, approval);
  const blocked = schemaProblem(cap.inputSchema);
  const button = el(
    "button",
    {
      type: "button",
      "data-testid": `ext-cap-${cap.id}`,
      "data-effect": cap.effect || "",
      "data-approval": approval,
      "aria-pressed": String(cap.id === state.selected),
    },
    pageCode(cap.id),
    typeof cap.id === "string" ? lookalikeNote(cap.id, `ext-cap-lookalike-${cap.id}`, foldedTwin) : null,
    effectWord ? el("span", { class: "badge", "data-effect": cap.effect }, effectWord) : null,
    approvalKnown && APPROVALS[approval] ? el("span", { class: "badge approval", "data-testid": `ext-cap-approval-${cap.id}` }, APPROVALS[approval]) : null,
    cap.record ? el("span", { class: "badge record" }, "one record") : null,
    blocked ? el("span", { class: "badge blocked" }, "too large to call here") : null,
  );
  // What the page claims beyond the known values is its own words, outside the badges.
  const claims = [];
  if (!effectWord) claims.push(el("span", {}, "effect, in the page's words: ", pageText(cap.effect ?? "(none given)", 60)));
  if (!approvalKnown) claims.push(el("span", {}, "approval, in the page's words: ", pageText(approval, 60)));
  if (claims.length) button.append(el("span", { class: "page-claim", "data-testid": `ext-cap-claim-${cap.id}` }, ...claims.flatMap((x, i) => (i ? [" · ", x] : [x]))));
  button.addEventListener("click", () => select(cap.id));
  return el("li", {}, button);
}

function renderContext() {
  const c = state.description.context;
  const feedback = (c.feedback ?? []).slice(0, BOUNDS.listItems);
  const unavailable = (c.unavailable ?? []).slice(0, BOUNDS.listItems);
  $("ext-feedback").replaceChildren(
    ...feedback.map((f) => el("li", { "data-level": ["info", "success", "warning", "error"].includes(f && f.level) ? f.level : "info" }, pageText(f && f.message, TEXT.long))),
    ...unavailable.map((u) => el("li", { class: "hint" }, pageCode(u && u.id), " is unavailable", u && u.reason ? ": " : "", u && u.reason ? pageText(u.reason, TEXT.short) : "")),
  );
  $("ext-state").replaceChildren(pageText(safeJSON(c.state ?? {}, BOUNDS.stateChars, 2), BOUNDS.stateChars, "span", true));
}

// ---------------------------------------------------------------------------
// The call form, generated from the capability's inputSchema

function select(id) {
  state.selected = id;
  for (const b of $("ext-capabilities").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.testid === `ext-cap-${id}`));
  renderCall();
}

function renderCall() {
  const section = $("ext-call");
  const cap = state.selected && state.description ? findCapability(state.description, state.selected) : undefined;
  if (!cap) {
    section.hidden = true;
    $("ext-form").replaceChildren();
    return;
  }
  section.hidden = false;
  $("ext-selected").replaceChildren(pageText(cap.id, TEXT.id));
  const meta = [];
  if (cap.description) meta.push(el("div", {}, pageText(cap.description, TEXT.long)));
  const approval = cap.approval ?? "none";
  if (approval === "always" || approval === "ask") meta.push(el("div", {}, "Needs approval: a person decides in the page; this panel cannot approve."));
  if (cap.handoff) meta.push(el("div", {}, "Handoff, in the page's words: ", pageText(cap.handoff, TEXT.short)));
  if (cap.record) meta.push(el("div", {}, `Applies to one record of ${Number.isInteger(cap.record.total) ? cap.record.total : "?"}.`));
  $("ext-selected-meta").replaceChildren(...meta);

  const form = $("ext-form");
  const draft = readDraft(form);
  form.replaceChildren();
  const blocked = schemaProblem(cap.inputSchema);
  if (blocked) {
    form.append(el("p", { class: "hint", "data-testid": "ext-form-refused" }, `This capability cannot be called from the panel: ${blocked}.`));
    $("ext-invoke").disabled = true;
    return;
  }
  const param = recordParam(cap);
  if (param) form.append(recordField(param, draft[param]));
  const schema = isObject(cap.inputSchema) ? cap.inputSchema : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const props = isObject(schema.properties) ? schema.properties : {};
  for (const [name, prop] of Object.entries(props)) {
    if (name === param) continue;
    form.append(propertyField(name, isObject(prop) ? prop : {}, required.has(name), draft[name]));
  }
  if (!param && Object.keys(props).length === 0) form.append(el("p", { class: "hint" }, "This capability takes no input."));
  $("ext-invoke").disabled = state.stale;
}

function recordField(param, previous) {
  const c = state.description.context;
  const ids = (c.recordIds ?? []).filter((x) => typeof x === "string");
  const total = Number.isInteger(c.recordIdsTotal) ? c.recordIdsTotal : ids.length;
  const complete = ids.length >= total && ids.length <= BOUNDS.recordIds;
  const offered = ids.slice(0, BOUNDS.recordIds);
  let control;
  if (complete) {
    control = el("select", { "data-name": param, "data-testid": "ext-record", "data-param": param });
    control.append(...offered.map((id) => el("option", { value: id }, pageText(id, TEXT.id, "span").textContent)));
    if (offered.includes(previous)) control.value = previous;
  } else {
    // The id list was cut short: any id may be typed, the listed ones are suggested.
    const listId = "ext-record-ids";
    control = el("input", { "data-name": param, type: "text", list: listId, "data-testid": "ext-record", "data-param": param, value: previous ?? "" });
    document.getElementById(listId)?.remove();
    document.body.append(el("datalist", { id: listId }, ...offered.map((id) => el("option", { value: id }))));
  }
  return el("label", { class: "field" }, el("span", { class: "field-label" }, pageText(param, 40, "span"), " *", el("span", { class: "field-hint" }, ` · ${offered.length} of ${total} record ids`)), control);
}

function schemaType(prop) {
  if (Array.isArray(prop.enum)) return "enum";
  if (hasOwn(prop, "const")) return "json";
  const t = Array.isArray(prop.type) ? prop.type.find((x) => x !== "null") : prop.type;
  return ["string", "number", "integer", "boolean"].includes(t) ? t : "json";
}

function propertyField(name, prop, required, previous) {
  const type = schemaType(prop);
  const hints = [type === "json" ? "JSON" : type];
  if (typeof prop.minimum === "number") hints.push(`min ${prop.minimum}`);
  if (typeof prop.maximum === "number") hints.push(`max ${prop.maximum}`);
  if (typeof prop.maxLength === "number") hints.push(`up to ${prop.maxLength} characters`);
  // The page names the members: a control with a name (or an id) would
  // become a property of the form, shadowing the form's own methods
  // (form.append, form.querySelectorAll), so the name is kept as data.
  const common = { "data-name": name, "data-testid": `ext-field-${name}`, "data-type": type, "data-required": required ? "true" : null };
  const label = (...extra) =>
    el(
      "span",
      { class: "field-label" },
      pageText(name, 40, "span"),
      required ? " *" : "",
      el("span", { class: "field-hint" }, ` · ${hints.join(", ")}`),
      prop.description ? el("span", { class: "field-hint" }, " · ", pageText(prop.description, TEXT.short)) : null,
      ...extra,
    );
  let control;
  switch (type) {
    case "enum":
      control = el("select", common);
      if (!required) control.append(el("option", { value: "" }, "(leave out)"));
      control.append(...prop.enum.map((v) => el("option", { value: safeJSON(v, Infinity) }, pageText(typeof v === "string" ? v : safeJSON(v, 200), 80, "span").textContent)));
      if (previous !== undefined) control.value = previous;
      break;
    case "boolean":
      control = el("input", { ...common, type: "checkbox" });
      control.checked = previous === true;
      return el("label", { class: "field check" }, control, label());
    case "number":
    case "integer":
      control = el("input", { ...common, type: "number", step: type === "integer" ? "1" : "any", min: prop.minimum, max: prop.maximum });
      break;
    case "string":
      control = prop.maxLength > 120 ? el("textarea", { ...common, rows: 2, maxlength: prop.maxLength }) : el("input", { ...common, type: "text", maxlength: prop.maxLength });
      break;
    default:
      control = el("textarea", { ...common, rows: 2, placeholder: "a JSON value" });
  }
  if (typeof previous === "string" && type !== "enum") control.value = previous;
  return el("label", { class: "field" }, label(), control);
}

// Drafts and inputs are keyed by the page's member names, so they have no
// prototype: a member named __proto__ is a member like any other.
function readDraft(form) {
  const out = Object.create(null);
  for (const c of form.querySelectorAll("[data-name]")) out[c.dataset.name] = c.type === "checkbox" ? c.checked : c.value;
  return out;
}

// collectInput reads the form as the schema types it. Empty optional fields
// are left out; an empty required number is left out too, so the surface's
// schema check (not this page) says what is missing.
function collectInput() {
  const input = Object.create(null);
  let record;
  for (const c of $("ext-form").querySelectorAll("[data-name]")) {
    const name = c.dataset.name;
    if (c.dataset.param) {
      record = c.value.trim();
      continue;
    }
    const required = c.dataset.required === "true";
    switch (c.dataset.type) {
      case "enum":
        if (c.value !== "") input[name] = JSON.parse(c.value);
        break;
      case "boolean":
        input[name] = c.checked;
        break;
      case "number":
      case "integer":
        if (c.value !== "") input[name] = Number(c.value);
        break;
      case "string":
        if (c.value !== "" || required) input[name] = c.value;
        break;
      default:
        if (c.value.trim() === "") break;
        try {
          input[name] = JSON.parse(c.value);
        } catch {
          throw new PanelError({ code: "INVALID_INPUT", message: `${name} must be a JSON value.` });
        }
    }
  }
  return { input, record };
}

async function invoke() {
  const cap = state.description && findCapability(state.description, state.selected);
  if (!cap || state.stale || state.origin === null) return;
  let call;
  try {
    call = collectInput();
    if (recordParam(cap)) {
      if (!call.record) throw new PanelError({ code: "RECORD_REQUIRED", message: "Choose the record this applies to." });
      if (isReferenceable(state.description, call.record) === false) {
        throw new PanelError({ code: "RECORD_NOT_REFERENCEABLE", message: "That record is not among the records the page offers." });
      }
    }
  } catch (err) {
    showClientError(err);
    return;
  }
  const gen = state.generation;
  showWaiting(cap.id);
  $("ext-invoke").disabled = true;
  try {
    const answer = await ask({
      type: "pling.invoke",
      app: state.app,
      origin: state.origin,
      capability: cap.id,
      input: call.input,
      record: recordParam(cap) ? call.record : undefined,
    });
    if (gen !== state.generation) return;
    showTransport(answer.transport, answer.privateRefused);
    showOutcome(answer.outcome);
    if (answer.outcome.after) applyAfter(answer.outcome.after);
  } catch (err) {
    showClientError(err);
  } finally {
    $("ext-invoke").disabled = state.stale || !state.description;
  }
}

// ---------------------------------------------------------------------------
// Outcomes: each kind looks different, and only a known status reads as done

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

function showWaiting(id) {
  const box = $("ext-outcome");
  box.dataset.outcome = "waiting";
  delete box.dataset.code;
  box.replaceChildren(el("strong", {}, "Waiting"), el("div", {}, "Invoking ", pageCode(id), "…"));
  $("ext-after").hidden = true;
  $("ext-response").textContent = "";
}

function showOutcome(outcome) {
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

function showClientError(err) {
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

// applyAfter folds the reported changes into what the panel shows (the
// records of the page shown, and the state), so they stay current without
// describing again. The page sets how many changes it reports, so each is
// looked up by id, once: the work grows with the reply, never with the
// reply times the records described.
function applyAfter(after) {
  const c = state.description && state.description.context;
  if (!c) return;
  const shown = new Map();
  state.records.list = state.records.list.map((rec) => {
    // Fields are keyed by the page's names: no prototype, so __proto__ is a field.
    const copy = { ...rec, fields: Object.assign(Object.create(null), rec.fields) };
    if (!shown.has(rec.id)) shown.set(rec.id, copy);
    return copy;
  });
  const removed = new Set();
  for (const r of after.records || []) {
    const rec = shown.get(r.id);
    if (!rec) continue;
    if (r.removed) removed.add(rec);
    else Object.assign(rec.fields, r.fields);
  }
  if (removed.size > 0) state.records.list = state.records.list.filter((rec) => !removed.has(rec));
  if (after.state) c.state = { ...c.state, ...after.state };
  renderRecords();
  renderContext();
}

// ---------------------------------------------------------------------------
// Records, page by page: one card each, a line per field

function renderRecords() {
  const r = state.records;
  $("ext-records").replaceChildren(
    ...r.list.slice(0, RECORDS_PER_PAGE).map((rec) => {
      const use = el("button", { type: "button", class: "btn small", "data-testid": `ext-use-${rec.id}` }, "Use");
      use.addEventListener("click", () => {
        const picker = $("ext-record");
        if (picker) picker.value = rec.id;
      });
      const fields = Object.entries(rec.fields || {}).slice(0, 12);
      return el(
        "li",
        { class: "record", "data-testid": `ext-record-row-${rec.id}` },
        el("div", { class: "record-head" }, pageCode(rec.id), rec.offscreen ? el("span", { class: "badge" }, "off screen") : null, use),
        fields.length
          ? el("dl", { class: "record-fields" }, ...fields.flatMap(([k, v]) => [el("dt", {}, pageText(k, 40)), el("dd", { "data-field": k }, pageText(typeof v === "string" ? v : safeJSON(v, TEXT.short), TEXT.short))]))
          : null,
      );
    }),
  );
  $("ext-records-range").textContent = r.list.length ? `${r.offset + 1}–${r.offset + r.list.length} of ${r.total}` : `No records (${r.total} in all)`;
  $("ext-records-prev").disabled = r.offset === 0;
  $("ext-records-next").disabled = r.nextOffset === null;
}

async function pageRecords(offset) {
  const gen = state.generation;
  try {
    const p = await ask({ type: "pling.page", app: state.app, offset: Math.max(0, offset), limit: RECORDS_PER_PAGE });
    if (gen !== state.generation) return;
    state.records = { offset: p.offset, list: p.records.slice(0, RECORDS_PER_PAGE), total: p.recordsTotal, nextOffset: p.nextOffset };
    renderRecords();
  } catch (err) {
    if (gen !== state.generation) return;
    // The status is the panel's own line: the page's answer goes under Result.
    if (err.code === "PROTOCOL_FAILURE") setStatus("error", "The page refused to list records; its answer is under Result.", err.code);
    showClientError(err);
  }
}

// ---------------------------------------------------------------------------

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function hasOwn(o, k) {
  return Object.prototype.hasOwnProperty.call(o, k);
}

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
