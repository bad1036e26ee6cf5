package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// cAddAction adds an action and its handler to page.
func cAddAction(page *surfacetest.Page, a surface.Action, h surfacetest.Handler) {
	page.Lock(func(p *surfacetest.Page) {
		p.Actions = append(p.Actions, a)
		if h != nil {
			p.Handlers[a.ID] = h
		}
	})
}

// cAnswer is a handler that answers raw.
func cAnswer(raw string) surfacetest.Handler {
	return func(*surfacetest.Page, surface.Call) (json.RawMessage, error) { return json.RawMessage(raw), nil }
}

// TestInvokeCall checks the one Call the executor receives for each kind of
// accepted invoke.
func TestInvokeCall(t *testing.T) {
	sess := cSession("s-1")
	sess.Scope = append(sess.Scope, "orders.tag", "archive@order")
	tests := []struct {
		name       string
		setup      func(p *surfacetest.Page)
		capability string
		input      any
		wantAction string
		wantInput  string
		wantRecord string
	}{
		{
			name:       "folded template without Record.Actions",
			capability: "update_note@order", input: map[string]any{"record": "SO-1002", "note": "call back"},
			wantAction: "update_note@order:SO-1002", wantInput: `{"note":"call back"}`, wantRecord: "SO-1002",
		},
		{
			name: "folded template through Record.Actions",
			setup: func(p *surfacetest.Page) {
				p.Records[1].Actions = map[string]string{"update_note@order": "notes.edit/SO-1002"}
				p.Handlers["notes.edit/SO-1002"] = cAnswer(`{"title":"ok"}`)
			},
			capability: "update_note@order", input: map[string]any{"record": "SO-1002", "note": "x"},
			wantAction: "notes.edit/SO-1002", wantInput: `{"note":"x"}`, wantRecord: "SO-1002",
		},
		{
			name: "custom record parameter",
			setup: func(p *surfacetest.Page) {
				for i := range p.Actions {
					if p.Actions[i].ID == "update_note@order" {
						p.Actions[i].Record = &surface.RecordTemplate{Kind: "order", Param: "order"}
					}
				}
			},
			capability: "update_note@order", input: map[string]any{"order": "SO-1003", "note": "x"},
			wantAction: "update_note@order:SO-1003", wantInput: `{"note":"x"}`, wantRecord: "SO-1003",
		},
		{
			name: "template without input schema",
			setup: func(p *surfacetest.Page) {
				p.Actions = append(p.Actions, surface.Action{ID: "archive@order", Record: &surface.RecordTemplate{Kind: "order"}})
				p.Handlers["archive@order"] = cAnswer(`{}`)
			},
			capability: "archive@order", input: map[string]any{"record": "SO-1001", "reason": "dup"},
			wantAction: "archive@order:SO-1001", wantInput: `{"reason":"dup"}`, wantRecord: "SO-1001",
		},
		{
			name: "non-folded capability keeps a business record field",
			setup: func(p *surfacetest.Page) {
				p.Actions = append(p.Actions, surface.Action{ID: "orders.tag",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"record":{"type":"string"}},"required":["record"]}`)})
				p.Handlers["orders.tag"] = cAnswer(`{}`)
			},
			capability: "orders.tag", input: map[string]any{"record": "SO-1001"},
			wantAction: "orders.tag", wantInput: `{"record":"SO-1001"}`,
		},
		{
			name:       "input absent",
			capability: "orders.search",
			wantAction: "orders.search", wantInput: `{}`,
		},
		{
			name:       "input empty",
			capability: "orders.search", input: map[string]any{},
			wantAction: "orders.search", wantInput: `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			if tt.setup != nil {
				page.Lock(tt.setup)
			}
			f := cNewFix(t, page, surface.Options{Session: surface.StaticSession(sess)})
			cCheck(t, f.handle(cInvoke("req-1", tt.capability, tt.input)), "")
			calls := page.Calls()
			if len(calls) != 1 {
				t.Fatalf("executor ran %d times, want 1", len(calls))
			}
			c := calls[0]
			if c.Action != tt.wantAction {
				t.Errorf("Action = %q, want %q", c.Action, tt.wantAction)
			}
			if !cJSONEqual(c.Input, []byte(tt.wantInput)) {
				t.Errorf("Input = %s, want %s", c.Input, tt.wantInput)
			}
			want := surface.CallContext{
				RequestID: "req-1", Capability: tt.capability, Record: tt.wantRecord,
				SessionID: "s-1", AgentID: "agent-s-1", UserID: "user-s-1", DelegationID: "delegation-s-1",
			}
			if c.Context != want {
				t.Errorf("Context = %+v, want %+v", c.Context, want)
			}
		})
	}
}

func cJSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cMustJSON(x) == cMustJSON(y) // maps marshal with sorted keys
}

func cMustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestInvokeRecordOutsideWindow: a record is referenceable whether or not
// the last description's window showed it.
func TestInvokeRecordOutsideWindow(t *testing.T) {
	f := cNewFix(t, surfacetest.Orders(48), surface.Options{Session: surface.StaticSession(cSession("s-1"))})
	d := f.handle(cDescribe("d"))
	cCheck(t, d, "")
	for _, r := range d.Result.(*surface.Description).Context.Records {
		if r.ID == "SO-1040" {
			t.Fatal("SO-1040 is inside the default window; the test needs it outside")
		}
	}
	cCheck(t, f.handle(cInvoke("i", "update_note@order", map[string]any{"record": "SO-1040", "note": "far"})), "")
	if calls := f.page.Calls(); len(calls) != 1 || calls[0].Action != "update_note@order:SO-1040" {
		t.Fatalf("calls = %+v", calls)
	}
	if got := f.page.Record("SO-1040").Fields["note"]; got != "far" {
		t.Fatalf("note = %v", got)
	}
}

// TestInvokeRefused lists invokes refused at the protocol boundary; none of
// them reaches the executor.
func TestInvokeRefused(t *testing.T) {
	raw := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name  string
		setup func(p *surfacetest.Page)
		req   []byte
		want  surface.Code
	}{
		{name: "unknown record", req: cInvoke("i", "update_note@order", map[string]any{"record": "SO-9999", "note": "x"}), want: surface.CodeInvalidRequest},
		{name: "missing record", req: cInvoke("i", "update_note@order", map[string]any{"note": "x"}), want: surface.CodeInvalidRequest},
		{name: "empty record", req: cInvoke("i", "update_note@order", map[string]any{"record": "", "note": "x"}), want: surface.CodeInvalidRequest},
		{name: "record not a string", req: cInvoke("i", "update_note@order", map[string]any{"record": 1002, "note": "x"}), want: surface.CodeInvalidRequest},
		{name: "record list", req: cInvoke("i", "update_note@order", map[string]any{"record": []string{"SO-1001"}, "note": "x"}), want: surface.CodeInvalidRequest},
		{
			name: "record under the default name when the parameter is custom",
			setup: func(p *surfacetest.Page) {
				p.Actions[1].Record = &surface.RecordTemplate{Kind: "order", Param: "order"}
			},
			req: cInvoke("i", "update_note@order", map[string]any{"record": "SO-1001", "note": "x"}), want: surface.CodeInvalidRequest,
		},
		{
			name: "record whose Actions lack the template",
			setup: func(p *surfacetest.Page) {
				p.Records[0].Actions = map[string]string{"approve@order": "approve:SO-1001"}
			},
			req: cInvoke("i", "update_note@order", map[string]any{"record": "SO-1001", "note": "x"}), want: surface.CodeInvalidRequest,
		},
		{
			name:  "record whose Actions map the template to an empty id",
			setup: func(p *surfacetest.Page) { p.Records[0].Actions = map[string]string{"update_note@order": ""} },
			req:   cInvoke("i", "update_note@order", map[string]any{"record": "SO-1001", "note": "x"}), want: surface.CodeInvalidRequest,
		},
		{
			name:  "record of another kind",
			setup: func(p *surfacetest.Page) { p.Records[0].Kind = "invoice" },
			req:   cInvoke("i", "update_note@order", map[string]any{"record": "SO-1001", "note": "x"}), want: surface.CodeInvalidRequest,
		},
		{name: "input array", req: cInvoke("i", "orders.search", []any{}), want: surface.CodeInvalidRequest},
		{name: "input string", req: cInvoke("i", "orders.search", "q"), want: surface.CodeInvalidRequest},
		{name: "input number", req: cInvoke("i", "orders.search", 1), want: surface.CodeInvalidRequest},
		{name: "input null", req: raw(`{"protocol":"pling.surface/0.1","id":"i","method":"invoke","capability":"orders.search","input":null}`), want: surface.CodeInvalidRequest},
		{name: "capability missing", req: raw(`{"protocol":"pling.surface/0.1","id":"i","method":"invoke"}`), want: surface.CodeInvalidRequest},
		{name: "capability empty", req: cInvoke("i", "", nil), want: surface.CodeInvalidRequest},
		{name: "capability not a string", req: raw(`{"protocol":"pling.surface/0.1","id":"i","method":"invoke","capability":5}`), want: surface.CodeInvalidRequest},
		{name: "capability unknown", req: cInvoke("i", "orders.delete", nil), want: surface.CodeCapabilityNotExposed},
		{name: "concrete action id instead of the template", req: cInvoke("i", "update_note@order:SO-1001", map[string]any{"note": "x"}), want: surface.CodeCapabilityNotExposed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			if tt.setup != nil {
				page.Lock(tt.setup)
			}
			f := cNewFix(t, page, surface.Options{Session: surface.StaticSession(cSession("s-1"))})
			r := f.handle(tt.req)
			cCheck(t, r, tt.want)
			if r.ID != "i" {
				t.Fatalf("response id = %q", r.ID)
			}
			if n := cCalls(f); n != 0 {
				t.Fatalf("executor ran %d times", n)
			}
		})
	}
}

// TestInvokeSchemaViolations: input that fails the capability's schema is
// refused with violations naming the place and the keyword.
func TestInvokeSchemaViolations(t *testing.T) {
	type v struct{ path, keyword string }
	tests := []struct {
		name  string
		cap   string
		input map[string]any
		want  []v
	}{
		{"wrong type", "update_note@order", map[string]any{"record": "SO-1001", "note": 5}, []v{{"/note", "type"}}},
		{"too long", "update_note@order", map[string]any{"record": "SO-1001", "note": strings.Repeat("x", 501)}, []v{{"/note", "maxLength"}}},
		{"missing required", "update_note@order", map[string]any{"record": "SO-1001"}, []v{{"", "required"}}},
		{"extra property", "update_note@order", map[string]any{"record": "SO-1001", "note": "x", "priority": 1}, []v{{"", "additionalProperties"}}},
		{"extra on a plain capability", "orders.search", map[string]any{"query": "x", "limit": 3}, []v{{"", "additionalProperties"}}},
		{"two problems", "update_note@order", map[string]any{"record": "SO-1001", "note": false, "x": 1}, []v{{"", "additionalProperties"}, {"/note", "type"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cNewFix(t, nil, surface.Options{})
			r := f.handle(cInvoke("i", tt.cap, tt.input))
			cCheck(t, r, surface.CodeInvalidRequest)
			var got []v
			for _, x := range r.Error.Violations {
				got = append(got, v{x.InstancePath, x.Keyword})
				if x.Message == "" {
					t.Errorf("violation %+v has no message", x)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("violations = %v, want %v", got, tt.want)
			}
			if n := cCalls(f); n != 0 {
				t.Fatalf("executor ran %d times", n)
			}
		})
	}
}

// TestInvokeBusinessFailure: a business failure is a completed exchange
// (ok: true) whose result.error keeps only code and message.
func TestInvokeBusinessFailure(t *testing.T) {
	tests := []struct {
		name   string
		result string
		want   map[string]any
	}{
		{"locked order (fixture)", "", map[string]any{"code": "ACTION_UNAVAILABLE", "message": "order is locked"}},
		{"extra members dropped",
			`{"title":"failed","error":{"code":"BACKEND","message":"try later","stack":"at db.go:12 secret=hunter2","request":{"cookie":"sid=1"}}}`,
			map[string]any{"code": "BACKEND", "message": "try later"}},
		{"string error", `{"error":"quota exceeded"}`, map[string]any{"code": "ACTION_FAILED", "message": "quota exceeded"}},
		{"no code", `{"error":{"message":"nope","detail":"x"}}`, map[string]any{"code": "ACTION_FAILED", "message": "nope"}},
		{"non-string members", `{"error":{"code":7,"message":{"text":"hidden"}}}`, map[string]any{"code": "ACTION_FAILED", "message": ""}},
		{"error is a number", `{"error":42}`, map[string]any{"code": "ACTION_FAILED", "message": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			var input any = map[string]any{"record": "SO-1003", "note": "x"}
			capID := "update_note@order"
			if tt.result != "" {
				cAddAction(page, surface.Action{ID: "orders.custom"}, cAnswer(tt.result))
				capID, input = "orders.custom", nil
			}
			f := cNewFix(t, page, surface.Options{})
			out := f.s.HandleJSON(context.Background(), cInvoke("i", capID, input))
			if bytes.Contains(out, []byte("hunter2")) || bytes.Contains(out, []byte("cookie")) || bytes.Contains(out, []byte("hidden")) {
				t.Fatalf("response leaks detail: %s", out)
			}
			var resp struct {
				OK     bool
				Result map[string]any
				Error  any
			}
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if !resp.OK || resp.Error != nil {
				t.Fatalf("business failure became a protocol failure: %s", out)
			}
			if got := cMustJSON(resp.Result["error"]); got != cMustJSON(tt.want) {
				t.Fatalf("result.error = %s, want %s", got, cMustJSON(tt.want))
			}
			if n := cCalls(f); n != 1 {
				t.Fatalf("executor ran %d times", n)
			}
		})
	}
}

// TestInvokeExecutorBreaks: a Go error, a panic or a result that is not JSON
// becomes INTERNAL_ERROR that says nothing of the executor's own text.
func TestInvokeExecutorBreaks(t *testing.T) {
	tests := []struct {
		name string
		cap  string
		h    surfacetest.Handler
	}{
		{"go error", "orders.fail", nil},
		{"panic", "orders.panic", nil},
		{"panic with error value", "orders.custom", func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
			panic(errors.New("secret=hunter2"))
		}},
		{"not JSON", "orders.custom", cAnswer(`secret=hunter2`)},
		{"truncated object", "orders.custom", cAnswer(`{"token":"secret=hunter2"`)},
		{"two values", "orders.custom", cAnswer(`{"a":"secret=hunter2"} {"b":1}`)},
		{"truncated array", "orders.custom", cAnswer(`["secret=hunter2"`)},
		{"result and error", "orders.custom", func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"title":"secret=hunter2"}`), errors.New("secret=hunter2")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(2)
			if tt.h != nil {
				cAddAction(page, surface.Action{ID: "orders.custom"}, tt.h)
			}
			f := cNewFix(t, page, surface.Options{Replay: &surface.ReplayOptions{}})
			out := f.s.HandleJSON(context.Background(), cInvoke("i", tt.cap, nil))
			var resp surface.Response
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.OK || resp.Error == nil || resp.Error.Code != surface.CodeInternalError || resp.ID != "i" {
				t.Fatalf("response = %s, want INTERNAL_ERROR", out)
			}
			for _, leak := range []string{"hunter2", "secret", "exploded", "panic"} {
				if bytes.Contains(bytes.ToLower(out), []byte(leak)) {
					t.Fatalf("response leaks %q: %s", leak, out)
				}
			}
			if n := cCalls(f); n != 1 {
				t.Fatalf("executor ran %d times, want 1", n)
			}
			// The effect is unknown: the id stays claimed.
			cCheck(t, f.handle(cInvoke("i", tt.cap, nil)), surface.CodeReplayDetected)
			if n := cCalls(f); n != 1 {
				t.Fatalf("a retry ran the executor again (%d calls)", n)
			}
		})
	}
}

// TestInvokeTimeout: an executor that does not answer within
// ExecuteTimeout is abandoned with INTERNAL_ERROR, its context is
// cancelled, and a retry of the id is refused as a replay.
func TestInvokeTimeout(t *testing.T) {
	page := surfacetest.Orders(2)
	ended := make(chan error, 1)
	hang := page.Blocking["orders.hang"]
	page.Blocking["orders.hang"] = func(ctx context.Context, c surface.Call) (json.RawMessage, error) {
		out, err := hang(ctx, c)
		ended <- ctx.Err()
		return out, err
	}
	f := cNewFix(t, page, surface.Options{
		Session:        surface.StaticSession(cSession("s-1")),
		ExecuteTimeout: 20 * time.Millisecond,
		Replay:         &surface.ReplayOptions{},
	})
	done := make(chan *surface.Response, 1)
	go func() { done <- f.handle(cInvoke("slow", "orders.hang", nil)) }()
	select {
	case r := <-done:
		cCheck(t, r, surface.CodeInternalError)
	case <-time.After(30 * time.Second): // generous: only a hang fails this
		t.Fatal("invoke did not return after its executor timed out")
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("executor context ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the abandoned executor's context was never cancelled")
	}
	cCheck(t, f.handle(cInvoke("slow", "orders.hang", nil)), surface.CodeReplayDetected)
	if n := cCalls(f); n != 1 {
		t.Fatalf("executor ran %d times, want 1", n)
	}
	// The Surface still serves other requests.
	cCheck(t, f.handle(cInvoke("next", "orders.search", nil)), "")
}

// TestInvokeTimeoutByWhenTheExecutorReturned: what decides a timeout is
// when the executor returned. One that answers because its context ended
// answered after the deadline: always a timeout, with its message, never
// its own error or result, however the goroutines are scheduled. One that
// answered before the deadline is never a timeout.
func TestInvokeTimeoutByWhenTheExecutorReturned(t *testing.T) {
	for _, late := range []func(context.Context, surface.Call) (json.RawMessage, error){
		func(ctx context.Context, _ surface.Call) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		func(ctx context.Context, _ surface.Call) (json.RawMessage, error) {
			<-ctx.Done()
			return json.RawMessage(`{"late":true}`), nil
		},
	} {
		s := pNewSurface(t, surfacetest.Orders(2), func(o *surface.Options) {
			o.Execute, o.ExecuteTimeout = late, time.Millisecond
		})
		for i := range 200 {
			m := pDo(t, s, fmt.Sprintf(`{"protocol":"pling.surface/0.1","id":"t-%d","method":"invoke","capability":"orders.search","input":{}}`, i))
			if pCode(m) != "INTERNAL_ERROR" || m["error"].(map[string]any)["message"] != "executor did not answer in time" {
				t.Fatalf("invoke %d: %v, want INTERNAL_ERROR: executor did not answer in time", i, m)
			}
		}
	}
	s := pNewSurface(t, surfacetest.Orders(2), func(o *surface.Options) {
		o.Execute = func(context.Context, surface.Call) (json.RawMessage, error) { return json.RawMessage(`{"ok":1}`), nil }
		o.ExecuteTimeout = time.Second
	})
	for i := range 50 {
		if m := pDo(t, s, fmt.Sprintf(`{"protocol":"pling.surface/0.1","id":"a-%d","method":"invoke","capability":"orders.search","input":{}}`, i)); m["ok"] != true {
			t.Fatalf("invoke %d: %v", i, m)
		}
	}
}

// TestInvokeTimeoutUncooperative: an executor that ignores its context is
// abandoned all the same; the invoke does not wait for it.
func TestInvokeTimeoutUncooperative(t *testing.T) {
	page := surfacetest.Orders(2)
	release := make(chan struct{})
	defer close(release)
	page.Blocking["orders.stuck"] = func(context.Context, surface.Call) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"title":"too late"}`), nil
	}
	cAddAction(page, surface.Action{ID: "orders.stuck"}, nil)
	f := cNewFix(t, page, surface.Options{ExecuteTimeout: 20 * time.Millisecond})
	done := make(chan *surface.Response, 1)
	go func() { done <- f.handle(cInvoke("stuck", "orders.stuck", nil)) }()
	select {
	case r := <-done:
		cCheck(t, r, surface.CodeInternalError)
	case <-time.After(30 * time.Second): // generous: only a hang fails this
		t.Fatal("invoke waited for an executor that ignores its deadline")
	}
}

// TestInvokeCallerContextCancelled: the executor sees the caller's context.
func TestInvokeCallerContextCancelled(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := f.handleCtx(ctx, cInvoke("i", "orders.hang", nil))
	cCheck(t, r, surface.CodeInternalError)
}

// TestInvokeResultPassThrough: results that are valid JSON but not objects
// are kept; an empty result is null.
func TestInvokeResultPassThrough(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"array", `[1,2,3]`, `[1,2,3]`},
		{"string", `"done"`, `"done"`},
		{"number", `1.50`, `1.50`},
		{"null", `null`, `null`},
		{"empty", ``, `null`},
		{"spaces", "  {\"a\":1}\n", `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(1)
			cAddAction(page, surface.Action{ID: "orders.custom"}, cAnswer(tt.raw))
			f := cNewFix(t, page, surface.Options{})
			r := f.handle(cInvoke("i", "orders.custom", nil))
			if !r.OK {
				t.Fatalf("response: %s", cMarshal(t, r))
			}
			if got := string(r.Result.(json.RawMessage)); got != tt.want {
				t.Fatalf("result = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestInvokeResponseTooLarge: HandleJSON replaces a response over
// MaxResponseBytes with INTERNAL_ERROR; the executor still ran once.
func TestInvokeResponseTooLarge(t *testing.T) {
	const limit = surface.MinResponseBytes
	tests := []struct {
		name string
		size int
		want surface.Code
	}{
		{"small", 10, ""},
		{"just over", limit, surface.CodeInternalError},
		{"far over", 100 * limit, surface.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(1)
			cAddAction(page, surface.Action{ID: "orders.big"}, cAnswer(`{"blob":"`+strings.Repeat("x", tt.size)+`"}`))
			f := cNewFix(t, page, surface.Options{Limits: surface.Limits{MaxResponseBytes: limit}})
			out := f.s.HandleJSON(context.Background(), cInvoke("big-1", "orders.big", nil))
			if len(out) > limit {
				t.Fatalf("encoded response is %d bytes, limit %d", len(out), limit)
			}
			var resp surface.Response
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if got := cCode(&resp); got != tt.want || resp.ID != "big-1" || resp.OK != (tt.want == "") {
				t.Fatalf("response = %s, want code %q", out, tt.want)
			}
			if n := cCalls(f); n != 1 {
				t.Fatalf("executor ran %d times, want 1", n)
			}
		})
	}
}

// TestInvokeExactlyOnce: each accepted invoke runs the executor once, and
// only accepted invokes run it.
func TestInvokeExactlyOnce(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{Session: surface.StaticSession(cSession("s-1"))})
	reqs := []struct {
		req    []byte
		accept bool
	}{
		{cInvoke("1", "orders.search", map[string]any{"query": "a"}), true},
		{cInvoke("2", "update_note@order", map[string]any{"record": "SO-1001", "note": "a"}), true},
		{cInvoke("3", "update_note@order", map[string]any{"record": "SO-1001"}), false},
		{cInvoke("4", "approve@order", map[string]any{"record": "SO-1002"}), true},
		{cDescribe("5"), false},
		{cInvoke("6", "update_note@order", map[string]any{"record": "SO-1003", "note": "a"}), true}, // business failure still ran
	}
	want := 0
	for i, r := range reqs {
		f.handle(r.req)
		if r.accept {
			want++
		}
		if n := cCalls(f); n != want {
			t.Fatalf("after request %d the executor ran %d times, want %d", i, n, want)
		}
	}
}

// TestInvokeAsksForNoRecordIDs: an invoke reads the page for its target
// record and state only, so it asks for no record ids, which a page may
// take time to list; a describe on the same surface still asks for them.
func TestInvokeAsksForNoRecordIDs(t *testing.T) {
	page := surfacetest.Orders(30)
	var mu sync.Mutex
	var asked []int
	reg := func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
		mu.Lock()
		asked = append(asked, q.MaxRecordIDs)
		mu.Unlock()
		return page.View(ctx, q)
	}
	f := cNewFix(t, page, surface.Options{Registry: reg})
	cCheck(t, f.handle(cInvoke("i-1", "update_note@order", map[string]any{"record": "SO-1002", "note": "x"})), "")
	mu.Lock()
	invokeAsked := slices.Clone(asked)
	asked = nil
	mu.Unlock()
	if len(invokeAsked) != 2 || invokeAsked[0] != 0 || invokeAsked[1] != 0 {
		t.Fatalf("invoke read the page with MaxRecordIDs %v, want [0 0] (before and after)", invokeAsked)
	}
	cCheck(t, f.handle(cDescribe("d-1")), "")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != surface.DefaultLimits.MaxRecordIDs {
		t.Fatalf("describe read the page with MaxRecordIDs %v, want [%d]", asked, surface.DefaultLimits.MaxRecordIDs)
	}
}
