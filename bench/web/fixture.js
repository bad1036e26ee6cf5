// The page every benchmark runs against: 50 actions (49 page-level ones and
// one folded per-order template) over a table of orders, a verified session
// scoped to all of them, and the page's own executor. The surfaces, the
// pure-JS responder and the MCP-B tool all read this one registry and call
// this one executor, so they differ only in what sits between the caller
// and the page.

export const PROTOCOL = "pling.surface/0.1";
export const ACTION_COUNT = 50;
export const NOTE_TEMPLATE = "update_note@order";

const verbs = ["search", "filter", "sort", "export", "print", "refresh", "open", "archive", "tag"];

// makeActions returns the 50 actions; the template's total follows the table.
export function makeActions(total) {
  const actions = [];
  for (let i = 0; actions.length < ACTION_COUNT - 1; i++) {
    const verb = verbs[i % verbs.length];
    actions.push({
      id: `orders.${verb}_${i}`,
      description: `${verb[0].toUpperCase()}${verb.slice(1)} the orders (variant ${i})`,
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", maxLength: 120 },
          page: { type: "integer", minimum: 1 },
        },
        additionalProperties: false,
      },
      effect: i % 7 === 3 ? "write" : "read",
      approval: "none",
      scopePath: ["orders", "toolbar"],
    });
  }
  actions.push({
    id: NOTE_TEMPLATE,
    description: "Replace the note of one order",
    inputSchema: {
      type: "object",
      properties: { note: { type: "string", maxLength: 280 } },
      required: ["note"],
      additionalProperties: false,
    },
    effect: "write",
    approval: "none",
    scopePath: ["orders", "row"],
    record: { kind: "order", total },
  });
  return actions;
}

const customers = ["Alder & Finch", "Brightwater Dental", "Cobalt Ridge", "Dunmore Library", "Everly Bakehouse", "Fenwick Logistics"];
const statuses = ["open", "approved", "shipped", "cancelled"];

// makeOrders returns n order rows, SO-1001 onwards; deterministic.
export function makeOrders(n) {
  const rows = new Array(n);
  for (let i = 0; i < n; i++) {
    rows[i] = {
      id: `SO-${1001 + i}`,
      customer: `${customers[i % customers.length]} ${i}`,
      amount: Math.round(((i * 7919) % 50000) + 99) / 100,
      status: statuses[i % statuses.length],
      note: i % 3 === 0 ? "" : `Call before delivery (${i})`,
    };
  }
  return rows;
}

const toRecord = (o) => ({
  id: o.id,
  kind: "order",
  fields: { customer: o.customer, amount: o.amount, status: o.status, note: o.note },
});

// makePage builds the page's registry parts and executor over n orders.
// lazy: the records are a lazy source (count/slice/get/ids), the form a
// page with a large table uses; otherwise an array of records.
export function makePage(n, { lazy = false } = {}) {
  const orders = makeOrders(n);
  const index = new Map(orders.map((o, i) => [o.id, i]));
  const actions = makeActions(n);
  const ids = actions.map((a) => a.id);
  let executed = 0;

  const records = lazy
    ? {
        count: () => orders.length,
        slice: (offset, limit) => orders.slice(offset, offset + limit).map(toRecord),
        get: (id) => {
          const i = index.get(id);
          return i === undefined ? undefined : toRecord(orders[i]);
        },
        ids: (max) => orders.slice(0, max).map((o) => o.id),
      }
    : () => orders.map(toRecord);

  const parts = {
    version: () => 1,
    actions: () => actions,
    records,
    route: "/orders?status=all",
    regions: [
      { id: "orders", label: "Orders", description: "Open orders of this shop" },
      { id: "toolbar", label: "Toolbar" },
    ],
    state: () => ({ filter: "all", page: 1, rows: orders.length }),
    feedback: [],
    unavailable: [],
  };

  // The page's existing executor: what its own buttons call.
  async function execute(id, argsJson) {
    executed += 1;
    const args = argsJson ? JSON.parse(argsJson) : {};
    if (id.startsWith(NOTE_TEMPLATE + ":")) {
      const i = index.get(id.slice(NOTE_TEMPLATE.length + 1));
      if (i === undefined) return { error: { code: "NOT_FOUND", message: "no such order" } };
      orders[i].note = args.note;
      return { title: "Note updated" };
    }
    return { matches: 0 };
  }

  return { orders, actions, ids, parts, execute, executed: () => executed };
}

// makeSession returns a session getter for a verified session scoped to ids.
export function makeSession(ids) {
  const session = {
    agentId: "agent.bench",
    sessionId: "ses_bench",
    userId: "u-bench",
    expiresAt: Date.now() + 6 * 3600_000,
    scope: ids.slice(),
    delegationId: "dlg_bench",
  };
  return () => session;
}
