package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/redisstate"
)

// The page's limits: the same as web/main.js's in-page default, now kept in
// Redis and shared by every tab and every demo server on that Redis.
const (
	demoMaxRequests = 30
	demoWindow      = time.Minute
	// statePath is where the page's httpAdapter posts; /config.json names it.
	statePath  = "/pling/state"
	cookieName = "pling_demo_session"
	// demoSession is the one user this demo server knows.
	demoSession = "demo-user"
)

// backend is the demo's stand-in for a real backend: it keeps the page's
// rate budget and replay claims in Redis (redisstate.Handler) for the demo
// user. Its "authentication" is a cookie it hands out itself to whoever
// loads /config.json from loopback; a real backend verifies its caller here
// (its login session or token) and names that session to the Handler.
type backend struct {
	client *redis.Client
	token  string // the demo user's cookie value, new per server start
	state  http.Handler
}

// auditPrefix starts each line of the state endpoint's audit log.
const auditPrefix = "state audit: "

// newBackend connects to Redis at addr and refuses to start unless it
// answers, so a typo is one line at start rather than every call refused.
// Every answer of the state endpoint is a line of audit, a HandlerEvent as
// JSON after auditPrefix: a backend's own audit log in a real deployment.
func newBackend(ctx context.Context, addr string, audit io.Writer) (*backend, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	ping, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Ping(ping).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("Redis at %s does not answer (%v): start redis-server there, or drop -redis to keep the limits in the page", addr, err)
	}
	opts := redisstate.Options{App: "orders-demo"}
	limiter, err := redisstate.NewLimiter(c, demoMaxRequests, demoWindow, opts)
	if err != nil {
		c.Close()
		return nil, err
	}
	guard, err := redisstate.NewGuard(c, opts)
	if err != nil {
		c.Close()
		return nil, err
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	b := &backend{client: c, token: hex.EncodeToString(raw[:])}
	var mu sync.Mutex
	b.state, err = redisstate.Handler(redisstate.HandlerOptions{Limiter: limiter, Guard: guard, Session: b.session,
		OnAudit: func(_ context.Context, ev redisstate.HandlerEvent) {
			line, err := json.Marshal(ev)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			_, _ = io.WriteString(audit, auditPrefix+string(line)+"\n")
		}})
	if err != nil {
		c.Close()
		return nil, err
	}
	return b, nil
}

// session is the demo's verification: the cookie this server set. A real
// backend looks its own login session up here.
func (b *backend) session(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(b.token)) != 1 {
		return "", false
	}
	return demoSession, true
}

// handler serves the site; with b, /config.json (the site's own says {})
// names the state endpoint, which it serves.
func handler(dir string, b *backend) http.Handler {
	// The page is served as js/README.md tells a page with a surface to
	// be: scripts from the site only, and no string run as one.
	site := devserver.NewHandler(dir, devserver.Options{ScriptPolicy: true})
	if b == nil {
		return site
	}
	mux := http.NewServeMux()
	mux.Handle("/", site)
	mux.HandleFunc("/config.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		if !devserver.HostAllowed(r) {
			http.Error(w, "421 misdirected request", http.StatusMisdirectedRequest)
			return
		}
		// The demo's "login": SameSite=Strict keeps other sites' requests
		// from carrying it, HttpOnly keeps it from the page's scripts.
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: b.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"sharedState":"` + statePath + `"}` + "\n"))
	})
	mux.Handle(statePath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !devserver.HostAllowed(r) {
			http.Error(w, "421 misdirected request", http.StatusMisdirectedRequest)
			return
		}
		b.state.ServeHTTP(w, r)
	}))
	return mux
}
