// Command demo serves the assembled demo site (make site) on loopback.
//
// Pages are served cross-origin isolated (COOP same-origin, COEP
// require-corp) so that performance.now() has fine resolution for the
// benchmark page, and .wasm is served with its media type so browsers can
// compile it while it streams.
package main

import (
	"flag"
	"fmt"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (loopback only by default)")
	dir := flag.String("dir", "build/site", "directory to serve")
	flag.Parse()

	if _, err := os.Stat(*dir); err != nil {
		log.Fatalf("demo: %v (run make site first)", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("demo: %v", err)
	}
	fmt.Printf("Pling agent surface demo: http://%s/\n", ln.Addr())
	log.Fatal(http.Serve(ln, Handler(*dir)))
}

// Handler serves dir with the headers the demo and benchmark pages need.
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
