package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
)

func TestRetryReusesID(t *testing.T) {
	note := map[string]any{"record": "SO-1001", "note": "call back"}
	tests := []struct {
		name        string
		replay      bool
		retries     int
		dropRequest []int
		dropReply   []int
		want        string // outcome
		wantAttempt int
		wantRuns    int // executor calls
	}{
		// The request never arrived: the retry is the first the page sees.
		{name: "lost request", replay: true, dropRequest: []int{1}, want: "success", wantAttempt: 2, wantRuns: 1},
		// The page ran it and the reply was lost: the retry carries the same
		// id, the replay guard refuses it, and the client must not claim
		// success: the first attempt's effect is unknown.
		{name: "lost reply with replay guard", replay: true, dropReply: []int{1}, want: "unknown:REPLAY_DETECTED", wantAttempt: 2, wantRuns: 1},
		// Without a guard the same id runs again: the documented hazard.
		{name: "lost reply without replay guard", dropReply: []int{1}, want: "success", wantAttempt: 2, wantRuns: 2},
		{name: "every attempt lost", replay: true, dropRequest: []int{1, 2, 3}, want: "unknown", wantAttempt: 3, wantRuns: 0},
		{name: "retries off", replay: true, retries: -1, dropRequest: []int{1}, want: "unknown", wantAttempt: 1, wantRuns: 0},
		{name: "one retry", replay: true, retries: 1, dropRequest: []int{1, 2}, want: "unknown", wantAttempt: 2, wantRuns: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel(t, kernelConfig{replay: tt.replay})
			w := &wire{next: client.KernelTransport(k.s), dropRequest: set(tt.dropRequest), dropReply: set(tt.dropReply)}
			c := client.New(w, fast(client.Options{Retries: tt.retries}))
			r, err := c.Invoke(context.Background(), "update_note@order", note, client.InvokeOptions{})
			if got := outcome(r, err); got != tt.want {
				t.Fatalf("outcome %s (%v), want %s", got, err, tt.want)
			}
			ids := w.ids()
			if len(ids) != tt.wantAttempt {
				t.Fatalf("transport saw %d attempts %v, want %d", len(ids), ids, tt.wantAttempt)
			}
			for _, id := range ids {
				if id != ids[0] {
					t.Fatalf("a retry changed the id: %v", ids)
				}
			}
			if n := len(k.calls()); n != tt.wantRuns {
				t.Fatalf("executor ran %d times, want %d", n, tt.wantRuns)
			}
			var u *client.OutcomeUnknownError
			if errors.As(err, &u) {
				if u.ID != ids[0] || u.Attempts != tt.wantAttempt || u.Capability != "update_note@order" {
					t.Fatalf("OutcomeUnknownError %+v, want id %s and %d attempts", u, ids[0], tt.wantAttempt)
				}
				if strings.HasSuffix(tt.want, "REPLAY_DETECTED") && !errors.Is(err, surface.CodeReplayDetected) {
					t.Fatalf("errors.Is(err, CodeReplayDetected) = false for %v", err)
				}
				if tt.want == "unknown" && !errors.Is(err, errLost) {
					t.Fatalf("the transport's error is not reachable through %v", err)
				}
			} else if r != nil && r.Attempts != tt.wantAttempt {
				t.Fatalf("Result.Attempts = %d, want %d", r.Attempts, tt.wantAttempt)
			}
		})
	}
}

func set(ns []int) map[int]bool {
	m := map[int]bool{}
	for _, n := range ns {
		m[n] = true
	}
	return m
}

func TestDescribeRetry(t *testing.T) {
	k := newKernel(t, kernelConfig{replay: true})
	w := &wire{next: client.KernelTransport(k.s), dropReply: set([]int{1})}
	c := client.New(w, fast(client.Options{}))
	d, err := c.Describe(context.Background(), client.DescribeInput{})
	if err != nil {
		t.Fatalf("a describe whose first reply was lost: %v", err)
	}
	ids := w.ids()
	if len(ids) != 2 || ids[0] != ids[1] || d.RequestID != ids[0] {
		t.Fatalf("describe ids %v, RequestID %s: want one id sent twice", ids, d.RequestID)
	}
}

func TestNewIntentNewID(t *testing.T) {
	t.Run("each call a new id", func(t *testing.T) {
		k := newKernel(t, kernelConfig{replay: true})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, client.Options{IDPrefix: "agent7"})
		ctx := context.Background()
		for range 3 {
			r, err := c.Invoke(ctx, "orders.search", map[string]any{"query": "x"}, client.InvokeOptions{})
			if err != nil || r.Kind != client.Success {
				t.Fatalf("invoke: %v %+v", err, r)
			}
		}
		if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
			t.Fatal(err)
		}
		ids := w.ids()
		if len(ids) != 4 || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 4 {
			t.Fatalf("ids %v: want 4 distinct", ids)
		}
		for _, id := range ids {
			if !strings.HasPrefix(id, "agent7-") {
				t.Fatalf("id %q lacks the prefix", id)
			}
		}
	})
	t.Run("default ids are unique under concurrency", func(t *testing.T) {
		k := newKernel(t, kernelConfig{replay: true})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, client.Options{})
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for range 64 {
			wg.Go(func() {
				r, err := c.Invoke(context.Background(), "orders.search", nil, client.InvokeOptions{})
				if err == nil && r.Kind != client.Success {
					err = errors.New(string(r.Kind))
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent invoke: %v", err) // a reused id would be REPLAY_DETECTED
		}
		ids := w.ids()
		if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 64 {
			t.Fatalf("%d requests but not 64 distinct ids", len(ids))
		}
	})
	t.Run("explicit id repeats an intent", func(t *testing.T) {
		k := newKernel(t, kernelConfig{replay: true})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, fast(client.Options{}))
		ctx := context.Background()
		in := map[string]any{"record": "SO-1002", "note": "n"}
		r, err := c.Invoke(ctx, "update_note@order", in, client.InvokeOptions{ID: "intent-42"})
		if err != nil || r.ID != "intent-42" {
			t.Fatalf("first: %v %+v", err, r)
		}
		// The caller repeats the same intent: the guard refuses it, and the
		// client reports that plainly (it made one attempt and got an answer).
		_, err = c.Invoke(ctx, "update_note@order", in, client.InvokeOptions{ID: "intent-42"})
		var perr *client.ProtocolError
		if !errors.As(err, &perr) || perr.Code != surface.CodeReplayDetected || errors.Is(err, client.ErrOutcomeUnknown) {
			t.Fatalf("repeated id: %v, want a plain REPLAY_DETECTED", err)
		}
		if ids := w.ids(); !slices.Equal(ids, []string{"intent-42", "intent-42"}) {
			t.Fatalf("ids %v", ids)
		}
		if n := len(k.calls()); n != 1 {
			t.Fatalf("executor ran %d times", n)
		}
	})
}

func TestClassificationKernel(t *testing.T) {
	tests := []struct {
		name       string
		capability string
		input      any
		setup      func(k *kernel)
		want       string
		check      func(t *testing.T, r *client.Result, err error)
	}{
		{name: "success with after state", capability: "orders.search", input: map[string]any{"query": "acme"}, want: "success",
			check: func(t *testing.T, r *client.Result, _ error) {
				if !r.Completed() || r.Approval != client.ApprovalNone || string(r.Value) != `{"title":"Search applied"}` {
					t.Fatalf("result %+v", r)
				}
				if r.After == nil || r.After.State["filter"] != "acme" {
					t.Fatalf("after %+v", r.After)
				}
			}},
		{name: "success on a record", capability: "update_note@order", input: json.RawMessage(`{"record":"SO-1002","note":"hi"}`), want: "success",
			check: func(t *testing.T, r *client.Result, _ error) {
				if r.After == nil || len(r.After.Records) != 1 || r.After.Records[0].ID != "SO-1002" || r.After.Records[0].Fields["note"] != "hi" {
					t.Fatalf("after %+v", r.After)
				}
			}},
		{name: "business failure", capability: "update_note@order", input: map[string]any{"record": "SO-1003", "note": "x"}, want: "business:ACTION_UNAVAILABLE",
			check: func(t *testing.T, r *client.Result, _ error) {
				if r.Message != "order is locked" || r.Completed() {
					t.Fatalf("result %+v", r)
				}
			}},
		{name: "approval pending", capability: "approve@order", input: map[string]any{"record": "SO-1001"}, want: "success",
			check: func(t *testing.T, r *client.Result, _ error) {
				if r.Approval != client.ApprovalPending || r.Completed() {
					t.Fatalf("result %+v", r)
				}
			}},
		{name: "approval status the page made up", capability: "odd.approval", want: "success",
			check: func(t *testing.T, r *client.Result, _ error) {
				if r.Approval != client.ApprovalUnknown || r.Completed() {
					t.Fatalf("result %+v: an unknown status must never read as done", r)
				}
			}},
		{name: "not exposed", capability: "orders.nope", want: "protocol:CAPABILITY_NOT_EXPOSED",
			check: func(t *testing.T, _ *client.Result, err error) {
				if !errors.Is(err, surface.CodeCapabilityNotExposed) {
					t.Fatalf("errors.Is against the surface sentinel failed: %v", err)
				}
			}},
		{name: "schema violation", capability: "update_note@order", input: map[string]any{"record": "SO-1001", "note": 5}, want: "protocol:INVALID_REQUEST",
			check: func(t *testing.T, _ *client.Result, err error) {
				var perr *client.ProtocolError
				errors.As(err, &perr)
				if len(perr.Violations) == 0 || perr.Violations[0].InstancePath != "/note" {
					t.Fatalf("violations %+v", perr.Violations)
				}
			}},
		{name: "unknown record", capability: "update_note@order", input: map[string]any{"record": "SO-9", "note": "x"}, want: "protocol:INVALID_REQUEST"},
		{name: "executor fails", capability: "orders.fail", want: "protocol:INTERNAL_ERROR"},
		{name: "revoked", capability: "orders.search", setup: func(k *kernel) { k.revoke() }, want: "protocol:SESSION_REVOKED",
			check: func(t *testing.T, _ *client.Result, err error) {
				if !errors.Is(err, surface.CodeSessionRevoked) || errors.Is(err, surface.CodeSessionExpired) {
					t.Fatalf("errors.Is mismatch for %v", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel(t, kernelConfig{replay: true})
			if tt.setup != nil {
				tt.setup(k)
			}
			c := client.New(client.KernelTransport(k.s), fast(client.Options{App: "orders"}))
			r, err := c.Invoke(context.Background(), tt.capability, tt.input, client.InvokeOptions{})
			if got := outcome(r, err); got != tt.want {
				t.Fatalf("outcome %s (%v), want %s", got, err, tt.want)
			}
			if tt.check != nil {
				tt.check(t, r, err)
			}
		})
	}
}

func TestRateLimited(t *testing.T) {
	k := newKernel(t, kernelConfig{rate: &surface.RateLimitOptions{MaxRequests: 1, Window: time.Minute}})
	c := client.New(client.KernelTransport(k.s), fast(client.Options{}))
	ctx := context.Background()
	if _, err := c.Invoke(ctx, "orders.search", nil, client.InvokeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Invoke(ctx, "orders.search", nil, client.InvokeOptions{})
	var perr *client.ProtocolError
	if !errors.As(err, &perr) || perr.Code != surface.CodeRateLimited || perr.RetryAfter != time.Minute {
		t.Fatalf("got %v (%+v), want RATE_LIMITED with RetryAfter 1m", err, perr)
	}
	if !errors.Is(err, surface.CodeRateLimited) || !strings.Contains(err.Error(), "retry after 1m0s") {
		t.Fatalf("error %q", err)
	}
}

func TestLocalInputErrors(t *testing.T) {
	k := newKernel(t, kernelConfig{})
	w := &wire{next: client.KernelTransport(k.s)}
	c := client.New(w, fast(client.Options{}))
	ctx := context.Background()
	for _, tt := range []struct {
		name       string
		capability string
		input      any
	}{
		{"empty capability", "", nil},
		{"array input", "orders.search", []any{1}},
		{"string input", "orders.search", json.RawMessage(`"x"`)},
		{"not JSON", "orders.search", []byte(`{"a":`)},
		{"duplicate key", "orders.search", json.RawMessage(`{"a":1,"a":2}`)},
		{"unencodable", "orders.search", map[string]any{"f": func() {}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.Invoke(ctx, tt.capability, tt.input, client.InvokeOptions{})
			if r != nil || !errors.Is(err, client.ErrInvalidInput) || errors.Is(err, client.ErrOutcomeUnknown) {
				t.Fatalf("got %+v, %v; want ErrInvalidInput", r, err)
			}
		})
	}
	if n := len(w.requests()); n != 0 {
		t.Fatalf("%d requests sent for local errors", n)
	}
	// No input, and a nil map, send no input member.
	var nilMap map[string]any
	for _, in := range []any{nil, nilMap, json.RawMessage(nil)} {
		if _, err := c.Invoke(ctx, "orders.search", in, client.InvokeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range w.requests() {
		if r.Input != nil {
			t.Fatalf("input %s sent for no input", r.Input)
		}
	}
}

func TestTimeouts(t *testing.T) {
	t.Run("attempts time out and are retried with the same id", func(t *testing.T) {
		var mu sync.Mutex
		var ids []string
		hang := client.TransportFunc(func(ctx context.Context, b []byte) ([]byte, error) {
			var r request
			_ = json.Unmarshal(b, &r)
			mu.Lock()
			ids = append(ids, r.ID)
			mu.Unlock()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		c := client.New(hang, fast(client.Options{Timeout: 20 * time.Millisecond, Retries: 1}))
		_, err := c.Invoke(context.Background(), "orders.search", nil, client.InvokeOptions{})
		var u *client.OutcomeUnknownError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &u) || u.Attempts != 2 {
			t.Fatalf("got %v, want an unknown outcome after 2 timed-out attempts", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(ids) != 2 || ids[0] != ids[1] {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("a transport that ignores its context", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		deaf := client.TransportFunc(func(context.Context, []byte) ([]byte, error) {
			<-release
			return nil, errors.New("too late")
		})
		c := client.New(deaf, fast(client.Options{Timeout: 20 * time.Millisecond, Retries: -1}))
		_, err := c.Describe(context.Background(), client.DescribeInput{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want DeadlineExceeded", err)
		}
	})
	t.Run("executor hangs, retry meets the replay guard", func(t *testing.T) {
		k := newKernel(t, kernelConfig{replay: true})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, fast(client.Options{Timeout: 50 * time.Millisecond, Retries: 1}))
		_, err := c.Invoke(context.Background(), "orders.hang", nil, client.InvokeOptions{})
		if got := outcome(nil, err); got != "unknown:REPLAY_DETECTED" {
			t.Fatalf("outcome %s (%v)", got, err)
		}
		if ids := w.ids(); len(ids) != 2 || ids[0] != ids[1] {
			t.Fatalf("ids %v", ids)
		}
	})
	t.Run("the caller's deadline ends the call without retries", func(t *testing.T) {
		attempts := 0
		var mu sync.Mutex
		hang := client.TransportFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
			mu.Lock()
			attempts++
			mu.Unlock()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		c := client.New(hang, fast(client.Options{Timeout: -1}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := c.Invoke(ctx, "orders.search", nil, client.InvokeOptions{})
		var u *client.OutcomeUnknownError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &u) || u.Attempts != 1 {
			t.Fatalf("got %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if attempts != 1 {
			t.Fatalf("%d attempts after the caller's deadline", attempts)
		}
	})
	t.Run("a context already done sends nothing", func(t *testing.T) {
		w := &wire{next: canned(`{}`)}
		c := client.New(w, fast(client.Options{}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Invoke(ctx, "orders.search", nil, client.InvokeOptions{})
		if !errors.Is(err, context.Canceled) || errors.Is(err, client.ErrOutcomeUnknown) || len(w.requests()) != 0 {
			t.Fatalf("got %v after %d requests", err, len(w.requests()))
		}
	})
}

func TestClosed(t *testing.T) {
	t.Run("navigation while pending", func(t *testing.T) {
		started := make(chan struct{})
		navigate := make(chan struct{})
		n := 0
		var mu sync.Mutex
		tr := client.TransportFunc(func(ctx context.Context, _ []byte) ([]byte, error) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				close(started)
			}
			<-navigate
			return nil, errors.Join(errors.New("tab 3"), client.ErrNavigated)
		})
		c := client.New(tr, fast(client.Options{}))
		done := make(chan error, 1)
		go func() {
			_, err := c.Invoke(context.Background(), "update_note@order", nil, client.InvokeOptions{})
			done <- err
		}()
		<-started
		close(navigate)
		err := <-done
		var u *client.OutcomeUnknownError
		if !errors.Is(err, client.ErrNavigated) || !errors.Is(err, client.ErrClosed) || !errors.As(err, &u) || u.Attempts != 1 {
			t.Fatalf("got %v: want a navigation error after one attempt, outcome unknown", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if n != 1 {
			t.Fatalf("a navigation was retried: %d attempts", n)
		}
	})
	t.Run("Close fails pending and later calls", func(t *testing.T) {
		started := make(chan struct{}, 1)
		release := make(chan struct{})
		defer close(release)
		w := &wire{next: client.TransportFunc(func(context.Context, []byte) ([]byte, error) {
			started <- struct{}{}
			<-release // ignores its context: Close must not wait for it
			return nil, errors.New("late")
		})}
		c := client.New(w, fast(client.Options{Timeout: -1}))
		done := make(chan error, 1)
		go func() {
			_, err := c.Describe(context.Background(), client.DescribeInput{})
			done <- err
		}()
		<-started
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, client.ErrClosed) {
			t.Fatalf("pending call: %v", err)
		}
		_, err := c.Invoke(context.Background(), "orders.search", nil, client.InvokeOptions{})
		if !errors.Is(err, client.ErrClosed) || errors.Is(err, client.ErrOutcomeUnknown) {
			t.Fatalf("call after Close: %v", err)
		}
		if n := len(w.requests()); n != 1 {
			t.Fatalf("%d requests, want only the one pending at Close", n)
		}
		_ = c.Close() // idempotent
	})
}

func TestAppMismatch(t *testing.T) {
	k := newKernel(t, kernelConfig{app: "orders"})
	for _, tt := range []struct {
		app  string
		want error
	}{{"orders", nil}, {"", nil}, {"billing", client.ErrAppMismatch}} {
		t.Run("app="+tt.app, func(t *testing.T) {
			c := client.New(client.KernelTransport(k.s), fast(client.Options{App: tt.app}))
			d, err := c.Describe(context.Background(), client.DescribeInput{})
			if !errors.Is(err, tt.want) || (tt.want == nil && d.App != "orders") {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var rerr *client.ReplyError
			if tt.want != nil && !errors.As(err, &rerr) {
				t.Fatalf("%v is not a *ReplyError", err)
			}
		})
	}
}
