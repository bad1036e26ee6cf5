// Command demo serves the assembled demo site (make site) on loopback only:
// the demo page holds a surface in open mode, so it must not be reachable
// from another machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run serves until ctx is done and returns the exit code. Every failure is
// one line on stderr that says what to do.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:8080", "listen address: a loopback address and port")
	dir := fl.String("dir", "build/site", "directory to serve")
	redisAddr := fl.String("redis", "", "loopback host:port of a Redis: keep the page's rate budget and replay claims there, shared by every tab and demo server on it")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected argument %q (flags are -addr, -dir and -redis)\n", fl.Arg(0))
		return 2
	}
	if err := checkLoopback("-addr", *addr); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}
	if *redisAddr != "" {
		if err := checkLoopback("-redis", *redisAddr); err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return 2
		}
	}
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "demo: no site in %s: run make site first (make demo does)\n", *dir)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %s\n", listenError(*addr, err))
		return 1
	}
	defer ln.Close()
	var b *backend
	if *redisAddr != "" {
		if b, err = newBackend(ctx, *redisAddr, stderr); err != nil {
			fmt.Fprintf(stderr, "demo: %v\n", err)
			return 1
		}
		defer b.client.Close()
	}
	srv := &http.Server{Handler: handler(*dir, b), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "Pling agent surface demo: http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	if b != nil {
		fmt.Fprintf(stdout, "Rate budget and replay claims: Redis at %s, shared by every tab of the demo user\n", *redisAddr)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 1
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		return 0
	}
}

// checkLoopback accepts host:port where host is a loopback IP or localhost.
// An empty host would listen on every interface.
func checkLoopback(flagName, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q is not host:port (for example 127.0.0.1:8080)", flagName, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s %q has no valid port (for example 127.0.0.1:8080)", flagName, addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if flagName == "-redis" {
		// The demo's made-up login must not spend budgets in a Redis that
		// other machines' backends share.
		return fmt.Errorf("-redis %q is not a loopback address: the demo keeps its demo user's limits in a Redis on this machine only (127.0.0.1, ::1 or localhost)", addr)
	}
	return fmt.Errorf("-addr %q is not a loopback address: the demo serves a surface in open mode and listens on 127.0.0.1, ::1 or localhost only", addr)
}

// listenError says what to do about a failed listen: a busy port names the
// PORT variable of make demo.
func listenError(addr string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		_, port, _ := net.SplitHostPort(addr)
		next := 8081
		if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65535 {
			next = n + 1
		}
		return fmt.Sprintf("port %s is in use (another demo?): stop it, or pick another port with make demo PORT=%d (or -addr 127.0.0.1:%d)", port, next, next)
	}
	return fmt.Sprintf("cannot listen on %s: %v", addr, err)
}
