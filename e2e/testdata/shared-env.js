// The environment of the shared-limits test page, set up before any module
// runs (a classic script, not deferred): ?fail= makes IndexedDB fail the
// ways browsers make it fail, as the browser would from the start, before
// the surface captures what it uses.
(() => {
  switch (new URLSearchParams(location.search).get("fail")) {
    case "absent": // a browser or mode without IndexedDB
      Object.defineProperty(globalThis, "indexedDB", { value: undefined, configurable: true });
      break;
    case "open": // opening is refused (some private modes)
      IDBFactory.prototype.open = function () {
        throw new DOMException("The user denied permission to access the database.", "SecurityError");
      };
      break;
    case "quota": // every write is over quota
      IDBObjectStore.prototype.put = function () {
        throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      };
      break;
  }
})();
