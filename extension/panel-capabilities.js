// The capability list: one button each, with badges in the panel's own
// words for the values the protocol defines only, the page's other claims
// beside them as its words, rendered a chunk per frame.

import { CHUNK } from "./panel-bounds.js";
import { renderCall, schemaProblem } from "./panel-call.js";
import { $, el } from "./panel-dom.js";
import { state } from "./panel-state.js";
import { pageText, pageCode, lookalikeNote } from "./panel-words.js";

// The panel's own words for the values the protocol defines. A value
// outside these sets gets no badge; it is shown as the page's words.
const EFFECTS = Object.freeze({ read: "reads", write: "writes", destructive: "destructive" });
const APPROVALS = Object.freeze({ none: null, ask: "may ask a person", always: "needs a person's approval" });

// renderCapabilities adds the list a chunk per frame.
export function renderCapabilities(caps) {
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

function select(id) {
  state.selected = id;
  for (const b of $("ext-capabilities").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.testid === `ext-cap-${id}`));
  renderCall();
}
