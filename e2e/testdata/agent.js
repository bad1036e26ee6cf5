// The external agent of the browser tests. It runs in an isolated world of
// the page, as an extension's content script does: it shares the DOM and the
// window's message events with the page, not the page's JavaScript. What it
// posts reaches the page as a trusted MessageEvent whose source is the window
// and whose origin is the page's own.
(() => {
  if (globalThis.agent) return;
  const CHANNEL = "pling.surface";
  const received = []; // every surface message this agent got, window and ports
  const responses = []; // the window's surface responses, in arrival order
  const marks = []; // non-surface messages from test frames ({ e2e: ... })
  const waiters = new Map(); // envelope id -> resolve
  const ports = new Map(); // handle -> { port, waiters, messages }
  const frames = new Map(); // tag -> iframe element
  let seq = 0;

  // A wrapped reply carries its envelope; a bare one is the envelope.
  const idOf = (d) => {
    const env = d && d.channel === CHANNEL ? d.envelope : d;
    return env && typeof env.id === "string" ? env.id : "";
  };
  const bare = []; // bare replies on the window, in arrival order
  const bareWaiters = new Map();

  function wait(map, id, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const done = (d) => {
        clearTimeout(timer);
        resolve(d);
      };
      const timer = setTimeout(() => {
        if (map.get(id) === done) map.delete(id);
        reject(new Error(`no ${what} for ${JSON.stringify(id)} within ${timeoutMs} ms`));
      }, timeoutMs);
      map.set(id, done);
    });
  }

  addEventListener("message", (ev) => {
    const d = ev.data;
    if (d && typeof d === "object" && typeof d.e2e === "string") {
      marks.push({ ...d, origin: ev.origin });
      return;
    }
    if (d && typeof d === "object" && d.channel === undefined && typeof d.protocol === "string" && "ok" in d) {
      bare.push({ data: d, origin: ev.origin, fromWindow: ev.source === window });
      const w = bareWaiters.get(idOf(d));
      if (w) {
        bareWaiters.delete(idOf(d));
        w(d);
      }
      return;
    }
    if (!d || typeof d !== "object" || d.channel !== CHANNEL || d.kind !== "response") return;
    received.push(d);
    responses.push({ data: d, origin: ev.origin, fromWindow: ev.source === window });
    const w = waiters.get(idOf(d));
    if (w) {
      waiters.delete(idOf(d));
      w(d);
    }
  });

  globalThis.agent = {
    id(prefix = "req") {
      seq += 1;
      return `${prefix}-${seq}-${Math.random().toString(36).slice(2, 8)}`;
    },

    // request posts a request wrapper and resolves with the response wrapper
    // that answers it, by envelope id. With acceptEmptyId, an answer with
    // the empty id (a request too broken to read its id from) also counts.
    request(envelope, { wrapper = {}, timeoutMs = 20000, acceptEmptyId = false } = {}) {
      const id = envelope && envelope.id;
      let p = wait(waiters, id, timeoutMs, "response");
      if (acceptEmptyId && id !== "") {
        p = Promise.race([p, wait(waiters, "", timeoutMs, "response")]).finally(() => {
          waiters.delete(id);
          waiters.delete("");
        });
      }
      postMessage({ channel: CHANNEL, kind: "request", ...wrapper, envelope }, location.origin);
      return p;
    },

    // bareRequest posts an envelope as it is, without the wrapper, and
    // resolves with the bare reply to its id.
    bareRequest(envelope, { timeoutMs = 20000 } = {}) {
      const p = wait(bareWaiters, envelope.id, timeoutMs, "bare response");
      postMessage(envelope, location.origin);
      return p;
    },
    bareReplies() {
      return bare;
    },

    // post posts anything, as is, and expects nothing.
    post(data) {
      postMessage(data, location.origin);
    },

    responseCount() {
      return responses.length;
    },
    responsesSince(n) {
      return responses.slice(n);
    },
    marks(kind) {
      return marks.filter((m) => kind === undefined || m.e2e === kind);
    },
    // transcript is everything the agent received, as text.
    transcript() {
      return JSON.stringify(received);
    },

    // connect opens the private channel: a connect message carrying a
    // MessagePort, answered on that port with connected or refused.
    async connect(credential, { app, timeoutMs = 20000 } = {}) {
      const { port1, port2 } = new MessageChannel();
      seq += 1;
      const handle = `port-${seq}`;
      const entry = { port: port1, waiters: new Map(), messages: [] };
      ports.set(handle, entry);
      const first = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer on the port within ${timeoutMs} ms`)), timeoutMs);
        port1.onmessage = (ev) => {
          const d = ev.data;
          entry.messages.push(d);
          received.push(d);
          if (entry.messages.length === 1) {
            clearTimeout(timer);
            resolve(d);
            return;
          }
          const w = entry.waiters.get(idOf(d));
          if (w) {
            entry.waiters.delete(idOf(d));
            w(d);
          }
        };
      });
      const msg = { channel: CHANNEL, kind: "connect", credential };
      if (app !== undefined) msg.app = app;
      postMessage(msg, location.origin, [port2]);
      return { handle, answer: await first };
    },

    // portRequest sends a request on an open private channel.
    portRequest(handle, envelope, { timeoutMs = 20000 } = {}) {
      const entry = ports.get(handle);
      const p = wait(entry.waiters, envelope.id, timeoutMs, "port response");
      entry.port.postMessage({ channel: CHANNEL, kind: "request", envelope });
      return p;
    },
    portMessages(handle) {
      return ports.get(handle).messages.length;
    },
    portLog(handle) {
      return ports.get(handle).messages;
    },
    // portBare sends an envelope without the wrapper on an open channel.
    portBare(handle, envelope, { timeoutMs = 20000 } = {}) {
      const entry = ports.get(handle);
      const p = wait(entry.waiters, envelope.id, timeoutMs, "bare port response");
      entry.port.postMessage(envelope);
      return p;
    },
    // closePort ends a channel: saying so first (as the client library
    // does), or not at all (a client that crashed or navigated).
    closePort(handle, { say = true } = {}) {
      const entry = ports.get(handle);
      if (say) entry.port.postMessage({ channel: CHANNEL, kind: "close" });
      entry.port.close();
      ports.delete(handle);
    },
    // rounds opens and closes a channel n times, one after the other, and
    // counts the answers.
    async rounds(n, credential, { say = true } = {}) {
      const kinds = {};
      for (let i = 0; i < n; i++) {
        const { handle, answer } = await this.connect(credential);
        kinds[answer.kind] = (kinds[answer.kind] || 0) + 1;
        this.closePort(handle, { say });
      }
      return kinds;
    },

    // addFrame embeds a test frame that posts messages to this page, and
    // resolves once the frame says it has posted them all: a frame that
    // never loads fails here instead of passing silently.
    async addFrame(src, { tag, messages, sandbox = false, timeoutMs = 20000 }) {
      const f = document.createElement("iframe");
      if (sandbox) f.setAttribute("sandbox", "allow-scripts");
      f.src = `${src}#${encodeURIComponent(JSON.stringify({ tag, messages }))}`;
      frames.set(tag, f);
      document.body.append(f);
      return waitMark("sent", tag, timeoutMs);
    },
    // frameReport asks a test frame for every message it has received.
    frameReport(tag, { timeoutMs = 20000 } = {}) {
      const p = waitMark("report", tag, timeoutMs);
      frames.get(tag).contentWindow.postMessage({ e2e: "report?" }, "*");
      return p;
    },
  };

  function waitMark(kind, tag, timeoutMs) {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const look = () => {
        const m = marks.find((x) => x.e2e === kind && x.tag === tag);
        if (m) resolve(m);
        else if (Date.now() > deadline) reject(new Error(`frame ${tag}: no "${kind}" message within ${timeoutMs} ms (did it load?)`));
        else setTimeout(look, 20);
      };
      look();
    });
  }
})();
