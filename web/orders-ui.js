// The person's side of the orders page: table, search, filter, pager, inline
// note editing, the approval dialog and toasts. Every control goes through
// store.execute, the same executor the agent surface calls.

import * as store from "./store.js";
import { $, el, formatMoney } from "./dom.js";

const PERSON = Object.freeze({ via: "person" });

let editing = null; // { id, draft } while a note is being edited
let flashIds = new Set();

export function mountOrders() {
  const search = $("orders-search");
  const filter = $("orders-filter");
  let searchTimer = 0;

  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => runPerson("orders.search", { query: search.value }), 250);
  });
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      clearTimeout(searchTimer);
      runPerson("orders.search", { query: search.value });
    }
  });
  const minAmount = $("orders-min-amount");
  const applyFilter = () => {
    const min = Number(minAmount.value);
    const args = { status: filter.value };
    if (minAmount.value !== "" && Number.isFinite(min) && min > 0) args.minAmount = min;
    runPerson("orders.set_filter", args);
  };
  filter.addEventListener("change", applyFilter);
  minAmount.addEventListener("change", applyFilter);
  search.addEventListener("blur", () => renderToolbar(store.view()));
  $("orders-prev").addEventListener("click", () => runPerson("orders.go_to_page", { page: store.view().page - 1 }));
  $("orders-next").addEventListener("click", () => runPerson("orders.go_to_page", { page: store.view().page + 1 }));

  $("orders-body").addEventListener("click", onTableClick);
  $("orders-body").addEventListener("keydown", onTableKey);
  $("approvals-open").addEventListener("click", () => openApprovalDialog(true));
  $("current-user").textContent = `${store.USER.name} · ${store.USER.role}`;
  mountApprovalDialog();

  store.subscribe((detail) => {
    if (detail && detail.by === "agent" && detail.id) {
      flashIds.add(detail.id);
      setTimeout(() => {
        flashIds.delete(detail.id);
        const row = document.querySelector(`[data-testid="order-row-${CSS.escape(detail.id)}"]`);
        if (row) row.classList.remove("flash");
      }, 1600);
    }
    render();
  });
  render();
}

// runPerson is the person's path into the executor; refusals are toasted
// by the executor itself, as they are for agents.
function runPerson(id, args) {
  return store.execute(id, args, PERSON);
}

function onTableClick(e) {
  const btn = e.target.closest("button[data-act]");
  if (!btn) return;
  const id = btn.dataset.order;
  switch (btn.dataset.act) {
    case "edit": {
      const o = store.order(id);
      editing = { id, draft: o ? o.note : "" };
      render();
      const input = document.querySelector(`[data-testid="order-note-input-${CSS.escape(id)}"]`);
      if (input) {
        input.focus();
        input.select();
      }
      break;
    }
    case "save":
      saveNote();
      break;
    case "cancel":
      editing = null;
      render();
      break;
    case "review":
      openApprovalDialog(true, id);
      break;
    case "approve":
      runPerson(`approve@order:${id}`, {}).then((r) => {
        if (r && r.approval) openApprovalDialog(true, id);
      });
      break;
  }
}

function onTableKey(e) {
  if (!editing || !e.target.matches("input.note-input")) return;
  if (e.key === "Enter") {
    e.preventDefault();
    saveNote();
  } else if (e.key === "Escape") {
    e.preventDefault();
    editing = null;
    render();
  }
}

async function saveNote() {
  if (!editing) return;
  const { id, draft } = editing;
  const result = await runPerson(`update_note@order:${id}`, { note: draft });
  if (!result || !result.error) editing = null;
  render();
}

// ---------------------------------------------------------------------------
// Rendering

function render() {
  const v = store.view();
  renderToolbar(v);
  renderRows(v);
  renderPager(v);
  renderToasts();
  renderApprovals();
  $("executor-calls").textContent = `Executor calls: ${store.executorCallCount()}`;
}

function renderToolbar(v) {
  const search = $("orders-search");
  // Reflect changes made by an agent, but never fight the person's typing.
  if (document.activeElement !== search && search.value !== v.search) search.value = v.search;
  $("orders-filter").value = v.filter;
  const min = $("orders-min-amount");
  if (document.activeElement !== min) min.value = v.minAmount ? String(v.minAmount) : "";
}

function renderRows(v) {
  const body = $("orders-body");
  if (editing && !v.visible.some((o) => o.id === editing.id)) editing = null;
  const keep = editing ? body.querySelector(`[data-testid="order-row-${CSS.escape(editing.id)}"]`) : null;
  const focused = document.activeElement;
  const caret = keep && focused && keep.contains(focused) && focused.matches("input.note-input")
    ? [focused.selectionStart, focused.selectionEnd]
    : null;
  const rows = v.visible.map((o) => {
    const row = renderRow(o);
    if (keep && o.id === editing.id && keep.dataset.mode === "edit") {
      // Keep the note editor being used, so focus and caret survive a
      // re-render caused by someone else's change; the other cells update.
      const editor = keep.querySelector(".c-note");
      row.replaceChild(editor, row.querySelector(".c-note"));
    }
    return row;
  });
  body.replaceChildren(...rows);
  if (caret && focused.isConnected) {
    // Moving the editor drops focus; give it back where the caret was.
    focused.focus();
    focused.setSelectionRange(caret[0], caret[1]);
  }
  $("orders-empty").hidden = v.visible.length > 0;
}

function renderRow(o) {
  const isEditing = editing && editing.id === o.id;
  const tr = el("tr", {
    "data-testid": `order-row-${o.id}`,
    "data-status": o.status,
    "data-mode": isEditing ? "edit" : "view",
    class: [o.lockedReason ? "locked" : "", flashIds.has(o.id) ? "flash" : ""].join(" ").trim(),
  });
  tr.append(
    // The order's id and status share a cell: it keeps the note column
    // wide enough to read on a laptop screen beside the panels.
    el("td", { class: "c-order" },
      el("div", { class: "order-line" }, el("span", { class: "order-id" }, o.id), o.lockedReason ? lockIcon(o.lockedReason) : ""),
      el("div", { class: "order-status", "data-testid": `order-status-${o.id}`, "data-status": o.status }, statusBadge(o.status))),
    el("td", { class: "c-customer" }, el("div", { class: "customer" }, o.customer), el("div", { class: "placed" }, formatDate(o.placed))),
    el("td", { class: "c-amount" }, formatMoney(o.amount, o.currency)),
    noteCell(o, isEditing),
    actionsCell(o),
  );
  return tr;
}

const SVG_NS = "http://www.w3.org/2000/svg";
const LOCK_PATH = "M4 7V5a4 4 0 1 1 8 0v2h.5A1.5 1.5 0 0 1 14 8.5v6a1.5 1.5 0 0 1-1.5 1.5h-9A1.5 1.5 0 0 1 2 14.5v-6A1.5 1.5 0 0 1 3.5 7H4zm2 0h4V5a2 2 0 1 0-4 0v2z";

// The padlock is built as elements, not parsed from markup: the demo is
// served with require-trusted-types-for 'script', which refuses a string
// assigned to innerHTML.
function lockSVG() {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG_NS, "path");
  path.setAttribute("fill", "currentColor");
  path.setAttribute("d", LOCK_PATH);
  svg.append(path);
  return svg;
}

function lockIcon(reason) {
  const chip = el("span", { class: "lock", title: reason, "data-testid": "order-locked" });
  chip.append(lockSVG(), el("span", {}, "Locked"), el("span", { class: "sr-only" }, `: ${reason}`));
  return chip;
}

function statusBadge(status) {
  return el("span", { class: `badge status-${status}` }, store.STATUS_LABELS[status] || status);
}

function noteCell(o, isEditing) {
  const td = el("td", { class: "c-note", "data-testid": `order-note-${o.id}` });
  if (isEditing) {
    const input = el("input", {
      type: "text",
      class: "note-input",
      value: editing.draft,
      maxlength: String(store.MAX_NOTE),
      "aria-label": `Note for ${o.id}`,
      "data-testid": `order-note-input-${o.id}`,
    });
    input.addEventListener("input", () => {
      if (editing) editing.draft = input.value;
    });
    td.append(
      el("div", { class: "note-edit" },
        input,
        el("button", { type: "button", class: "btn small primary", "data-act": "save", "data-order": o.id, "data-testid": `order-note-save-${o.id}` }, "Save"),
        el("button", { type: "button", class: "btn small subtle", "data-act": "cancel", "data-order": o.id, "data-testid": `order-note-cancel-${o.id}` }, "Cancel"),
      ),
    );
    return td;
  }
  const text = el("span", { class: o.note ? "note-text" : "note-text empty-note", "data-testid": `order-note-text-${o.id}` }, o.note || "No note");
  const edit = el("button", {
    type: "button",
    class: "btn icon",
    "data-act": "edit",
    "data-order": o.id,
    "data-testid": `order-edit-${o.id}`,
    "aria-label": `Edit note for ${o.id}`,
    title: store.canEditNote(o) ? "Edit note" : o.lockedReason,
  }, "✎");
  if (!store.canEditNote(o)) edit.disabled = true;
  td.append(el("div", { class: "note-view" }, text, edit));
  return td;
}

function actionsCell(o) {
  const td = el("td", { class: "c-actions" });
  if (o.status === "awaiting_approval") {
    td.append(el("button", {
      type: "button",
      class: "btn small subtle",
      "data-act": "review",
      "data-order": o.id,
      "data-testid": `order-approve-${o.id}`,
      title: "Open the approval dialog",
    }, "Review"));
    return td;
  }
  const btn = el("button", {
    type: "button",
    class: "btn small",
    "data-act": "approve",
    "data-order": o.id,
    "data-testid": `order-approve-${o.id}`,
    title: store.canApprove(o) ? "Request approval; you confirm it in a dialog" : o.lockedReason || `${store.STATUS_LABELS[o.status]} orders cannot be approved`,
  }, "Approve");
  if (!store.canApprove(o)) btn.disabled = true;
  td.append(btn);
  return td;
}

function renderPager(v) {
  $("orders-showing").textContent = v.showing;
  $("orders-prev").disabled = v.page <= 1;
  $("orders-next").disabled = v.page >= v.pageCount;
  const pages = $("orders-pages");
  const buttons = [];
  for (let p = 1; p <= v.pageCount; p++) {
    const b = el("button", {
      type: "button",
      class: p === v.page ? "btn page current" : "btn page",
      "data-testid": `orders-page-${p}`,
      "aria-label": `Page ${p}`,
    }, String(p));
    if (p === v.page) b.setAttribute("aria-current", "page");
    b.addEventListener("click", () => runPerson("orders.go_to_page", { page: p }));
    buttons.push(b);
  }
  pages.replaceChildren(...buttons);
}

function renderToasts() {
  const box = $("toasts");
  const now = Date.now();
  // Newest first; the bar shows the newest and counts the rest.
  const live = store.toasts().filter((t) => t.expires > now).reverse();
  box.replaceChildren(...live.map((t, i) => el("div", {
    class: `toast ${t.level}`,
    "data-testid": "toast",
    "data-level": t.level,
    title: t.message,
  }, t.message, i === 0 && live.length > 1 ? moreNotices(live.slice(1)) : "")));
}

// moreNotices counts the notices behind the newest one, which the bar has
// no room for; hovering it lists them.
function moreNotices(older) {
  const n = older.length;
  return el("span", {
    class: "toast-more",
    "data-testid": "toast-more",
    title: `${n} older ${n === 1 ? "notice is" : "notices are"} still showing:\n${older.map((t) => t.message).join("\n")}`,
  }, `+${n} more`);
}

// ---------------------------------------------------------------------------
// Approval dialog: the only place an approval can be granted. It is opened
// by the page, and its buttons act only on trusted (real user) clicks, so a
// script posing as a person cannot press Confirm.

let dialogOrder = "";
let dialogDismissed = new Set();

function mountApprovalDialog() {
  const dlg = $("approval-dialog");
  $("approval-confirm").addEventListener("click", (e) => decide(e, true));
  $("approval-reject").addEventListener("click", (e) => decide(e, false));
  $("approval-later").addEventListener("click", () => {
    dialogDismissed = new Set(store.pendingApprovals().map((a) => a.orderId));
    dlg.close();
  });
  dlg.addEventListener("cancel", () => {
    dialogDismissed = new Set(store.pendingApprovals().map((a) => a.orderId));
  });
}

function decide(e, grant) {
  if (!e.isTrusted) {
    store.toast("error", "Approval decisions need a real click by a person");
    return;
  }
  if (!dialogOrder) return;
  const id = dialogOrder;
  dialogOrder = "";
  store.decideApproval(id, grant);
  // render() (via subscribe) moves the dialog to the next request or closes it.
}

function renderApprovals() {
  const pending = store.pendingApprovals();
  const badge = $("approvals-open");
  badge.hidden = pending.length === 0;
  $("approvals-count").textContent = String(pending.length);
  const dlg = $("approval-dialog");
  if (pending.length === 0) {
    dialogOrder = "";
    if (dlg.open) dlg.close();
    return;
  }
  // A new request opens the dialog by itself; requests the person already
  // put off wait for the badge.
  const fresh = pending.some((a) => !dialogDismissed.has(a.orderId));
  if (!dlg.open && fresh) openApprovalDialog(false);
  else if (dlg.open) fillDialog(pending);
}

function openApprovalDialog(byPerson, preferId) {
  const pending = store.pendingApprovals();
  if (pending.length === 0) return;
  if (byPerson) dialogDismissed.clear();
  if (preferId && pending.some((a) => a.orderId === preferId)) dialogOrder = preferId;
  fillDialog(pending);
  const dlg = $("approval-dialog");
  // Non-modal, so the person can still read the table and the agent console
  // while deciding.
  const before = document.activeElement;
  if (!dlg.open) dlg.show();
  // Never put focus on Confirm: a request that arrives while the person is
  // typing must not be approved by their next Enter or Space. A dialog the
  // person opened gets focus on itself; one an agent's request opened
  // leaves focus where it was.
  if (byPerson) dlg.focus();
  else if (before && before !== document.body && before.isConnected && document.activeElement !== before) before.focus();
}

function fillDialog(pending) {
  if (!pending.some((a) => a.orderId === dialogOrder)) dialogOrder = pending[0].orderId;
  const a = pending.find((x) => x.orderId === dialogOrder);
  const o = a.order;
  $("approval-order").textContent = o.id;
  $("approval-dialog").dataset.order = o.id;
  const facts = [
    ["Customer", o.customer],
    ["Amount", formatMoney(o.amount, o.currency)],
    ["Note", o.note || "—"],
    ["Requested by", a.requestedBy],
    ["Requested at", new Date(a.requestedAt).toLocaleTimeString()],
  ];
  if (a.context.sessionId) facts.push(["Session", a.context.sessionId]);
  $("approval-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const others = pending.length - 1;
  $("approval-queue").textContent = others > 0 ? `${others} more ${others === 1 ? "request is" : "requests are"} waiting after this one.` : "";
}

function formatDate(iso) {
  const d = new Date(`${iso}T12:00:00`);
  return d.toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" });
}
