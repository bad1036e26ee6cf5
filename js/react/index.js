// The React binding of the agent surface: a provider that makes one surface
// for its tree, and hooks with which components register the actions and
// records they render. A capability exists while the component that
// registered it is mounted; its executor is that component's own handler,
// as it was at the last render.
//
//   <SurfaceProvider app="orders" session={() => verified} listen={{ allowedOrigins: [] }}>
//     <Orders />
//   </SurfaceProvider>
//
//   function Order({ order }) {
//     const [note, setNote] = useState(order.note);
//     useAction({ id: "orders.note", description: "Replace the note", effect: "write",
//       approval: "none", inputSchema: { ... } }, (input) => { setNote(input.note); return { ok: true }; });
//     ...
//   }
// The surface first: modules are evaluated in the order they are
// imported, and the runtime captures its built-ins when it is evaluated.
import { createSurface, defineRegistry } from "../pling-surface.js";
import { createContext, createElement, useContext, useEffect, useRef, useState } from "react";

const SurfaceContext = createContext(null);

// The registry parts a provider takes besides createSurface's options.
const VIEW_PARTS = ["route", "regions", "state", "feedback", "unavailable"];

// A hub holds what the mounted components registered: actions by id (with
// the handler of the component that registered it) and records by the
// component. The version changes with every action that comes or goes, so
// the runtime reads the actions again then and only then, and an agent
// that asks for capabilities: "changed" learns of it.
function makeHub(props) {
  const actions = new Map(); // id -> { action, handler: { current } }
  const records = new Map(); // owner token -> SurfaceRecord[]
  let version = 0;
  const view = {};
  const hub = { props };
  for (const part of VIEW_PARTS) view[part] = () => {
    const v = hub.props[part];
    return typeof v === "function" ? v() : v;
  };
  const registry = defineRegistry({
    version: () => version,
    actions: () => Array.from(actions.values(), (e) => e.action),
    records: () => Array.from(records.values()).flat(),
    ...view,
  });
  const options = { registry, execute };
  for (const [k, v] of Object.entries(props)) {
    if (k !== "children" && k !== "listen" && !VIEW_PARTS.includes(k)) options[k] = v;
  }
  hub.surface = createSurface(options);

  // A template's calls name the template (context.capability); a plain
  // action's, the action.
  function execute(id, argsJson, context) {
    const entry = actions.get(context.capability) ?? actions.get(id);
    if (entry === undefined) throw new Error(`no mounted component handles ${context.capability}`);
    return entry.handler.current(JSON.parse(argsJson), context);
  }

  hub.addAction = (action, handler) => {
    if (actions.has(action.id)) throw new Error(`two mounted components register the action ${action.id}`);
    actions.set(action.id, { action, handler });
    version++;
    return () => {
      if (actions.get(action.id)?.handler === handler) {
        actions.delete(action.id);
        version++;
      }
    };
  };
  hub.setRecords = (owner, list) => {
    if (list === undefined) records.delete(owner);
    else records.set(owner, list);
  };
  return hub;
}

/**
 * Makes one surface for the tree below it, from createSurface's options
 * given as props (registry and execute excepted: the hooks below make
 * them), the view's parts (route, regions, state, feedback, unavailable;
 * each a value or a function), and listen: the options of surface.listen,
 * or false for a surface only the page calls.
 */
export function SurfaceProvider(props) {
  const hub = useRef(null);
  if (hub.current === null) hub.current = makeHub(props);
  hub.current.props = props; // the view's parts as rendered last
  const listen = props.listen;
  const listenKey = listen === false ? "" : JSON.stringify(listen ?? {});
  useEffect(() => {
    if (listen === false) return undefined;
    const stop = hub.current.surface.listen(listen ?? {});
    return () => stop();
    // Listening again only when the options' data changes; functions in
    // them (authenticate) are read as they were then.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [listenKey]);
  return createElement(SurfaceContext.Provider, { value: hub.current }, props.children);
}

function useHub(what) {
  const hub = useContext(SurfaceContext);
  if (hub === null) throw new Error(`${what} needs a SurfaceProvider above it`);
  return hub;
}

/** The provider's surface: describe, handle, webmcp, ready, close. */
export function useSurface() {
  return useHub("useSurface").surface;
}

/**
 * Registers action while the component is mounted; handler(input, context)
 * runs each accepted invoke, with the input parsed, and answers as an
 * executor does. The action is compared by its JSON: a new object with the
 * same content changes nothing, a changed one is registered again.
 */
export function useAction(action, handler) {
  const hub = useHub("useAction");
  const current = useRef(handler);
  current.current = handler;
  const text = JSON.stringify(action);
  useEffect(() => hub.addAction(JSON.parse(text), current), [hub, text]);
}

/** Registers the records the component shows, while it is mounted. */
export function useRecords(records) {
  const hub = useHub("useRecords");
  const [owner] = useState(() => ({}));
  const text = JSON.stringify(records);
  useEffect(() => {
    hub.setRecords(owner, JSON.parse(text));
  }, [hub, owner, text]);
  useEffect(() => () => hub.setRecords(owner, undefined), [hub, owner]);
}
