// What the panel shows of the page's words: every string the page sent
// goes in its own bidi isolate, its hidden and invisible characters made
// visible and its length bounded; an id or a title that may pass for
// another is flagged; JSON is written only as far as it is shown.

import { TEXT } from "./panel-bounds.js";
import { el } from "./panel-dom.js";

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
export function pageText(value, max = TEXT.short, tag = "bdi", ownLines = false) {
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

export function pageCode(value, max = TEXT.id) {
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
export function lookalikeNote(s, testid, foldedTwin = false) {
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
export function safeJSON(v, max, indent = 0) {
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
