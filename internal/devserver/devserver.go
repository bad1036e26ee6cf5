// Package devserver serves the assembled demo site the way the demo, the
// browser tests and the benchmarks need it, and the way a page that shows
// approvals should be served: nothing outside the site, no framing by other
// origins, no content sniffing, and no answer to a Host it was not meant for.
package devserver

import (
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
)

// Handler serves dir cross-origin isolated (COOP same-origin, COEP
// require-corp), so performance.now() has fine resolution for benchmarks,
// with .wasm served as application/wasm so browsers compile it while it
// streams, and with caching off so a rebuilt site is always what loads.
//
// What an adopter copying it should keep:
//   - Only GET and HEAD; only files inside dir. A path with a segment that
//     starts with "." (.git, .env) is 404, a symlink that leads out of dir is
//     404 (dir is opened with os.OpenRoot on every request, so a rebuilt
//     site is served as well), and a directory without an index.html is 404
//     rather than a listing.
//   - The Host header must name the address the connection arrived on
//     (or localhost with its port): a DNS-rebinding page whose name
//     resolves to loopback gets 421, never the site.
//   - Content-Security-Policy: frame-ancestors 'self' (and X-Frame-Options
//     SAMEORIGIN for browsers without CSP 3): no other origin can frame the
//     page and trick a person into clicking Approve.
//   - X-Content-Type-Options: nosniff: a file is only ever run as its type.
//
// Handler(dir) is NewHandler(dir, Options{}).
func Handler(dir string) http.Handler {
	return NewHandler(dir, Options{})
}

// ScriptPolicy is the Content-Security-Policy js/README.md ("Loading the
// surface first") tells a page with a surface to send: scripts only from
// the site itself, WebAssembly compiled ('wasm-unsafe-eval', for the
// kernel) but no eval, no plugins, no <base>, framing by the site only,
// and no string accepted by a DOM sink that would run it as script.
const ScriptPolicy = "script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// Options configure NewHandler; the zero value is Handler's.
type Options struct {
	// ScriptPolicy sends ScriptPolicy as the Content-Security-Policy,
	// instead of frame-ancestors 'self' alone. The demo sends it; the
	// browser tests' own pages, which add scripts and frames as a later
	// script would, are served without it. Default false.
	ScriptPolicy bool
}

// NewHandler is Handler with options.
func NewHandler(dir string, o Options) http.Handler {
	_ = mime.AddExtensionType(".wasm", "application/wasm")
	_ = mime.AddExtensionType(".mjs", "text/javascript")
	csp := "frame-ancestors 'self'"
	if o.ScriptPolicy {
		csp = ScriptPolicy
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Embedder-Policy", "require-corp")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "SAMEORIGIN")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		if !HostAllowed(r) {
			http.Error(w, "421 misdirected request: the Host header does not name this server", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "500 the site directory cannot be opened", http.StatusInternalServerError)
			return
		}
		defer root.Close()
		site := root.FS()
		if !servable(site, r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		http.FileServerFS(site).ServeHTTP(w, r)
	})
}

// servable reports whether urlPath names a file of site that may be served:
// no dot segment, inside the root (os.Root refuses symlinks that leave it),
// and a directory only when it has an index.html.
func servable(site fs.FS, urlPath string) bool {
	for _, seg := range strings.Split(urlPath, "/") {
		if strings.HasPrefix(seg, ".") {
			return false
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name == "" {
		name = "."
	}
	fi, err := fs.Stat(site, name)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		idx, err := fs.Stat(site, path.Join(name, "index.html"))
		return err == nil && idx.Mode().IsRegular()
	}
	return fi.Mode().IsRegular()
}

// HostAllowed reports whether the request's Host names the local address
// its connection arrived on, as an IP literal or as localhost, with its
// port. A request without a known local address is refused.
// Other handlers served beside the site (cmd/demo's) check it too.
func HostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ip, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	host, hport, err := net.SplitHostPort(r.Host)
	if err != nil || hport != port {
		return false
	}
	return host == ip || strings.EqualFold(host, "localhost")
}

// negotiable maps the extensions served in an encoding the client accepts
// (a .br or .gz sibling, when the site has one) to their Content-Type,
// fixed here rather than read from the system's MIME table, which may call
// .ts a video.
var negotiable = []struct{ ext, typ string }{
	{".d.ts", "text/plain; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".mjs", "text/javascript; charset=utf-8"},
	{".wasm", "application/wasm"},
	{".css", "text/css; charset=utf-8"},
	{".html", "text/html; charset=utf-8"},
	{".json", "application/json"},
	{".svg", "image/svg+xml"},
}

// Negotiable reports whether name is served in an encoding the client
// accepts when a precompressed sibling (name.br, name.gz) exists.
func Negotiable(name string) bool {
	_, ok := negotiableType(name)
	return ok
}

func negotiableType(name string) (string, bool) {
	for _, n := range negotiable {
		if strings.HasSuffix(name, n.ext) {
			return n.typ, true
		}
	}
	return "", false
}
