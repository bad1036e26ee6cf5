// The panel's own lines at the top: the status, a notice, the page it
// talks to (the origin, and the title as the page's claim) and how
// answers travel.

import { $, el } from "./panel-dom.js";
import { state } from "./panel-state.js";
import { pageText, lookalikeNote } from "./panel-words.js";

export function setStatus(kind, text, code) {
  const s = $("ext-status");
  s.dataset.state = kind;
  if (code) s.dataset.code = code;
  else delete s.dataset.code;
  s.textContent = text;
}

export function setNotice(text) {
  const n = $("ext-notice");
  n.hidden = !text;
  n.textContent = text || "";
}

export function showTarget(about) {
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
export function showTransport(transport, privateRefused) {
  state.transport = transport;
  const t = $("ext-transport");
  t.hidden = !transport;
  t.dataset.transport = transport || "";
  if (transport === "port") t.textContent = "Private channel";
  else if (transport === "window") {
    t.textContent = privateRefused === "REFUSED" ? "Page window: the page refused a private channel; its scripts could forge answers" : "Page window: the page's scripts could forge answers";
  } else t.textContent = "";
}
