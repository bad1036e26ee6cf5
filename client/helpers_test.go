package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// kernel is an in-process surface over the orders page, with a session
// whose scope a test can change.
type kernel struct {
	page  *surfacetest.Page
	clock *surfacetest.Clock
	s     *surface.Surface

	mu      sync.Mutex
	scope   []string
	revoked bool
}

// registry is the type of surface.Options.Registry.
type registry = func(ctx context.Context, q surface.ViewQuery) (*surface.View, error)

type kernelConfig struct {
	records int
	app     string
	replay  bool
	rate    *surface.RateLimitOptions
	page    func(p *surfacetest.Page)
	wrap    func(r registry) registry
}

var allScope = []string{"orders.search", "update_note@order", "approve@order", "orders.fail", "orders.hang", "odd.approval", "tag@order"}

func newKernel(t testing.TB, cfg kernelConfig) *kernel {
	t.Helper()
	if cfg.records == 0 {
		cfg.records = 5
	}
	if cfg.app == "" {
		cfg.app = "orders"
	}
	k := &kernel{page: surfacetest.Orders(cfg.records), clock: surfacetest.NewClock(), scope: allScope}
	// Two extra actions: one whose executor reports a status no one knows,
	// and a template whose record parameter is not "record".
	k.page.Actions = append(k.page.Actions,
		surface.Action{ID: "odd.approval", Effect: "write", Approval: "always"},
		surface.Action{ID: "tag@order", Effect: "write", Record: &surface.RecordTemplate{Kind: "order", Param: "order"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}},"additionalProperties":false}`)},
	)
	k.page.Handlers["odd.approval"] = func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"approval":{"status":"approved-ish","by":"boss"}}`), nil
	}
	k.page.Handlers["tag@order"] = func(p *surfacetest.Page, call surface.Call) (json.RawMessage, error) {
		var in struct{ Tag string }
		_ = json.Unmarshal(call.Input, &in)
		return json.RawMessage(fmt.Sprintf(`{"tagged":%q,"tag":%q}`, surfacetest.RecordID(call.Action), in.Tag)), nil
	}
	if cfg.page != nil {
		cfg.page(k.page)
	}
	var reg registry = k.page.View
	if cfg.wrap != nil {
		reg = cfg.wrap(reg)
	}
	opts := surface.Options{
		Registry: reg, Execute: k.page.Execute, Now: k.clock.Now, App: cfg.app,
		Session:        k.session,
		RateLimit:      cfg.rate,
		ExecuteTimeout: time.Minute, // the client's timeouts are under test, not the kernel's
	}
	if cfg.replay {
		opts.Replay = &surface.ReplayOptions{}
	}
	s, err := surface.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	k.s = s
	return k
}

func (k *kernel) session(context.Context) (*surface.Session, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := &surface.Session{AgentID: "agent-1", SessionID: "sess-1", UserID: "user-1",
		ExpiresAt: surfacetest.Epoch.Add(time.Hour), Scope: append([]string{}, k.scope...)}
	if k.revoked {
		s.RevokedAt = surfacetest.Epoch
	}
	return s, nil
}

func (k *kernel) setScope(ids ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.scope = ids
}

func (k *kernel) revoke() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.revoked = true
}

// calls returns the concrete actions the executor ran.
func (k *kernel) calls() []string {
	var out []string
	for _, c := range k.page.Calls() {
		out = append(out, c.Action)
	}
	return out
}

// wire records every request a transport was handed, and can drop
// requests or replies on chosen attempts.
type wire struct {
	next client.Transport

	mu   sync.Mutex
	reqs []request
	// dropRequest and dropReply fail attempt n (1-based) before or after
	// the request reached next.
	dropRequest, dropReply map[int]bool
}

type request struct {
	ID         string          `json:"id"`
	Method     string          `json:"method"`
	Capability string          `json:"capability"`
	Input      json.RawMessage `json:"input"`
}

var errLost = errors.New("test transport: message lost")

func (w *wire) RoundTrip(ctx context.Context, b []byte) ([]byte, error) {
	var r request
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.reqs = append(w.reqs, r)
	n := len(w.reqs)
	dropReq, dropRep := w.dropRequest[n], w.dropReply[n]
	w.mu.Unlock()
	if dropReq {
		return nil, errLost
	}
	reply, err := w.next.RoundTrip(ctx, b)
	if dropRep {
		return nil, errLost
	}
	return reply, err
}

func (w *wire) requests() []request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]request(nil), w.reqs...)
}

func (w *wire) ids() []string {
	var ids []string
	for _, r := range w.requests() {
		ids = append(ids, r.ID)
	}
	return ids
}

// canned answers every request with reply, "$ID" replaced by the request's id.
func canned(reply string) client.Transport {
	return client.TransportFunc(func(_ context.Context, b []byte) ([]byte, error) {
		var r request
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		return []byte(strings.ReplaceAll(reply, "$ID", r.ID)), nil
	})
}

// seqIDs returns an id source "id-1", "id-2", ...
func seqIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id-%d", n)
	}
}

// fast are options that never wait between retries.
func fast(o client.Options) client.Options {
	o.Backoff = func(int) time.Duration { return 0 }
	if o.NewID == nil {
		o.NewID = seqIDs()
	}
	return o
}

// outcome names which of the classes a call ended in, for table tests.
func outcome(r *client.Result, err error) string {
	var perr *client.ProtocolError
	var rerr *client.ReplyError
	switch {
	case err == nil && r == nil:
		return "nil result without error"
	case err != nil && r != nil:
		return "result and error"
	case errors.Is(err, client.ErrOutcomeUnknown) && errors.As(err, &perr):
		return "unknown:" + string(perr.Code)
	case errors.Is(err, client.ErrOutcomeUnknown) && errors.As(err, &rerr):
		return "unknown:reply"
	case errors.Is(err, client.ErrOutcomeUnknown):
		return "unknown"
	case errors.As(err, &perr):
		return "protocol:" + string(perr.Code)
	case err != nil:
		return "error"
	case r.Kind == client.BusinessFailure:
		return "business:" + r.Code
	case r.Kind == client.Success:
		return "success"
	}
	return "kind " + string(r.Kind)
}
