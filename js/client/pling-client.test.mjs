// Unit tests of pling-client.js against a fake window and fake surfaces that
// follow the page runtime's wire format. Run: node --test js/client/
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import vm from "node:vm";

import * as client from "./pling-client.js";
import { toClassic } from "./classic.mjs";

const { connect, discover, classify, ClientErrorCode, OutcomeCode, SurfaceClientError, SURFACE_PROTOCOL } = client;
const CHANNEL = "pling.surface";
const ORIGIN = "https://shop.example";

// ---------------------------------------------------------------------------
// Fakes

// FakeWindow delivers posted messages asynchronously to its listeners as
// trusted events from itself, the way a content script sees the page's window.
class FakeWindow {
  constructor(origin = ORIGIN) {
    this.location = { origin };
    this.listeners = new Map();
    this.posted = [];
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(fn);
  }
  removeEventListener(type, fn) {
    this.listeners.get(type)?.delete(fn);
  }
  count(type) {
    return this.listeners.get(type)?.size ?? 0;
  }
  postMessage(data, targetOrigin, transfer = []) {
    if (targetOrigin !== this.location.origin) throw new Error(`posted to ${targetOrigin}`);
    const clone = structuredClone(data);
    this.posted.push({ data: clone, ports: transfer });
    setImmediate(() => this.dispatch("message", { data: clone, origin: this.location.origin, source: this, isTrusted: true, ports: transfer }));
  }
  dispatch(type, event = {}) {
    for (const fn of [...(this.listeners.get(type) ?? [])]) fn(event);
  }
  requests() {
    return this.posted.filter((p) => p.data.kind === "request").map((p) => p.data);
  }
}

class FakePort {
  constructor() {
    this.listeners = new Map();
    this.onmessage = null;
    this.closed = false;
    this.sent = [];
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(fn);
  }
  removeEventListener(type, fn) {
    this.listeners.get(type)?.delete(fn);
  }
  start() {}
  postMessage(data) {
    if (this.closed) return;
    const clone = structuredClone(data);
    this.sent.push(clone);
    const peer = this.peer;
    setImmediate(() => peer.deliver("message", { data: clone }));
  }
  deliver(type, ev) {
    if (this.closed) return;
    if (type === "message" && this.onmessage) this.onmessage(ev);
    for (const fn of [...(this.listeners.get(type) ?? [])]) fn(ev);
  }
  // As in browsers, closing one end fires "close" on the other.
  close() {
    if (this.closed) return;
    this.closed = true;
    const peer = this.peer;
    setImmediate(() => peer.deliver("close", {}));
  }
}

class FakeChannel {
  constructor() {
    this.port1 = new FakePort();
    this.port2 = new FakePort();
    this.port1.peer = this.port2;
    this.port2.peer = this.port1;
  }
}

const ok = (id, result, after) => ({ protocol: SURFACE_PROTOCOL, id, ok: true, ...(result === undefined ? {} : { result }), ...(after ? { after } : {}) });
const fail = (id, code, extra = {}) => ({ protocol: SURFACE_PROTOCOL, id, ok: false, error: { code, message: code.toLowerCase(), ...extra } });

// fakeSurface answers requests on the window and on private channels like the
// page runtime's listener: it ignores messages for another app, answers to
// the window or the port, and closes its ports on stop(). handler(envelope,
// info) returns a reply envelope, a Promise of one, or undefined to drop it.
function fakeSurface(win, { app, handler, refuse = false } = {}) {
  const ports = [];
  const seen = []; // requests, in arrival order
  const connects = [];
  const listener = (event) => {
    const d = event.data;
    if (!d || d.channel !== CHANNEL || (d.kind !== "request" && d.kind !== "connect")) return;
    if ("app" in d && d.app !== app) return;
    if (d.kind === "connect") {
      const port = event.ports[0];
      connects.push(d);
      if (refuse) {
        port.postMessage({ channel: CHANNEL, kind: "refused" });
        port.close();
        return;
      }
      ports.push(port);
      port.onmessage = (e) => {
        if (e.data.kind !== "request") return;
        serve(e.data.envelope, "port", (reply) => port.postMessage({ channel: CHANNEL, kind: "response", ...(app ? { app } : {}), envelope: reply }));
      };
      port.postMessage({ channel: CHANNEL, kind: "connected", ...(app ? { app } : {}) });
      return;
    }
    serve(d.envelope, "window", (reply) => win.postMessage({ channel: CHANNEL, kind: "response", ...(app ? { app } : {}), envelope: reply }, win.location.origin));
  };
  const serve = (envelope, via, reply) => {
    seen.push({ envelope, via });
    Promise.resolve(handler ? handler(envelope, { via, n: seen.length }) : ok(envelope.id, {})).then((r) => {
      if (r !== undefined) reply(r);
    });
  };
  win.addEventListener("message", listener);
  return {
    seen,
    connects,
    ports,
    stop() {
      win.removeEventListener("message", listener);
      for (const p of ports) p.close();
    },
    // notifyClosed posts the runtime's {kind: "closed"} on every port.
    notifyClosed() {
      for (const p of ports) p.postMessage({ channel: CHANNEL, kind: "closed" });
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));
async function until(cond, what) {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`never: ${what}`);
}

async function rejectsWith(promise, code) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof SurfaceClientError, `want SurfaceClientError ${code}, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

const portOpts = (win, extra = {}) => ({ window: win, transport: "port", MessageChannel: FakeChannel, ...extra });

// A description of the orders page: one plain capability and two folded
// templates, one with its own record parameter.
function ordersDescription({ ids = ["SO-1", "SO-2", "SO-3"], total = ids.length } = {}) {
  return {
    protocol: SURFACE_PROTOCOL,
    app: "orders",
    capabilities: [
      { id: "orders.search", effect: "read", approval: "none", inputSchema: { type: "object" } },
      { id: "update_note@order", effect: "write", approval: "none", record: { param: "record", total } },
      { id: "approve@order", effect: "write", approval: "always", record: { param: "order", total } },
    ],
    context: { regions: [], records: [], recordIds: ids, recordIdsTotal: total, state: {}, feedback: [], unavailable: [], recordsTotal: total, feedbackTotal: 0, unavailableTotal: 0 },
  };
}

// ---------------------------------------------------------------------------

describe("request ids", () => {
  test("every new intent gets a new unpredictable id", async () => {
    const win = new FakeWindow();
    fakeSurface(win);
    const c = await connect(portOpts(win));
    const ids = new Set();
    for (let i = 0; i < 50; i++) {
      const out = await c.invoke("orders.search", { q: "same input every time" });
      assert.equal(out.kind, "success");
      ids.add(out.id);
    }
    assert.equal(ids.size, 50);
    for (const id of ids) assert.match(id, /^pc-[0-9a-f-]{32,36}$/);
    c.close();
  });

  test("ids come from getRandomValues where randomUUID is missing", () => {
    const saved = Object.getOwnPropertyDescriptor(globalThis, "crypto");
    const real = globalThis.crypto;
    Object.defineProperty(globalThis, "crypto", { value: { getRandomValues: (a) => real.getRandomValues(a) }, configurable: true });
    try {
      const a = client.newRequestId();
      const b = client.newRequestId();
      assert.match(a, /^pc-[0-9a-f]{32}$/);
      assert.notEqual(a, b);
      Object.defineProperty(globalThis, "crypto", { value: {}, configurable: true });
      assert.throws(() => client.newRequestId(), (e) => e.code === ClientErrorCode.UNSUPPORTED_ENVIRONMENT);
    } finally {
      Object.defineProperty(globalThis, "crypto", saved);
    }
  });

  test("a timed-out describe is posted again with the same id", async () => {
    const win = new FakeWindow();
    // Loses the first attempt, answers the second.
    const s = fakeSurface(win, { handler: (env, { n }) => (n === 1 ? undefined : ok(env.id, ordersDescription())) });
    const c = await connect({ window: win, transport: "window", describeTimeoutMs: 20 });
    const out = await c.describe();
    assert.equal(out.kind, "success");
    assert.equal(out.attempts, 2);
    const ids = s.seen.map((x) => x.envelope.id);
    assert.equal(ids.length, 2);
    assert.equal(ids[0], ids[1]);
    assert.equal(out.id, ids[0]);
    c.close();
  });

  test("an invoke is not retried unless asked, and fails TIMEOUT with its request", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const err = await rejectsWith(c.invoke("orders.search", { q: "x" }, { timeoutMs: 20 }), ClientErrorCode.TIMEOUT);
    assert.equal(err.attempts, 1);
    assert.equal(err.effectUnknown, true, "an invoke that was sent may have run");
    assert.equal(err.request.method, "invoke");
    assert.equal(s.seen.length, 1);
    c.close();
  });

  test("retries: the same id on every attempt; a new intent a new id", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: (env, { n }) => (n <= 2 ? undefined : ok(env.id, { done: true })) });
    const c = await connect(portOpts(win));
    const out = await c.invoke("orders.search", { q: "x" }, { timeoutMs: 20, retries: 2 });
    assert.equal(out.kind, "success");
    assert.equal(out.attempts, 3);
    const first = s.seen.map((x) => x.envelope.id);
    assert.deepEqual(first, [first[0], first[0], first[0]]);
    const again = await c.invoke("orders.search", { q: "x" });
    assert.notEqual(again.id, first[0], "a new intent with the same input still gets a new id");
    c.close();
  });

  test("retry(error.request) resends the same id and takes the late first reply", async () => {
    const win = new FakeWindow();
    let release;
    const late = new Promise((r) => (release = r));
    // The first attempt's reply is held back past the timeout; the retry is
    // refused as a replay at once, then the first reply arrives.
    const s = fakeSurface(win, {
      handler: (env, { n }) => (n === 1 ? late.then(() => ok(env.id, { title: "ran once" })) : fail(env.id, "REPLAY_DETECTED")),
    });
    const c = await connect(portOpts(win));
    const err = await rejectsWith(c.invoke("update_note@order", { record: "SO-1", note: "n" }, { timeoutMs: 20 }), ClientErrorCode.TIMEOUT);
    const retried = c.retry(err.request, { timeoutMs: 5000 });
    await until(() => s.seen.length === 2, "the retry reached the surface");
    await tick();
    release();
    const out = await retried;
    assert.equal(out.kind, "success", JSON.stringify(out));
    assert.deepEqual(out.result, { title: "ran once" });
    assert.equal(s.seen[1].envelope.id, s.seen[0].envelope.id);
    c.close();
  });

  test("a retry refused as a replay, with no first reply, is a protocol error whose effect is unknown", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: (env, { n }) => (n === 1 ? undefined : fail(env.id, "REPLAY_DETECTED")) });
    const c = await connect(portOpts(win));
    const out = await c.invoke("orders.search", {}, { timeoutMs: 30, retries: 1 });
    assert.equal(out.kind, "protocol-error");
    assert.equal(out.error.code, "REPLAY_DETECTED");
    assert.equal(out.effectUnknown, true);
    assert.equal(out.attempts, 2);
    assert.equal(s.seen.length, 2);
    c.close();
  });

  test("a retry refused for any other reason also leaves the first attempt's effect unknown", async () => {
    // The first copy reaches the page and may run; its reply is lost. The
    // copy sent again is refused (the budget is spent, the session was
    // revoked in between): that says nothing about the first, which the
    // Go client reads the same way.
    for (const code of ["RATE_LIMITED", "SESSION_REVOKED", "CAPABILITY_NOT_EXPOSED"]) {
      const win = new FakeWindow();
      const ids = new Set(); // the first copy of each id is lost
      const s = fakeSurface(win, { handler: (env) => (ids.has(env.id) ? fail(env.id, code) : void ids.add(env.id)) });
      const c = await connect(portOpts(win));
      const out = await c.invoke("orders.search", {}, { timeoutMs: 30, retries: 1 });
      assert.equal(out.error.code, code);
      assert.equal(out.effectUnknown, true, `${code} answering the second attempt`);
      assert.equal(out.attempts, 2);
      const err = await rejectsWith(c.invoke("orders.search", { q: "x" }, { timeoutMs: 30 }), ClientErrorCode.TIMEOUT);
      const again = await c.retry(err.request, { timeoutMs: 30 });
      assert.equal(again.effectUnknown, true, `${code} answering retry(error.request)`);
      assert.equal(s.seen.length, 4);
      c.close();
    }
    // A refusal of the only attempt is still one that nothing ran behind.
    const win = new FakeWindow();
    fakeSurface(win, { handler: (env) => fail(env.id, "RATE_LIMITED") });
    const c = await connect(portOpts(win));
    assert.equal((await c.invoke("orders.search", {})).effectUnknown, undefined);
    c.close();
  });

  test("a used id is refused for another intent, and nothing is sent", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win);
    const c = await connect(portOpts(win));
    const first = await c.invoke("orders.search", { q: "a", page: 1 });
    await rejectsWith(c.invoke("orders.search", { q: "b", page: 1 }, { id: first.id }), ClientErrorCode.ID_REUSED);
    await rejectsWith(c.invoke("orders.go", { q: "a", page: 1 }, { id: first.id }), ClientErrorCode.ID_REUSED);
    assert.equal(s.seen.length, 1);
    // The same id cannot wait twice at once.
    const slow = new FakeWindow();
    fakeSurface(slow, { handler: () => undefined });
    const s2 = await connect(portOpts(slow));
    const waiting = s2.invoke("orders.search", {}, { id: "fixed-1", timeoutMs: 50 });
    await rejectsWith(s2.invoke("orders.search", {}, { id: "fixed-1" }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(waiting, ClientErrorCode.TIMEOUT);
    s2.close();
    // The same intent with its id is a retry, and key order does not make it another intent.
    const again = await c.invoke("orders.search", { page: 1, q: "a" }, { id: first.id });
    assert.equal(again.id, first.id);
    c.close();
  });
});

describe("classification", () => {
  const id = "r1";
  const cases = [
    { name: "success", env: ok(id, { title: "done" }), kind: "success", approval: "none" },
    { name: "null result", env: ok(id, null), kind: "success", approval: "none" },
    { name: "no result at all", env: ok(id), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "error member null is no error", env: ok(id, { error: null }), kind: "success" },
    { name: "business failure", env: ok(id, { error: { code: "ORDER_LOCKED", message: "locked" } }), kind: "business-error", code: "ORDER_LOCKED" },
    { name: "business failure without code", env: ok(id, { error: "locked" }), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "business failure wins over pending", env: ok(id, { error: { code: "X", message: "" }, approval: { status: "pending" } }), kind: "business-error", code: "X", approval: "pending" },
    { name: "approval pending", env: ok(id, { approval: { status: "pending" } }), kind: "success", approval: "pending" },
    { name: "approval granted", env: ok(id, { approval: { status: "granted" } }), kind: "success", approval: "granted" },
    { name: "approval denied", env: ok(id, { approval: { status: "denied" } }), kind: "business-error", code: OutcomeCode.APPROVAL_DENIED, approval: "denied" },
    { name: "approval unknown", env: ok(id, { approval: { status: "unknown" } }), kind: "business-error", code: OutcomeCode.APPROVAL_STATUS_UNKNOWN, approval: "unknown" },
    { name: "approval approved (not a status)", env: ok(id, { approval: { status: "approved" } }), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "approval as a bare string", env: ok(id, { approval: "granted" }), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "approval null", env: ok(id, { approval: null }), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "approval status in another case", env: ok(id, { approval: { status: "Granted" } }), kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "ok true with an error beside the result", env: { ...ok(id, { title: "t" }), error: { code: "X" } }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "protocol failure", env: fail(id, "CAPABILITY_NOT_EXPOSED"), kind: "protocol-error", code: "CAPABILITY_NOT_EXPOSED" },
    { name: "rate limited", env: fail(id, "RATE_LIMITED", { retryAfterMs: 1500 }), kind: "protocol-error", code: "RATE_LIMITED", retryAfterMs: 1500 },
    { name: "a code from a newer surface", env: fail(id, "SOMETHING_NEW"), kind: "protocol-error", code: "SOMETHING_NEW" },
    { name: "ok:false without a code", env: { protocol: SURFACE_PROTOCOL, id, ok: false, error: {} }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "ok missing", env: { protocol: SURFACE_PROTOCOL, id, result: { title: "done" } }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: 'ok "true"', env: { protocol: SURFACE_PROTOCOL, id, ok: "true", result: {} }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "ok 1", env: { protocol: SURFACE_PROTOCOL, id, ok: 1, result: {} }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "another protocol version", env: { ...ok(id, {}), protocol: "pling.surface/0.2" }, kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "not an object", env: "ok", kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "describe without capabilities", env: ok(id, { context: {} }), method: "describe", kind: "protocol-error", code: OutcomeCode.MALFORMED_RESPONSE },
    { name: "describe", env: ok(id, ordersDescription()), method: "describe", kind: "success" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const out = classify(c.env, c.method);
      assert.equal(out.kind, c.kind);
      assert.equal(out.ok, c.kind !== "protocol-error");
      if (c.code) assert.equal(out.error.code, c.code);
      else assert.equal(out.error, undefined);
      if (c.approval) assert.equal(out.approval, c.approval);
      if (c.retryAfterMs) {
        assert.equal(out.retryAfterMs, c.retryAfterMs);
        assert.equal(out.error.retryAfterMs, c.retryAfterMs);
      }
      if (c.method === "describe" && c.kind === "success") assert.equal(out.description.app, "orders");
    });
  }

  test("violations and after are carried", () => {
    const v = [{ instancePath: "/page", keyword: "maximum", message: "too big" }];
    assert.deepEqual(classify(fail("x", "INVALID_REQUEST", { violations: v })).error.violations, v);
    const after = { records: [{ id: "SO-1", fields: { note: "n" } }] };
    assert.deepEqual(classify(ok("x", { title: "t" }, after)).after, after);
  });

  test("no unknown status is ever a success or an approval", () => {
    for (const status of [undefined, null, "", "ok", "approved", "GRANTED", "granted ", 1, true, {}]) {
      const out = classify(ok("x", { approval: { status } }));
      assert.equal(out.kind, "protocol-error", `status ${JSON.stringify(status)}`);
      assert.equal(out.error.code, OutcomeCode.MALFORMED_RESPONSE);
      assert.equal(out.approval, "none");
      assert.equal(out.effectUnknown, true, "an invoke answered by nonsense may have run");
    }
    for (const okValue of [undefined, null, "true", 1, "yes", {}]) {
      const out = classify({ protocol: SURFACE_PROTOCOL, id: "x", ok: okValue, result: { title: "done" } });
      assert.equal(out.kind, "protocol-error", `ok ${JSON.stringify(okValue)}`);
    }
  });
});

describe("navigation and closing", () => {
  test("a call pending when the page navigates fails NAVIGATED; later calls too", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const pending = c.invoke("orders.search", {}, { timeoutMs: 60_000 });
    await tick();
    win.dispatch("pagehide", { persisted: false, isTrusted: true });
    const err = await rejectsWith(pending, ClientErrorCode.NAVIGATED);
    assert.equal(err.effectUnknown, true);
    assert.equal(c.closed, true);
    assert.equal((await c.ended).code, ClientErrorCode.NAVIGATED);
    const later = await rejectsWith(c.describe(), ClientErrorCode.NAVIGATED);
    assert.equal(later.effectUnknown, false, "nothing was sent");
    assert.equal(win.count("pagehide"), 0, "the client removed its listeners");
  });

  test("a pending describe on the window transport fails NAVIGATED without an unknown effect", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => undefined });
    const c = await connect({ window: win, transport: "window" });
    const pending = c.describe(undefined, { timeoutMs: 60_000 });
    await tick();
    win.dispatch("pagehide", { persisted: true, isTrusted: true });
    const err = await rejectsWith(pending, ClientErrorCode.NAVIGATED);
    assert.equal(err.effectUnknown, false);
    assert.equal(win.count("message"), 1, "only the surface listens now");
  });

  test("a pagehide a page script dispatches is no navigation", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: (env) => ok(env.id, { title: "done" }) });
    const c = await connect(portOpts(win));
    win.dispatch("pagehide", { persisted: false, isTrusted: false });
    await tick();
    assert.equal(c.closed, false, "the client is still open");
    const r = await c.invoke("orders.search", {});
    assert.equal(r.kind, "success");
  });

  test("a call pending when the surface closes its channel fails CLOSED", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const pending = c.invoke("orders.search", {}, { timeoutMs: 60_000 });
    await until(() => s.seen.length === 1, "the request arrived");
    s.stop();
    const err = await rejectsWith(pending, ClientErrorCode.CLOSED);
    assert.equal(err.effectUnknown, true);
    assert.equal(c.closed, true);
    await rejectsWith(c.invoke("orders.search", {}), ClientErrorCode.CLOSED);
  });

  test("a closed notice ends pending calls even where ports fire no close event", async () => {
    // Chromium does not fire MessagePort "close"; the page says "closed" first.
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const pending = c.invoke("orders.search", {}, { timeoutMs: 60_000 });
    await until(() => s.seen.length === 1, "the request arrived");
    s.notifyClosed();
    const err = await rejectsWith(pending, ClientErrorCode.CLOSED);
    assert.equal(err.effectUnknown, true);
  });

  test("close() fails what is waiting", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const pending = c.describe();
    c.close();
    await rejectsWith(pending, ClientErrorCode.CLOSED);
  });

  test("an aborted call fails ABORTED", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const ac = new AbortController();
    const pending = c.invoke("orders.search", {}, { signal: ac.signal });
    await tick();
    ac.abort();
    assert.equal((await rejectsWith(pending, ClientErrorCode.ABORTED)).effectUnknown, true);
    const done = new AbortController();
    done.abort();
    assert.equal((await rejectsWith(c.invoke("orders.search", {}, { signal: done.signal }), ClientErrorCode.ABORTED)).effectUnknown, false);
    c.close();
  });
});

describe("connecting", () => {
  test("the private channel: connected, with the app the page names", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { app: "orders" });
    const c = await connect(portOpts(win));
    assert.equal(c.app, "orders");
    assert.equal(c.transport, "port");
    await c.describe();
    // Requests travel on the port, not the window.
    assert.equal(win.requests().length, 0);
    assert.equal(s.seen.filter((x) => x.via === "port").length, 1);
    c.close();
    assert.equal(s.ports[0].peer.closed, true, "close() closes the client's port");
  });

  test("the private channel is the default where the page offers it; outcomes say which transport carried them", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { app: "orders" });
    const c = await connect({ window: win, MessageChannel: FakeChannel });
    assert.equal(c.transport, "port");
    assert.equal(c.privateRefused, undefined);
    const d = await c.describe();
    assert.equal(s.seen[0].via, "port");
    assert.equal(d.transport, "port");
    assert.equal(d.forgeable, false);
    c.close();
    // A page that refuses a channel without a credential is talked to over
    // the window, and every answer read there says it could be forged.
    const refusing = new FakeWindow();
    fakeSurface(refusing, { app: "orders", refuse: true });
    const w = await connect({ window: refusing, MessageChannel: FakeChannel });
    assert.equal(w.transport, "window");
    assert.equal(w.privateRefused, ClientErrorCode.REFUSED);
    const out = await w.invoke("orders.search", {});
    assert.equal(out.transport, "window");
    assert.equal(out.forgeable, true);
    w.close();
    const explicit = await connect({ window: win, transport: "window" });
    assert.equal(explicit.transport, "window");
    explicit.close();
    const withCredential = await connect({ window: win, MessageChannel: FakeChannel, credential: "token" });
    assert.equal(withCredential.transport, "port");
    assert.equal(s.connects.at(-1).credential, "token");
    withCredential.close();
  });

  test("refused", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { refuse: true });
    await rejectsWith(connect(portOpts(win, { credential: "wrong" })), ClientErrorCode.REFUSED);
  });

  test("no surface", async () => {
    const win = new FakeWindow();
    await rejectsWith(connect(portOpts(win, { connectTimeoutMs: 30 })), ClientErrorCode.NO_SURFACE);
    await rejectsWith(discover({ window: win, timeoutMs: 30 }), ClientErrorCode.NO_SURFACE);
  });

  test("a page that starts listening late is reached; a credential is posted only once", async () => {
    const win = new FakeWindow();
    const pending = connect(portOpts(win));
    await until(() => win.posted.filter((p) => p.data.kind === "connect").length >= 2, "connect posted again");
    fakeSurface(win, { app: "orders" });
    const c = await pending;
    assert.equal(c.app, "orders");
    c.close();

    const quiet = new FakeWindow();
    await rejectsWith(connect(portOpts(quiet, { credential: "one-time", connectTimeoutMs: 700 })), ClientErrorCode.NO_SURFACE);
    assert.equal(quiet.posted.length, 1);
  });

  test("bad options are refused before anything is posted", async () => {
    const win = new FakeWindow();
    await rejectsWith(connect({ window: win, sesion: {} }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(connect({ window: win, transport: "window", credential: "x" }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(connect({ window: win, transport: "http" }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(connect({ window: win, app: "" }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(connect({ window: new FakeWindow("null") }), ClientErrorCode.UNSUPPORTED_ENVIRONMENT);
    assert.equal(win.posted.length, 0);
    const c = await connect({ window: win, transport: "window" });
    await rejectsWith(c.invoke("orders.search", [1]), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(c.invoke("orders.search", { n: 1n }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(c.invoke("orders.search", {}, { timeout: 5 }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(c.invoke("", {}), ClientErrorCode.INVALID_ARGUMENT);
    assert.equal(win.posted.length, 0);
    c.close();
  });
});

describe("several surfaces on one page", () => {
  test("the window transport addresses one app and reads only its replies", async () => {
    const win = new FakeWindow();
    const orders = fakeSurface(win, { app: "orders", handler: (env) => ok(env.id, { from: "orders" }) });
    const billing = fakeSurface(win, { app: "billing", handler: (env) => ok(env.id, { from: "billing" }) });
    const c = await connect({ window: win, transport: "window", app: "billing" });
    const out = await c.invoke("x", {});
    assert.deepEqual(out.result, { from: "billing" });
    assert.equal(orders.seen.length, 0, "the request named its app");
    assert.equal(billing.seen.length, 1);
    c.close();
  });

  test("a reply from another app to the same id is ignored", async () => {
    const win = new FakeWindow();
    // A misbehaving surface answers everything, whatever the app.
    win.addEventListener("message", (e) => {
      const d = e.data;
      if (d.kind !== "request") return;
      win.postMessage({ channel: CHANNEL, kind: "response", app: "intruder", envelope: ok(d.envelope.id, { approval: { status: "granted" } }) }, ORIGIN);
    });
    fakeSurface(win, { app: "orders", handler: (env) => new Promise((r) => setTimeout(() => r(ok(env.id, { from: "orders" })), 5)) });
    const c = await connect({ window: win, transport: "window", app: "orders" });
    const out = await c.invoke("x", {});
    assert.deepEqual(out.result, { from: "orders" });
    c.close();
  });

  test("the private channel connects to the named app only", async () => {
    const win = new FakeWindow();
    const orders = fakeSurface(win, { app: "orders" });
    const billing = fakeSurface(win, { app: "billing", handler: (env) => ok(env.id, { from: "billing" }) });
    const c = await connect(portOpts(win, { app: "billing" }));
    assert.equal(c.app, "billing");
    assert.deepEqual((await c.invoke("x", {})).result, { from: "billing" });
    assert.equal(orders.ports.length, 0);
    assert.equal(billing.ports.length, 1);
    c.close();
  });

  test("discover asks a silent page again less and less often", async () => {
    const win = new FakeWindow();
    await rejectsWith(discover({ window: win, timeoutMs: 1700 }), ClientErrorCode.NO_SURFACE);
    // At 0, 500 and 1500 ms: a fixed 500 ms interval would have posted 4.
    const n = win.requests().length;
    assert.ok(n >= 2 && n <= 3, `${n} describes posted`);
  });

  test("discover lists every app once", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { app: "orders", handler: (env) => ok(env.id, ordersDescription()) });
    fakeSurface(win, { app: "billing", handler: (env) => fail(env.id, "SESSION_REVOKED") });
    const found = await discover({ window: win, settleMs: 20 });
    assert.deepEqual(found.map((f) => f.app).sort(), ["billing", "orders"]);
    const billing = found.find((f) => f.app === "billing");
    assert.equal(billing.outcome.error.code, "SESSION_REVOKED");
    const req = win.requests()[0];
    assert.equal("app" in req, false);
    assert.deepEqual(req.envelope.input, { limit: 0 });
  });

  // A hostile page answers one discover with 60 applications, each named
  // by a distinct 1 MiB string: all of it was kept and handed on (~60 MiB).
  test("discover keeps at most 20 apps, none named by more than 256 bytes", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { app: "orders", handler: (env) => ok(env.id, ordersDescription()) });
    win.addEventListener("message", (e) => {
      const d = e.data;
      if (d.kind !== "request") return;
      const answer = (app) => win.postMessage({ channel: CHANNEL, kind: "response", app, envelope: ok(d.envelope.id, ordersDescription()) }, ORIGIN);
      for (let i = 0; i < 60; i++) answer(`${i}`.padEnd(1 << 20, "x"));
      for (let i = 0; i < 60; i++) answer(`app-${i}`);
    });
    const found = await discover({ window: win, settleMs: 50 });
    const chars = found.reduce((n, f) => n + (f.app?.length ?? 0), 0);
    assert.ok(chars <= 20 * 256, `${chars} characters of app names kept`);
    assert.equal(found.length, 20, `${found.length} apps kept`);
    // The first 20 to answer: on the window any script of the page can
    // answer first, so a crowd of names can push a surface out, never in.
    assert.deepEqual(found.map((f) => f.app), Array.from({ length: 20 }, (_, i) => `app-${i}`));

    // maxApps asks for fewer (or more); anything but a positive integer,
    // and an unknown option, is refused before anything is posted.
    assert.equal((await discover({ window: win, settleMs: 50, maxApps: 3 })).length, 3);
    const before = win.posted.length;
    for (const maxApps of [0, -1, 2.5, Infinity, "20"]) await rejectsWith(discover({ window: win, maxApps }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(discover({ window: win, maxApp: 3 }), ClientErrorCode.INVALID_ARGUMENT);
    assert.equal(win.posted.length, before);
  });

  test("an app named by 256 bytes is kept, by 257 is not", async () => {
    const win = new FakeWindow();
    const fits = "é".repeat(128); // 256 bytes of UTF-8
    for (const app of [fits, `${fits}x`]) fakeSurface(win, { app, handler: (env) => ok(env.id, ordersDescription()) });
    const found = await discover({ window: win, settleMs: 20 });
    assert.deepEqual(found.map((f) => f.app), [fits]);
  });
});

describe("the window transport ignores what is not a reply to it", () => {
  test("untrusted, foreign, empty-id and other-source messages", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, { handler: () => undefined });
    const c = await connect({ window: win, transport: "window" });
    const pending = c.invoke("orders.search", {}, { timeoutMs: 200 });
    await until(() => s.seen.length === 1, "sent");
    const id = s.seen[0].envelope.id;
    const reply = (envelope) => ({ channel: CHANNEL, kind: "response", envelope });
    win.dispatch("message", { data: reply(ok(id, {})), origin: ORIGIN, source: win, isTrusted: false });
    win.dispatch("message", { data: reply(ok(id, {})), origin: "https://evil.example", source: win, isTrusted: true });
    win.dispatch("message", { data: reply(ok(id, {})), origin: ORIGIN, source: {}, isTrusted: true });
    win.dispatch("message", { data: reply(fail("", "INVALID_REQUEST")), origin: ORIGIN, source: win, isTrusted: true });
    win.dispatch("message", { data: { channel: CHANNEL, kind: "request", envelope: ok(id, {}) }, origin: ORIGIN, source: win, isTrusted: true });
    await rejectsWith(pending, ClientErrorCode.TIMEOUT);
    c.close();
  });

  test("on the private channel an empty-id answer is the one waiting call's", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => fail("", "INVALID_REQUEST") });
    const c = await connect(portOpts(win));
    const out = await c.invoke("orders.search", {});
    assert.equal(out.kind, "protocol-error");
    assert.equal(out.error.code, "INVALID_REQUEST");
    c.close();
  });
});

describe("folded templates", () => {
  async function described(opts) {
    const win = new FakeWindow();
    const s = fakeSurface(win, {
      handler: (env) => (env.method === "describe" ? ok(env.id, ordersDescription(opts)) : ok(env.id, { got: env.input })),
    });
    const c = await connect(portOpts(win));
    await c.describe();
    return { c, s, invokes: () => s.seen.filter((x) => x.envelope.method === "invoke").length };
  }

  test("options.record goes under the template's own parameter", async () => {
    const { c } = await described();
    assert.deepEqual((await c.invoke("update_note@order", { note: "n" }, { record: "SO-2" })).result.got, { note: "n", record: "SO-2" });
    assert.deepEqual((await c.invoke("approve@order", {}, { record: "SO-3" })).result.got, { order: "SO-3" });
    assert.deepEqual((await c.invoke("approve@order", { order: "SO-1" })).result.got, { order: "SO-1" });
    c.close();
  });

  test("a missing or unlisted record is refused before sending", async () => {
    const { c, invokes } = await described();
    await rejectsWith(c.invoke("update_note@order", { note: "n" }), ClientErrorCode.RECORD_REQUIRED);
    await rejectsWith(c.invoke("approve@order", { record: "SO-1" }), ClientErrorCode.RECORD_REQUIRED);
    await rejectsWith(c.invoke("update_note@order", { note: "n" }, { record: "SO-9" }), ClientErrorCode.RECORD_NOT_REFERENCEABLE);
    await rejectsWith(c.invoke("update_note@order", { note: "n", record: "SO-1" }, { record: "SO-2" }), ClientErrorCode.INVALID_ARGUMENT);
    await rejectsWith(c.invoke("orders.search", {}, { record: "SO-1" }), ClientErrorCode.INVALID_ARGUMENT);
    assert.equal(invokes(), 0);
    c.close();
  });

  test("a record outside a cut-short id list is left to the surface", async () => {
    const { c, invokes } = await described({ ids: ["SO-1", "SO-2"], total: 500 });
    assert.equal(client.isReferenceable(c.lastDescription, "SO-400"), undefined);
    await c.invoke("update_note@order", { note: "n" }, { record: "SO-400" });
    assert.equal(invokes(), 1);
    c.close();
  });

  test("an unchanged capability list keeps the one the client holds", async () => {
    const win = new FakeWindow();
    fakeSurface(win, {
      handler: (env) => {
        if (env.method !== "describe") return ok(env.id, { got: env.input });
        const d = ordersDescription();
        if (env.input && env.input.capabilities === "changed") Object.assign(d, { capabilities: [], capabilitiesUnchanged: true });
        return ok(env.id, d);
      },
    });
    const c = await connect(portOpts(win));
    await c.describe();
    const again = await c.describe({ capabilities: "changed" });
    assert.equal(again.description.capabilities.length, 0);
    assert.equal(c.lastDescription.capabilities.length, 3);
    await rejectsWith(c.invoke("update_note@order", { note: "n" }), ClientErrorCode.RECORD_REQUIRED);
    c.close();
  });

  test("the description to check against can be given", async () => {
    const { c } = await described();
    const other = ordersDescription({ ids: ["SO-7"] });
    await rejectsWith(c.invoke("update_note@order", { note: "n" }, { record: "SO-1", description: other }), ClientErrorCode.RECORD_NOT_REFERENCEABLE);
    await c.invoke("update_note@order", { note: "n" }, { record: "SO-7", description: other });
    c.close();
  });

  test("helpers", () => {
    const d = ordersDescription();
    assert.equal(client.recordParam(client.findCapability(d, "approve@order")), "order");
    assert.equal(client.recordParam(client.findCapability(d, "orders.search")), undefined);
    assert.equal(client.recordParam({ id: "x@y", record: { total: 1 } }), "record");
    assert.equal(client.isReferenceable(d, "SO-2"), true);
    assert.equal(client.isReferenceable(d, "SO-9"), false);
    assert.equal(client.isReferenceable(undefined, "SO-2"), undefined);
  });
});

describe("paging records", () => {
  const TOTAL = 45;
  const all = Array.from({ length: TOTAL }, (_, i) => ({ id: `R-${i + 1}`, kind: "order", fields: { n: i + 1 } }));
  function pagedSurface(win) {
    return fakeSurface(win, {
      handler: (env) => {
        const { offset = 0, limit = 8 } = env.input || {};
        const d = ordersDescription({ ids: all.map((r) => r.id) });
        d.context.records = all.slice(offset, offset + limit);
        d.context.recordsTotal = TOTAL;
        return ok(env.id, d);
      },
    });
  }

  test("records() walks every window with offset and limit", async () => {
    const win = new FakeWindow();
    const s = pagedSurface(win);
    const c = await connect(portOpts(win));
    const got = [];
    for await (const r of c.records({ limit: 20 })) got.push(r.id);
    assert.deepEqual(got, all.map((r) => r.id));
    assert.deepEqual(
      s.seen.filter((x) => x.envelope.method === "describe").map((x) => x.envelope.input),
      [
        { offset: 0, limit: 20 },
        { offset: 20, limit: 20 },
        { offset: 40, limit: 20 },
      ],
    );
    c.close();
  });

  test("page() reports the next offset, and max bounds the walk", async () => {
    const win = new FakeWindow();
    pagedSurface(win);
    const c = await connect(portOpts(win));
    const p = await c.page({ offset: 40, limit: 20 });
    assert.equal(p.records.length, 5);
    assert.equal(p.nextOffset, null);
    assert.equal((await c.page({ offset: 0, limit: 10 })).nextOffset, 10);
    const some = [];
    for await (const r of c.records({ offset: 3, limit: 4, max: 6 })) some.push(r.id);
    assert.deepEqual(some, ["R-4", "R-5", "R-6", "R-7", "R-8", "R-9"]);
    c.close();
  });

  // A hostile page answers one record per window and claims 1e15 of them:
  // without a default bound, for await over records() never ends.
  test("records() stops at 1000 records by default, whatever the page claims", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, {
      handler: (env) => {
        const d = ordersDescription();
        const at = env.input?.offset ?? 0;
        d.context.records = [{ id: `R-${at + 1}` }];
        d.context.recordsTotal = 1e15;
        return ok(env.id, d);
      },
    });
    const c = await connect(portOpts(win));
    let n = 0;
    for await (const r of c.records()) {
      n += 1;
      if (n > 5000) break; // the attack worked: stop the test, not the machine
    }
    assert.equal(n, 1000);
    assert.equal(s.seen.filter((x) => x.envelope.method === "describe").length, 1000);
    // A larger max reads further, and still stops there.
    n = 0;
    for await (const r of c.records({ max: 1500 })) if (++n > 5000) break;
    assert.equal(n, 1500);
    // An unbounded max is refused before anything is sent.
    const before = s.seen.length;
    for (const max of [Infinity, -1, 1.5, "10"]) {
      await rejectsWith(c.records({ max }).next(), ClientErrorCode.INVALID_ARGUMENT);
    }
    assert.equal(s.seen.length, before);
    c.close();
  });

  test("records() stops at a window that brings no records", async () => {
    const win = new FakeWindow();
    const s = fakeSurface(win, {
      handler: (env) => {
        const d = ordersDescription();
        d.context.recordsTotal = 1e15;
        return ok(env.id, d);
      },
    });
    const c = await connect(portOpts(win));
    let n = 0;
    for await (const r of c.records({ max: 1e6 })) n += 1;
    assert.equal(n, 0);
    assert.equal(s.seen.filter((x) => x.envelope.method === "describe").length, 1);
    c.close();
  });

  test("a protocol failure while paging is thrown with its outcome", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: (env) => fail(env.id, "SESSION_EXPIRED") });
    const c = await connect(portOpts(win));
    const err = await rejectsWith(c.page(), ClientErrorCode.PROTOCOL_FAILURE);
    assert.equal(err.outcome.error.code, "SESSION_EXPIRED");
    c.close();
  });
});

describe("errors travel as plain data", () => {
  test("toJSON", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: () => undefined });
    const c = await connect(portOpts(win));
    const err = await rejectsWith(c.invoke("orders.search", {}, { timeoutMs: 10 }), ClientErrorCode.TIMEOUT);
    const plain = JSON.parse(JSON.stringify(err));
    assert.equal(plain.code, "TIMEOUT");
    assert.equal(plain.effectUnknown, true);
    assert.equal(plain.requestId, err.request.id);
    c.close();
  });
});

describe("classic build", () => {
  test("defines globalThis.PlingClient with the module's exports, and works", async () => {
    const source = readFileSync(new URL("./pling-client.js", import.meta.url), "utf8");
    const classic = toClassic(source);
    const win = new FakeWindow();
    fakeSurface(win, { app: "orders" });
    const ctx = vm.createContext({ crypto: globalThis.crypto, setTimeout, clearTimeout, setInterval, clearInterval, window: win, MessageChannel: FakeChannel });
    vm.runInContext(classic, ctx);
    const g = ctx.PlingClient;
    assert.deepEqual(Object.keys(g).sort(), Object.keys(client).sort());
    const c = await g.connect({ transport: "port" });
    assert.equal(c.app, "orders");
    const out = await c.invoke("orders.search", {});
    assert.equal(out.kind, "success");
    c.close();
  });

  test("refuses a module it cannot turn into a classic script", () => {
    assert.throws(() => toClassic("import x from 'y';\nexport { x };\n"));
    assert.throws(() => toClassic("const a = 1;\n"));
    assert.throws(() => toClassic("const u = import.meta.url;\nexport { u };\n"));
    assert.throws(() => toClassic("const a = 1;\nexport { a as b };\n"));
  });
});

// The reply grammar every client shares: the vectors in testdata/replies at
// the repository's root, which the Go client runs too. Vectors given as
// text or bytes (duplicate keys, invalid UTF-8) cannot reach this client,
// which only ever receives structured-clone objects, so they are left out.
describe("the shared reply vectors", () => {
  const dir = new URL("../../testdata/replies/", import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  const vectors = files.flatMap((f) => JSON.parse(readFileSync(new URL(f, dir), "utf8")).map((v) => ({ file: f, ...v })));
  const objectVectors = vectors.filter((v) => Object.hasOwn(v, "reply"));

  test("there are vectors of both methods", () => {
    assert.ok(objectVectors.some((v) => v.method === "invoke") && objectVectors.some((v) => v.method === "describe"), `files ${files}`);
    assert.ok(objectVectors.length >= 40, `${objectVectors.length} vectors`);
  });

  for (const v of objectVectors) {
    test(`${v.file}: ${v.name}`, () => {
      const out = classify(v.reply, v.method, { id: "req-1", app: v.app });
      const want = v.want;
      const is = (kind, code) => out.kind === kind && (code === undefined || (out.error && out.error.code === code));
      switch (want.outcome) {
        case "malformed":
          assert.ok(is("protocol-error", OutcomeCode.MALFORMED_RESPONSE) || is("protocol-error", OutcomeCode.REPLY_OUT_OF_BOUNDS), `got ${out.kind} ${out.error?.code}: ${out.error?.message}`);
          if (v.method === "invoke") assert.equal(out.effectUnknown, true);
          return;
        case "protocol-failure":
          assert.ok(is("protocol-error", want.code), `got ${out.kind} ${out.error?.code}: ${out.error?.message}`);
          assert.equal(out.retryAfterMs, want.retryAfterMs);
          if (want.violations !== undefined) assert.equal(out.error.violations.length, want.violations);
          break;
        case "business-failure":
          assert.ok(is("business-error", want.code), `got ${out.kind} ${out.error?.code}: ${out.error?.message}`);
          break;
        case "success":
          // A denied or unknown approval is presented as a failure, which
          // the grammar allows: neither one took effect.
          if (want.approval === "denied") assert.ok(is("business-error", OutcomeCode.APPROVAL_DENIED), `got ${out.kind}`);
          else if (want.approval === "unknown") assert.ok(is("business-error", OutcomeCode.APPROVAL_STATUS_UNKNOWN), `got ${out.kind}`);
          else assert.ok(is("success"), `got ${out.kind} ${out.error?.code}: ${out.error?.message}`);
          break;
        default:
          assert.fail(`unknown outcome ${want.outcome}`);
      }
      if (want.approval !== undefined) assert.equal(out.approval, want.approval);
      if (want.message !== undefined) assert.equal(out.error.message, want.message);
    });
  }
});

describe("hostile pages", () => {
  test("an oversize or too deep reply is refused naming the bound, and is not kept", () => {
    const huge = ok("r", { rows: new Array(5_000_000).fill(0) });
    const long = ok("r", { title: "x".repeat(50 << 20) });
    let deep = [];
    for (let i = 0; i < 200; i++) deep = [deep];
    for (const [name, env, bound] of [["array", huge, "replyBytes"], ["string", long, "replyBytes"], ["depth", ok("r", deep), "depth"]]) {
      const out = classify(env, "invoke", { id: "r" });
      assert.equal(out.kind, "protocol-error", name);
      assert.equal(out.error.code, OutcomeCode.REPLY_OUT_OF_BOUNDS, name);
      assert.equal(out.error.bound, bound, name);
      assert.equal(out.envelope, null, `${name}: the oversize reply is dropped`);
      assert.equal(out.effectUnknown, true, name);
    }
    // Just under the bound is read.
    assert.equal(classify(ok("r", { title: "x".repeat((1 << 20) - 200) }), "invoke", { id: "r" }).kind, "success");
  });

  test("a reply is weighed as its JSON: control characters, non-ASCII text and members an array hides count", () => {
    // 200,000 control characters are 200,000 UTF-16 units but 1.2 MB of JSON.
    const control = classify(ok("r", { title: "\u0001".repeat(200_000) }), "invoke", { id: "r" });
    assert.equal(control.error && control.error.bound, "replyBytes", "control characters");
    assert.equal(control.envelope, null);
    const wide = classify(ok("r", { title: "\u20ac".repeat(400_000) }), "invoke", { id: "r" }); // 1.2 MB of UTF-8
    assert.equal(wide.error && wide.error.bound, "replyBytes", "three-byte characters");
    const keys = classify(ok("r", { ["\u0001".repeat(200_000)]: 1 }), "invoke", { id: "r" });
    assert.equal(keys.error && keys.error.bound, "replyBytes", "a member name");
    // A structured clone keeps an array's named members; JSON would not.
    const rows = [{ id: "a" }];
    rows.blob = "x".repeat(2 << 20);
    const hidden = classify(structuredClone(ok("r", { rows })), "invoke", { id: "r" });
    assert.equal(hidden.error && hidden.error.bound, "replyBytes", "a large member an array hides");
    assert.equal(hidden.envelope, null, "the reply is not kept");
    const small = [{ id: "a" }];
    small.note = "x";
    assert.equal(classify(structuredClone(ok("r", { rows: small })), "invoke", { id: "r" }).error.code, OutcomeCode.MALFORMED_RESPONSE, "a small one");
    // Ordinary text well under the bound is read.
    assert.equal(classify(ok("r", { title: "caf\u00e9 \ud83d\ude00 \"q\"\n".repeat(20_000) }), "invoke", { id: "r" }).kind, "success");
  });

  test("members whose names differ only in case are malformed at any depth", () => {
    const out = classify(ok("r", { title: "t", nested: { note: "a", NOTE: "b" } }), "invoke", { id: "r" });
    assert.equal(out.error.code, OutcomeCode.MALFORMED_RESPONSE);
  });

  test("a same-window script forges a success on the window, but never on the private channel", async () => {
    // The page's own surface takes its time; a script of the page reads
    // requests on the window and answers first with a fake success.
    const forge = (win) =>
      win.addEventListener("message", (e) => {
        const d = e.data;
        if (d && d.kind === "request" && d.envelope && d.envelope.method === "invoke") {
          win.postMessage({ channel: CHANNEL, kind: "response", app: "orders", envelope: ok(d.envelope.id, { title: "forged" }) }, win.location.origin);
        }
      });
    const slow = (env) => new Promise((r) => setTimeout(() => r(ok(env.id, { title: "real" })), 20));

    const win = new FakeWindow();
    fakeSurface(win, { app: "orders", handler: slow });
    forge(win);
    const overWindow = await connect({ window: win, transport: "window", app: "orders" });
    const forged = await overWindow.invoke("orders.search", {});
    assert.equal(forged.result.title, "forged", "the window cannot tell a forged answer from the page's");
    assert.equal(forged.forgeable, true, "so the outcome says it could have been forged");
    overWindow.close();

    const win2 = new FakeWindow();
    fakeSurface(win2, { app: "orders", handler: slow });
    forge(win2);
    const c = await connect({ window: win2, MessageChannel: FakeChannel });
    const real = await c.invoke("orders.search", {});
    assert.equal(real.result.title, "real");
    assert.equal(real.forgeable, false);
    assert.equal(win2.requests().length, 0, "no request was visible on the window");
    c.close();
  });
});

describe("request", () => {
  const { request } = client;
  const describeEnv = (id) => ({ protocol: SURFACE_PROTOCOL, id, method: "describe" });

  test("resolves with the page's message for its id, whole, and stops listening", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { app: "orders", handler: (env) => ok(env.id, { rows: [1.5, "é\n"] }) });
    // Someone else's answer, for another id, first.
    win.postMessage({ channel: CHANNEL, kind: "response", app: "orders", envelope: ok("other", {}) }, ORIGIN);
    const reply = await request(describeEnv("d-1"), { window: win, app: "orders", timeoutMs: 1000 });
    assert.deepEqual(reply, { channel: CHANNEL, kind: "response", app: "orders", envelope: ok("d-1", { rows: [1.5, "é\n"] }) });
    assert.equal(win.count("message"), 1, "only the fake surface listens now");
  });

  test("takes no answer a page script dispatched, nor one of another app", async () => {
    const win = new FakeWindow();
    const p = request(describeEnv("d-2"), { window: win, app: "orders", timeoutMs: 60 });
    win.dispatch("message", { data: { channel: CHANNEL, kind: "response", app: "orders", envelope: ok("d-2", {}) }, origin: ORIGIN, source: win, isTrusted: false });
    win.postMessage({ channel: CHANNEL, kind: "response", app: "billing", envelope: ok("d-2", {}) }, ORIGIN);
    await rejectsWith(p, ClientErrorCode.TIMEOUT);
  });

  test("with repost, asks again until a surface listens; without, posts once", async () => {
    const win = new FakeWindow();
    setTimeout(() => fakeSurface(win, { handler: (env) => ok(env.id, {}) }), 300);
    const reply = await request(describeEnv("d-3"), { window: win, timeoutMs: 3000, repost: true });
    assert.equal(reply.envelope.id, "d-3");
    const n = win.requests().length;
    assert.ok(n === 2, `${n} posts`); // at 0 and 500 ms
    const once = new FakeWindow();
    await rejectsWith(request(describeEnv("d-4"), { window: once, timeoutMs: 700 }), ClientErrorCode.TIMEOUT);
    assert.equal(once.requests().length, 1);
  });

  test("refuses an answer over the bound, or not JSON, unread", async () => {
    const win = new FakeWindow();
    fakeSurface(win, { handler: (env) => ok(env.id, env.id === "big" ? { s: "\u0001".repeat(200) } : { u: undefined }) });
    const big = await rejectsWith(request(describeEnv("big"), { window: win, timeoutMs: 1000, replyBytes: 1000 }), ClientErrorCode.REPLY_REFUSED);
    assert.equal(big.bound, "replyBytes");
    const odd = await rejectsWith(request(describeEnv("odd"), { window: win, timeoutMs: 1000 }), ClientErrorCode.REPLY_REFUSED);
    assert.equal(odd.bound, undefined);
  });
});
