// pling-surface.global.js: the classic-script entry point. It defines
// window.PlingSurface.loadSurface, which imports pling-surface.js from the
// directory this script was loaded from and calls its loadSurface. All logic
// lives in the module; this file only bridges to it.
//
//   <script src="/pling/pling-surface.global.js"></script>
//   <script>
//     PlingSurface.loadSurface().then(({ createSurface }) => { ... });
//   </script>
//
// Once the module has loaded, a later script can neither replace
// window.PlingSurface (it is read-only) nor stand between a call and the
// module (the module's own loadSurface answers, through no Promise of this
// file), so later calls get the real API.
(function () {
  "use strict";
  if (Object.getOwnPropertyDescriptor(window, "PlingSurface") !== undefined) return; // loaded twice
  var script = document.currentScript;
  var moduleURL = new URL("pling-surface.js", script && script.src ? script.src : document.baseURI).href;
  var then = Promise.prototype.then;
  var mod; // the module, once imported
  var loading;
  function load() {
    if (!loading) {
      loading = import(moduleURL);
      then.call(loading, undefined, function () {
        loading = undefined;
      });
    }
    return loading;
  }
  Object.defineProperty(window, "PlingSurface", {
    value: Object.freeze({
      loadSurface: function (options) {
        if (mod !== undefined) return mod.loadSurface(options);
        return then.call(load(), function (m) {
          mod = m;
          return m.loadSurface(options);
        });
      },
    }),
    enumerable: true,
    writable: false,
    configurable: false,
  });
})();
