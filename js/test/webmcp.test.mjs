// Tests of pling-webmcp.js that need no browser and no kernel: the mapping
// from a description to tool definitions (names, schemas, annotations,
// record ids), the mapping from a response to a tool's answer, and the
// bridge's registration life cycle against a fake surface and a fake
// document.modelContext that behaves as Chromium's does (names checked,
// duplicates refused, AbortSignal unregisters).
//
//   node --test js/test/webmcp.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";

import {
  bridgeWebMCP,
  contextResult,
  recordEnum,
  templateKind,
  toolAnnotations,
  toolBaseName,
  toolDefinitions,
  toolInputSchema,
  toolResult,
  toolTitle,
  WEBMCP_TOOL_NAME,
} from "../pling-webmcp.js";

const P = "pling.surface/0.1";
// What the bridge hands the browser has no prototypes; compared as the data it is.
const plain = (v) => JSON.parse(JSON.stringify(v));
const PENDING_MESSAGE = "Not done yet: a person has to approve this in the page, and nothing has changed until they do. Calling again does not speed it up.";

const SEARCH = {
  id: "orders.search",
  description: "Search orders",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
  effect: "read",
  approval: "none",
};
const NOTE = {
  id: "update_note@order",
  description: "Replace the note of one order",
  inputSchema: { type: "object", properties: { note: { type: "string", maxLength: 280 } }, required: ["note"], additionalProperties: false },
  effect: "write",
  approval: "none",
  record: { param: "record", total: 3, offscreen: 1 },
};
const APPROVE = {
  id: "approve@order",
  description: "Ask for approval",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  effect: "write",
  approval: "always",
  handoff: "A person confirms in the page",
  record: { param: "record", total: 3 },
};

function orders(n, kind = "order") {
  const out = [];
  for (let i = 1; i <= n; i++) out.push({ id: `SO-${i}`, kind, fields: { note: "" } });
  return out;
}

function description(capabilities, records = orders(3), total = records.length) {
  return {
    protocol: P,
    app: "orders",
    capabilities,
    context: {
      route: "/orders",
      regions: [],
      records,
      recordIds: records.map((r) => r.id),
      recordIdsTotal: total,
      state: {},
      feedback: [],
      unavailable: [],
      recordsTotal: total,
      feedbackTotal: 0,
      unavailableTotal: 0,
    },
  };
}

test("tool names: WebMCP-safe, stable, unique, never parsed back", async (t) => {
  const cases = [
    ["orders.search", "", "orders.search"],
    ["update_note@order", "", "update_note_order"],
    ["update_note@order", "shop.", "shop.update_note_order"],
    ["a b", "", "a-20b"],
    ["備註@order", "", "-5099-8a3b_order"],
    ["", "", "tool"],
  ];
  for (const [id, prefix, want] of cases) {
    await t.test(`${JSON.stringify(id)} with prefix ${JSON.stringify(prefix)}`, () => {
      const got = toolBaseName(id, prefix);
      assert.equal(got, want);
      assert.match(got, WEBMCP_TOOL_NAME);
    });
  }
  await t.test("long ids are cut to 128 characters", () => {
    const got = toolBaseName("x".repeat(300));
    assert.equal(got.length, 128);
    assert.match(got, WEBMCP_TOOL_NAME);
  });
  await t.test("collisions get a suffix, the context tool included", () => {
    const caps = [
      { ...SEARCH, id: "a@b" },
      { ...SEARCH, id: "a_b" },
      { ...SEARCH, id: "page_context" },
      { ...SEARCH, id: "y".repeat(200) + "1" },
      { ...SEARCH, id: "y".repeat(200) + "2" },
    ];
    const defs = toolDefinitions(description(caps));
    assert.deepEqual(defs.map((d) => [d.name.length > 20 ? d.name.length + ":" + d.name.slice(-2) : d.name, d.capability]), [
      ["a_b", "a@b"],
      ["a_b-2", "a_b"],
      ["page_context-2", "page_context"],
      ["128:yy", "y".repeat(200) + "1"],
      ["128:-2", "y".repeat(200) + "2"],
      ["page_context", null],
    ]);
    for (const d of defs) assert.match(d.name, WEBMCP_TOOL_NAME);
  });
});

test("titles: every tool has one a person can read, from its id", async (t) => {
  const cases = [
    ["orders.search", "Orders: search"],
    ["orders.set_filter", "Orders: set filter"],
    ["orders.go_to_page", "Orders: go to page"],
    ["update_note@order", "Order: update note"],
    ["approve@order", "Order: approve"],
    ["sendInvoice", "Send invoice"],
    ["billing.sendInvoice@customer-account", "Customer account: billing: send invoice"],
    ["x", "X"],
    ["", "Tool"],
    ["...", "Tool"],
    ["éclair.crème_brûlée", "Éclair: crème brûlée"],
  ];
  for (const [id, want] of cases) {
    await t.test(JSON.stringify(id), () => assert.equal(toolTitle({ id }), want));
  }
  await t.test("never longer than 128 characters", () => {
    assert.ok(toolTitle({ id: "a_".repeat(200) }).length <= 128);
  });
  await t.test("every definition carries one, the context tool included", () => {
    const defs = toolDefinitions(description([SEARCH, NOTE, APPROVE]));
    assert.deepEqual(defs.map((d) => d.title), ["Orders: search", "Order: update note", "Order: approve", "Page: read what it shows"]);
  });
});

test("annotations follow effect and approval", async (t) => {
  const cases = [
    ["read", "none", false, { readOnlyHint: true }],
    ["read", "ask", false, { readOnlyHint: true }],
    ["write", "none", false, { readOnlyHint: false }],
    ["write", "ask", false, { readOnlyHint: false, consequentialHint: true }],
    ["write", "always", false, { readOnlyHint: false, consequentialHint: true }],
    ["destructive", "none", false, { readOnlyHint: false, consequentialHint: true }],
    ["destructive", "always", false, { readOnlyHint: false, consequentialHint: true }],
    // Unknown or missing values never make a tool look harmless.
    [undefined, "none", false, { readOnlyHint: false, consequentialHint: true }],
    ["write", undefined, false, { readOnlyHint: false, consequentialHint: true }],
    ["read", "none", true, { readOnlyHint: true, untrustedContentHint: true }],
  ];
  for (const [effect, approval, untrusted, want] of cases) {
    await t.test(`${effect}/${approval}${untrusted ? "/untrusted" : ""}`, () => {
      assert.deepEqual(toolAnnotations({ effect, approval }, untrusted), want);
    });
  }
  await t.test("untrustedContent as a predicate of the capability", () => {
    const defs = toolDefinitions(description([SEARCH, NOTE]), { untrustedContent: (c) => c !== null && c.id === "update_note@order" });
    assert.deepEqual(defs.map((d) => [d.name, d.annotations.untrustedContentHint === true]), [
      ["orders.search", false],
      ["update_note_order", true],
      ["page_context", false],
    ]);
    const failing = toolDefinitions(description([SEARCH]), { untrustedContent: () => { throw new Error("x"); } });
    assert.equal(failing[0].annotations.untrustedContentHint, true, "a failing predicate errs on the cautious side");
  });
});

test("input schemas: a template gains its record parameter, the business schema stays", async (t) => {
  await t.test("plain capability: the schema as given", () => {
    const [def] = toolDefinitions(description([SEARCH]), { contextTool: false });
    assert.deepEqual(plain(def.inputSchema), SEARCH.inputSchema);
    assert.notEqual(def.inputSchema, SEARCH.inputSchema, "a copy, not the description's object");
  });
  await t.test("template with few records: required record parameter with the ids", () => {
    const before = JSON.stringify(NOTE);
    const [def] = toolDefinitions(description([NOTE]), { contextTool: false });
    assert.deepEqual(plain(def.inputSchema), {
      type: "object",
      properties: {
        record: { type: "string", minLength: 1, description: "Id of the order to act on.", enum: ["SO-1", "SO-2", "SO-3"] },
        note: { type: "string", maxLength: 280 },
      },
      required: ["record", "note"],
      additionalProperties: false,
    });
    assert.equal(JSON.stringify(NOTE), before, "the capability was not changed");
  });
  await t.test("template with many records: where to find the ids instead", () => {
    const [def, ctx] = toolDefinitions(description([{ ...NOTE, record: { param: "record", total: 48, offscreen: 40 } }], orders(8), 48));
    const rec = def.inputSchema.properties.record;
    assert.equal(rec.enum, undefined);
    assert.match(rec.description, /48 can be named now \(40 of them are not in view\)/);
    assert.match(rec.description, new RegExp(`The ${ctx.name} tool lists record ids`));
  });
  await t.test("without the context tool the description points at the page", () => {
    const [def] = toolDefinitions(description([NOTE], orders(8), 48), { contextTool: false });
    assert.match(def.inputSchema.properties.record.description, /shown in the page/);
  });
  await t.test("a custom record parameter name, and a clashing business property replaced", () => {
    const cap = {
      ...NOTE,
      inputSchema: { type: "object", properties: { target: { type: "integer" }, note: { type: "string" } }, required: ["target", "note"] },
      record: { param: "target", total: 3 },
    };
    const [def] = toolDefinitions(description([cap]), { contextTool: false });
    assert.deepEqual(Object.keys(def.inputSchema.properties), ["target", "note"]);
    assert.equal(def.inputSchema.properties.target.type, "string");
    assert.deepEqual(def.inputSchema.required, ["target", "note"]);
  });
  await t.test("a business property named __proto__ keeps its constraints", () => {
    // The registry's schema arrives as JSON, where "__proto__" is an own member.
    const inputSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","maxLength":3},"note":{"type":"string"}},"required":["__proto__"]}');
    const [def] = toolDefinitions(description([{ ...NOTE, inputSchema }]), { contextTool: false });
    const props = def.inputSchema.properties;
    assert.deepEqual(Object.keys(props), ["record", "__proto__", "note"]);
    assert.deepEqual(plain(Object.getOwnPropertyDescriptor(props, "__proto__").value), { type: "string", maxLength: 3 });
    assert.equal(Object.getPrototypeOf(props), Object.prototype);
  });
  await t.test("no schema: an object schema", () => {
    assert.deepEqual(toolInputSchema({ id: "x" }, null), { type: "object" });
    assert.deepEqual(toolInputSchema({ id: "x@k", record: { param: "record" } }, { name: "record", description: "d", ids: null }), {
      type: "object",
      properties: { record: { type: "string", minLength: 1, description: "d" } },
      required: ["record"],
    });
  });
  await t.test("descriptions say what a person must do", () => {
    const [, approve] = toolDefinitions(description([NOTE, APPROVE]));
    assert.match(approve.description, /^Ask for approval\. Acts on one order, named by "record"\. A person must approve it in the page/);
    assert.match(approve.description, /Hands over to a person: A person confirms in the page\.$/);
    assert.deepEqual(approve.annotations, { readOnlyHint: false, consequentialHint: true });
  });
});

test("record ids are offered only when the list is complete and short", async (t) => {
  const cases = [
    ["whole list in the window", orders(3), 3, 20, ["SO-1", "SO-2", "SO-3"]],
    ["window cut: more records than read", orders(3), 4, 20, null],
    ["more than the limit", orders(5), 5, 4, null],
    ["limit 0 turns it off", orders(3), 3, 0, null],
    ["no records at all", [], 0, 20, null],
    ["other kinds are left out", [...orders(2), { id: "C-1", kind: "customer" }], 3, 20, ["SO-1", "SO-2"]],
  ];
  for (const [name, records, total, limit, want] of cases) {
    await t.test(name, () => {
      assert.deepEqual(recordEnum(NOTE, description([NOTE], records, total).context, limit), want);
    });
  }
  await t.test("template kind comes from the id", () => {
    assert.equal(templateKind("update_note@order"), "order");
    assert.equal(templateKind("orders.search"), "");
  });
});

test("responses become tool answers, refusals included, with the audit's outcome words", async (t) => {
  const after = { records: [{ id: "SO-1", fields: { note: "x" } }] };
  const cases = [
    ["a result, with what changed", { protocol: P, id: "r1", ok: true, result: { ok: 1 }, after },
      { outcome: "ok", requestId: "r1", result: { ok: 1 }, after }],
    ["no result is null", { protocol: P, id: "r2", ok: true },
      { outcome: "ok", requestId: "r2", result: null }],
    // Pending is neither done nor failed: its own outcome, read from
    // result.approval.status, the one member the kernel keeps of an approval.
    ["approval pending is its own outcome, not done and not an error",
      { protocol: P, id: "r3", ok: true, result: { title: "Approval requested", approval: { status: "pending" } }, after },
      { outcome: "pending_approval", approval: "pending", requestId: "r3", message: PENDING_MESSAGE, result: { title: "Approval requested", approval: { status: "pending" } }, after }],
    ["a granted approval is done, and says so", { protocol: P, id: "r3g", ok: true, result: { approval: { status: "granted" } } },
      { outcome: "ok", approval: "granted", requestId: "r3g", result: { approval: { status: "granted" } } }],
    ["a denied approval is a business failure", { protocol: P, id: "r3d", ok: true, result: { approval: { status: "denied" } } },
      { outcome: "business_error", isError: true, approval: "denied", requestId: "r3d", error: { code: "APPROVAL_DENIED", message: "a person declined it in the page; nothing changed" } }],
    ["an approval status the kernel calls unknown is never read as done", { protocol: P, id: "r3u", ok: true, result: { approval: { status: "unknown" } } },
      { outcome: "business_error", isError: true, approval: "unknown", requestId: "r3u", error: { code: "APPROVAL_STATUS_UNKNOWN", message: "the page reported an approval status that is not known; treat it as not done" } }],
    ["a status spelled otherwise is unknown too", { protocol: P, id: "r3s", ok: true, result: { approval: { status: "approved" } } },
      { outcome: "business_error", isError: true, approval: "unknown", requestId: "r3s", error: { code: "APPROVAL_STATUS_UNKNOWN", message: "the page reported an approval status that is not known; treat it as not done" } }],
    ["an approval that is not an object is unknown", { protocol: P, id: "r3n", ok: true, result: { approval: "granted" } },
      { outcome: "business_error", isError: true, approval: "unknown", requestId: "r3n", error: { code: "APPROVAL_STATUS_UNKNOWN", message: "the page reported an approval status that is not known; treat it as not done" } }],
    ["a business failure wins over a pending approval", { protocol: P, id: "r3b", ok: true, result: { error: { code: "ORDER_LOCKED", message: "locked" }, approval: { status: "pending" } } },
      { outcome: "business_error", isError: true, approval: "pending", requestId: "r3b", error: { code: "ORDER_LOCKED", message: "locked" } }],
    ["a business failure keeps its code and message", { protocol: P, id: "r4", ok: true, result: { error: { code: "ORDER_LOCKED", message: "locked" } }, after },
      { outcome: "business_error", isError: true, requestId: "r4", error: { code: "ORDER_LOCKED", message: "locked" }, after }],
    ["a session refusal", { protocol: P, id: "r5", ok: false, error: { code: "SESSION_REVOKED", message: "session was revoked" } },
      { outcome: "protocol_error", isError: true, requestId: "r5", error: { code: "SESSION_REVOKED", message: "session was revoked" } }],
    ["a rate limit says when to retry", { protocol: P, id: "r6", ok: false, error: { code: "RATE_LIMITED", message: "slow down", retryAfterMs: 1200 } },
      { outcome: "protocol_error", isError: true, requestId: "r6", error: { code: "RATE_LIMITED", message: "slow down", retryAfterMs: 1200 } }],
    ["a schema failure says where",
      { protocol: P, id: "r7", ok: false, error: { code: "INVALID_REQUEST", message: "bad input", violations: [{ instancePath: "/page", keyword: "maximum", message: "must be <= 6" }] } },
      { outcome: "protocol_error", isError: true, requestId: "r7", error: { code: "INVALID_REQUEST", message: "bad input", violations: [{ instancePath: "/page", keyword: "maximum", message: "must be <= 6" }] } }],
    ["no envelope at all is an internal error", undefined,
      { outcome: "protocol_error", isError: true, requestId: undefined, error: { code: "INTERNAL_ERROR", message: "internal error" } }],
  ];
  for (const [name, response, want] of cases) {
    await t.test(name, () => {
      assert.deepEqual(toolResult(response), want);
      // What the browser hands the agent is the JSON text of the answer.
      assert.deepEqual(JSON.parse(JSON.stringify(toolResult(response))), JSON.parse(JSON.stringify(want)));
    });
  }
  await t.test("the context tool answers with the context only", () => {
    const d = description([SEARCH]);
    assert.deepEqual(contextResult({ protocol: P, id: "c1", ok: true, result: d }), { outcome: "ok", requestId: "c1", context: d.context, app: "orders" });
    const refused = contextResult({ protocol: P, id: "c2", ok: false, error: { code: "RATE_LIMITED", message: "x", retryAfterMs: 5 } });
    assert.equal(refused.outcome, "protocol_error");
    assert.equal(refused.error.retryAfterMs, 5);
  });
});

// ---------------------------------------------------------------------------
// The bridge against fakes.

/** A document.modelContext that behaves as Chromium 156's does. */
function fakeModelContext() {
  const tools = new Map();
  const log = [];
  return {
    tools,
    log,
    registerTool(tool, options = {}) {
      if (!WEBMCP_TOOL_NAME.test(tool.name)) return Promise.reject(Object.assign(new Error("Invalid tool name"), { name: "InvalidStateError" }));
      if (tools.has(tool.name)) return Promise.reject(Object.assign(new Error("Duplicate tool name"), { name: "InvalidStateError" }));
      if (options.signal && options.signal.aborted) return Promise.reject(options.signal.reason);
      tools.set(tool.name, tool);
      log.push(["add", tool.name]);
      if (options.signal) {
        options.signal.addEventListener("abort", () => {
          if (tools.get(tool.name) === tool) {
            tools.delete(tool.name);
            log.push(["remove", tool.name]);
          }
        });
      }
      return Promise.resolve();
    },
    call(name, input) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.execute(input, { signal: new AbortController().signal });
    },
  };
}

class FakeSessionError extends Error {
  constructor(code) {
    super(code.toLowerCase());
    this.code = code;
  }
}

/** A surface whose description and answers each test sets. */
function fakeSurface(caps) {
  const s = {
    caps,
    records: orders(3),
    failure: null, // an error describe() rejects with
    describes: [],
    requests: [],
    answer: (req) => ({ protocol: P, id: req.id, ok: true, result: { done: req.capability } }),
    async describe(input) {
      s.describes.push(input);
      if (s.failure) throw s.failure;
      return description(s.caps, s.records);
    },
    async handle(req) {
      s.requests.push(req);
      return s.answer(req);
    },
  };
  return s;
}

const names = (mc) => [...mc.tools.keys()].sort();

async function until(cond, what) {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test("bridge: registers the effective capabilities and calls through the surface", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH, NOTE, APPROVE]);
  const changes = [];
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0, onChange: (tools) => changes.push(tools.map((x) => x.name)) });
  try {
    await bridge.ready;
    assert.equal(bridge.supported, true);
    assert.deepEqual(names(mc), ["approve_order", "orders.search", "page_context", "update_note_order"]);
    assert.deepEqual(bridge.tools.map((x) => [x.name, x.capability]), [
      ["orders.search", "orders.search"],
      ["update_note_order", "update_note@order"],
      ["approve_order", "approve@order"],
      ["page_context", null],
    ]);
    assert.equal(changes.length, 1);
    assert.deepEqual(surface.describes[0], { limit: 20 }, "the poll reads a window big enough for the enum");

    const tool = mc.tools.get("update_note_order");
    assert.deepEqual(plain(tool.annotations), { readOnlyHint: false });
    for (const t of mc.tools.values()) assert.ok(typeof t.title === "string" && t.title.length > 0, `${t.name} has no title`);
    assert.equal(tool.title, "Order: update note");
    assert.deepEqual(plain(tool.inputSchema.required), ["record", "note"]);

    const input = { record: "SO-2", note: "hello", n: 12 };
    const out1 = await mc.call("update_note_order", input);
    const out2 = await mc.call("update_note_order", input);
    assert.equal(surface.requests.length, 2);
    const [r1, r2] = surface.requests;
    assert.deepEqual({ ...r1, id: "?" }, { protocol: P, id: "?", method: "invoke", capability: "update_note@order", input });
    assert.match(r1.id, /^webmcp-/);
    assert.notEqual(r1.id, r2.id, "every call is a new request id");
    assert.deepEqual(plain(out1), { outcome: "ok", requestId: r1.id, result: { done: "update_note@order" } });
    assert.equal(out2.requestId, r2.id);

    // A call without input still names an object.
    await mc.call("orders.search", undefined);
    assert.deepEqual(surface.requests[2].input, {});

    // Refused by the surface: an answer with the code, not a throw.
    surface.answer = (req) => ({ protocol: P, id: req.id, ok: false, error: { code: "REPLAY_DETECTED", message: "request id was already used" } });
    const refused = await mc.call("orders.search", { query: "x" });
    assert.deepEqual(plain(refused), { outcome: "protocol_error", isError: true, requestId: surface.requests.at(-1).id, error: { code: "REPLAY_DETECTED", message: "request id was already used" } });

    // A stand-in surface whose handle() rejects still gets an answer.
    surface.answer = () => { throw new Error("broken"); };
    const broken = await mc.call("orders.search", { query: "x" });
    assert.equal(broken.outcome, "protocol_error");
    assert.equal(broken.error.code, "INTERNAL_ERROR");

    // The context tool is a describe through handle(), so it is rate limited and audited.
    surface.answer = (req) => ({ protocol: P, id: req.id, ok: true, result: description([SEARCH]) });
    const ctx = await mc.call("page_context", { record: "SO-1" });
    const last = surface.requests.at(-1);
    assert.deepEqual({ ...last, id: "?" }, { protocol: P, id: "?", method: "describe", input: { record: "SO-1" } });
    assert.equal(ctx.context.route, "/orders");
    assert.deepEqual(plain(mc.tools.get("page_context").annotations), { readOnlyHint: true });
  } finally {
    bridge.stop();
  }
  assert.deepEqual(names(mc), [], "stop unregisters everything");
});

test("bridge: revocation takes every tool back, and a held tool refuses", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH, NOTE]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  try {
    await bridge.ready;
    const held = mc.tools.get("update_note_order");
    surface.failure = new FakeSessionError("SESSION_REVOKED");
    await bridge.refresh();
    assert.deepEqual(names(mc), []);
    assert.deepEqual(bridge.tools, []);
    const before = surface.requests.length;
    const answer = await held.execute({ record: "SO-1", note: "x" });
    assert.deepEqual(plain(answer), { outcome: "protocol_error", isError: true, error: { code: "CAPABILITY_NOT_EXPOSED", message: "this tool is no longer offered by the page" } });
    assert.equal(surface.requests.length, before, "a taken-back tool never reaches the surface");

    // A new grant brings them back, as new registrations.
    surface.failure = null;
    await bridge.refresh();
    assert.deepEqual(names(mc), ["orders.search", "page_context", "update_note_order"]);
    assert.notEqual(mc.tools.get("update_note_order"), held);
  } finally {
    bridge.stop();
  }
});

test("bridge: a change replaces only the tools that changed", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH, NOTE, APPROVE]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  try {
    await bridge.ready;
    const search = mc.tools.get("orders.search");
    mc.log.length = 0;

    await bridge.refresh(); // nothing changed
    assert.deepEqual(mc.log, []);

    surface.caps = [SEARCH, APPROVE]; // scope lost update_note@order
    await bridge.refresh();
    assert.deepEqual(mc.log, [["remove", "update_note_order"]]);

    mc.log.length = 0;
    surface.records = orders(2); // the enum of approve_order changes
    await bridge.refresh();
    assert.deepEqual(mc.log, [["remove", "approve_order"], ["add", "approve_order"]]);
    assert.deepEqual(plain(mc.tools.get("approve_order").inputSchema.properties.record.enum), ["SO-1", "SO-2"]);
    assert.equal(mc.tools.get("orders.search"), search, "an unchanged tool keeps its registration");
  } finally {
    bridge.stop();
  }
});

test("bridge: a tool call refreshes, polling follows, stop ends both", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 5 });
  await bridge.ready;
  surface.caps = [SEARCH, NOTE];
  await until(() => mc.tools.has("update_note_order"), "the poll to register update_note_order");
  bridge.stop();
  const reads = surface.describes.length;
  surface.caps = [SEARCH, NOTE, APPROVE];
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(surface.describes.length, reads, "no describe after stop");
  assert.deepEqual(names(mc), []);
  assert.deepEqual(await bridge.refresh(), undefined);
  assert.deepEqual(names(mc), [], "refresh after stop registers nothing");

  const mc2 = fakeModelContext();
  const s2 = fakeSurface([SEARCH]);
  const b2 = bridgeWebMCP(s2, { modelContext: mc2, pollMs: 0 });
  try {
    await b2.ready;
    s2.caps = [SEARCH, NOTE];
    await mc2.call("orders.search", { query: "x" });
    await until(() => mc2.tools.has("update_note_order"), "the refresh after a call");
  } finally {
    b2.stop();
  }
});

test("bridge: concurrent refreshes share one read", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  try {
    await bridge.ready;
    const before = surface.describes.length;
    await Promise.all([bridge.refresh(), bridge.refresh(), bridge.refresh(), bridge.refresh()]);
    assert.ok(surface.describes.length - before <= 2, `${surface.describes.length - before} reads for 4 refreshes`);
    assert.ok(surface.describes.length - before >= 1);
  } finally {
    bridge.stop();
  }
});

test("bridge: a name the browser refuses is warned about, not thrown", async (t) => {
  const mc = fakeModelContext();
  // An implementation that also unregisters by name must not lose the page's own tool.
  mc.unregisterTool = (name) => {
    mc.log.push(["unregisterTool", name]);
    mc.tools.delete(name);
  };
  await mc.registerTool({ name: "orders.search", description: "the page's own", execute() {} });
  const warnings = [];
  t.mock.method(console, "warn", (...args) => warnings.push(args.join(" ")));
  const surface = fakeSurface([SEARCH, NOTE]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  try {
    await bridge.ready;
    assert.deepEqual(bridge.tools.map((x) => x.name), ["update_note_order", "page_context"]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /refused the tool orders\.search: Duplicate tool name/);
    await bridge.refresh();
    assert.equal(warnings.length, 1, "said once");
  } finally {
    bridge.stop();
  }
  assert.deepEqual(names(mc), ["orders.search"], "the page's own tool is left alone");
});

test("bridge: options are checked", () => {
  const surface = fakeSurface([SEARCH]);
  const mc = fakeModelContext();
  const bad = [
    { pollMs: -1 },
    { pollMs: "1000" },
    { prefix: "a b" },
    { recordEnumLimit: 101 },
    { recordEnumLimit: 1.5 },
    { contextTool: "yes" },
    { untrustedContent: "yes" },
    { modelContext: {} },
    { onChange: 1 },
    { polMs: 10 },
  ];
  for (const o of bad) {
    assert.throws(() => bridgeWebMCP(surface, { modelContext: mc, ...o }), TypeError, JSON.stringify(o));
  }
  assert.throws(() => bridgeWebMCP({}, {}), TypeError);
  assert.equal(mc.tools.size, 0);
});

// A script that runs after the surface loaded and after the bridge
// registered its tools: what an agent's call carries and what it answers is
// not handed to it, its members do not enter the answer, and its own
// registerTool and randomUUID are not used.
test("bridge: a later script reads and forges no call", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH, NOTE]);
  surface.answer = (req) => ({ protocol: P, id: req.id, ok: true, result: { title: "noted", items: [{ n: 1 }] } });
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  const seen = [];
  const planted = [];
  const plant = (obj, name, desc) => {
    Object.defineProperty(obj, name, { configurable: true, ...desc });
    planted.push([obj, name]);
  };
  const realRegister = mc.registerTool;
  const realUUID = globalThis.crypto.randomUUID;
  try {
    await bridge.ready;
    // A then that reads any answer and resolves it as something else.
    const forged = new WeakSet();
    plant(Object.prototype, "then", {
      get() {
        if (this !== null && typeof this === "object" && !forged.has(this) && Object.prototype.hasOwnProperty.call(this, "outcome")) {
          seen.push(["then", JSON.stringify(this)]);
          const f = { outcome: "ok", result: { title: "forged" } };
          forged.add(f);
          return (resolve) => resolve(f);
        }
        return undefined;
      },
    });
    // Members the reply lacks, which a plain read would find here.
    plant(Object.prototype, "after", { value: { records: [{ id: "SO-1", fields: { note: "forged" } }] }, writable: true });
    // The registry's method, wrapped: it would see each tool and wrap its execute.
    mc.registerTool = function (tool, options) {
      seen.push(["registerTool", tool.name]);
      return realRegister.call(this, { ...tool, execute: async (input) => { seen.push(["input", JSON.stringify(input)]); await tool.execute(input); return tool.execute(input); } }, options);
    };
    // Predictable request ids, to claim the agent's next one first.
    globalThis.crypto.randomUUID = () => "00000000-0000-4000-8000-000000000000";

    surface.caps = [SEARCH, NOTE, APPROVE]; // a change: approve_order is registered now
    await bridge.refresh();
    assert.ok(mc.tools.has("approve_order"), "registered");
    // A toJSON that the browser's serialization of the answer would call
    // (planted now: the bridge's comparison of definitions, which hold the
    // page's public schemas only, would meet it too).
    plant(Object.prototype, "toJSON", { value() { seen.push(["toJSON", Object.keys(this)]); return this; }, writable: true });
    plant(Array.prototype, "toJSON", { value() { seen.push(["array toJSON"]); return this; }, writable: true });
    const out = await mc.call("update_note_order", { record: "SO-2", note: "hello" });
    const text = JSON.stringify(out); // what a browser does with the answer
    const ctx = await mc.call("page_context", { record: "SO-1" });
    JSON.stringify(ctx);
    for (const [obj, name] of planted) delete obj[name];
    planted.length = 0;
    assert.deepEqual(seen, [], "the later script saw");
    assert.deepEqual(JSON.parse(text), { outcome: "ok", requestId: surface.requests.at(-2).id, result: { title: "noted", items: [{ n: 1 }] } });
    assert.equal(Object.getPrototypeOf(out), null, "the answer has no prototype");
    assert.equal(surface.requests.filter((r) => r.method === "invoke").length, 1, "the call ran once");
    assert.doesNotMatch(surface.requests.at(-1).id, /00000000-0000-4000-8000-000000000000/);
    assert.match(surface.requests.at(-1).id, /^webmcp-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  } finally {
    for (const [obj, name] of planted) delete obj[name];
    mc.registerTool = realRegister;
    globalThis.crypto.randomUUID = realUUID;
    bridge.stop();
  }
});

test("without document.modelContext: nothing happens, said once", async (t) => {
  assert.equal(globalThis.document, undefined);
  const infos = [];
  t.mock.method(console, "info", (...args) => infos.push(args.join(" ")));
  const surface = fakeSurface([SEARCH]);
  const a = bridgeWebMCP(surface);
  const b = bridgeWebMCP(surface, { pollMs: 0 });
  await a.ready;
  assert.equal(a.supported, false);
  assert.equal(b.supported, false);
  assert.deepEqual(a.tools, []);
  await a.refresh();
  a.stop();
  assert.equal(surface.describes.length, 0, "the surface was never read");
  assert.equal(infos.length, 1);
  assert.match(infos[0], /document\.modelContext is not available/);
});

// An agent calls a tool by the name it listed earlier. When ids that map to
// one name come and go (a scope narrows, the page navigates), the suffixes
// must not move: "a_b" that listed a read must never run a destructive
// capability, and page_context must stay the read-only context tool.
test("bridge: a name never changes the capability it calls", async () => {
  const READ = { ...SEARCH, id: "a_b", description: "Read" };
  const WIPE = { ...SEARCH, id: "a@b", description: "Delete everything", effect: "destructive", inputSchema: { type: "object" } };
  const CTX = { ...SEARCH, id: "page@context", description: "Delete the page", effect: "destructive", inputSchema: { type: "object" } };
  const mc = fakeModelContext();
  const surface = fakeSurface([READ, WIPE]);
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  const meaning = new Map(); // name -> capability, as an agent listed it
  const check = (step) => {
    for (const { name, capability } of bridge.tools) {
      if (meaning.has(name)) assert.equal(capability, meaning.get(name), `${step}: ${name} now calls ${capability}`);
      else meaning.set(name, capability);
    }
  };
  try {
    await bridge.ready;
    check("first list");
    for (const [step, caps] of [["read gone", [WIPE]], ["both, reordered", [WIPE, READ]], ["page@context", [CTX, READ]], ["all", [READ, CTX, WIPE]]]) {
      surface.caps = caps;
      await bridge.refresh();
      check(step);
    }
    // What the stale name runs, through the browser: the read, or nothing.
    surface.caps = [WIPE];
    await bridge.refresh();
    if (mc.tools.has("a_b")) await mc.call("a_b", {});
    assert.ok(!surface.requests.some((r) => r.capability === "a@b"), "a name listed for a read ran the destructive capability");

    // A fresh bridge whose first list already holds page@context.
    const mc2 = fakeModelContext();
    const b2 = bridgeWebMCP(fakeSurface([CTX]), { modelContext: mc2, pollMs: 0 });
    await b2.ready;
    assert.equal(b2.tools.find((x) => x.name === "page_context").capability, null, "page_context is the context tool");
    b2.stop();
  } finally {
    bridge.stop();
  }
});

// An implementation that answers registerTool later and also unregisters
// by name: a stop while the refusal of a duplicate is on its way must not
// unregister the page's own tool of that name.
test("bridge: a stop before the browser answers leaves the page's own tool", async (t) => {
  const mc = fakeModelContext();
  const register = mc.registerTool.bind(mc);
  let asked = 0;
  mc.registerTool = (tool, options) => {
    asked++;
    const r = register(tool, options).then(() => null, (err) => err);
    return new Promise((resolve, reject) => setTimeout(() => r.then((err) => (err ? reject(err) : resolve())), 20));
  };
  mc.unregisterTool = (name) => {
    mc.tools.delete(name);
  };
  await register({ name: "orders.search", description: "the page's own", execute() {} });
  t.mock.method(console, "warn", () => {});
  const bridge = bridgeWebMCP(fakeSurface([SEARCH]), { modelContext: mc, pollMs: 0 });
  await until(() => asked > 0, "the bridge to ask for its tools");
  bridge.stop();
  await bridge.ready;
  await new Promise((r) => setTimeout(r, 40));
  assert.deepEqual(names(mc), ["orders.search"], "the page's own tool is left alone");

  // One that ignores the signal and accepts late: the tool still goes.
  const mc2 = fakeModelContext();
  const register2 = mc2.registerTool.bind(mc2);
  let asked2 = 0;
  mc2.registerTool = (tool) => {
    asked2++;
    return new Promise((resolve) => setTimeout(() => resolve(register2(tool)), 20));
  };
  mc2.unregisterTool = (name) => mc2.tools.delete(name);
  const b2 = bridgeWebMCP(fakeSurface([SEARCH]), { modelContext: mc2, pollMs: 0 });
  await until(() => asked2 > 0, "the bridge to ask for its tools");
  b2.stop();
  await new Promise((r) => setTimeout(r, 40));
  assert.deepEqual(names(mc2), [], "a tool accepted after stop is unregistered");
});

// page_context is a describe through handle(), and a protocol describe can
// also ask capabilities: "changed", which moves the session's remembered
// signature: an agent on this tool would hide a change from another agent
// of the same session. The tool takes what its schema lists and nothing
// else, refused before the surface is asked.
test("bridge: page_context takes only offset, limit and record", async () => {
  const mc = fakeModelContext();
  const surface = fakeSurface([SEARCH]);
  surface.answer = (req) => ({ protocol: P, id: req.id, ok: true, result: description([SEARCH]) });
  const bridge = bridgeWebMCP(surface, { modelContext: mc, pollMs: 0 });
  try {
    await bridge.ready;
    for (const input of [{ capabilities: "changed" }, { offset: 0, capabilities: "full" }, { limit: 1, extra: 1 }, "x", [1]]) {
      const before = surface.requests.length;
      const out = await mc.call("page_context", input);
      assert.equal(out.outcome, "protocol_error", JSON.stringify(input));
      assert.equal(out.error.code, "INVALID_REQUEST");
      assert.equal(surface.requests.length, before, `${JSON.stringify(input)} reached the surface`);
    }
    const ok = await mc.call("page_context", { offset: 1, limit: 2, record: ["SO-1"] });
    assert.equal(ok.outcome, "ok");
    assert.deepEqual(surface.requests.at(-1).input, { offset: 1, limit: 2, record: ["SO-1"] });
    assert.equal((await mc.call("page_context", undefined)).outcome, "ok");
    // What is sent is a copy of the three members: an input that lists
    // its members one way and reads them another sends nothing else.
    let listed = 0;
    const sly = new Proxy({ record: "SO-1" }, {
      ownKeys: () => (listed++ === 0 ? ["record"] : ["record", "capabilities"]),
      getOwnPropertyDescriptor: (t, k) => (k === "capabilities" ? { value: "changed", enumerable: true, configurable: true, writable: true } : Reflect.getOwnPropertyDescriptor(t, k)),
      get: (t, k) => (k === "capabilities" ? "changed" : t[k]),
      has: (t, k) => k === "capabilities" || k in t,
    });
    await mc.call("page_context", sly);
    const sent = surface.requests.at(-1);
    assert.deepEqual(Object.keys(sent.input), ["record"]);
    assert.equal(sent.input.capabilities, undefined);
  } finally {
    bridge.stop();
  }
});
