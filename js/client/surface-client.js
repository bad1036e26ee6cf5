// surface-client.js: the client a caller holds: connect picks the
// transport, and SurfaceClient checks each call before it is sent, keeps
// its deadlines and retries, and ends on navigation or a closed channel.

import { SURFACE_PROTOCOL, DEFAULT_DESCRIBE_TIMEOUT_MS, DEFAULT_INVOKE_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_PAGE_LIMIT, DEFAULT_RECORDS_MAX, REMEMBERED_IDS } from "./bounds.js";
import { ClientErrorCode, clientError } from "./errors.js";
import { hasOwn, isObject, freeze, newRequestId, checkWindow, positive, nonNegativeInteger } from "./checks.js";
import { classify } from "./classify.js";
import { findCapability, recordParam, isReferenceable } from "./description.js";
import { windowTransport } from "./window-transport.js";
import { portTransport, openChannel } from "./port-channel.js";

const CONNECT_OPTIONS = ["app", "transport", "credential", "window", "describeTimeoutMs", "invokeTimeoutMs", "connectTimeoutMs", "MessageChannel"];

/**
 * Connects to the surface of the page this script runs in.
 * transport "auto" (the default) opens the page's private channel where the
 * page offers it, and otherwise (refused, or no answer to connect) talks
 * over the window; client.transport and every outcome say which one.
 * transport "port" opens the private channel or fails: replies reach this
 * client only, a credential can be handed to the page's authenticate, and
 * the client ends as soon as the page closes the channel. transport
 * "window" posts requests on the window and reads the replies there, where
 * every script of the page can read them and forge them (outcomes carry
 * forgeable: true); it reaches whichever surface listens now.
 */
export async function connect(options = {}) {
  if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "connect options must be an object");
  for (const k of Object.keys(options)) {
    if (!CONNECT_OPTIONS.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `connect: unknown option ${JSON.stringify(k)}`);
  }
  const win = options.window ?? globalThis.window;
  checkWindow(win);
  const app = options.app;
  if (app !== undefined && (typeof app !== "string" || app === "")) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "app must be a non-empty string");
  const transport = options.transport ?? (options.credential !== undefined ? "port" : "auto");
  if (transport !== "port" && transport !== "window" && transport !== "auto") throw clientError(ClientErrorCode.INVALID_ARGUMENT, 'transport must be "auto", "port" or "window"');
  if (options.credential !== undefined && transport !== "port") {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, "a credential travels only on the private channel (transport: \"port\")");
  }
  const settings = {
    describeTimeoutMs: positive("describeTimeoutMs", options.describeTimeoutMs, DEFAULT_DESCRIBE_TIMEOUT_MS),
    invokeTimeoutMs: positive("invokeTimeoutMs", options.invokeTimeoutMs, DEFAULT_INVOKE_TIMEOUT_MS),
  };
  const connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  if (transport === "window") return new SurfaceClient(win, app, null, settings);
  const MessageChannelCtor = options.MessageChannel ?? globalThis.MessageChannel;
  if (typeof MessageChannelCtor !== "function") throw clientError(ClientErrorCode.UNSUPPORTED_ENVIRONMENT, "no MessageChannel");
  let opened;
  try {
    opened = await openChannel(win, { app, credential: options.credential, timeoutMs: connectTimeoutMs, MessageChannelCtor });
  } catch (err) {
    if (transport === "auto" && (err.code === ClientErrorCode.REFUSED || err.code === ClientErrorCode.NO_SURFACE)) {
      return new SurfaceClient(win, app, null, { ...settings, privateRefused: err.code });
    }
    throw err;
  }
  return new SurfaceClient(win, app ?? opened.app, opened.port, settings);
}

const CALL_OPTIONS = ["timeoutMs", "retries", "id", "record", "description", "signal"];

class SurfaceClient {
  #win;
  #transport;
  #settings;
  #pending = new Map(); // request id -> call state
  #intents = new Map(); // request id -> fingerprint of the intent it was used for
  #ended = null; // the SurfaceClientError that ended the client
  #resolveEnded;
  #onHide;
  #lastDescription;

  constructor(win, app, port, settings) {
    this.#win = win;
    this.#settings = settings;
    /** The application this client talks to (undefined: whichever surface answers). */
    this.app = app;
    /** Resolves with the SurfaceClientError that ended the client. */
    this.ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
    const hooks = {
      onEnvelope: (message, isPrivate) => this.#onEnvelope(message, isPrivate),
      onEnd: (code, message) => this.#end(code, message),
    };
    this.#transport = port ? portTransport(port, app, hooks) : windowTransport(win, app, hooks);
    if (port && typeof port.start === "function") port.start();
    // pagehide fires on every navigation and unload, bfcache included;
    // beforeunload may be cancelled and is not a navigation yet. One a page
    // script dispatches (isTrusted false) is no navigation.
    this.#onHide = (event) => {
      if (event && event.isTrusted === true) this.#end(ClientErrorCode.NAVIGATED, "the page navigated away");
    };
    win.addEventListener("pagehide", this.#onHide);
  }

  /** "port" or "window". */
  get transport() {
    return this.#transport.kind;
  }

  /**
   * Why an "auto" client talks over the window: "REFUSED" (the page refused
   * a private channel without a credential) or "NO_SURFACE" (nothing
   * answered connect); undefined otherwise.
   */
  get privateRefused() {
    return this.#settings.privateRefused;
  }

  /** Whether the client has ended (navigation, closed channel, close()). */
  get closed() {
    return this.#ended !== null;
  }

  /** The last successful description this client received, if any. */
  get lastDescription() {
    return this.#lastDescription;
  }

  /** Asks for the capabilities and bounded context. Resolves to an outcome. */
  async describe(input, options = {}) {
    if (input !== undefined && !isObject(input)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "describe input must be an object");
    const opts = this.#callOptions(options, ["timeoutMs", "retries", "signal"]);
    const envelope = { protocol: SURFACE_PROTOCOL, id: newRequestId(), method: "describe" };
    if (input !== undefined) envelope.input = jsonCopy(input, "describe input");
    // A describe has no effect, so one transport retry is on by default.
    const outcome = await this.#call(envelope, opts.timeoutMs ?? this.#settings.describeTimeoutMs, opts.retries ?? 1, opts.signal);
    if (outcome.kind === "success") {
      const d = outcome.description;
      // After capabilities: "changed" an unchanged list comes back empty;
      // the list this client already holds still applies.
      this.#lastDescription = d.capabilitiesUnchanged === true && this.#lastDescription ? { ...d, capabilities: this.#lastDescription.capabilities } : d;
    }
    return outcome;
  }

  /**
   * Invokes one capability. For a folded template the record id may be given
   * as options.record or in input under the template's record parameter; it
   * is checked against the recordIds of the last description (or
   * options.description) before anything is sent.
   */
  async invoke(capability, input, options = {}) {
    if (typeof capability !== "string" || capability === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "capability must be a non-empty string");
    if (input !== undefined && input !== null && !isObject(input)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "invoke input must be an object");
    const opts = this.#callOptions(options, CALL_OPTIONS);
    const body = jsonCopy(input ?? {}, "invoke input");
    const description = opts.description ?? this.#lastDescription;
    this.#placeRecord(capability, body, opts.record, description);

    const envelope = { protocol: SURFACE_PROTOCOL, id: "", method: "invoke", capability, input: body };
    const fingerprint = canonicalJSON({ capability, input: body });
    if (opts.id !== undefined) {
      if (typeof opts.id !== "string" || opts.id === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "id must be a non-empty string");
      const seen = this.#intents.get(opts.id);
      if (seen !== undefined && seen !== fingerprint) {
        throw clientError(ClientErrorCode.ID_REUSED, `request id ${JSON.stringify(opts.id)} was used for another intent; a new intent needs a new id`);
      }
      envelope.id = opts.id;
    } else {
      envelope.id = newRequestId();
    }
    if (this.#pending.has(envelope.id)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `a call with id ${JSON.stringify(envelope.id)} is still waiting`);
    this.#remember(envelope.id, fingerprint);
    // A caller-given id is a retry of an intent that may have reached the
    // surface before, from this client or an earlier one.
    return this.#call(envelope, opts.timeoutMs ?? this.#settings.invokeTimeoutMs, opts.retries ?? 0, opts.signal, opts.id !== undefined);
  }

  /**
   * Sends an invoke again with the same id: the transport retry of the same
   * intent, for example after a TIMEOUT (pass error.request). A surface with
   * replay protection answers REPLAY_DETECTED if the first attempt arrived.
   */
  retry(request, options = {}) {
    if (!isObject(request) || request.method !== "invoke" || typeof request.id !== "string") {
      throw clientError(ClientErrorCode.INVALID_ARGUMENT, "retry needs the invoke envelope that was sent (error.request)");
    }
    return this.invoke(request.capability, request.input, { ...options, id: request.id });
  }

  /** One window of records: describe with offset and limit. */
  async page({ offset = 0, limit = DEFAULT_PAGE_LIMIT, ...rest } = {}) {
    nonNegativeInteger("offset", offset);
    nonNegativeInteger("limit", limit);
    const outcome = await this.describe({ offset, limit }, rest);
    if (outcome.kind !== "success") {
      throw clientError(ClientErrorCode.PROTOCOL_FAILURE, `describe failed: ${outcome.error.code}`, { outcome });
    }
    const c = outcome.description.context;
    const records = Array.isArray(c.records) ? c.records : [];
    const total = typeof c.recordsTotal === "number" ? c.recordsTotal : records.length;
    const next = offset + records.length;
    return { records, recordsTotal: total, offset, limit, nextOffset: records.length > 0 && next < total ? next : null, description: outcome.description };
  }

  /**
   * Every record from offset on, page by page: at most max of them (1000
   * unless given; a finite count, since the page says how many there are).
   * A window without records ends the walk.
   */
  async *records({ offset = 0, limit = DEFAULT_PAGE_LIMIT, max = DEFAULT_RECORDS_MAX, ...rest } = {}) {
    if (limit === 0) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "limit must be at least 1 to page");
    nonNegativeInteger("max", max);
    let at = offset;
    let given = 0;
    while (at !== null && given < max) {
      const p = await this.page({ offset: at, limit: Math.min(limit, max - given), ...rest });
      for (const r of p.records) {
        if (given >= max) return;
        given += 1;
        yield r;
      }
      at = p.nextOffset;
    }
  }

  /** Ends the client: calls still waiting fail with CLOSED. */
  close() {
    this.#end(ClientErrorCode.CLOSED, "the client was closed");
  }

  #callOptions(options, allowed) {
    if (!isObject(options)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, "options must be an object");
    for (const k of Object.keys(options)) {
      if (!allowed.includes(k)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `unknown option ${JSON.stringify(k)}`);
    }
    if (options.timeoutMs !== undefined) positive("timeoutMs", options.timeoutMs);
    if (options.retries !== undefined) nonNegativeInteger("retries", options.retries);
    return options;
  }

  #placeRecord(capabilityId, body, record, description) {
    const cap = findCapability(description, capabilityId);
    if (cap && recordParam(cap) === undefined) {
      if (record !== undefined) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${capabilityId} is not a folded template: it takes no record`);
      return;
    }
    // Not described: the protocol's own name for the record member.
    const param = cap ? recordParam(cap) : "record";
    if (record !== undefined) {
      if (typeof record !== "string" || record === "") throw clientError(ClientErrorCode.INVALID_ARGUMENT, "record must be a non-empty string");
      if (hasOwn(body, param) && body[param] !== record) {
        throw clientError(ClientErrorCode.INVALID_ARGUMENT, `input.${param} and options.record name different records`);
      }
      body[param] = record;
    }
    if (!cap) return; // not described: the surface decides
    const id = body[param];
    if (typeof id !== "string" || id === "") {
      throw clientError(ClientErrorCode.RECORD_REQUIRED, `${capabilityId} is a folded template: name the record in input.${param} or options.record`);
    }
    if (isReferenceable(description, id) === false) {
      throw clientError(ClientErrorCode.RECORD_NOT_REFERENCEABLE, `${id} is not among the record ids the surface described`);
    }
  }

  #remember(id, fingerprint) {
    this.#intents.delete(id);
    this.#intents.set(id, fingerprint);
    if (this.#intents.size > REMEMBERED_IDS) this.#intents.delete(this.#intents.keys().next().value);
  }

  #call(envelope, timeoutMs, retries, signal, resent = false) {
    if (this.#ended) return Promise.reject(this.#copyEnd(envelope, 0));
    return new Promise((resolve, reject) => {
      const isInvoke = envelope.method === "invoke";
      const call = { envelope, attempts: 0, timer: undefined, fallback: null, settle: null };
      const cleanup = () => {
        clearTimeout(call.timer);
        if (this.#pending.get(envelope.id) === call) this.#pending.delete(envelope.id);
        if (signal) signal.removeEventListener("abort", onAbort);
      };
      call.settle = (outcome, err) => {
        cleanup();
        if (err) reject(err);
        else resolve(outcome);
      };
      call.fail = (code, message) =>
        call.settle(null, clientError(code, message, { effectUnknown: isInvoke && call.attempts > 0, attempts: call.attempts, request: envelope }));
      const onAbort = () => call.fail(ClientErrorCode.ABORTED, "the call was aborted");
      const send = () => {
        call.attempts += 1;
        call.timer = setTimeout(onTimeout, timeoutMs);
        try {
          this.#transport.send(envelope);
        } catch (err) {
          call.attempts -= 1;
          call.fail(ClientErrorCode.INVALID_ARGUMENT, `the request cannot be posted: ${err && err.message}`);
        }
      };
      const onTimeout = () => {
        if (call.fallback) {
          // The retry was refused as a replay and the first attempt's own
          // reply never came: it reached the surface, its effect is unknown.
          call.settle(freeze({ ...call.fallback, attempts: call.attempts, effectUnknown: true }));
        } else if (call.attempts <= retries) {
          send();
        } else {
          call.fail(ClientErrorCode.TIMEOUT, `no reply to ${envelope.method} ${envelope.id} within ${timeoutMs} ms (${call.attempts} attempt${call.attempts === 1 ? "" : "s"})`);
        }
      };
      call.onEnvelope = (message) => {
        // The port is this client's own; the window is every script's, and
        // a same-window script can swallow the page's reply and post its
        // own, so an answer read there says so.
        const via = { transport: this.#transport.kind, forgeable: !this.#transport.private };
        const askedChanged = isObject(envelope.input) && envelope.input.capabilities === "changed";
        const outcome = { ...classify(message, envelope.method, { id: envelope.id, app: this.app, askedChanged }), ...via };
        const retried = isInvoke && (resent || call.attempts > 1);
        if (retried && outcome.kind === "protocol-error" && outcome.error.code === "REPLAY_DETECTED") {
          // The refusal answers a retry; the first attempt may still answer
          // with its real result (same id), so wait for it until the timer.
          call.fallback = outcome;
          return;
        }
        // Any other refusal of a copy sent again says nothing about the
        // copy before it, which may have reached the page and run.
        if (retried && outcome.kind === "protocol-error") outcome.effectUnknown = true;
        call.settle(freeze({ ...outcome, attempts: call.attempts }));
      };
      call.onEnd = (err) => call.settle(null, this.#copyEnd(envelope, call.attempts, err));
      if (signal) {
        if (signal.aborted) {
          reject(clientError(ClientErrorCode.ABORTED, "the call was aborted before it was sent", { request: envelope }));
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
      }
      this.#pending.set(envelope.id, call);
      send();
    });
  }

  #onEnvelope(message, isPrivate) {
    const env = message.envelope;
    if (!isObject(env)) return;
    let id = typeof env.id === "string" ? env.id : "";
    // A request the page could not read is answered with the empty id. On
    // the private channel with one call waiting, that answer is its own; on
    // the shared window it could be any script's, so it is ignored there.
    if (id === "" && isPrivate && this.#pending.size === 1) id = this.#pending.keys().next().value;
    const call = this.#pending.get(id);
    if (call) call.onEnvelope(message);
  }

  #copyEnd(envelope, attempts, err = this.#ended) {
    return clientError(err.code, err.message, { effectUnknown: envelope.method === "invoke" && attempts > 0, attempts, request: envelope });
  }

  #end(code, message) {
    if (this.#ended) return;
    this.#ended = clientError(code, message);
    this.#win.removeEventListener("pagehide", this.#onHide);
    this.#transport.close();
    for (const call of [...this.#pending.values()]) call.onEnd(this.#ended);
    this.#pending.clear();
    this.#resolveEnded(this.#ended);
  }
}

// jsonCopy sends what JSON.stringify makes of a value, so what the page
// reads is what a fingerprint or a log of the call shows.
function jsonCopy(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${what} is not JSON: ${err && err.message}`);
  }
  const copy = JSON.parse(text);
  if (!isObject(copy)) throw clientError(ClientErrorCode.INVALID_ARGUMENT, `${what} must be an object`);
  return copy;
}

function canonicalJSON(v) {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(",")}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}
