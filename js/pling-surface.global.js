// pling-surface.global.js: the classic-script entry point. It defines
// window.PlingSurface.loadSurface, which imports pling-surface.js from the
// directory this script was loaded from and calls its loadSurface. All logic
// lives in the module; this file only bridges to it.
//
//   <script src="/pling/pling-surface.global.js"></script>
//   <script>
//     PlingSurface.loadSurface().then(({ createSurface }) => { ... });
//   </script>
(function () {
  "use strict";
  var script = document.currentScript;
  var moduleURL = new URL("pling-surface.js", script && script.src ? script.src : document.baseURI).href;
  var loading;
  function load() {
    if (!loading) {
      loading = import(moduleURL);
      loading.catch(function () {
        loading = undefined;
      });
    }
    return loading;
  }
  window.PlingSurface = Object.freeze({
    loadSurface: function (options) {
      return load().then(function (m) {
        return m.loadSurface(options);
      });
    },
  });
})();
