// registry.js: defineRegistry, the page's actions and records as the kernel reads them.
//
// ---------------------------------------------------------------------------
// Registry helper.

import { MapCtor, defineProperty, hasOwn, isArray, mapGet, mapSet, mapSize, newList, plainArray } from "./intrinsics.js";
import { methodOf, ownValue } from "./values.js";

function valueOf(x) {
  return typeof x === "function" ? x() : x;
}

/**
 * A part of a registry spec: spec[name] when the spec holds it itself (its
 * own getter runs), else undefined, so that a member a later script puts on
 * Object.prototype (feedback, state, ids, ...) is never read as the page's.
 */
function part(spec, name) {
  return hasOwn(spec, name) ? valueOf(spec[name]) : undefined;
}

function isLazySource(r) {
  return r !== null && typeof r === "object" && !isArray(r) &&
    typeof methodOf(r, "count") === "function" && typeof methodOf(r, "slice") === "function" && typeof methodOf(r, "get") === "function";
}

/** The ids of rows, read by index (no map, no iterator a later script could replace). */
function idsOf(rows, max) {
  const out = newList();
  const n = isArray(rows) ? (rows.length < max ? rows.length : max) : 0;
  for (let i = 0; i < n; i++) out[i] = rows[i] && methodOf(rows[i], "id");
  return plainArray(out);
}

/**
 * Builds a registry from plain parts. Each part is a value or a function
 * returning it; records is an array or a lazy source
 * { count(), slice(offset, limit), get(id), ids?(max) } so that a large
 * table is read by its window only. Only the spec's own members are parts,
 * and the view is read with the built-ins captured at load.
 */
export function defineRegistry(spec) {
  if (spec === null || typeof spec !== "object") throw new TypeError("defineRegistry needs an object");
  const registry = {
    actions() {
      const a = part(spec, "actions");
      return a === undefined ? [] : a;
    },
    view(query) {
      const route = part(spec, "route");
      const regions = part(spec, "regions");
      const state = part(spec, "state");
      const feedback = part(spec, "feedback");
      const unavailable = part(spec, "unavailable");
      const ids = ownValue(query, "ids");
      const offset = ownValue(query, "offset");
      const limit = ownValue(query, "limit");
      const max = ownValue(query, "maxRecordIds");
      const source = part(spec, "records");
      let records = [];
      let recordIds = [];
      let total = 0;
      const picked = newList();
      if (isArray(source)) {
        total = source.length;
        if (ids !== undefined) {
          const wanted = new MapCtor();
          for (let i = 0; i < ids.length; i++) mapSet(wanted, ids[i], true);
          for (let i = 0; i < source.length && picked.length < mapSize(wanted); i++) {
            const r = source[i];
            if (r && mapGet(wanted, methodOf(r, "id")) === true) picked[picked.length] = r;
          }
        } else if (limit > 0) {
          const end = offset + limit < total ? offset + limit : total;
          for (let i = offset; i < end; i++) picked[picked.length] = source[i];
        }
        records = plainArray(picked);
        recordIds = idsOf(source, max);
      } else if (isLazySource(source)) {
        total = source.count();
        if (ids !== undefined) {
          for (let i = 0; i < ids.length; i++) {
            const r = source.get(ids[i]);
            if (r) picked[picked.length] = r;
          }
          records = plainArray(picked);
        } else if (limit > 0) {
          records = source.slice(offset, limit);
        }
        // ids is optional: Object.prototype.ids, a later script's, is not the source's.
        recordIds = typeof methodOf(source, "ids") === "function" ? source.ids(max) : idsOf(source.slice(0, max), max);
      } else if (source !== undefined && source !== null) {
        throw new TypeError("registry records must be an array or a lazy source { count, slice, get }");
      }
      // One literal: defined, never assigned, so no setter on
      // Object.prototype takes a member away.
      return {
        route,
        regions,
        state,
        feedback,
        unavailable,
        records,
        recordIds,
        recordIdsTotal: total,
        recordsTotal: total,
      };
    },
  };
  if (hasOwn(spec, "version") && spec.version !== undefined) {
    defineProperty(registry, "version", { __proto__: null, value: () => part(spec, "version"), writable: true, enumerable: true, configurable: true });
  }
  return registry;
}
