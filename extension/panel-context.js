// The page's context as the panel shows it: its records page by page,
// what it says (feedback, unavailable capabilities, state), and the
// changes an invoke reported folded into both.

import { RECORDS_PER_PAGE, BOUNDS, TEXT } from "./panel-bounds.js";
import { ask } from "./panel-connection.js";
import { $, el } from "./panel-dom.js";
import { showClientError } from "./panel-outcome.js";
import { state } from "./panel-state.js";
import { setStatus } from "./panel-status.js";
import { pageText, pageCode, safeJSON } from "./panel-words.js";

// Records, page by page: one card each, a line per field

export function renderRecords() {
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

export async function pageRecords(offset) {
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

export function renderContext() {
  const c = state.description.context;
  const feedback = (c.feedback ?? []).slice(0, BOUNDS.listItems);
  const unavailable = (c.unavailable ?? []).slice(0, BOUNDS.listItems);
  $("ext-feedback").replaceChildren(
    ...feedback.map((f) => el("li", { "data-level": ["info", "success", "warning", "error"].includes(f && f.level) ? f.level : "info" }, pageText(f && f.message, TEXT.long))),
    ...unavailable.map((u) => el("li", { class: "hint" }, pageCode(u && u.id), " is unavailable", u && u.reason ? ": " : "", u && u.reason ? pageText(u.reason, TEXT.short) : "")),
  );
  $("ext-state").replaceChildren(pageText(safeJSON(c.state ?? {}, BOUNDS.stateChars, 2), BOUNDS.stateChars, "span", true));
}

// applyAfter folds the reported changes into what the panel shows (the
// records of the page shown, and the state), so they stay current without
// describing again. The page sets how many changes it reports, so each is
// looked up by id, once: the work grows with the reply, never with the
// reply times the records described.
export function applyAfter(after) {
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
