// The orders page's state, its action registry and its executor.
//
// This module is the single source of truth. The page's own controls and the
// agent surface both call execute(); the surface reads the same actions(),
// records and state that the table renders from. There is no second
// implementation of any action anywhere in the page.

import { seedOrders } from "./data.js";

export const PAGE_SIZE = 8;
export const TOAST_MS = 8000;
export const MAX_NOTE = 280;
export const MAX_QUERY = 80;

// The person signed in to the back office. Agents act on this user's behalf
// only through a delegated session.
export const USER = Object.freeze({ id: "u-1042", name: "Dana Ortiz", role: "Operations" });

export const STATUS_LABELS = Object.freeze({
  open: "Open",
  awaiting_approval: "Awaiting approval",
  approved: "Approved",
  shipped: "Shipped",
  cancelled: "Cancelled",
});

export const FILTERS = Object.freeze(["all", ...Object.keys(STATUS_LABELS)]);

export const REGIONS = Object.freeze([
  {
    id: "orders",
    label: "Orders",
    description: "Sales orders, filtered by status and search text, eight to a page",
  },
  {
    id: "orders.toolbar",
    label: "Filters and search",
    description: "Status filter, search box and pager for the orders table",
  },
]);

const state = {
  orders: seedOrders(),
  filter: "all",
  minAmount: 0,
  search: "",
  page: 1,
  toasts: [], // { id, level, message, record, expires }
  approvals: [], // queue of { order, requestedBy, requestedAt, context }
  rev: 0, // bumped on every change; memo key for derived values
};

let executorCalls = 0;
let toastSeq = 0;
const listeners = new Set();

// subscribe registers fn to run after every change; it returns an unsubscribe.
export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function changed(detail) {
  state.rev++;
  for (const fn of listeners) {
    try {
      fn(detail);
    } catch (err) {
      console.error("orders: listener failed", err);
    }
  }
}

// ---------------------------------------------------------------------------
// Derived views

let memo = { rev: -1 };

function derive() {
  if (memo.rev === state.rev) return memo;
  const q = state.search.trim().toLowerCase();
  const filtered = state.orders.filter((o) => {
    if (state.filter !== "all" && o.status !== state.filter) return false;
    if (o.amount < state.minAmount) return false;
    if (!q) return true;
    return (
      o.id.toLowerCase().includes(q) ||
      o.customer.toLowerCase().includes(q) ||
      o.note.toLowerCase().includes(q)
    );
  });
  const pageCount = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, state.page), pageCount);
  const start = (page - 1) * PAGE_SIZE;
  const visible = filtered.slice(start, start + PAGE_SIZE);
  memo = {
    rev: state.rev,
    filtered,
    byId: new Map(filtered.map((o) => [o.id, o])),
    visibleIds: new Set(visible.map((o) => o.id)),
    visible,
    page,
    pageCount,
    start,
  };
  return memo;
}

// showing renders the visible window the way the page shows it: "Showing 9–16 of 48".
export function showing() {
  const d = derive();
  if (d.filtered.length === 0) return "Showing 0 of 0";
  return `Showing ${d.start + 1}–${d.start + d.visible.length} of ${d.filtered.length}`;
}

export function view() {
  const d = derive();
  return {
    filter: state.filter,
    minAmount: state.minAmount,
    search: state.search,
    page: d.page,
    pageCount: d.pageCount,
    visible: d.visible.map(copyOrder),
    total: d.filtered.length,
    showing: showing(),
  };
}

export function order(id) {
  const o = state.orders.find((x) => x.id === id);
  return o ? copyOrder(o) : undefined;
}

export function pendingApprovals() {
  return state.approvals.map((a) => ({
    orderId: a.order,
    order: copyOrder(findOrder(a.order)),
    requestedBy: a.requestedBy,
    requestedAt: a.requestedAt,
    context: { ...a.context },
  }));
}

export function toasts() {
  return state.toasts.map((t) => ({ ...t }));
}

export function executorCallCount() {
  return executorCalls;
}

function copyOrder(o) {
  return { ...o };
}

function findOrder(id) {
  return state.orders.find((o) => o.id === id);
}

// ---------------------------------------------------------------------------
// The action registry

// actionsVersion changes exactly when actions() would answer differently:
// the templates' record counts and the pager's bound are the only parts that
// move, and they follow the filtered list, the visible rows and the page count.
export function actionsVersion() {
  const d = derive();
  return `orders:${d.filtered.length}:${d.visible.length}:${d.pageCount}`;
}

let actionsMemo = { version: "", actions: [] };

export function actions() {
  const version = actionsVersion();
  if (actionsMemo.version === version) return actionsMemo.actions;
  const d = derive();
  const total = d.filtered.length;
  const offscreen = total - d.visible.length;
  const list = [
    {
      id: "orders.search",
      description:
        "Search orders by order number, customer or note (case-insensitive). An empty query shows every order. Returns to page 1.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", maxLength: MAX_QUERY, description: "Text to look for" },
        },
        required: ["query"],
        additionalProperties: false,
      },
      effect: "read",
      approval: "none",
      fidelity: "exact",
      source: "orders.toolbar.search",
      scopePath: ["orders", "toolbar"],
    },
    {
      id: "orders.set_filter",
      description:
        "Show only orders with one status (or all), optionally at or above an amount. Omitting minAmount removes the amount filter. Returns to page 1.",
      inputSchema: {
        type: "object",
        properties: {
          status: { type: "string", enum: [...FILTERS], description: "Status to show" },
          minAmount: { type: "number", minimum: 0, description: "Smallest order amount, in EUR" },
        },
        required: ["status"],
        additionalProperties: false,
      },
      effect: "read",
      approval: "none",
      fidelity: "exact",
      source: "orders.toolbar.filter",
      scopePath: ["orders", "toolbar"],
    },
    {
      id: "orders.go_to_page",
      description: `Show one page of the filtered orders (${PAGE_SIZE} to a page).`,
      inputSchema: {
        type: "object",
        properties: {
          page: { type: "integer", minimum: 1, maximum: d.pageCount, description: "Page number" },
        },
        required: ["page"],
        additionalProperties: false,
      },
      effect: "read",
      approval: "none",
      fidelity: "exact",
      source: "orders.toolbar.pager",
      scopePath: ["orders", "toolbar"],
    },
    {
      id: "update_note@order",
      description: "Replace the internal note on one order, or add to it. Locked orders refuse it.",
      inputSchema: {
        type: "object",
        properties: {
          note: { type: "string", maxLength: MAX_NOTE, description: "The new note (empty clears it)" },
          append: { type: "boolean", description: "Add to the existing note instead of replacing it" },
        },
        required: ["note"],
        additionalProperties: false,
      },
      effect: "write",
      approval: "none",
      fidelity: "exact",
      source: "orders.table.note",
      scopePath: ["orders", "row"],
      record: { kind: "order", param: "record", total, offscreen },
    },
    {
      id: "approve@order",
      description:
        "Ask for approval of an open order. A person must confirm it in the page; the call answers with approval status pending and never approves by itself.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      effect: "write",
      approval: "always",
      fidelity: "exact",
      source: "orders.table.approve",
      scopePath: ["orders", "row"],
      handoff: "A person confirms or rejects the approval in the page's approval dialog",
      flowSteps: ["request approval", "person confirms or rejects"],
      record: { kind: "order", param: "record", total, offscreen },
    },
  ];
  actionsMemo = { version, actions: list };
  return actionsMemo.actions;
}

// ACTION_IDS lists every capability the page declares, in registry order.
export const ACTION_IDS = Object.freeze(actions().map((a) => a.id));

function toRecord(o) {
  const fields = {
    customer: o.customer,
    amount: o.amount,
    currency: o.currency,
    status: o.status,
    note: o.note,
    placed: o.placed,
    locked: Boolean(o.lockedReason),
  };
  if (o.approval) fields.approval = o.approval;
  return { id: o.id, kind: "order", fields, offscreen: !derive().visibleIds.has(o.id) };
}

// records is the lazy record source of the active region: the filtered
// orders in table order. Rows that are not on the current page are marked
// offscreen, so an agent can tell what the person is looking at.
export const records = Object.freeze({
  count: () => derive().filtered.length,
  slice: (offset, limit) => derive().filtered.slice(offset, offset + limit).map(toRecord),
  get: (id) => {
    const o = derive().byId.get(id);
    return o ? toRecord(o) : undefined;
  },
  ids: (max) => derive().filtered.slice(0, max).map((o) => o.id),
});

export function route() {
  const d = derive();
  const p = new URLSearchParams({ status: state.filter, page: String(d.page) });
  if (state.minAmount) p.set("min", String(state.minAmount));
  if (state.search) p.set("q", state.search);
  return `/orders?${p}`;
}

export function pageState() {
  const d = derive();
  return {
    filter: state.filter,
    minAmount: state.minAmount,
    search: state.search,
    page: d.page,
    pageCount: d.pageCount,
    pageSize: PAGE_SIZE,
    showing: showing(),
    visibleFrom: d.filtered.length ? d.start + 1 : 0,
    visibleTo: d.start + d.visible.length,
    pendingApprovals: state.approvals.length,
  };
}

// feedback is what the page tells its person right now: live toasts, newest
// first, then one line per approval waiting in the dialog.
export function feedback() {
  const now = Date.now();
  const out = state.toasts
    .filter((t) => t.expires > now)
    .reverse()
    .map((t) => (t.record ? { level: t.level, message: t.message, record: t.record } : { level: t.level, message: t.message }));
  for (const a of state.approvals) {
    out.push({ level: "info", message: `${a.order} is awaiting approval by a person`, record: a.order });
  }
  return out;
}

// unavailable names the row actions on the visible page that the executor
// would refuse, and why, so an agent need not try them to find out.
export function unavailable() {
  const out = [];
  for (const o of derive().visible) {
    if (o.lockedReason) {
      out.push({ id: `update_note@order:${o.id}`, reason: `${o.id} is locked: ${o.lockedReason}` });
      out.push({ id: `approve@order:${o.id}`, reason: `${o.id} is locked: ${o.lockedReason}` });
      continue;
    }
    const why = approveRefusal(o);
    if (why && o.status !== "awaiting_approval") out.push({ id: `approve@order:${o.id}`, reason: why });
  }
  return out;
}

function approveRefusal(o) {
  switch (o.status) {
    case "open":
    case "awaiting_approval":
      return "";
    case "approved":
      return `${o.id} is already approved`;
    default:
      return `${o.id} is ${STATUS_LABELS[o.status].toLowerCase()} and cannot be approved`;
  }
}

// canApprove / canEditNote drive the page's buttons; they use the same rules
// as the executor, which stays the authority.
export function canApprove(o) {
  return !o.lockedReason && o.status === "open";
}

export function canEditNote(o) {
  return !o.lockedReason;
}

// ---------------------------------------------------------------------------
// The executor

// execute runs one concrete action. id is a page-level action id
// ("orders.search") or a row action "<template>:<order id>"
// ("update_note@order:SO-1002"); args is the business input object; ctx says
// who asks: the surface passes its call context (agentId, sessionId,
// requestId, ...), the page's own controls pass { via: "person" }.
//
// A business failure is returned as { error: { code, message } }, never thrown.
export async function execute(id, args, ctx = {}) {
  executorCalls++;
  const input = args && typeof args === "object" && !Array.isArray(args) ? args : {};
  const actor = describeActor(ctx);
  const result = run(String(id), input, actor, ctx || {});
  if (result && result.error) {
    // Every refusal is shown to the person, whoever asked.
    const who = actor.kind === "person" ? "" : `${actor.label}: `;
    toast(result.error.code === "ORDER_LOCKED" ? "error" : "warning", `${who}${result.error.message}`, result.record || "");
    delete result.record;
  }
  return result;
}

function run(id, input, actor, ctx) {
  const row = /^(update_note|approve)@order:(.+)$/.exec(id);
  if (row) {
    const o = findOrder(row[2]);
    if (!o) return fail("ORDER_NOT_FOUND", `There is no order ${row[2]}`);
    if (o.lockedReason) return { ...fail("ORDER_LOCKED", `${o.id} is locked: ${o.lockedReason}`), record: o.id };
    return row[1] === "update_note" ? updateNote(o, input, actor) : requestApproval(o, actor, ctx);
  }
  switch (id) {
    case "orders.search":
      return search(input, actor);
    case "orders.set_filter":
      return setFilter(input, actor);
    case "orders.go_to_page":
      return goToPage(input, actor);
  }
  return fail("UNKNOWN_ACTION", `The page has no action ${id}`);
}

function describeActor(ctx) {
  if (ctx && ctx.agentId) return { kind: "agent", label: `Agent ${ctx.agentId}`, agentId: ctx.agentId };
  if (ctx && ctx.via === "person") return { kind: "person", label: "You" };
  // A surface call without a session (open mode) has no agent id.
  return { kind: "agent", label: "An agent (open mode)" };
}

function fail(code, message) {
  return { error: { code, message } };
}

function updateNote(o, input, actor) {
  if (typeof input.note !== "string") return fail("INVALID_INPUT", "note must be text");
  if (input.append !== undefined && typeof input.append !== "boolean") return fail("INVALID_INPUT", "append must be true or false");
  const add = input.note.trim();
  const note = input.append && o.note && add ? `${o.note}; ${add}` : input.append && !add ? o.note : add;
  if (note.length > MAX_NOTE) return fail("INVALID_INPUT", `A note holds at most ${MAX_NOTE} characters`);
  if (note === o.note) {
    return { title: `The note on ${o.id} is unchanged`, record: o.id, note };
  }
  o.note = note;
  toast("success", `${actor.label} updated the note on ${o.id}`, o.id);
  changed({ kind: "order", id: o.id, by: actor.kind });
  return { title: `Note on ${o.id} updated`, record: o.id, note };
}

function requestApproval(o, actor, ctx) {
  if (o.status === "awaiting_approval") {
    // Asking again changes nothing: the same request is still waiting.
    return { approval: { status: "pending" }, record: o.id, title: `${o.id} is already awaiting approval` };
  }
  const why = approveRefusal(o);
  if (why) return { ...fail("ACTION_UNAVAILABLE", why), record: o.id };
  const previousStatus = o.status;
  o.status = "awaiting_approval";
  o.approval = "pending";
  state.approvals.push({
    order: o.id,
    previousStatus,
    requestedBy: actor.label,
    requestedAt: Date.now(),
    context: {
      agentId: ctx.agentId || "",
      sessionId: ctx.sessionId || "",
      requestId: ctx.requestId || "",
    },
  });
  toast("info", `${actor.label} requested approval of ${o.id}; waiting for a person`, o.id);
  changed({ kind: "approval", id: o.id, by: actor.kind });
  return {
    approval: { status: "pending" },
    record: o.id,
    title: `Approval of ${o.id} requested; a person must confirm it in the page`,
  };
}

function search(input, actor) {
  if (typeof input.query !== "string") return fail("INVALID_INPUT", "query must be text");
  if (input.query.length > MAX_QUERY) return fail("INVALID_INPUT", `A query holds at most ${MAX_QUERY} characters`);
  state.search = input.query;
  state.page = 1;
  changed({ kind: "view", by: actor.kind });
  const d = derive();
  return { title: input.query ? `Searching for "${input.query}"` : "Search cleared", matches: d.filtered.length, showing: showing() };
}

function setFilter(input, actor) {
  if (!FILTERS.includes(input.status)) return fail("INVALID_INPUT", `status must be one of ${FILTERS.join(", ")}`);
  const min = input.minAmount === undefined ? 0 : input.minAmount;
  if (typeof min !== "number" || !Number.isFinite(min) || min < 0) return fail("INVALID_INPUT", "minAmount must be a number of at least 0");
  state.filter = input.status;
  state.minAmount = min;
  state.page = 1;
  changed({ kind: "view", by: actor.kind });
  const d = derive();
  const what = input.status === "all" ? "all orders" : `${STATUS_LABELS[input.status].toLowerCase()} orders`;
  return { title: `Showing ${what}${min ? ` from €${min}` : ""}`, matches: d.filtered.length, showing: showing() };
}

function goToPage(input, actor) {
  const page = input.page;
  const d = derive();
  if (!Number.isInteger(page)) return fail("INVALID_INPUT", "page must be a whole number");
  if (page < 1 || page > d.pageCount) {
    return fail("PAGE_OUT_OF_RANGE", `Page ${page} does not exist; there ${d.pageCount === 1 ? "is 1 page" : `are ${d.pageCount} pages`}`);
  }
  state.page = page;
  changed({ kind: "view", by: actor.kind });
  return { title: `Page ${page} of ${d.pageCount}`, showing: showing() };
}

// ---------------------------------------------------------------------------
// Person-only decisions. These are deliberately not actions: no registry
// entry, so no session scope can ever reach them. The page calls them only
// from trusted clicks in the approval dialog.

export function decideApproval(orderId, grant) {
  const i = state.approvals.findIndex((a) => a.order === orderId);
  if (i < 0) return false;
  const [entry] = state.approvals.splice(i, 1);
  const o = findOrder(orderId);
  if (o) {
    if (grant) {
      o.status = "approved";
      o.approval = "granted";
      toast("success", `You approved ${o.id} (requested by ${entry.requestedBy.replace(/^You$/, "you")})`, o.id);
    } else {
      o.status = entry.previousStatus || "open";
      o.approval = "denied";
      toast("warning", `You rejected the approval of ${o.id}`, o.id);
    }
  }
  changed({ kind: "approval", id: orderId, by: "person" });
  return true;
}

// ---------------------------------------------------------------------------
// Toasts

export function toast(level, message, record = "") {
  const t = { id: ++toastSeq, level, message, record, expires: Date.now() + TOAST_MS };
  state.toasts.push(t);
  if (state.toasts.length > 20) state.toasts.splice(0, state.toasts.length - 20);
  setTimeout(() => {
    const i = state.toasts.indexOf(t);
    if (i >= 0) {
      state.toasts.splice(i, 1);
      changed({ kind: "toast" });
    }
  }, TOAST_MS);
  changed({ kind: "toast" });
}
