// api.js: the API bound to a kernel: createSurface and the surface's
// describe, handle, listen, close, webmcp and ready.
//
// ---------------------------------------------------------------------------
// The API bound to one runtime.

import { importWebMCP } from "./assets.js";
import { AUTHENTICATE_TIMEOUT_MS, CHANNEL, CONNECT_MEMBERS, DEFAULT_CHANNELS_PER_ORIGIN, DEFAULT_CHANNEL_IDLE_MS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_SURFACE_RECORD_LIMIT, KERNEL_MAX_REQUEST_BYTES, KERNEL_MAX_RESPONSE_BYTES, LISTEN_OPTION_NAMES, MAX_CHANNELS, MAX_HELD, MAX_SURFACE_RECORD_LIMIT, REQUEST_MEMBERS, SESSION_CODES, SURFACE_PROTOCOL } from "./constants.js";
import { ErrorCtor, MapCtor, MessageChannelCtor, PAGE_WINDOW, append, channelPort1Of, channelPort2Of, dateNow, plainArray, portClose, portPostMessage, randomUint32s, clearTimer, defineProperty, eventDataOf, freeze, hasOwn, isArray, jsonParse, jsonStringify, listIncludes, mapDelete, mapForEach, mapGet, mapSet, mathMin, newList, objectKeys, setTimer } from "./intrinsics.js";
import { buildConfig, checkPositive, ownOptions, validateOptions } from "./options.js";
import { defineRegistry } from "./registry.js";
import { sessionGetter } from "./session.js";
import { applyShared } from "./shared-http.js";
import { eventField, hubFor, isBareRequest, portEnd, portListen, portSend, postTo, refusePort } from "./transport.js";
import { DESCRIBE_TOO_LARGE, RequestError, SurfaceSessionError, TOO_LARGE, failure, isPlainObject, isSerializedOrigin, onlyMembers, own, ownValue, pending, protocolError, requestIdOf, toRequestJSON, unthenable, whenSettled } from "./values.js";

/**
 * The API bound to a kernel source: { up() -> kernel or undefined,
 * start(wasmURL, done(kernel or undefined, error)), prefetch(wasmURL) },
 * a kernel being { runtime, entries, lane, deadlines } of one Go program.
 * A surface is made at once; its instance in the kernel when the kernel is
 * up, which for the page's own kernel is when the surface is first called.
 */
export function bind(source, withStats) {
  function createSurface(options) {
    const snapshot = ownOptions(options);
    validateOptions(snapshot);
    applyShared(snapshot); // shared: "indexeddb" swaps in the IndexedDB limiter and guard
    const wasmURL = snapshot.wasmURL;
    // Answers to calls taken through the entries, and the session getters
    // of those that brought one, by token.
    const replies = new MapCtor();
    const sessions = new MapCtor();
    // The kernel and this surface's instance in it, once made.
    let k;
    let slot;
    let maxResponseBytes = KERNEL_MAX_RESPONSE_BYTES;
    const maxRequestBytes = KERNEL_MAX_REQUEST_BYTES;
    let made; // the error the kernel gave when it refused the options, or the start's
    const instantiate = (kernel) => {
      const host = kernel.host(snapshot, (token) => mapGet(sessions, token));
      host.reply = (token, out, capsId, capsText) => {
        const reply = mapGet(replies, token);
        if (reply === undefined) return;
        mapDelete(replies, token);
        mapDelete(sessions, token);
        reply(out, capsId, capsText);
      };
      // The kernel's reply to unansweredToken could not be handed over (see
      // answerer.unanswered in hostbridge): the call fails here, unless it
      // was answered.
      host.unansweredToken = 0;
      host.unanswered = () => {
        const token = host.unansweredToken;
        host.unansweredToken = 0;
        host.reply(token, undefined);
      };
      const inst = kernel.runtime.create(host, jsonStringify(buildConfig(snapshot)));
      // Read once, and only its own members (the runtime makes it without a
      // prototype): every later call goes to this slot, whatever a later
      // script puts on Object.prototype.
      const s = inst !== null && typeof inst === "object" ? ownValue(inst, "slot") : undefined;
      const maxIn = ownValue(inst, "maxRequestBytes");
      const maxOut = ownValue(inst, "maxResponseBytes");
      if (typeof s !== "number" || maxIn !== maxRequestBytes || typeof maxOut !== "number") {
        const error = ownValue(inst, "error");
        throw new Error(`createSurface: ${typeof error === "string" ? error : "the runtime refused the options"}`);
      }
      k = kernel;
      slot = s;
      maxResponseBytes = maxOut;
    };
    // Tokens are drawn at random, never 0 (no call), never one in use: a
    // script cannot name a call in flight by counting.
    const nextToken = () => {
      for (;;) {
        const t = randomUint32s(1)[0] >>> 1;
        if (t !== 0 && mapGet(replies, t) === undefined) return t;
      }
    };
    const app = snapshot.app;
    // The listeners' and the WebMCP bridge's stops, kept with the Map
    // methods captured at load: a later script's Set.prototype.add would be
    // handed each, and its iterator could keep close() from calling them.
    const stops = new MapCtor();
    let closed = false;

    // Calls that came before the instance was made wait here, in order,
    // each run once with true when it is made or false when it could not be.
    let held;
    const whenMade = (f) => {
      if (k !== undefined) {
        f(true);
        return;
      }
      if (held !== undefined) {
        if (held.length >= MAX_HELD) {
          f(false);
          return;
        }
        held[held.length] = f;
        return;
      }
      held = newList();
      held[0] = f;
      source.start(wasmURL, (kernel, error) => {
        const list = held;
        held = undefined;
        if (list === undefined) return; // closed meanwhile: each was answered
        made = error;
        if (kernel !== undefined && !closed && k === undefined) {
          try {
            instantiate(kernel);
            made = undefined;
          } catch (e) {
            made = e;
          }
        }
        // Each in a task of its own, in order, as they arrived: a call's
        // answer (an async executor's, say) is not overtaken by the calls
        // that came after it.
        const ok = k !== undefined;
        for (let i = 0; i < list.length; i++) {
          const f = list[i];
          setTimer(() => {
            try {
              f(ok);
            } catch {
              // one call's failure does not keep the others
            }
          }, 0);
        }
      });
    };

    // The capability list the kernel last sent in shared mode, decoded once.
    // Answers that name it leave it out and get this object back in; it only
    // ever goes into postMessage, whose structured clone copies it, so no
    // caller can change it.
    let sharedCaps = { __proto__: null, id: 0, list: undefined };

    // Asks the kernel for the answer to JSON text, through the handle
    // export, and calls done(answer) once: the kernel answers by calling
    // host.reply under the call's token. No Promise is resolved with an
    // answer here, so a then planted on Object.prototype never sees one.
    const ask = (text, sessionFn, shared, done) => {
      let answered = false;
      const finish = (a) => {
        if (answered) return;
        answered = true;
        k.entries.later(() => done(a));
      };
      const reply = (outIn, capsId, capsIn) => {
        const t = k.lane.texts(outIn, capsIn);
        const out = t[0];
        const capsText = t[1];
        if (capsId === undefined) {
          finish({ __proto__: null, out });
          return;
        }
        if (capsText !== undefined) {
          sharedCaps = { __proto__: null, id: 0, list: undefined };
          try {
            sharedCaps = { __proto__: null, id: capsId, list: jsonParse(capsText) };
          } catch (e) {
            finish({ __proto__: null, out, shared: true });
            throw e; // so the kernel knows the list was not kept
          }
        }
        finish({ __proto__: null, out, caps: sharedCaps.id === capsId ? sharedCaps.list : undefined, shared: true });
      };
      const n = k.lane.toEntry(text);
      if (typeof n !== "number") {
        // More UTF-8 bytes than entryIO holds, which is the kernel's
        // request limit: what the kernel itself would answer.
        finish({ __proto__: null, out: TOO_LARGE });
        return;
      }
      const token = nextToken();
      mapSet(replies, token, reply);
      if (sessionFn !== undefined) mapSet(sessions, token, sessionFn);
      let taken = false;
      try {
        taken = k.entries.handle(slot, n, token, shared === true, sessionFn !== undefined);
      } finally {
        // Refused, or the runtime is gone: nothing will answer this token.
        if (!taken) {
          mapDelete(replies, token);
          mapDelete(sessions, token);
        }
      }
      if (!taken) finish({ __proto__: null, out: undefined });
    };

    // Sends JSON text to the kernel and calls done(envelope) once; the
    // answer is an envelope, never a throw.
    // shared: the envelope is only ever posted (see sharedCaps).
    const call = (id, text, sessionFn, shared, done) => {
      const fail = () => done(failure(id, "INTERNAL_ERROR", "internal error"));
      const take = (answer) => {
        try {
          if (answer === null) return fail();
          const out = answer.out;
          if (typeof out !== "string") return fail();
          if (out.length > maxResponseBytes) return done(failure(id, "INTERNAL_ERROR", "response is larger than the size limit"));
          const envelope = jsonParse(out);
          if (answer.shared) {
            if (answer.caps === undefined || !isPlainObject(envelope.result)) return fail();
            // Defined, not assigned: a setter on Object.prototype.capabilities sees nothing.
            defineProperty(envelope.result, "capabilities", { __proto__: null, value: answer.caps, writable: true, enumerable: true, configurable: true });
          }
          done(envelope);
        } catch {
          fail();
        }
      };
      whenMade((ok) => {
        if (!ok || closed) {
          done(failure(id, "INTERNAL_ERROR", closed ? "surface is closed" : "the surface runtime did not start"));
          return;
        }
        try {
          ask(text, sessionFn, shared, take);
        } catch {
          // The Go program has exited, or the instance was closed under us.
          take(null);
        }
      });
    };

    // Reads a request and calls done(envelope) once with its answer.
    const serve = (request, sessionFn, budget, shared, done) => {
      const id = requestIdOf(request);
      if (closed) return done(failure(id, "INTERNAL_ERROR", "surface is closed"));
      let text;
      try {
        text = toRequestJSON(request, budget);
      } catch (e) {
        const message = e instanceof RequestError ? e.message : "request could not be read";
        return done(failure(id, "INVALID_REQUEST", message));
      }
      call(id, text, sessionFn, shared, done);
    };

    // Its own then and constructor (pending): a page's await on it asks no
    // Promise.prototype a later script patched, which could read or
    // rewrite the answer.
    function handle(request) {
      const p = pending();
      try {
        serve(request, undefined, maxRequestBytes, false, (envelope) => p.resolve(unthenable(envelope)));
      } catch {
        p.resolve(unthenable(failure("", "INTERNAL_ERROR", "internal error")));
      }
      return p.promise;
    }

    // Answers through a Promise with its own then and constructor
    // (pending), waiting on nothing: neither the page's await on it nor
    // the wait for the kernel asks a Promise or Promise.prototype a later
    // script replaced, which could read or rewrite the description.
    function describe(input) {
      const result = pending();
      const settle = (out) => {
        try {
          const answer = jsonParse(out);
          if (answer.ok === true) {
            result.resolve(unthenable(answer.result));
            return;
          }
          const { code, message } = answer.error;
          result.reject(listIncludes(SESSION_CODES, code) ? new SurfaceSessionError(code, message) : protocolError(code, message));
        } catch {
          result.reject(protocolError("INTERNAL_ERROR", "internal error"));
        }
      };
      if (closed) {
        result.reject(protocolError("INTERNAL_ERROR", "surface is closed"));
        return result.promise;
      }
      let text;
      if (input !== undefined) {
        try {
          text = toRequestJSON(input, maxRequestBytes);
        } catch (e) {
          result.reject(protocolError("INVALID_REQUEST", e instanceof RequestError ? e.message : "describe input could not be read"));
          return result.promise;
        }
      }
      whenMade((ok) => {
        if (!ok || closed) {
          result.reject(protocolError("INTERNAL_ERROR", closed ? "surface is closed" : "the surface runtime did not start"));
          return;
        }
        try {
          const n = text === undefined ? -1 : k.lane.toEntry(text);
          if (typeof n !== "number") {
            settle(DESCRIBE_TOO_LARGE);
            return;
          }
          const token = nextToken();
          mapSet(replies, token, (out) => settle(k.lane.texts(out)[0]));
          let taken = false;
          try {
            taken = k.entries.describe(slot, n, token);
          } finally {
            if (!taken) mapDelete(replies, token);
          }
          if (!taken) settle(undefined);
        } catch {
          result.reject(protocolError("INTERNAL_ERROR", "internal error"));
        }
      });
      return result.promise;
    }

    // Every message is an object literal: defined, never assigned, so a
    // setter on Object.prototype (envelope, app, ...) captures nothing.
    const responseMessage = (envelope) =>
      app !== undefined ? { channel: CHANNEL, kind: "response", app, envelope } : { channel: CHANNEL, kind: "response", envelope };
    const connectedMessage = () => (app !== undefined ? { channel: CHANNEL, kind: "connected", app } : { channel: CHANNEL, kind: "connected" });

    function listen(listenOptions) {
      if (closed) throw new Error("listen: the surface is closed");
      const o = listenOptions === undefined ? {} : listenOptions;
      if (o === null || typeof o !== "object") throw new TypeError("listen options must be an object");
      const names = objectKeys(o);
      for (let i = 0; i < names.length; i++) {
        if (!listIncludes(LISTEN_OPTION_NAMES, names[i])) throw new TypeError(`listen: unknown option ${jsonStringify(names[i])}`);
      }
      // Own members only, as for createSurface: a later script's
      // Object.prototype.allowedOrigins or authenticate is no option.
      const origins = own(o, "allowedOrigins") === undefined ? [] : own(o, "allowedOrigins");
      if (!isArray(origins)) throw new TypeError("listen: allowedOrigins must be an array of origins");
      const allowed = [];
      for (let i = 0; i < origins.length; i++) {
        const origin = ownValue(origins, i);
        if (!isSerializedOrigin(origin)) {
          throw new TypeError(`listen: ${jsonStringify(String(origin))} is not an origin such as "https://example.com"`);
        }
        append(allowed, origin);
      }
      const authenticate = own(o, "authenticate");
      if (authenticate !== undefined && typeof authenticate !== "function") {
        throw new TypeError("listen: authenticate must be a function");
      }
      const maxMessageBytes = own(o, "maxMessageBytes");
      const channelIdleMs = own(o, "channelIdleMs");
      const maxChannelsPerOrigin = own(o, "maxChannelsPerOrigin");
      checkPositive("listen: maxMessageBytes", maxMessageBytes, true);
      checkPositive("listen: channelIdleMs", channelIdleMs, false);
      checkPositive("listen: maxChannelsPerOrigin", maxChannelsPerOrigin, true);
      const budget = mathMin(maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, maxRequestBytes);
      const idleMs = channelIdleMs ?? DEFAULT_CHANNEL_IDLE_MS;
      const perOriginMax = mathMin(maxChannelsPerOrigin ?? DEFAULT_CHANNELS_PER_ORIGIN, MAX_CHANNELS);
      const win = PAGE_WINDOW !== undefined ? PAGE_WINDOW : globalThis.window; // a stand-in window in tests
      if (!win || (win !== PAGE_WINDOW && typeof win.addEventListener !== "function") || !win.location) {
        throw new TypeError("listen: needs a window");
      }
      const ownOrigin = win.location.origin;
      const hub = hubFor(win);
      // One surface listens for an app name (or for none) at a time: a
      // second one, a later script's, would take connects meant for the
      // first and starve its callers.
      mapForEach(hub.entries, (other) => {
        if (other.app === app && other.owner !== api) throw new Error(`listen: another surface listens ${app === undefined ? "without an app name" : `for app ${jsonStringify(app)}`}`);
      });
      const channels = new MapCtor(); // port -> channel, open
      const perOrigin = new MapCtor(); // origin -> channels open or being authenticated
      let held = 0;
      let stopped = false;

      const reserve = (origin) => {
        mapSet(perOrigin, origin, (mapGet(perOrigin, origin) ?? 0) + 1);
        held++;
      };
      const release = (origin) => {
        const n = mapGet(perOrigin, origin) - 1;
        if (n > 0) mapSet(perOrigin, origin, n);
        else mapDelete(perOrigin, origin);
        held--;
      };
      // Frees a channel: closing the page's end, saying so first (say) so
      // that the caller's pending calls end at once (Chromium fires no
      // MessagePort close event).
      const free = (ch, say) => {
        if (!ch.open) return;
        ch.open = false;
        clearTimer(ch.timer);
        mapDelete(channels, ch.port);
        release(ch.origin);
        if (say) portSend(ch.port, ch.real, { channel: CHANNEL, kind: "closed" });
        portEnd(ch.port, ch.real);
      };
      const touch = (ch) => {
        clearTimer(ch.timer);
        ch.timer = setTimer(() => free(ch, true), idleMs);
      };

      const onPortMessage = (ch, event) => {
        if (!ch.open || stopped || closed || event.isTrusted !== true) return;
        const data = eventField(event, eventDataOf, "data");
        if (!isPlainObject(data)) return;
        let bare = false;
        if (hasOwn(data, "channel")) {
          if (ownValue(data, "channel") !== CHANNEL) return;
          const kind = ownValue(data, "kind");
          if (kind === "close") {
            free(ch, false);
            return;
          }
          if (kind !== "request") return;
          if (hasOwn(data, "app") && ownValue(data, "app") !== app) return;
        } else if (isBareRequest(data)) {
          bare = true;
        } else {
          return;
        }
        touch(ch);
        const reply = (envelope) => {
          if (ch.open) portSend(ch.port, ch.real, bare ? envelope : responseMessage(envelope));
        };
        if (bare) {
          serve(data, ch.sessionFn, budget, true, reply);
          return;
        }
        const envelope = ownValue(data, "envelope");
        if (!onlyMembers(data, REQUEST_MEMBERS)) {
          reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
          return;
        }
        serve(envelope, ch.sessionFn, budget, true, reply);
      };

      const entry = {
        __proto__: null,
        owner: api,
        app,
        accepts: (source, origin) => (source === win ? origin === ownOrigin : listIncludes(allowed, origin)),
        request(data, source, origin, bare) {
          if (stopped || closed) return;
          // Only to the sender, and only while it is still at the origin
          // the request came from: never "*".
          const reply = (envelope) => postTo(source, bare ? envelope : responseMessage(envelope), origin);
          if (bare) {
            serve(data, undefined, budget, true, reply);
            return;
          }
          const envelope = ownValue(data, "envelope");
          if (!onlyMembers(data, REQUEST_MEMBERS)) {
            reply(failure(requestIdOf(envelope), "INVALID_REQUEST", "message has members other than channel, kind, app and envelope"));
            return;
          }
          serve(envelope, undefined, budget, true, reply);
        },
        connect(data, origin, port, real) {
          const refuse = () => refusePort(port, real);
          if (stopped || closed || !onlyMembers(data, CONNECT_MEMBERS) || held >= MAX_CHANNELS ||
            (mapGet(perOrigin, origin) ?? 0) >= perOriginMax) {
            refuse();
            return;
          }
          reserve(origin);
          const open = (sessionFn) => {
            if (stopped || closed) {
              release(origin);
              refuse();
              return;
            }
            const ch = { __proto__: null, port, real, origin, sessionFn, timer: undefined, open: true };
            mapSet(channels, port, ch);
            portListen(port, real, (e) => {
              try {
                onPortMessage(ch, e);
              } catch {
                // A listener never throws into the page.
              }
            }, () => free(ch, false));
            touch(ch);
            portSend(port, real, connectedMessage());
          };
          if (authenticate === undefined) {
            open(undefined);
            return;
          }
          let decided = false;
          const decide = (result) => {
            if (decided) return;
            decided = true;
            clearTimer(timer);
            if (result === null || (typeof result !== "object" && typeof result !== "function")) {
              release(origin);
              refuse();
              return;
            }
            const getter = sessionGetter(result);
            open(() => (k !== undefined ? k.lane.run(getter) : getter()));
          };
          const timer = setTimer(() => decide(null), AUTHENTICATE_TIMEOUT_MS);
          let r;
          try {
            // The credential goes to the page's authenticate and nowhere
            // else: not to the kernel, the audit, or a reply.
            r = authenticate(freeze({ credential: ownValue(data, "credential"), origin }));
          } catch {
            decide(null);
            return;
          }
          whenSettled(r, decide, () => decide(null));
        },
        dropChannels() {
          mapForEach(channels, (ch) => free(ch, true));
        },
      };

      const stop = () => {
        if (stopped) return;
        stopped = true;
        mapDelete(hub.entries, entry);
        entry.dropChannels();
        mapDelete(stops, stop);
      };
      // How many private channels are open or being opened (authenticate
      // has not answered yet) now.
      defineProperty(stop, "channels", { __proto__: null, value: () => held });
      mapSet(hub.entries, entry, entry);
      mapSet(stops, stop, stop);
      return stop;
    }

    function close() {
      if (closed) return;
      closed = true;
      const all = newList();
      mapForEach(stops, (stop) => {
        all[all.length] = stop;
      });
      for (let i = 0; i < all.length; i++) all[i]();
      if (held !== undefined) {
        const list = held;
        held = undefined;
        for (let i = 0; i < list.length; i++) list[i](false);
      }
      try {
        if (k !== undefined) k.entries.close(slot);
      } catch {
        // the Go program is gone already
      }
    }

    // Opt-in WebMCP tools (pling-webmcp.js, loaded on first use). close()
    // stops the bridge with the listeners.
    // It answers through pending, not as an async function: resolving with
    // the bridge would look up then on it, and a then a later script put on
    // Object.prototype would be handed the bridge (and could stop it).
    function webmcp(webmcpOptions) {
      const result = pending();
      if (closed) {
        result.reject(new Error("webmcp: the surface is closed"));
        return result.promise;
      }
      whenSettled(importWebMCP(), (mod) => {
        try {
          if (closed) throw new Error("webmcp: the surface is closed");
          const stop = () => bridge.stop();
          const bridge = mod.bridgeWebMCP(api, webmcpOptions, () => mapDelete(stops, stop));
          if (bridge.supported) mapSet(stops, stop, stop);
          // The bridge has no prototype: resolving with it finds no then.
          whenSettled(bridge.ready, () => result.resolve(bridge), result.reject);
        } catch (err) {
          result.reject(err);
        }
      }, result.reject);
      return result.promise;
    }

    // Resolves once the kernel is up and this surface is made in it (it
    // starts the kernel if nothing has yet), to how long the start took;
    // rejects with the reason it could not be made. A page that wants
    // its options checked by the kernel at load calls it then.
    function ready() {
      const result = pending();
      whenMade((ok) => {
        if (ok && !closed) result.resolve(source.timings());
        else result.reject(closed ? new Error("ready: the surface is closed") : made !== undefined ? made : new ErrorCtor("ready: the surface runtime did not start"));
      });
      return result.promise;
    }

    const api = freeze({ describe, handle, listen, close, webmcp, ready });
    const up = source.up();
    if (up !== undefined) instantiate(up); // a refusal throws here, as the options are given
    else if (snapshot.start === "eager") whenMade(() => {});
    else if (snapshot.prefetch === "idle") source.prefetch(wasmURL, warm);
    return api;
  }

  // Runs once in idle time after prefetch started the kernel: an agent's
  // describe, as a request with a session, on a surface of the runtime's
  // own (no page code, no audit), its reply posted on a channel nobody
  // listens to. The code an agent's first describe runs (reading the
  // request, the session, the kernel's describe, writing and posting the
  // reply) is then compiled before an agent asks.
  function warm() {
    try {
      const s = createSurface({ __proto__: null, registry: warmRegistry(), execute: warmExecute, session: warmSession });
      const end = () => s.close();
      whenSettled(s.handle({ protocol: SURFACE_PROTOCOL, id: "warm-1", method: "describe" }), (reply) => {
        try {
          if (MessageChannelCtor !== undefined) {
            const channel = new MessageChannelCtor();
            portPostMessage(channelPort1Of(channel), reply);
            portClose(channelPort1Of(channel));
            portClose(channelPort2Of(channel));
          }
        } finally {
          end();
        }
      }, end);
    } catch {
      // warming is an optimisation: a first describe works without it
    }
  }

  // Its own then (unthenable): resolving loadSurface's Promise with it
  // asks no then a later script put on Object.prototype.
  const api = {
    SURFACE_PROTOCOL,
    DEFAULT_SURFACE_RECORD_LIMIT,
    MAX_SURFACE_RECORD_LIMIT,
    SurfaceSessionError,
    defineRegistry,
    createSurface,
  };
  // The runtime's counters (calls entered, Promises waited for) say when an
  // agent's call is in flight: only a page that asks for them gets them.
  if (withStats === true) {
    defineProperty(api, "stats", { __proto__: null, value: () => {
      const k = source.up();
      return k !== undefined ? k.runtime.stats() : undefined;
    }, enumerable: true });
  }
  return freeze(unthenable(api));
}

// Made when first needed: a page that never prefetches never builds it. A
// registry of the shape pages have (a few dozen actions with schemas, a
// per-record template, a window of records), so that the describe warms
// the code an agent's first describe runs: the page's data written as
// JSON, views decoded and schemas compiled in the kernel, the description
// encoded.
let warmRegistryMade;
function warmRegistry() {
  if (warmRegistryMade !== undefined) return warmRegistryMade;
  const actions = newList();
  const records = newList();
  for (let i = 0; i < 24; i++) {
    append(actions, { id: `warm.action_${i}`, description: `Warms the kernel (${i})`, effect: i % 3 === 0 ? "write" : "read", approval: "none",
      scopePath: ["warm", "toolbar"],
      inputSchema: { type: "object", properties: { query: { type: "string", maxLength: 120 }, page: { type: "integer", minimum: 1 },
        kind: { enum: ["a", "b", "c"] } }, required: i % 2 === 0 ? ["query"] : [], additionalProperties: false } });
    append(records, { id: `W-${1001 + i}`, kind: "row", fields: { customer: `Customer ${i}`, total: i * 10, status: "open" } });
  }
  append(actions, { id: "warm_note@row", description: "Replace the note of one row", effect: "write", approval: "none", scopePath: ["warm", "row"],
    inputSchema: { type: "object", properties: { note: { type: "string", maxLength: 280 } }, required: ["note"], additionalProperties: false },
    record: { kind: "row", total: 24 } });
  warmRegistryMade = defineRegistry({ actions: plainArray(actions), records: plainArray(records) });
  return warmRegistryMade;
}
let warmScope;
const warmSession = () => {
  if (warmScope === undefined) {
    warmScope = newList();
    for (let i = 0; i < 24; i++) append(warmScope, `warm.action_${i}`);
    append(warmScope, "warm_note@row");
  }
  return { agentId: "warm", sessionId: "warm", userId: "warm", expiresAt: dateNow() + 3600000, scope: plainArray(warmScope) };
};
const warmExecute = () => ({ __proto__: null });
