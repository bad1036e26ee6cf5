// Package devserver serves the assembled demo site the way the demo, the
// browser tests and the benchmarks need it.
package devserver

import (
	"mime"
	"net/http"
)

// Handler serves dir cross-origin isolated (COOP same-origin, COEP
// require-corp), so performance.now() has fine resolution for benchmarks,
// with .wasm served as application/wasm so browsers compile it while it
// streams, and with caching off so a rebuilt site is always what loads.
func Handler(dir string) http.Handler {
	_ = mime.AddExtensionType(".wasm", "application/wasm")
	_ = mime.AddExtensionType(".mjs", "text/javascript")
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Embedder-Policy", "require-corp")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	})
}
