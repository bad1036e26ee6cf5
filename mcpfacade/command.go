//go:build !(js || wasip1)

package mcpfacade

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pling.dev/agent/client"
	"pling.dev/agent/mcpfacade/nativehost"
)

// startupSync bounds how long Main waits for the page's surface before it
// serves: the first tools/list should be complete, but a page that is slow
// to start must not keep the MCP client from connecting.
const startupSync = 30 * time.Second

const usage = `pling-mcp serves the agent surface of a web page as an MCP server.

Usage:
  pling-mcp -url URL [flags]                      start a browser on URL
  pling-mcp -browser -url URL [flags]             use the person's own browser, through the Pling extension
  pling-mcp install [-user-data-dir DIR] [-browser chrome,...]
                                                  register the extension's native host (uninstall: remove it)
  pling-mcp -devtools ws://HOST:PORT/... [-url URL] [flags]
                                                  use a tab of a running browser
MCP goes over stdin/stdout, or over streamable HTTP with -http.

Flags:
`

// Main runs the command with args (without the program name) and returns
// its exit code: 0 after a clean stop, 1 on a failure, 2 on a usage error.
// MCP over stdio uses stdin and stdout; everything else goes to stderr.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch {
		case args[0] == "install" || args[0] == "uninstall":
			return nativehost.InstallMain(args[1:], args[0] == "uninstall", stdout, stderr)
		case strings.Contains(args[0], "://") && !strings.HasPrefix(args[0], "-"):
			// The browser starts the native host with its caller's origin.
			return hostMain(args[0], stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("pling-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var (
		pageURL     = fs.String("url", "", "the page: opened in a started browser, or picked among the tabs of the -devtools browser by URL prefix (opened in a new tab when none matches)")
		devtools    = fs.String("devtools", "", "DevTools endpoint of a running browser (ws://127.0.0.1:9222/devtools/browser/... or http://127.0.0.1:9222) instead of starting one")
		httpAddr    = fs.String("http", "", "serve MCP over streamable HTTP on this loopback address (127.0.0.1:8765) instead of stdio")
		allowRemote = fs.Bool("allow-non-loopback", false, "let -http listen on an address that is not loopback (anyone who reaches it can act in the page)")
		app         = fs.String("app", "", "the surface's app name; only that app's surface answers")
		poll        = fs.Duration("poll", DefaultPollInterval, "how often to read the capability list again (0: only after navigations and calls that may change it); each read counts against the page's rate limit")
		timeout     = fs.Duration("timeout", client.DefaultTimeout, "how long one request to the page may take")
		enumLimit   = fs.Int("record-enum", DefaultRecordEnumLimit, "list record ids as an enum in a template's record parameter when there are at most this many (0: never)")
		execPath    = fs.String("chromium", "", "the browser to start (default: chromium, google-chrome, ... on PATH)")
		headless    = fs.Bool("headless", false, "start the browser without a window (default: only when there is no display)")
		noSandbox   = fs.Bool("no-sandbox", false, "start the browser with --no-sandbox (default: only as root, where Chromium's sandbox cannot run)")
		verbose     = fs.Bool("v", false, "log what the facade does, and the browser's output, to stderr")
		browser     = fs.Bool("browser", false, "reach the page in the person's own browser through the Pling extension (see `pling-mcp install`), with no DevTools port; needs -url")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "pling-mcp: "+format+"\n", a...)
		return code
	}
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected arguments %q (see -h)", fs.Args())
	case *browser && (*pageURL == "" || *devtools != "" || *execPath != ""):
		return fail(2, "-browser needs -url (the origin it is bound to), and takes neither -devtools nor -chromium")
	case *pageURL == "" && *devtools == "":
		fs.Usage()
		return fail(2, "-url or -devtools is required")
	case *poll < 0 || *timeout <= 0 || *enumLimit < 0:
		return fail(2, "-poll, -timeout and -record-enum must not be negative")
	}
	if *pageURL != "" {
		if err := checkURL(*pageURL, "http", "https"); err != nil {
			return fail(2, "-url %q is not a web address (%v): give the page's full address, such as -url http://127.0.0.1:8080/", *pageURL, err)
		}
	}
	if *devtools != "" {
		if err := checkURL(*devtools, "http", "https", "ws", "wss"); err != nil {
			return fail(2, "-devtools %q is not a DevTools address (%v): give it as http://127.0.0.1:9222 or ws://127.0.0.1:9222/devtools/browser/...", *devtools, err)
		}
	}
	if *httpAddr != "" && !*allowRemote {
		if err := CheckLoopback(*httpAddr); err != nil {
			return fail(2, "%v (add -allow-non-loopback to serve it anyway)", err)
		}
	}

	level := slog.LevelWarn
	var browserOut io.Writer
	if *verbose {
		level, browserOut = slog.LevelInfo, stderr
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if *browser {
		return browserMain(ctx, browserConfig{
			url: *pageURL, app: *app, poll: *poll, timeout: *timeout, enumLimit: *enumLimit, httpAddr: *httpAddr,
		}, stdin, stdout, stderr, logger)
	}

	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *devtools == "" {
		var h, ns *bool
		if set["headless"] {
			h = headless
		}
		if set["no-sandbox"] {
			ns = noSandbox
		}
		var note string
		var err error
		*headless, *noSandbox, note, err = BrowserMode(hasDisplay(), os.Geteuid() == 0, h, ns)
		if err != nil {
			return fail(2, "%v", err)
		}
		if note != "" {
			fmt.Fprintf(stderr, "pling-mcp: %s\n", note)
		}
	}

	var fac atomic.Pointer[Facade]
	startCtx, cancelStart := context.WithTimeout(ctx, time.Minute)
	page, err := OpenPage(startCtx, PageOptions{
		URL: *pageURL, DevTools: *devtools, ExecPath: *execPath, Headless: *headless, NoSandbox: *noSandbox,
		App:           *app,
		MaxReplyBytes: client.DefaultMaxReplyBytes,
		BrowserOutput: browserOut,
		OnNavigated: func() {
			if f := fac.Load(); f != nil {
				f.Navigated() // the new document may offer something else
			}
		},
		Logf: func(format string, a ...any) { logger.Debug(fmt.Sprintf(format, a...)) },
	})
	cancelStart()
	if err != nil {
		return fail(1, "%s", startHint(err, *pageURL, *devtools))
	}
	defer page.Close()

	pollEvery := *poll
	if pollEvery == 0 {
		pollEvery = -1 // Options: negative means no polling
	}
	enum := *enumLimit
	if enum == 0 {
		enum = -1
	}
	f := New(client.New(page, client.Options{App: *app, Timeout: *timeout}), Options{
		PollInterval:    pollEvery,
		RecordEnumLimit: enum,
		Logger:          logger,
		Check:           page.CheckOrigin,
	})
	fac.Store(f)
	if err := firstSync(ctx, f); err != nil {
		logger.Warn("serving before the page's capabilities could be read; tools appear when they can", "err", err)
	}

	// The server stops with ctx, and when the page's tab or browser goes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-page.Done():
			logger.Warn("the page's browser or tab is gone; stopping")
			cancel()
		case <-ctx.Done():
		}
	}()
	go f.Run(ctx)

	if *httpAddr != "" {
		err = serveHTTP(ctx, f, *httpAddr, stderr)
	} else {
		err = f.Server().Run(ctx, StdioTransport(stdin, stdout))
	}
	if err != nil && ctx.Err() == nil {
		return fail(1, "%v", err)
	}
	return 0
}

// checkURL accepts an absolute URL with one of schemes and a host.
func checkURL(raw string, schemes ...string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("it does not parse")
	case !slices.Contains(schemes, strings.ToLower(u.Scheme)):
		return fmt.Errorf("it needs one of %s://", strings.Join(schemes, "://, "))
	case u.Host == "":
		return errors.New("it names no host")
	}
	return nil
}

// hasDisplay reports whether a window can be shown: on Linux and the BSDs
// a display server must be named; elsewhere there always is one.
func hasDisplay() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
	}
	return true
}

// BrowserMode decides how to start the browser: headless and noSandbox are
// the flags when given (nil: not given). Without a display the browser
// starts headless, since a window cannot open; as root it starts without
// its sandbox, since Chromium refuses to run as root with it. note says
// such a choice in one line; err is a choice the flags forbid.
func BrowserMode(display, root bool, headless, noSandbox *bool) (h, ns bool, note string, err error) {
	var notes []string
	switch {
	case headless != nil:
		h = *headless
		if !h && !display {
			return false, false, "", errors.New("no display (DISPLAY and WAYLAND_DISPLAY are unset) for a visible browser: drop -headless=false, run where a display is, or attach to a running browser with -devtools")
		}
	case !display:
		h = true
		notes = append(notes, "no display, so the browser starts headless; a person cannot see the page to approve anything there (attach to a visible browser with -devtools for that)")
	}
	switch {
	case noSandbox != nil:
		ns = *noSandbox
		if !ns && root {
			return false, false, "", errors.New("running as root, where Chromium's sandbox cannot start: drop -no-sandbox=false, or run pling-mcp as another user")
		}
	case root:
		ns = true
		notes = append(notes, "running as root, so the browser starts without its sandbox (--no-sandbox): a compromised page could then reach this machine; run as another user to keep the sandbox")
	}
	return h, ns, strings.Join(notes, "; "), nil
}

// startHint turns a failure to reach the page into one line that says what
// to do. The cause is kept to its first line.
func startHint(err error, pageURL, devtools string) string {
	cause := err.Error()
	if i := strings.IndexAny(cause, "\r\n"); i >= 0 {
		cause = cause[:i]
	}
	var hint string
	switch {
	case errors.Is(err, errConnect):
		hint = "cannot reach the browser at " + devtools + ": start it with --remote-debugging-port (see mcpfacade/README.md), or drop -devtools to let pling-mcp start one"
	case errors.Is(err, errStart):
		hint = "cannot start the browser: install Chromium (Debian: apt-get install chromium), or name it with -chromium PATH"
	case errors.Is(err, errOpen):
		hint = "cannot open " + pageURL + ": check that the page is being served there"
	default:
		return cause
	}
	return hint + " (" + strings.TrimPrefix(cause, "mcpfacade: ") + ")"
}

// firstSync reads the capabilities before serving, trying again while the
// page cannot answer yet (it is still loading its surface, say). An answer,
// even a refusal, ends the wait.
func firstSync(ctx context.Context, f *Facade) error {
	ctx, cancel := context.WithTimeout(ctx, startupSync)
	defer cancel()
	for {
		err := f.Sync(ctx)
		var perr *client.ProtocolError
		var rerr *client.ReplyError
		if err == nil || errors.As(err, &perr) || errors.As(err, &rerr) || (errors.Is(err, client.ErrClosed) && !errors.Is(err, client.ErrNavigated)) {
			return err // an answer, even one refused, ends the wait
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func serveHTTP(ctx context.Context, f *Facade, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: f.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "pling-mcp: serving MCP on http://%s/\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
