package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// The JSON examples of the specification (02, 03, 04) are test vectors: each
// request is fed to Handle as written, and the response must contain every
// member of the example response. Fixtures are arranged so that each example
// holds exactly (the capability ids, the record counts, the page state).

// pNewSurface builds a Surface over page (registry and executor) with a fake
// clock standing at surfacetest.Epoch; mod adjusts the options first.
func pNewSurface(t testing.TB, page *surfacetest.Page, mod func(*surface.Options)) *surface.Surface {
	t.Helper()
	clock := surfacetest.NewClock()
	opts := surface.Options{Registry: page.View, Execute: page.Execute, Now: clock.Now}
	if mod != nil {
		mod(&opts)
	}
	s, err := surface.New(opts)
	if err != nil {
		t.Fatalf("surface.New: %v", err)
	}
	return s
}

// pSession returns a valid session (one hour left at surfacetest.Epoch).
func pSession(id string, scope ...string) *surface.Session {
	if scope == nil {
		scope = []string{}
	}
	return &surface.Session{
		AgentID: "agent-1", SessionID: id, UserID: "user-1",
		ExpiresAt: surfacetest.Epoch.Add(time.Hour),
		Scope:     scope,
	}
}

// pSessions is a session source whose answer can be changed between calls
// and which counts how often it is asked.
type pSessions struct {
	mu    sync.Mutex
	sess  *surface.Session
	err   error
	calls int
}

func (p *pSessions) set(s *surface.Session, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sess, p.err = s, err
}

func (p *pSessions) source(context.Context) (*surface.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.sess == nil {
		return nil, p.err
	}
	c := *p.sess
	return &c, p.err
}

func (p *pSessions) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// pDecode decodes a response with exact numbers.
func pDecode(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, b)
	}
	if dec.More() {
		t.Fatalf("response has trailing data: %s", b)
	}
	return v
}

// pDo sends req through HandleJSON, checks the response shape that every
// response must have, and returns it decoded.
func pDo(t testing.TB, s *surface.Surface, req string) map[string]any {
	t.Helper()
	out := s.HandleJSON(context.Background(), []byte(req))
	m, ok := pDecode(t, out).(map[string]any)
	if !ok {
		t.Fatalf("response is not an object: %s", out)
	}
	if err := pShapeError(m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return m
}

// pShapeError reports what is wrong with the shape of one encoded response:
// the protocol, a string id, a boolean ok and exactly one of result and
// error, agreeing with ok, and an error code from the closed list.
func pShapeError(m map[string]any) error {
	if m["protocol"] != surface.Protocol {
		return fmt.Errorf("protocol = %v", m["protocol"])
	}
	if _, ok := m["id"].(string); !ok {
		return fmt.Errorf("id is %T, want string", m["id"])
	}
	ok, isBool := m["ok"].(bool)
	if !isBool {
		return fmt.Errorf("ok is %T, want bool", m["ok"])
	}
	_, hasResult := m["result"]
	e, hasError := m["error"]
	if hasResult == hasError {
		return fmt.Errorf("result present %v, error present %v: want exactly one", hasResult, hasError)
	}
	if ok != hasResult {
		return fmt.Errorf("ok = %v with result present %v", ok, hasResult)
	}
	if hasError {
		em, _ := e.(map[string]any)
		code, _ := em["code"].(string)
		if !slices.Contains(surface.Codes, surface.Code(code)) {
			return fmt.Errorf("error code %q is not a protocol code", code)
		}
		if _, ok := em["message"].(string); !ok {
			return fmt.Errorf("error message is %T, want string", em["message"])
		}
	}
	if _, hasAfter := m["after"]; hasAfter && !ok {
		return errors.New("after on a failure")
	}
	return nil
}

// pCode returns the error code of a decoded response, or "" for ok:true.
func pCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// pResult returns the result object of a decoded response, failing when
// there is none.
func pResult(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result object in %v", m)
	}
	return r
}

// pContains fails t unless got holds every member of want, recursively:
// objects may carry extra members (documented extensions), arrays must have
// the same length and match element by element, scalars must be equal
// (numbers by their exact text). At the JSON pointers listed in anyString,
// any non-empty string is accepted: the specification makes error messages
// diagnostic only, so their wording is not part of the contract.
func pContains(t testing.TB, got, want any, anyString ...string) {
	t.Helper()
	for _, d := range pDiff(got, want, "", anyString) {
		t.Error(d)
	}
}

func pDiff(got, want any, path string, anyString []string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %T, want object", pathOrRoot(path), got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			p := path + "/" + k
			gv, present := g[k]
			if !present {
				out = append(out, fmt.Sprintf("%s: missing", p))
				continue
			}
			out = append(out, pDiff(gv, w[k], p, anyString)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %T, want array", pathOrRoot(path), got)}
		}
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %d elements, want %d", pathOrRoot(path), len(g), len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, pDiff(g[i], w[i], fmt.Sprintf("%s/%d", path, i), anyString)...)
		}
		return out
	case string:
		if slices.Contains(anyString, path) {
			if s, ok := got.(string); !ok || s == "" {
				return []string{fmt.Sprintf("%s: got %#v, want a non-empty string", pathOrRoot(path), got)}
			}
			return nil
		}
	}
	if got != want {
		return []string{fmt.Sprintf("%s: got %#v, want %#v", pathOrRoot(path), got, want)}
	}
	return nil
}

func pathOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

func TestPContains(t *testing.T) {
	// pContains is the judge of every spec vector, so it must be able to say no.
	tests := []struct {
		name      string
		got, want string
		anyString []string
		fails     bool
	}{
		{"equal", `{"a":1}`, `{"a":1}`, nil, false},
		{"extra member allowed", `{"a":1,"b":2}`, `{"a":1}`, nil, false},
		{"missing member", `{"b":2}`, `{"a":1}`, nil, true},
		{"nested value differs", `{"a":{"b":"x"}}`, `{"a":{"b":"y"}}`, nil, true},
		{"number text differs", `{"a":1.50}`, `{"a":1.5}`, nil, true},
		{"array longer", `[1,2,3]`, `[1,2]`, nil, true},
		{"array element differs", `[1,{"a":true}]`, `[1,{"a":false}]`, nil, true},
		{"array element subset", `[{"a":1,"b":2}]`, `[{"a":1}]`, nil, false},
		{"type differs", `{"a":"1"}`, `{"a":1}`, nil, true},
		{"null vs missing", `{}`, `{"a":null}`, nil, true},
		{"any string accepted", `{"m":"other words"}`, `{"m":"words"}`, []string{"/m"}, false},
		{"any string must be non-empty", `{"m":""}`, `{"m":"words"}`, []string{"/m"}, true},
		{"any string must be a string", `{"m":1}`, `{"m":"words"}`, []string{"/m"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := pDiff(pDecode(t, []byte(tc.got)), pDecode(t, []byte(tc.want)), "", tc.anyString)
			if (len(d) > 0) != tc.fails {
				t.Errorf("diff = %q, want failure %v", d, tc.fails)
			}
		})
	}
}

// pSpecPage is the orders page dressed for the specification's examples:
// the 02 template carries the description used there, "order.update_note@order"
// (03) and "orders.update_note@order" (04) exist as folded templates, and
// the 03 handler reports a locked record as a business failure and
// otherwise sets the note and the list filter to "all".
func pSpecPage(n int) *surfacetest.Page {
	p := surfacetest.Orders(n)
	noteSchema := json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"],"additionalProperties":false}`)
	for i := range p.Actions {
		if p.Actions[i].ID == "update_note@order" {
			p.Actions[i].Description = "修改订单备注"
		}
	}
	p.Actions = append(p.Actions,
		surface.Action{ID: "order.update_note@order", Description: "Change an order's note", Effect: "write",
			Approval: "ask", InputSchema: noteSchema, Record: &surface.RecordTemplate{Kind: "order"}},
		surface.Action{ID: "orders.update_note@order", Description: "Change an order's note", Effect: "write",
			Approval: "ask", InputSchema: noteSchema, Record: &surface.RecordTemplate{Kind: "order"}},
	)
	p.State["filter"] = "open"
	p.Handlers["order.update_note@order"] = func(p *surfacetest.Page, call surface.Call) (json.RawMessage, error) {
		id := surfacetest.RecordID(call.Action)
		var rec *surface.Record
		for i := range p.Records {
			if p.Records[i].ID == id {
				rec = &p.Records[i]
			}
		}
		if rec == nil {
			return json.RawMessage(`{"error":{"code":"NOT_FOUND","message":"no such order"}}`), nil
		}
		if rec.Fields["status"] == "locked" {
			return json.RawMessage(`{"error":{"code":"ACTION_UNAVAILABLE","message":"记录已锁定"}}`), nil
		}
		var in struct{ Note string }
		if err := json.Unmarshal(call.Input, &in); err != nil {
			return nil, err
		}
		rec.Fields["note"] = in.Note
		p.State["filter"] = "all"
		return json.RawMessage(`{"title":"备注已更新"}`), nil
	}
	p.Handlers["orders.update_note@order"] = p.Handlers["order.update_note@order"]
	return p
}

func pLock(p *surfacetest.Page, id string) {
	p.Lock(func(p *surfacetest.Page) {
		for i := range p.Records {
			if p.Records[i].ID == id {
				p.Records[i].Fields["status"] = "locked"
			}
		}
	})
}

func pUnlockAll(p *surfacetest.Page) {
	p.Lock(func(p *surfacetest.Page) {
		for i := range p.Records {
			p.Records[i].Fields["status"] = "open"
		}
	})
}

func TestSpecVectors(t *testing.T) {
	type vector struct {
		name string
		// ref is where the example stands in the specification.
		ref     string
		setup   func(t *testing.T) (*surface.Surface, *surfacetest.Page)
		request string
		want    string
		// anyString lists JSON pointers whose text is diagnostic only.
		anyString []string
		// calls is the executor calls the request must cause: action and
		// exact input bytes.
		calls [][2]string
	}
	vectors := []vector{
		{
			name: "02 describe of a folded template",
			ref:  "02, path of one call: describe response",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(48)
				return pNewSurface(t, p, func(o *surface.Options) {
					o.Expose = surface.ExposeIDs("update_note@order")
					o.Limits.MaxRecordIDs = 2
				}), p
			},
			request: `{"protocol":"pling.surface/0.1","id":"req_00","method":"describe"}`,
			want: `{
			  "protocol": "pling.surface/0.1",
			  "ok": true,
			  "result": {
			    "capabilities": [
			      {
			        "id": "update_note@order",
			        "description": "修改订单备注",
			        "inputSchema": {
			          "type": "object",
			          "properties": {
			            "note": { "type": "string" }
			          },
			          "required": ["note"]
			        },
			        "effect": "write",
			        "approval": "ask",
			        "record": { "param": "record", "total": 48 }
			      }
			    ],
			    "context": {
			      "recordIds": ["SO-1001", "SO-1002"],
			      "recordIdsTotal": 48,
			      "recordsTotal": 48
			    }
			  }
			}`,
		},
		{
			name: "02 invoke of a folded template",
			ref:  "02, path of one call: invoke request",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(48)
				return pNewSurface(t, p, func(o *surface.Options) {
					o.Expose = surface.ExposeIDs("update_note@order")
				}), p
			},
			request: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_01",
			  "method": "invoke",
			  "capability": "update_note@order",
			  "input": { "record": "SO-1002", "note": "客户要求周五前回电" }
			}`,
			want: `{"protocol":"pling.surface/0.1","id":"req_01","ok":true,"result":{"title":"Note updated"},
			       "after":{"records":[{"id":"SO-1002","fields":{"note":"客户要求周五前回电"}}]}}`,
			// The record parameter is protocol: the executor gets only the note.
			calls: [][2]string{{"update_note@order:SO-1002", `{"note":"客户要求周五前回电"}`}},
		},
		{
			name: "03 describe request and empty description",
			ref:  "03, describe request / describe success response",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := &surfacetest.Page{}
				return pNewSurface(t, p, func(o *surface.Options) { o.App = "orders" }), p
			},
			request: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_01",
			  "method": "describe",
			  "input": {
			    "limit": 8,
			    "capabilities": "full"
			  }
			}`,
			want: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_01",
			  "ok": true,
			  "result": {
			    "app": "orders",
			    "capabilities": [],
			    "context": {
			      "regions": [],
			      "records": [],
			      "recordIds": [],
			      "recordIdsTotal": 0,
			      "state": {},
			      "feedback": [],
			      "unavailable": [],
			      "recordsTotal": 0,
			      "feedbackTotal": 0,
			      "unavailableTotal": 0
			    }
			  }
			}`,
		},
		{
			name: "03 invoke answered with a business failure",
			ref:  "03, invoke success response (business error)",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(3)
				pLock(p, "SO-1002")
				return pNewSurface(t, p, nil), p
			},
			request: pSpecInvoke03,
			want: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_02",
			  "ok": true,
			  "result": {
			    "error": {
			      "code": "ACTION_UNAVAILABLE",
			      "message": "记录已锁定"
			    }
			  }
			}`,
			calls: [][2]string{{"order.update_note@order:SO-1002", `{"note":"周五前回电"}`}},
		},
		{
			name: "03 invoke with an after observation",
			ref:  "03, invoke success response with after",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(3)
				return pNewSurface(t, p, nil), p
			},
			request: pSpecInvoke03,
			want: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_02",
			  "ok": true,
			  "result": { "title": "备注已更新" },
			  "after": {
			    "records": [{ "id": "SO-1002", "fields": { "note": "周五前回电" } }],
			    "state": { "filter": "all" }
			  }
			}`,
			calls: [][2]string{{"order.update_note@order:SO-1002", `{"note":"周五前回电"}`}},
		},
		{
			name: "03 protocol failure for a capability out of scope",
			ref:  "03, protocol failure response",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(3)
				return pNewSurface(t, p, func(o *surface.Options) {
					o.Session = surface.StaticSession(pSession("s1", "orders.search"))
				}), p
			},
			request: pSpecInvoke03,
			want: `{
			  "protocol": "pling.surface/0.1",
			  "id": "req_02",
			  "ok": false,
			  "error": {
			    "code": "CAPABILITY_NOT_EXPOSED",
			    "message": "能力不在当前暴露范围内"
			  }
			}`,
			anyString: []string{"/error/message"},
		},
		{
			name: "04 minimal server composition",
			ref:  "04, minimal server composition",
			setup: func(t *testing.T) (*surface.Surface, *surfacetest.Page) {
				p := pSpecPage(3)
				return pNewSurface(t, p, func(o *surface.Options) {
					o.App = "orders"
					o.Expose = surface.ExposeIDs("orders.search", "orders.update_note@order")
					o.Session = surface.StaticSession(pSession("s1", "orders.search", "orders.update_note@order"))
					o.RateLimit = &surface.RateLimitOptions{MaxRequests: 60, Window: time.Minute}
					o.Replay = &surface.ReplayOptions{Window: 5 * time.Minute}
				}), p
			},
			request: `{"protocol":"pling.surface/0.1","id":"req-01","method":"invoke",
			           "capability":"orders.update_note@order",
			           "input":{"record":"SO-1002","note":"客户要求周五前回电"}}`,
			want:  `{"protocol":"pling.surface/0.1","id":"req-01","ok":true,"result":{"title":"备注已更新"}}`,
			calls: [][2]string{{"orders.update_note@order:SO-1002", `{"note":"客户要求周五前回电"}`}},
		},
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			s, page := v.setup(t)
			got := pDo(t, s, v.request)
			pContains(t, got, pDecode(t, []byte(v.want)), v.anyString...)
			calls := page.Calls()
			if len(calls) != len(v.calls) {
				t.Fatalf("%s: executor called %d times, want %d", v.ref, len(calls), len(v.calls))
			}
			for i, c := range calls {
				if c.Action != v.calls[i][0] || string(c.Input) != v.calls[i][1] {
					t.Errorf("call %d = %s %s, want %s %s", i, c.Action, c.Input, v.calls[i][0], v.calls[i][1])
				}
				if c.Context.RequestID != got["id"] {
					t.Errorf("call %d request id %q, want %q", i, c.Context.RequestID, got["id"])
				}
			}
		})
	}
}

// pSpecInvoke03 is the invoke request example of 03.
const pSpecInvoke03 = `{
  "protocol": "pling.surface/0.1",
  "id": "req_02",
  "method": "invoke",
  "capability": "order.update_note@order",
  "input": {
    "record": "SO-1002",
    "note": "周五前回电"
  }
}`

func pKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pKeySet(keys ...string) []string {
	keys = slices.Clone(keys)
	sort.Strings(keys)
	return keys
}

func TestSpecEmptyDescriptionKeys(t *testing.T) {
	// The empty description of 03/04 has exactly these members; anything
	// more on an empty page would be an undocumented field.
	wantTop := pKeySet("protocol", "app", "capabilities", "context")
	wantContext := pKeySet("regions", "records", "recordIds", "recordIdsTotal", "state",
		"feedback", "unavailable", "recordsTotal", "feedbackTotal", "unavailableTotal")

	s := pNewSurface(t, &surfacetest.Page{}, func(o *surface.Options) { o.App = "orders" })
	direct, err := s.Describe(context.Background(), surface.DescribeInput{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(direct)
	if err != nil {
		t.Fatal(err)
	}
	viaHandle := pResult(t, pDo(t, s, `{"protocol":"pling.surface/0.1","id":"a","method":"describe"}`))

	for name, d := range map[string]any{"Describe": pDecode(t, b), "Handle": viaHandle} {
		t.Run(name, func(t *testing.T) {
			if got := pKeys(d); !slices.Equal(got, wantTop) {
				t.Errorf("description keys = %v, want %v", got, wantTop)
			}
			ctx := d.(map[string]any)["context"]
			if got := pKeys(ctx); !slices.Equal(got, wantContext) {
				t.Errorf("context keys = %v, want %v", got, wantContext)
			}
			pContains(t, d, pDecode(t, []byte(`{"protocol":"pling.surface/0.1","app":"orders","capabilities":[],
				"context":{"regions":[],"records":[],"recordIds":[],"recordIdsTotal":0,"state":{},"feedback":[],
				"unavailable":[],"recordsTotal":0,"feedbackTotal":0,"unavailableTotal":0}}`)))
		})
	}
}

func TestSpecResponseKinds(t *testing.T) {
	// 04 handle(): a describe success, an invoke success (after optional)
	// and a protocol failure (retryAfterMs optional), with nothing else at
	// the top level.
	page := surfacetest.Orders(3)
	limiter := &pLimiter{}
	s := pNewSurface(t, page, func(o *surface.Options) {
		o.RateLimit = &surface.RateLimitOptions{Limiter: limiter}
	})
	tests := []struct {
		name      string
		deny      bool
		req       string
		wantTop   []string
		wantError []string
	}{
		{"describe success", false, `{"protocol":"pling.surface/0.1","id":"k1","method":"describe"}`,
			pKeySet("protocol", "id", "ok", "result"), nil},
		{"invoke success without after", false,
			`{"protocol":"pling.surface/0.1","id":"k2","method":"invoke","capability":"approve@order","input":{"record":"SO-1001"}}`,
			pKeySet("protocol", "id", "ok", "result"), nil},
		{"invoke success with after", false,
			`{"protocol":"pling.surface/0.1","id":"k3","method":"invoke","capability":"update_note@order","input":{"record":"SO-1001","note":"n"}}`,
			pKeySet("protocol", "id", "ok", "result", "after"), nil},
		{"protocol failure", false,
			`{"protocol":"pling.surface/0.1","id":"k4","method":"invoke","capability":"nope"}`,
			pKeySet("protocol", "id", "ok", "error"), pKeySet("code", "message")},
		{"protocol failure with retryAfterMs", true,
			`{"protocol":"pling.surface/0.1","id":"k5","method":"describe"}`,
			pKeySet("protocol", "id", "ok", "error"), pKeySet("code", "message", "retryAfterMs")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			limiter.setDeny(tc.deny)
			m := pDo(t, s, tc.req)
			if got := pKeys(m); !slices.Equal(got, tc.wantTop) {
				t.Errorf("keys = %v, want %v", got, tc.wantTop)
			}
			if tc.wantError != nil {
				if got := pKeys(m["error"]); !slices.Equal(got, tc.wantError) {
					t.Errorf("error keys = %v, want %v", got, tc.wantError)
				}
			}
			if tc.deny {
				if pCode(m) != "RATE_LIMITED" {
					t.Errorf("code = %q, want RATE_LIMITED", pCode(m))
				}
				if n, _ := m["error"].(map[string]any)["retryAfterMs"].(json.Number).Int64(); n <= 0 {
					t.Errorf("retryAfterMs = %v, want > 0", m["error"].(map[string]any)["retryAfterMs"])
				}
			}
		})
	}
}

// pLimiter is a Limiter that admits or denies on command and counts calls.
type pLimiter struct {
	mu    sync.Mutex
	deny  bool
	err   error
	calls int
}

func (l *pLimiter) setDeny(deny bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deny = deny
}

func (l *pLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

func (l *pLimiter) Allow(context.Context, string, time.Time) (surface.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.err != nil {
		return surface.Decision{}, l.err
	}
	if l.deny {
		return surface.Decision{Verdict: surface.Deny, RetryAfter: 1500 * time.Millisecond}, nil
	}
	return surface.Decision{Verdict: surface.Allow}, nil
}

// pNoDetail fails when a protocol message leaks what the fixture hid in its
// failures.
func pNoDetail(t testing.TB, m map[string]any) {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	for _, secret := range []string{"hunter2", "secret", "panic", "exploded"} {
		if strings.Contains(strings.ToLower(msg), secret) {
			t.Errorf("error message %q leaks %q", msg, secret)
		}
	}
}

func TestSpecNewOptions(t *testing.T) {
	// 04 option table: in Go the clock is required; the registry and the
	// executor are what Drive answers with, and a kernel whose host answers
	// those asks has none (TestExchangeAsksWithoutServices). The record
	// limits default to 8 and 100.
	page := surfacetest.Orders(1)
	clock := surfacetest.NewClock()
	bad := map[string]surface.Options{
		"no clock":                  {Registry: page.View, Execute: page.Execute},
		"negative record limit":     {Registry: page.View, Execute: page.Execute, Now: clock.Now, RecordLimit: -1},
		"negative maximum":          {Registry: page.View, Execute: page.Execute, Now: clock.Now, MaxRecordLimit: -1},
		"rate limit without size":   {Registry: page.View, Execute: page.Execute, Now: clock.Now, RateLimit: &surface.RateLimitOptions{Window: time.Second}},
		"rate limit without window": {Registry: page.View, Execute: page.Execute, Now: clock.Now, RateLimit: &surface.RateLimitOptions{MaxRequests: 1}},
		"negative rate limit":       {Registry: page.View, Execute: page.Execute, Now: clock.Now, RateLimit: &surface.RateLimitOptions{MaxRequests: -1, Window: -1}},
	}
	for name, o := range bad {
		t.Run(name, func(t *testing.T) {
			if s, err := surface.New(o); err == nil || s != nil {
				t.Errorf("New = %v, %v; want a configuration error", s, err)
			}
		})
	}
	if surface.DefaultRecordLimit != 8 || surface.MaxRecordLimit != 100 || surface.MaxRecordSelection != 20 {
		t.Errorf("record constants = %d, %d, %d; want 8, 100, 20",
			surface.DefaultRecordLimit, surface.MaxRecordLimit, surface.MaxRecordSelection)
	}
	if surface.Protocol != "pling.surface/0.1" {
		t.Errorf("Protocol = %q", surface.Protocol)
	}
}

func TestSpecErrorCodes(t *testing.T) {
	// 04's protocol failure table, in its order; the set is closed.
	want := []string{"INVALID_REQUEST", "PROTOCOL_VERSION_UNSUPPORTED", "METHOD_NOT_SUPPORTED",
		"CAPABILITY_NOT_EXPOSED", "RATE_LIMITED", "RATE_LIMIT_UNAVAILABLE", "REPLAY_DETECTED",
		"REPLAY_GUARD_UNAVAILABLE", "SESSION_REQUIRED", "SESSION_INVALID", "SESSION_EXPIRED",
		"SESSION_REVOKED", "INTERNAL_ERROR"}
	got := make([]string, len(surface.Codes))
	for i, c := range surface.Codes {
		got[i] = string(c)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Codes = %v, want %v", got, want)
	}
	for _, c := range surface.Codes {
		t.Run(string(c), func(t *testing.T) {
			if got, want := surface.IsSession(c), strings.HasPrefix(string(c), "SESSION_"); got != want {
				t.Errorf("IsSession = %v, want %v", got, want)
			}
		})
	}
}
