// transport.js: the window transport: one hub per window, private
// channels' ports, and posting replies.
//
// ---------------------------------------------------------------------------
// The window transport. One hub per window takes the message events there
// and hands them to the surfaces listening on it. The page's hub is added
// when this module is evaluated. The window is the only target of a message
// event, and its listeners run in the order they were added (capture or
// not; measured in Chromium 156), so the hub runs before every listener a
// later script adds: a connect message, which carries a private channel's
// port, stops at the hub with stopImmediatePropagation, and no later
// listener sees it or its port.

import { CHANNEL } from "./constants.js";
import { MapCtor, PAGE_WINDOW, addListener, append, capturedGetter, defineProperty, eventDataOf, eventOriginOf, eventPortsOf, eventSourceOf, hasOwn, mapForEach, mapGet, mapSet, newList, portClose, portPostMessage, portStart, reflectApply, stopImmediatePropagation, stringStartsWith, windowPostMessage } from "./intrinsics.js";
import { failure, isPlainObject, ownValue, requestIdOf } from "./values.js";

const hubs = new MapCtor(); // window -> hub

export function hubFor(win) {
  let hub = mapGet(hubs, win);
  if (hub === undefined) {
    hub = makeHub(win);
    mapSet(hubs, win, hub);
  }
  return hub;
}

function makeHub(win) {
  const hub = { __proto__: null, entries: new MapCtor() }; // listen() entries, in order
  const onMessage = (event) => {
    try {
      route(hub, event);
    } catch {
      // A listener never throws into the page.
    }
  };
  // Leaving the page (a navigation, a close, the back-forward cache) frees
  // every private channel; a caller connects again on return.
  const onPageHide = (event) => {
    if (event.isTrusted !== true) return; // a script's dispatchEvent is no navigation
    mapForEach(hub.entries, (entry) => {
      try {
        entry.dropChannels();
      } catch {
        // the others still go
      }
    });
  };
  if (win === PAGE_WINDOW && addListener !== undefined) {
    addListener(win, "message", onMessage, true);
    addListener(win, "pagehide", onPageHide, true);
  } else {
    // A stand-in window (tests, other hosts) brings its own methods.
    win.addEventListener("message", onMessage, true);
    win.addEventListener("pagehide", onPageHide, true);
  }
  return hub;
}

if (PAGE_WINDOW !== undefined) hubFor(PAGE_WINDOW);

/** A field of a message event through the original getter; a stand-in event's own data property. */
export function eventField(event, get, name) {
  if (get !== undefined) {
    try {
      return get(event);
    } catch {
      // not a platform MessageEvent: a host's stand-in
    }
  }
  return ownValue(event, name);
}

/**
 * Whether data is a request in spec 03's own form, without the wrapper: a
 * protocol naming pling.surface and no ok (which only replies carry).
 */
export function isBareRequest(data) {
  const p = ownValue(data, "protocol");
  return typeof p === "string" && stringStartsWith(p, "pling.surface/") && !hasOwn(data, "ok");
}

function route(hub, event) {
  if (event.isTrusted !== true) return;
  const data = eventField(event, eventDataOf, "data");
  if (!isPlainObject(data)) return;
  let kind;
  let bare = false;
  if (hasOwn(data, "channel")) {
    if (ownValue(data, "channel") !== CHANNEL) return;
    kind = ownValue(data, "kind");
    if (kind !== "request" && kind !== "connect") return;
  } else if (isBareRequest(data)) {
    kind = "request";
    bare = true;
  } else {
    return;
  }
  if (kind === "connect" && stopImmediatePropagation !== undefined) {
    try {
      stopImmediatePropagation(event);
    } catch {
      // a stand-in event
    }
  }
  const source = eventField(event, eventSourceOf, "source");
  const origin = eventField(event, eventOriginOf, "origin");
  if (source === null || source === undefined || typeof origin !== "string" || origin === "null") return;
  const hasApp = !bare && hasOwn(data, "app");
  const app = hasApp ? ownValue(data, "app") : undefined;
  let first;
  let count = 0;
  let others; // the surfaces served past the first: one that listens twice is served once
  mapForEach(hub.entries, (entry) => {
    if (!entry.accepts(source, origin) || (hasApp && entry.app !== app)) return;
    if (first === undefined) first = entry;
    else {
      if (entry.owner === first.owner) return;
      if (others === undefined) others = newList();
      for (let i = 0; i < others.length; i++) if (others[i].owner === entry.owner) return;
      append(others, entry);
    }
    count++;
  });
  if (kind === "request" && !bare) {
    if (count === 0) return;
    // Without app a describe goes to every surface (discovery); anything
    // else would run on each of them, so with several it must name one.
    if (count > 1 && !hasApp && ownValue(ownValue(data, "envelope"), "method") !== "describe") {
      postTo(source, { channel: CHANNEL, kind: "response", envelope: failure(requestIdOf(ownValue(data, "envelope")), "INVALID_REQUEST", "several surfaces listen here: name the app") }, origin);
      return;
    }
    serveEntry(first, data, source, origin);
    if (others !== undefined) for (let i = 0; i < others.length; i++) serveEntry(others[i], data, source, origin);
    return;
  }
  if (kind === "connect") {
    const ports = eventField(event, eventPortsOf, "ports");
    const port = ports !== null && typeof ports === "object" && ownValue(ports, "length") > 0 ? ownValue(ports, 0) : undefined;
    if (port === undefined || port === null) return;
    const real = isPlatformPort(port);
    // Nobody here may take it: no answer, as for any sender not served.
    if (count === 1) first.connect(data, origin, port, real);
    else if (count > 1) refusePort(port, real); // several surfaces: the connect must name its app
    return;
  }
  if (bare && count > 0) {
    // A bare request reaches one surface or none: with several, it must
    // come wrapped with app, or it would run on each.
    if (count === 1) first.request(data, source, origin, true);
    else postTo(source, failure(requestIdOf(data), "INVALID_REQUEST", "several surfaces listen here: wrap the request and name its app"), origin);
  }
}

function serveEntry(entry, data, source, origin) {
  try {
    entry.request(data, source, origin, false);
  } catch {
    // one surface's failure does not keep the message from the others
  }
}

const portOnMessageOf = capturedGetter(globalThis.MessagePort, "onmessage");

/** Whether port is the platform's MessagePort (a stand-in has its own methods). */
function isPlatformPort(port) {
  if (portOnMessageOf === undefined || portPostMessage === undefined) return false;
  try {
    portOnMessageOf(port);
    return true;
  } catch {
    return false;
  }
}

export function portSend(port, real, message) {
  try {
    if (real) portPostMessage(port, message);
    else reflectApply(ownValue(port, "postMessage"), port, [message]);
  } catch {
    // the port is gone
  }
}

export function portEnd(port, real) {
  try {
    if (real) portClose(port);
    else reflectApply(ownValue(port, "close"), port, []);
  } catch {
    // already closed
  }
}

export function portListen(port, real, onMessage, onClose) {
  if (real) {
    addListener(port, "message", onMessage);
    addListener(port, "close", onClose);
    portStart(port);
  } else {
    defineProperty(port, "onmessage", { __proto__: null, value: onMessage, writable: true, enumerable: true, configurable: true });
  }
}

export function refusePort(port, real) {
  portSend(port, real, { channel: CHANNEL, kind: "refused" });
  portEnd(port, real);
}

/** Posts message to a window at targetOrigin, through the original postMessage for the page's own window. */
export function postTo(target, message, targetOrigin) {
  try {
    if (target === PAGE_WINDOW && windowPostMessage !== undefined) reflectApply(windowPostMessage, target, [message, targetOrigin]);
    else reflectApply(target.postMessage, target, [message, targetOrigin]);
  } catch {
    // the sender is gone
  }
}
