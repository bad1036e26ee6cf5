// port-channel.js: the page's private channel, a MessagePort that only this
// client holds: opening it (connect, answered "connected" or "refused") and
// the transport over it.

import { CHANNEL, REPOST_INTERVAL_MS } from "./bounds.js";
import { ClientErrorCode, clientError } from "./errors.js";
import { hasOwn, isObject } from "./checks.js";

// portTransport is a client's transport over the private channel: it
// delivers response envelopes to hooks.onEnvelope (with true: only the page
// holds the other end) and reports the channel's end to hooks.onEnd.
export function portTransport(port, app, hooks) {
  const onMessage = (event) => {
    const d = event.data;
    if (isObject(d) && d.channel === CHANNEL && d.kind === "closed") {
      hooks.onEnd(ClientErrorCode.CLOSED, "the surface closed the channel");
      return;
    }
    if (!isObject(d) || d.channel !== CHANNEL || d.kind !== "response") return;
    if (app !== undefined && hasOwn(d, "app") && d.app !== app) return;
    hooks.onEnvelope(d, true);
  };
  const onClose = () => hooks.onEnd(ClientErrorCode.CLOSED, "the surface closed the channel");
  port.addEventListener("message", onMessage);
  // The page closes its end when it stops listening or closes the surface.
  // The page posts {kind: "closed"} first; browsers that implement the
  // MessagePort "close" event also report it here.
  port.addEventListener("close", onClose);
  return {
    kind: "port",
    private: true,
    send(envelope) {
      port.postMessage({ channel: CHANNEL, kind: "request", envelope });
    },
    close() {
      port.removeEventListener("message", onMessage);
      port.removeEventListener("close", onClose);
      try {
        // Tells the page to free the channel now rather than after its idle time.
        port.postMessage({ channel: CHANNEL, kind: "close" });
        port.close();
      } catch {
        // already closed
      }
    },
  };
}

// openChannel posts connect messages, each with a fresh MessageChannel, until
// one is answered "connected" or "refused", or the timeout passes.
export function openChannel(win, { app, credential, timeoutMs, MessageChannelCtor }) {
  const origin = win.location.origin;
  return new Promise((resolve, reject) => {
    const tried = [];
    let done = false;
    const finish = (winner, err) => {
      if (done) return;
      done = true;
      clearInterval(repost);
      clearTimeout(timer);
      win.removeEventListener("pagehide", onHide);
      for (const p of tried) {
        if (winner && p === winner.port) continue;
        p.onmessage = null;
        try {
          p.close();
        } catch {
          // already closed
        }
      }
      if (err) reject(err);
      else resolve(winner);
    };
    const attempt = () => {
      const { port1, port2 } = new MessageChannelCtor();
      tried.push(port1);
      port1.onmessage = (event) => {
        const d = event.data;
        if (!isObject(d) || d.channel !== CHANNEL) return;
        if (d.kind === "refused") {
          finish(null, clientError(ClientErrorCode.REFUSED, "the page refused the private channel"));
        } else if (d.kind === "connected") {
          if (app !== undefined && d.app !== app) return;
          port1.onmessage = null;
          finish({ port: port1, app: typeof d.app === "string" ? d.app : undefined });
        }
      };
      const msg = { channel: CHANNEL, kind: "connect" };
      if (app !== undefined) msg.app = app;
      if (credential !== undefined) msg.credential = credential;
      try {
        win.postMessage(msg, origin, [port2]);
      } catch (err) {
        finish(null, clientError(ClientErrorCode.INVALID_ARGUMENT, `the connect message cannot be posted: ${err && err.message}`));
      }
    };
    const onHide = (event) => {
      if (event && event.isTrusted === true) finish(null, clientError(ClientErrorCode.NAVIGATED, "the page navigated away while connecting"));
    };
    win.addEventListener("pagehide", onHide);
    // A credential is posted once: repeating it would show it to same-window
    // listeners again. Without one, repeat until the page starts listening.
    const repost = credential === undefined ? setInterval(attempt, REPOST_INTERVAL_MS) : undefined;
    const timer = setTimeout(
      () => finish(null, clientError(ClientErrorCode.NO_SURFACE, `no surface${app !== undefined ? ` for app ${JSON.stringify(app)}` : ""} answered within ${timeoutMs} ms`)),
      timeoutMs,
    );
    attempt();
  });
}
