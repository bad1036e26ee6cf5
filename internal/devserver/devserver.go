// Package devserver serves the assembled demo site the way the demo, the
// browser tests and the benchmarks need it, and the way a page that shows
// approvals should be served: nothing outside the site, no framing by other
// origins, no content sniffing, and no answer to a Host it was not meant for.
package devserver

import (
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Handler serves dir cross-origin isolated (COOP same-origin, COEP
// require-corp), so performance.now() has fine resolution for benchmarks,
// with .wasm served as application/wasm so browsers compile it while it
// streams. A file with a precompressed sibling (name.br, name.gz, written
// by internal/sitebuild) is sent in the encoding the client prefers of
// those. A content-hashed name (surface.1a2b3c4d.wasm) may be cached for a
// year; every other file is revalidated on each use (no-cache, with an
// ETag and Last-Modified), so a rebuilt site is always what loads.
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
		serve(w, r, site)
	})
}

// serve answers a servable path. Directories without their slash and
// /index.html paths get http.FileServer's redirects; every file goes
// through serveFile.
func serve(w http.ResponseWriter, r *http.Request, site fs.FS) {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "."
	}
	// A .br or .gz sibling is an encoding of another file, sent only as
	// that file's Content-Encoding: asked for by its own name it is 404,
	// so no cache keeps it as a resource of its own type.
	if isSibling(name) {
		http.NotFound(w, r)
		return
	}
	fi, err := fs.Stat(site, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/index.html") || (fi.IsDir() && !strings.HasSuffix(r.URL.Path, "/")) {
		http.FileServerFS(site).ServeHTTP(w, r)
		return
	}
	if fi.IsDir() {
		name = path.Join(name, "index.html")
	}
	serveFile(w, r, site, name)
}

// serveFile sends name, or its sibling in the encoding negotiated.
func serveFile(w http.ResponseWriter, r *http.Request, site fs.FS, name string) {
	h := w.Header()
	if Hashed(path.Base(name)) {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	send, encoding := name, ""
	if typ, ok := negotiableType(name); ok {
		h.Set("Vary", "Accept-Encoding")
		h.Set("Content-Type", typ) // the original's, whatever is sent
		encoding = Negotiate(r.Header.Get("Accept-Encoding"), func(enc string) bool {
			fi, err := fs.Stat(site, name+encodings[enc])
			return err == nil && fi.Mode().IsRegular()
		})
		if encoding != "" {
			send = name + encodings[encoding]
			// A Range applies to the encoded bytes, as they are the
			// representation sent (RFC 9110 8.4); its tag is its own.
			h.Set("Content-Encoding", encoding)
		}
	}
	f, err := site.Open(send)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		http.Error(w, "500 the file cannot be read", http.StatusInternalServerError)
		return
	}
	// Each encoding of a file is its own representation, with its own tag.
	etag := strconv.FormatInt(fi.ModTime().UnixNano(), 36) + "-" + strconv.FormatInt(fi.Size(), 36)
	if encoding != "" {
		etag += "-" + encoding
	}
	h.Set("ETag", `"`+etag+`"`)
	if encoding != "" {
		// ServeContent leaves the length of a whole encoded body unset
		// (for HEAD, unsent); for a range it sets its own.
		h.Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	}
	http.ServeContent(w, r, name, fi.ModTime(), rs)
}

// encodings maps the content codings served from siblings to the
// sibling's suffix (Negotiate has the order of preference).
var encodings = map[string]string{"br": ".br", "gzip": ".gz"}

// isSibling reports whether name is the .br or .gz of a negotiable file.
func isSibling(name string) bool {
	for _, ext := range encodings {
		if base, ok := strings.CutSuffix(name, ext); ok && Negotiable(base) {
			return true
		}
	}
	return false
}

// Negotiate picks the coding to send for an Accept-Encoding header: br
// when the client accepts it (a q above 0, by name or by *) and has(br),
// then gzip (or x-gzip) likewise, else "" for the file as it is. Codings
// are compared without case; an element with a malformed q is ignored.
func Negotiate(acceptEncoding string, has func(coding string) bool) string {
	q := map[string]float64{}
	for _, el := range strings.Split(acceptEncoding, ",") {
		coding, params, _ := strings.Cut(el, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding == "" {
			continue
		}
		if coding == "x-gzip" {
			coding = "gzip"
		}
		weight := 1.0
		malformed := false
		for _, p := range strings.Split(params, ";") {
			k, v, found := strings.Cut(strings.TrimSpace(p), "=")
			if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				malformed = true
				break
			}
			weight = f
		}
		if malformed {
			continue
		}
		if old, seen := q[coding]; !seen || weight < old {
			q[coding] = weight // a coding named twice: the stricter counts
		}
	}
	accepts := func(coding string) bool {
		if w, ok := q[coding]; ok {
			return w > 0
		}
		w, ok := q["*"]
		return ok && w > 0
	}
	for _, coding := range []string{"br", "gzip"} {
		if accepts(coding) && has(coding) {
			return coding
		}
	}
	return ""
}

// hashedName is a name internal/sitebuild gives a file by its content: a
// dot, at least 8 lowercase hex digits, then the extension.
var hashedName = regexp.MustCompile(`^[^.][^/]*\.[0-9a-f]{8,}\.[a-z0-9]+$`)

// Hashed reports whether base is a content-hashed file name, which never
// names other bytes and so may be cached without revalidation.
func Hashed(base string) bool {
	return hashedName.MatchString(base)
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
