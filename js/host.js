// host.js: the kernel's host: the functions it calls into the page (the
// lane, deadlines, buildHost) and the entries through which every call
// enters it (makeEntries). Part of pling-kernel.js, loaded when the kernel
// starts: nothing here looks up a built-in, at evaluation or later.
//
// ---------------------------------------------------------------------------
// The lane: texts between the kernel and the host cross as UTF-8 in two
// buffers the kernel copies to and from, not as JS strings, each of which
// costs the Go side a tracked and finalized value and extra crossings (see
// hostbridge/lane_js.go for the convention and why it is safe).

import { SURFACE_PROTOCOL } from "./constants.js";
import { MapCtor, randomUint32s, TextDecoderCtor, TextEncoderCtor, Uint8ArrayCtor, WeakMapCtor, append, clearTimer, freeze, isArray, jsonParse, mapDelete, mapForEach, mapSet, mathMax, newList, now, objectAssign, objectCreate, queueMicro, setTimer, textDecode, textEncodeInto, typedArrayBuffer, weakMapGet, weakMapSet } from "./intrinsics.js";
import { sessionGetter } from "./session.js";
import { isThenable, methodOf, ownValue, pageJSON, settledText, whenSettled } from "./values.js";

const LANE_BYTES = 64 * 1024;

// What the kernel asks for (surface.AskKind), and the codes every answer
// to it is given in, at once by a host function or later through the
// answer export, beside a text's length in io or entryIO
// (hostbridge/answers_js.go).
const ASK_SESSION = 1;
const ASK_LIMIT = 2;
const ASK_VIEW = 3;
const ASK_CLAIM = 4;
const ASK_EXECUTE = 5;
const FAILED = -1;
const NO_SESSION = -2;
const TIMED_OUT = -3;
const HELD = -4;
// A host function answered with a Promise, kept for the wait that follows.
const PARKED = -5;
// The session of the text host.session() answered last.
const SAME_SESSION = -6;
const CLAIMED = 1;
const REPLAYED = 2;
// Bounds every awaited host Promise but the executor's, as
// hostbridge.DefaultHostTimeout does.
const HOST_TIMEOUT_MS = 10000;

/**
 * A limiter's decision as a number: 0 allowed, > 0 denied with that
 * retryAfterMs, FAILED for anything else (which the kernel answers with
 * RATE_LIMIT_UNAVAILABLE: nothing malformed lets a request by).
 */
function decisionCode(d) {
  try {
    if (d === null || typeof d !== "object") return FAILED;
    // Own data only: Object.prototype.allowed is no decision.
    const allowed = ownValue(d, "allowed");
    const retry = ownValue(d, "retryAfterMs");
    if (typeof allowed !== "boolean") return FAILED;
    if (allowed) return retry === undefined || retry === 0 ? 0 : FAILED;
    return typeof retry === "number" && retry > 0 && retry !== Infinity ? retry : FAILED;
  } catch {
    return FAILED;
  }
}

const claimCode = (v) => (v === "claimed" ? CLAIMED : v === "replayed" ? REPLAYED : FAILED);

function makeLane() {
  const io = new Uint8ArrayCtor(LANE_BYTES);
  const entryIO = new Uint8ArrayCtor(LANE_BYTES);
  const ioBuffer = typedArrayBuffer(io);
  const decoder = new TextDecoderCtor();
  const encoder = new TextEncoderCtor();
  let depth = 0; // host functions running page code
  // The original encodeInto and decode, and views made here rather than by
  // subarray (which asks the array's constructor for a species): a later
  // script patching TextEncoder, TextDecoder or Uint8Array sees no text.
  const write = (buffer, text) => {
    const r = textEncodeInto(encoder, text, buffer);
    return r.read === text.length ? r.written : text;
  };
  let held; // a text too long for the buffers, until the kernel takes it (host.held)
  return {
    io,
    entryIO,
    /** The texts a host function was given: numbers are lengths of texts laid out in io. */
    texts(...params) {
      let at = 0;
      for (let i = 0; i < params.length; i++) {
        const p = params[i];
        if (typeof p === "number") {
          params[i] = textDecode(decoder, new Uint8ArrayCtor(ioBuffer, at, p));
          at += p;
        }
      }
      return params;
    },
    /**
     * A text as an answer's code: its length in buffer (io for a host
     * function, entryIO for the answer export), HELD when it does not fit,
     * FAILED for no text.
     */
    code(text, buffer = io) {
      if (typeof text !== "string") return FAILED;
      const n = write(buffer, text);
      if (typeof n === "number") return n;
      held = text;
      return HELD;
    },
    /** The text the last HELD stood for, once. */
    held() {
      const text = held;
      held = undefined;
      return text;
    },
    /**
     * A text for a call into the kernel: its length in entryIO when it fits
     * and no host function is running (a call made from page code inside
     * one goes as a string: the kernel may not have read entryIO yet).
     */
    toKernel(text) {
      return depth === 0 && typeof text === "string" ? write(entryIO, text) : text;
    },
    /**
     * A text for an export (see makeEntries): its length in entryIO, or,
     * when it does not fit, the text itself. An export copies what it is
     * given before anything else runs, so it may be written at any time.
     */
    toEntry(text) {
      return write(entryIO, text);
    },
    /** Runs page code on behalf of the kernel. */
    run(f) {
      depth++;
      let r;
      try {
        r = f();
      } finally {
        depth--;
      }
      return r;
    },
  };
}

// ---------------------------------------------------------------------------
// Time limits of the Promises the kernel waits for (the executor's, an
// async adapter's), kept here: one timer serves every wait. It is armed
// for the earliest deadline, left to fire rather than cleared when waits
// finish, and not re-armed when nothing waits.

function makeDeadlines() {
  // Read through the Map methods captured at load, never its iterator: a
  // later script's Map.prototype[Symbol.iterator] could hide every wait.
  const waiting = new MapCtor(); // call id -> { at, expire }
  let timer;
  let timerAt = Infinity;
  const arm = (at) => {
    if (timer !== undefined) clearTimer(timer);
    timerAt = at;
    // The timer captured at load: a later script's setTimeout that never
    // fires would otherwise lift every time limit.
    timer = setTimer(sweep, mathMax(0, at - now()));
  };
  function sweep() {
    timer = undefined;
    timerAt = Infinity;
    const t = now();
    let next = Infinity;
    mapForEach(waiting, (w, id) => {
      if (w.at <= t) {
        mapDelete(waiting, id);
        try {
          w.expire();
        } catch {
          // the kernel is gone; nothing waits for this call any more
        }
      } else if (w.at < next) {
        next = w.at;
      }
    });
    if (next !== Infinity) arm(next);
  }
  return {
    /** Calls expire() once ms pass, unless finish(id) came first. */
    start(id, ms, expire) {
      const at = now() + ms;
      mapSet(waiting, id, { __proto__: null, at, expire });
      if (at < timerAt) arm(at);
    },
    /** True when the call was still waiting: its answer is the one that counts. */
    finish(id) {
      return mapDelete(waiting, id);
    },
  };
}

function resultText(r) {
  const text = r === undefined ? "null" : pageJSON(r);
  return text === undefined ? "null" : text;
}

/**
 * An object the kernel wrote as JSON text (a call's context, a view query,
 * an audit event) that inherits nothing: a member it leaves out (a
 * delegation, a record, ids, a code) reads as undefined, never as what a
 * later script put on Object.prototype. Its prototype is NOTHING, frozen
 * and empty, rather than null: V8 gives objects made on one prototype one
 * shape, where setPrototypeOf(o, null) took 1.6 µs an object, four times
 * an invoke.
 */
const NOTHING = freeze(objectCreate(null));
const QUERIES_KEPT = 4; // view queries a host keeps, by text
function bareJSON(text) {
  return objectAssign(objectCreate(NOTHING), jsonParse(text));
}

/**
 * The host functions of one surface. sessionOf(token) is the session getter
 * a call taken under token brought, if any (host.sessionFor).
 */
export function buildHost(options, lane, deadlines, entries, sessionOf) {
  const { registry, execute, expose, session, rateLimit, replay, onAudit, onAuditError } = options;
  const { texts, run } = lane;
  const answer = lane.code;
  // A Promise a host function answered, kept here until wait takes it (the
  // kernel calls wait at once): handing it to the kernel would make it a JS
  // value Go tracks and finalizes.
  let parked;
  const park = (p) => {
    parked = p;
    return PARKED;
  };
  const sessionCode = (s) => {
    if (isThenable(s)) return park(s);
    if (s === null || s === undefined) return NO_SESSION;
    return s === true ? SAME_SESSION : answer(s);
  };
  // The view queries last read, by their text: the kernel asks the same few
  // again and again (a description's window, the record of an invoke, before
  // and after), and a query is frozen, so the one made for a text is handed
  // to the registry again rather than parsed, copied and frozen anew.
  const queryTexts = newList();
  const queryValues = newList();
  let queryNext = 0;
  const queryOf = (text) => {
    for (let i = 0; i < queryTexts.length; i++) {
      if (queryTexts[i] === text) return queryValues[i];
    }
    const query = bareJSON(text);
    if (query.ids !== undefined) freeze(query.ids);
    freeze(query);
    queryTexts[queryNext] = text;
    queryValues[queryNext] = query;
    queryNext = (queryNext + 1) % QUERIES_KEPT;
    return query;
  };
  // No prototype: a name the kernel looks for and the page did not give
  // (session, version, expose, ...) cannot be supplied by Object.prototype.
  const host = {
    __proto__: null,
    io: lane.io,
    entryIO: lane.entryIO,
    actions: () => answer(run(() => pageJSON(registry.actions()))),
    view: (queryJSON) => {
      const query = queryOf(texts(queryJSON)[0]);
      const v = run(() => registry.view(query));
      return isThenable(v) ? park(settledText(v, pageJSON)) : answer(run(() => pageJSON(v)));
    },
    // An executor that answers at once is answered at once: the kernel then
    // has no Promise to wait for. A throw fails the call either way.
    execute: (idIn, argsIn, contextIn) => {
      const t = texts(idIn, argsIn, contextIn);
      const r = run(() => execute(t[0], t[1], freeze(bareJSON(t[2]))));
      // wait maps its value to text as it settles, with no Promise between.
      return isThenable(r) ? park(r) : answer(run(() => resultText(r)));
    },
    // No getter for the token answers undefined: no session, which the
    // kernel refuses for a call that was to bring its own.
    sessionFor: (token) => {
      const getter = sessionOf(token);
      return sessionCode(getter === undefined ? undefined : getter());
    },
    held: lane.held,
  };
  // The kernel hands every Promise a host function parked to
  // wait(ticket, kind, limitMs) and returns; the settled value goes back
  // through the answer export, in the same codes, once, within limitMs.
  const encode = (kind, v) => {
    switch (kind) {
      case ASK_SESSION:
        return v === null || v === undefined ? NO_SESSION : answer(v, lane.entryIO);
      case ASK_LIMIT:
        return decisionCode(v);
      case ASK_CLAIM:
        return claimCode(v);
      case ASK_VIEW:
        return answer(v, lane.entryIO);
    }
    try {
      // The executor's value becomes the result's text here, and a throw fails the call.
      return answer(resultText(v), lane.entryIO);
    } catch {
      return FAILED;
    }
  };
  host.wait = (ticket, kind, limitMs) => {
    const promise = parked;
    parked = undefined;
    const settled = (v) => give(encode(kind, v));
    // Its own key: the deadlines serve every surface of the runtime.
    const id = {};
    const give = (code) => {
      if (!deadlines.finish(id)) return; // the limit passed first
      try {
        entries.answer(ticket, code);
      } catch {
        // the kernel is gone; nothing waits for this call any more
      }
    };
    deadlines.start(id, limitMs, () => entries.answer(ticket, kind === ASK_EXECUTE ? TIMED_OUT : FAILED));
    whenSettled(promise, settled, () => give(FAILED));
  };
  if (typeof methodOf(registry, "version") === "function") host.version = () => run(() => registry.version());
  if (typeof expose === "function") {
    host.expose = (idsJSON) => {
      const ids = jsonParse(texts(idsJSON)[0]);
      const out = [];
      for (let i = 0; i < ids.length; i++) {
        let yes = false;
        try {
          yes = run(() => expose(ids[i])) === true;
        } catch {
          yes = false; // a predicate that throws exposes nothing
        }
        append(out, yes);
      }
      // Written here, not by JSON.stringify: a toJSON planted on
      // Array.prototype while the predicate ran would answer for it.
      let text = "[";
      for (let i = 0; i < out.length; i++) text += (i > 0 ? "," : "") + (out[i] === true ? "true" : "false");
      return answer(text + "]");
    };
  }
  if (session !== undefined) {
    const getter = sessionGetter(session, true);
    host.session = () => sessionCode(run(getter));
  }
  if (rateLimit && rateLimit.limiter !== undefined) {
    const limiter = rateLimit.limiter;
    host.allow = (key, nowMs) => {
      const r = run(() => limiter.allow(key, nowMs));
      return isThenable(r) ? park(r) : decisionCode(r);
    };
  }
  if (replay && typeof replay === "object" && replay.guard !== undefined) {
    const guard = replay.guard;
    host.claim = (sessionId, requestId, windowMs) => {
      const r = run(() => guard.claim(sessionId, requestId, windowMs));
      return isThenable(r) ? park(r) : claimCode(r);
    };
  }
  if (onAudit !== undefined) {
    host.audit = (eventJSON) => {
      eventJSON = texts(eventJSON)[0];
      const event = freeze(bareJSON(eventJSON));
      const r = run(() => onAudit(event));
      if (!isThenable(r)) return r;
      // The reply does not wait for the sink; its failure, or its not
      // settling within the host time limit, still reaches onAuditError.
      let over = false;
      const failed = (reason) => {
        if (over) return;
        over = true;
        if (host.auditError !== undefined) host.auditError(reason, String(reason && reason.message), eventJSON);
      };
      const id = {};
      deadlines.start(id, HOST_TIMEOUT_MS, () => failed(new Error("timed out")));
      whenSettled(r, () => {
        over = true;
        deadlines.finish(id);
      }, (reason) => {
        deadlines.finish(id);
        failed(reason);
      });
      return undefined;
    };
  }
  if (onAuditError !== undefined) {
    host.auditError = (reason, message, eventJSON) => {
      try {
        const r = run(() => onAuditError(reason !== undefined ? reason : new Error(message), freeze(bareJSON(eventJSON))));
        if (isThenable(r)) whenSettled(r, () => {}, () => {});
      } catch {
        // onAuditError is the last resort; its own failure goes nowhere.
      }
    };
  }
  return host;
}

// ---------------------------------------------------------------------------
// Entries: the module exports through which every call enters the kernel.
// Each runs the kernel's steps synchronously and returns; the answer goes
// to host.reply before it does, or, when a host function answered with a
// Promise, after host.wait has had it settled (see hostbridge/exports_js.go).
// No Go goroutine and no js.FuncOf callback is on the way, so an export
// may be called at any time, page code that the kernel runs included.

const entriesOf = new WeakMapCtor(); // a module's exports -> entries

// Every this many export calls, the Go runtime is resumed once with
// nothing to do, so that its finalizers run: JS values the bridge made
// on a rare path (a text too long for the buffers, a thrown error) are
// only released then.
const RESUME_EVERY = 256;

/**
 * The exports of a Go object of wasm_exec.js, for fromRuntime: a host that
 * runs the module itself. Its glue looks built-ins up as it runs, so what
 * "Threat model" promises against later scripts holds only for the glue
 * loadSurface runs (pling-glue.js).
 */
export function kernelOfGo(go) {
  if (go === null || typeof go !== "object") return undefined;
  const exports = go._inst && go._inst.exports;
  if (!exports || typeof go._resume !== "function") return undefined;
  return { __proto__: null, exports, resume: () => go._resume(), exited: () => go.exited === true };
}

const EXPORT_NAMES = freeze(["pling_init", "pling_entry_key", "pling_handle", "pling_describe", "pling_answer", "pling_close"]);

/**
 * Entries into a kernel ({exports, resume, exited}) for runtime, bound to a
 * per-load secret: the two words given to the module's pling_init, drawn
 * here (or given by a host that set them itself), which every export call
 * carries. undefined: not this runtime's module, or its secret is someone
 * else's.
 */
export function makeEntries(kernel, runtime, given) {
  if (kernel === undefined) return undefined;
  const exports = kernel.exports;
  const known = weakMapGet(entriesOf, exports);
  if (known !== undefined) return known.key === runtime.entryKey ? known : undefined;
  for (let i = 0; i < EXPORT_NAMES.length; i++) if (typeof exports[EXPORT_NAMES[i]] !== "function") return undefined;
  const key = exports.pling_entry_key();
  let k0;
  let k1;
  if (given !== undefined) {
    if (!isArray(given) || given.length !== 2) return undefined;
    k0 = given[0] | 0;
    k1 = given[1] | 0;
  } else {
    const words = randomUint32s(2);
    k0 = words[0] | 0;
    k1 = words[1] | 0 || 1;
    if (exports.pling_init(k0, k1) !== 0) return undefined; // set by someone else
  }
  const resume = kernel.resume;
  const exited = kernel.exited;
  const handleExport = exports.pling_handle;
  const describeExport = exports.pling_describe;
  const answerExport = exports.pling_answer;
  const closeExport = exports.pling_close;
  let calls = 0;
  let resumeArmed = false;
  const idleResume = () => {
    resumeArmed = false;
    if (!exited()) resume();
  };
  const entered = (r) => {
    if (exited()) throw new Error("the surface runtime exited");
    if (++calls % RESUME_EVERY === 0 && !resumeArmed) {
      resumeArmed = true;
      setTimer(idleResume, 0);
    }
    return r === 0;
  };
  // Work deferred until no export is on the stack (see later). An export
  // call answers one call, so one is usually deferred at a time: it waits in
  // first, and only further ones go to a list. The list has no prototype, so
  // it is filled by assignment, which no setter a later script put on an
  // index can see; defining the index instead (append) turned the array
  // into a dictionary on every request.
  let depth = 0;
  let first; // the first deferred call, or undefined
  let more; // the calls deferred after it (a newList), or undefined
  let flushing = false;
  const flush = () => {
    flushing = false;
    const f = first;
    const list = more;
    first = undefined;
    more = undefined;
    try {
      if (f !== undefined) f();
    } catch {
      // one answer's failure does not keep the others
    }
    for (let i = 0; list !== undefined && i < list.length; i++) {
      try {
        list[i]();
      } catch {
        // as above
      }
    }
  };
  const inside = (call) => {
    depth++;
    try {
      return call();
    } finally {
      if (--depth === 0 && first !== undefined && !flushing) {
        flushing = true;
        queueMicro(flush);
      }
    }
  };
  const entries = {
    key,
    /**
     * A request of n bytes in entryIO, answered to host.reply(token, ...);
     * false: refused. session: the call brings its own session getter
     * (host.sessionFor).
     */
    handle: (slot, n, token, shared, session) =>
      entered(inside(() => handleExport(k0, k1, slot, n, token, (shared ? 1 : 0) | (session ? 2 : 0)))),
    /** A describe with its input n bytes in entryIO (-1: none); false: refused. */
    describe: (slot, n, token) => entered(inside(() => describeExport(k0, k1, slot, n, token))),
    /** The settled value of the Promise waited for under ticket. */
    answer: (ticket, code) => entered(inside(() => answerExport(k0, k1, ticket, code))),
    /** Closes the instance under slot. */
    close: (slot) => entered(inside(() => closeExport(k0, k1, slot))),
    /**
     * Runs f once no export is on the stack: at once outside one, else
     * in a microtask queued as the outermost export call returns. An
     * answer is posted from there rather than from inside the kernel's
     * call into JS: the same task and order, without wasm frames under
     * the caller's code, and from a short stack, which matters to
     * postMessage: while a DevTools session has its Runtime domain on
     * (DevTools open, pling-mcp, any CDP driver), Chromium captures a
     * stack trace of up to 200 frames at every post, so a post's cost
     * grows with the depth it is made from.
     */
    later: (f) => {
      if (depth === 0) f();
      else if (first === undefined) first = f;
      else {
        if (more === undefined) more = newList();
        more[more.length] = f;
      }
    },
  };
  weakMapSet(entriesOf, exports, entries);
  // Another module's runtime: its slots are not this runtime's.
  return key === runtime.entryKey ? entries : undefined;
}

export function isRuntime(rt) {
  return rt !== null && typeof rt === "object" && typeof rt.create === "function" && rt.protocol === SURFACE_PROTOCOL;
}

/**
 * A kernel of one Go program: its runtime and entries, the lane its
 * surfaces share, and host(options, sessionOf), which builds the host
 * functions of one surface (buildHost) on that lane and the kernel's
 * deadlines.
 */
export function kernelOf(runtime, entries) {
  const lane = makeLane();
  const deadlines = makeDeadlines();
  const host = (options, sessionOf) => buildHost(options, lane, deadlines, entries, sessionOf);
  return freeze({ __proto__: null, runtime, entries, lane, host });
}
