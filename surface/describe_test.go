package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// pDescribe sends a describe with the given input JSON ("" for none) and
// returns the decoded result, failing on a protocol failure.
func pDescribe(t testing.TB, s *surface.Surface, input string) map[string]any {
	t.Helper()
	m := pDo(t, s, pDescribeReq(input))
	if m["ok"] != true {
		t.Fatalf("describe failed: %v", m["error"])
	}
	return pResult(t, m)
}

func pDescribeReq(input string) string {
	if input == "" {
		return `{"protocol":"pling.surface/0.1","id":"d","method":"describe"}`
	}
	return `{"protocol":"pling.surface/0.1","id":"d","method":"describe","input":` + input + `}`
}

func pContext(d map[string]any) map[string]any {
	c, _ := d["context"].(map[string]any)
	return c
}

// pIDs returns the "id" member of each object of a decoded list.
func pIDs(list any) []string {
	items, _ := list.([]any)
	out := []string{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["id"].(string)
		out = append(out, id)
	}
	return out
}

func pStrings(list any) []string {
	items, _ := list.([]any)
	out := []string{}
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}

func pNum(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return -1
	}
	i, err := n.Int64()
	if err != nil {
		return -1
	}
	return int(i)
}

// pOrderIDs returns SO-(1001+from) .. SO-(1001+to-1).
func pOrderIDs(from, to int) []string {
	out := []string{}
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("SO-%d", 1001+i))
	}
	return out
}

// pGreedy wraps a page's registry and ignores the window and the record id
// bound of the query, answering every record and id it has: the kernel must
// cut, not trust. It also remembers the last query.
type pGreedy struct {
	page *surfacetest.Page
	mu   sync.Mutex
	last surface.ViewQuery
}

func (g *pGreedy) View(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
	g.mu.Lock()
	g.last = q
	g.mu.Unlock()
	if q.IDs != nil {
		return g.page.View(ctx, q)
	}
	return g.page.View(ctx, surface.ViewQuery{Limit: 1 << 20})
}

func (g *pGreedy) query() surface.ViewQuery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

func TestDescribeRecordWindow(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		mod    func(*surface.Options)
		greedy bool
		input  string
		want   []string
		total  int
		// query is the window the registry must be asked for.
		query surface.ViewQuery
	}{
		{name: "default window", n: 20, want: pOrderIDs(0, 8), total: 20, query: surface.ViewQuery{Limit: 8}},
		{name: "custom default window", n: 20, mod: func(o *surface.Options) { o.RecordLimit = 3 },
			want: pOrderIDs(0, 3), total: 20, query: surface.ViewQuery{Limit: 3}},
		{name: "limit clamped to default maximum", n: 150, input: `{"limit":1000}`,
			want: pOrderIDs(0, 100), total: 150, query: surface.ViewQuery{Limit: 100}},
		{name: "limit at default maximum", n: 150, input: `{"limit":100}`,
			want: pOrderIDs(0, 100), total: 150, query: surface.ViewQuery{Limit: 100}},
		{name: "limit clamped to custom maximum", n: 20, mod: func(o *surface.Options) { o.MaxRecordLimit = 5 },
			input: `{"limit":50}`, want: pOrderIDs(0, 5), total: 20, query: surface.ViewQuery{Limit: 5}},
		{name: "default window clamped to custom maximum", n: 20, mod: func(o *surface.Options) { o.MaxRecordLimit = 5 },
			want: pOrderIDs(0, 5), total: 20, query: surface.ViewQuery{Limit: 5}},
		{name: "second page", n: 20, input: `{"offset":8,"limit":8}`,
			want: pOrderIDs(8, 16), total: 20, query: surface.ViewQuery{Offset: 8, Limit: 8}},
		{name: "last partial page", n: 20, input: `{"offset":16,"limit":8}`,
			want: pOrderIDs(16, 20), total: 20, query: surface.ViewQuery{Offset: 16, Limit: 8}},
		{name: "offset alone keeps default limit", n: 20, input: `{"offset":4}`,
			want: pOrderIDs(4, 12), total: 20, query: surface.ViewQuery{Offset: 4, Limit: 8}},
		{name: "offset past the end", n: 20, input: `{"offset":25}`,
			want: []string{}, total: 20, query: surface.ViewQuery{Offset: 25, Limit: 8}},
		{name: "limit zero", n: 20, input: `{"limit":0}`,
			want: []string{}, total: 20, query: surface.ViewQuery{Limit: 0}},
		{name: "records by id keep the asked order", n: 20, input: `{"record":["SO-1005","SO-1002"]}`,
			want: []string{"SO-1005", "SO-1002"}, total: 20, query: surface.ViewQuery{IDs: []string{"SO-1005", "SO-1002"}}},
		{name: "unknown ids are absent", n: 20, input: `{"record":["SO-9999","SO-1003","SO-0000"]}`,
			want: []string{"SO-1003"}, total: 20, query: surface.ViewQuery{IDs: []string{"SO-9999", "SO-1003", "SO-0000"}}},
		{name: "repeated id read once", n: 20, input: `{"record":["SO-1002","SO-1002"]}`,
			want: []string{"SO-1002"}, total: 20, query: surface.ViewQuery{IDs: []string{"SO-1002"}}},
		{name: "one id as a string", n: 20, input: `{"record":"SO-1020"}`,
			want: []string{"SO-1020"}, total: 20, query: surface.ViewQuery{IDs: []string{"SO-1020"}}},
		{name: "greedy registry cut to the default window", n: 30, greedy: true,
			want: pOrderIDs(0, 8), total: 30, query: surface.ViewQuery{Limit: 8}},
		{name: "greedy registry cut to limit zero", n: 30, greedy: true, input: `{"limit":0}`,
			want: []string{}, total: 30, query: surface.ViewQuery{Limit: 0}},
		{name: "greedy registry cut to the clamp", n: 150, greedy: true, input: `{"limit":500}`,
			want: pOrderIDs(0, 100), total: 150, query: surface.ViewQuery{Limit: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := surfacetest.Orders(tc.n)
			g := &pGreedy{page: page}
			var reg surface.Registry = g.View
			if !tc.greedy {
				reg = func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
					g.mu.Lock()
					g.last = q
					g.mu.Unlock()
					return page.View(ctx, q)
				}
			}
			s := pNewSurface(t, page, func(o *surface.Options) {
				o.Registry = reg
				if tc.mod != nil {
					tc.mod(o)
				}
			})
			c := pContext(pDescribe(t, s, tc.input))
			if got := pIDs(c["records"]); !slices.Equal(got, tc.want) {
				t.Errorf("records = %v, want %v", got, tc.want)
			}
			if got := pNum(c["recordsTotal"]); got != tc.total {
				t.Errorf("recordsTotal = %d, want %d", got, tc.total)
			}
			q := g.query()
			q.MaxRecordIDs = 0
			if tc.query.IDs == nil && (q.IDs != nil || q.Offset != tc.query.Offset || q.Limit != tc.query.Limit) {
				t.Errorf("registry asked for %+v, want %+v", q, tc.query)
			}
			if tc.query.IDs != nil && !slices.Equal(q.IDs, tc.query.IDs) {
				t.Errorf("registry asked for ids %v, want %v", q.IDs, tc.query.IDs)
			}
		})
	}

	t.Run("record fields", func(t *testing.T) {
		s := pNewSurface(t, surfacetest.Orders(5), nil)
		c := pContext(pDescribe(t, s, `{"record":"SO-1003"}`))
		pContains(t, c["records"], pDecode(t, []byte(`[{"id":"SO-1003","kind":"order",
			"fields":{"customer":"Customer 3","note":"","status":"locked"}}]`)))
	})
}

func TestDescribeRecordIDs(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		max    int
		greedy bool
		want   []string
		total  int
	}{
		{"default bound not reached", 12, 0, false, pOrderIDs(0, 12), 12},
		{"default bound", 250, 0, false, pOrderIDs(0, 200), 250},
		{"custom bound", 12, 5, false, pOrderIDs(0, 5), 12},
		{"custom bound with a registry that lists everything", 12, 5, true, pOrderIDs(0, 5), 12},
		{"bound equal to the count", 5, 5, false, pOrderIDs(0, 5), 5},
		{"no records", 0, 5, false, []string{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := surfacetest.Orders(tc.n)
			var reg surface.Registry = page.View
			var asked int
			var mu sync.Mutex
			reg = func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
				mu.Lock()
				asked = q.MaxRecordIDs
				mu.Unlock()
				if tc.greedy {
					q.MaxRecordIDs = 0
				}
				return page.View(ctx, q)
			}
			s := pNewSurface(t, page, func(o *surface.Options) {
				o.Registry = reg
				o.Limits.MaxRecordIDs = tc.max
			})
			c := pContext(pDescribe(t, s, `{"limit":0}`))
			if got := pStrings(c["recordIds"]); !slices.Equal(got, tc.want) {
				t.Errorf("recordIds = %v, want %v", got, tc.want)
			}
			if got := pNum(c["recordIdsTotal"]); got != tc.total {
				t.Errorf("recordIdsTotal = %d, want %d", got, tc.total)
			}
			wantAsked := tc.max
			if wantAsked == 0 {
				wantAsked = surface.DefaultLimits.MaxRecordIDs
			}
			mu.Lock()
			defer mu.Unlock()
			if asked != wantAsked {
				t.Errorf("registry was told MaxRecordIDs %d, want %d", asked, wantAsked)
			}
		})
	}
}

// pBusyPage is an orders page with 4 regions, 5 feedback messages, 2
// unavailable items, 5 state keys and a capability whose schema does not
// compile (so withheld items count as unavailable too).
func pBusyPage() *surfacetest.Page {
	p := surfacetest.Orders(3)
	p.Regions = []surface.Region{{ID: "r1"}, {ID: "r2"}, {ID: "r3"}, {ID: "r4"}}
	for i := range 5 {
		p.Feedback = append(p.Feedback, surface.Feedback{Level: "info", Message: fmt.Sprintf("m%d", i)})
	}
	p.Unavailable = []surface.Unavailable{{ID: "u1", Reason: "busy"}, {ID: "u2", Reason: "busy"}}
	p.State = map[string]any{"e": "5", "d": "4", "c": "3", "b": "2", "a": "1"}
	p.Actions = append(p.Actions, surface.Action{ID: "p.bad", InputSchema: json.RawMessage(`{"type":12}`)})
	return p
}

func TestDescribeContextBounds(t *testing.T) {
	tests := []struct {
		name   string
		limits surface.Limits
		want   string
		// absent lists members that must not appear (totals of uncut lists).
		absent []string
		// capsTotal is capabilitiesTotal, 0 when absent.
		caps      []string
		capsTotal int
	}{
		{
			name:   "defaults hold everything",
			limits: surface.Limits{},
			want: `{"regions":[{"id":"r1"},{"id":"r2"},{"id":"r3"},{"id":"r4"}],
				"feedback":[{"message":"m0"},{"message":"m1"},{"message":"m2"},{"message":"m3"},{"message":"m4"}],
				"feedbackTotal":5,
				"unavailable":[{"id":"p.bad"},{"id":"u1"},{"id":"u2"}],
				"unavailableTotal":3,
				"state":{"a":"1","b":"2","c":"3","d":"4","e":"5"}}`,
			absent:    []string{"regionsTotal", "stateTotal"},
			caps:      []string{"orders.search", "update_note@order", "approve@order", "orders.fail", "orders.panic", "orders.hang"},
			capsTotal: 0,
		},
		{
			name:   "every list cut to two",
			limits: surface.Limits{MaxCapabilities: 2, MaxRegions: 2, MaxFeedback: 2, MaxUnavailable: 2, MaxStateKeys: 2},
			want: `{"regions":[{"id":"r1"},{"id":"r2"}],"regionsTotal":4,
				"feedback":[{"message":"m0"},{"message":"m1"}],"feedbackTotal":5,
				"unavailable":[{"id":"p.bad"},{"id":"u1"}],"unavailableTotal":3,
				"state":{"a":"1","b":"2"},"stateTotal":5}`,
			caps:      []string{"orders.search", "update_note@order"},
			capsTotal: 6,
		},
		{
			name:   "bounds equal to the sizes",
			limits: surface.Limits{MaxCapabilities: 6, MaxRegions: 4, MaxFeedback: 5, MaxUnavailable: 3, MaxStateKeys: 5},
			want: `{"regions":[{"id":"r1"},{"id":"r2"},{"id":"r3"},{"id":"r4"}],"feedbackTotal":5,
				"unavailableTotal":3,"state":{"a":"1","b":"2","c":"3","d":"4","e":"5"}}`,
			absent:    []string{"regionsTotal", "stateTotal"},
			caps:      []string{"orders.search", "update_note@order", "approve@order", "orders.fail", "orders.panic", "orders.hang"},
			capsTotal: 0,
		},
		{
			name:      "one of each",
			limits:    surface.Limits{MaxCapabilities: 1, MaxRegions: 1, MaxFeedback: 1, MaxUnavailable: 1, MaxStateKeys: 1},
			want:      `{"regions":[{"id":"r1"}],"regionsTotal":4,"feedback":[{"message":"m0"}],"feedbackTotal":5,"unavailable":[{"id":"p.bad"}],"unavailableTotal":3,"state":{"a":"1"},"stateTotal":5}`,
			caps:      []string{"orders.search"},
			capsTotal: 6,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := pNewSurface(t, pBusyPage(), func(o *surface.Options) { o.Limits = tc.limits })
			d := pDescribe(t, s, "")
			c := pContext(d)
			pContains(t, c, pDecode(t, []byte(tc.want)))
			if st, _ := c["state"].(map[string]any); len(st) != len(pDecode(t, []byte(tc.want)).(map[string]any)["state"].(map[string]any)) {
				t.Errorf("state = %v: more keys than wanted", st)
			}
			for _, k := range tc.absent {
				if _, ok := c[k]; ok {
					t.Errorf("%s present on an uncut list", k)
				}
			}
			if got := pIDs(d["capabilities"]); !slices.Equal(got, tc.caps) {
				t.Errorf("capabilities = %v, want %v", got, tc.caps)
			}
			_, has := d["capabilitiesTotal"]
			if tc.capsTotal == 0 && has {
				t.Errorf("capabilitiesTotal present on an uncut list")
			}
			if tc.capsTotal != 0 && pNum(d["capabilitiesTotal"]) != tc.capsTotal {
				t.Errorf("capabilitiesTotal = %v, want %d", d["capabilitiesTotal"], tc.capsTotal)
			}
		})
	}
}

func TestDescribeCapabilityProjection(t *testing.T) {
	page := surfacetest.Orders(5)
	page.Records[1].Offscreen = true
	page.Records[4].Offscreen = true
	page.Actions = []surface.Action{
		{
			ID: "refund@order", Description: "Refund an order",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`),
			Effect:      "destructive", Approval: "always", Fidelity: "exact", Source: "OrdersTable",
			ScopePath: []string{"orders", "row"}, Handoff: "confirm-dialog", FlowSteps: []string{"review", "confirm"},
			Offscreen: true, Record: &surface.RecordTemplate{Kind: "order", Param: "order"},
		},
		{ID: "orders.refresh"},
		{ID: "note@order", Record: &surface.RecordTemplate{Kind: "order"}},
	}
	s := pNewSurface(t, page, nil)
	caps, _ := pDescribe(t, s, `{"limit":0}`)["capabilities"].([]any)
	if len(caps) != 3 {
		t.Fatalf("capabilities = %v", caps)
	}
	tests := []struct {
		name string
		got  any
		want string
		keys []string
	}{
		{"every metadata field", caps[0], `{"id":"refund@order","description":"Refund an order",
			"inputSchema":{"type":"object","properties":{"amount":{"type":"number"}}},
			"effect":"destructive","approval":"always","fidelity":"exact","source":"OrdersTable",
			"scopePath":["orders","row"],"handoff":"confirm-dialog","flowSteps":["review","confirm"],
			"offscreen":true,"record":{"param":"order","total":5,"offscreen":2}}`,
			pKeySet("id", "description", "inputSchema", "effect", "approval", "fidelity", "source",
				"scopePath", "handoff", "flowSteps", "offscreen", "record")},
		{"bare action", caps[1], `{"id":"orders.refresh"}`, pKeySet("id")},
		{"template with default parameter", caps[2], `{"id":"note@order","record":{"param":"record","total":5,"offscreen":2}}`,
			pKeySet("id", "record")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pContains(t, tc.got, pDecode(t, []byte(tc.want)))
			if got := pKeys(tc.got); !slices.Equal(got, tc.keys) {
				t.Errorf("keys = %v, want %v", got, tc.keys)
			}
			if rec, ok := tc.got.(map[string]any)["record"]; ok {
				if got := pKeys(rec); !slices.Equal(got, pKeySet("param", "total", "offscreen")) {
					t.Errorf("record keys = %v: the template's kind is page-internal", got)
				}
			}
		})
	}
}

func TestFoldedTemplateParam(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"],"additionalProperties":false}`)
	tests := []struct {
		name   string
		param  string
		input  string
		ok     bool
		action string
	}{
		{"default parameter", "", `{"record":"SO-1002","note":"x"}`, true, "t@order:SO-1002"},
		{"default parameter missing", "", `{"note":"x"}`, false, ""},
		{"default parameter not a string", "", `{"record":1002,"note":"x"}`, false, ""},
		{"default parameter empty", "", `{"record":"","note":"x"}`, false, ""},
		{"default parameter unknown record", "", `{"record":"SO-9999","note":"x"}`, false, ""},
		{"custom parameter", "order", `{"order":"SO-1003","note":"x"}`, true, "t@order:SO-1003"},
		{"custom parameter given as record", "order", `{"record":"SO-1003","note":"x"}`, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := surfacetest.Orders(5)
			page.Actions = []surface.Action{{ID: "t@order", InputSchema: schema,
				Record: &surface.RecordTemplate{Kind: "order", Param: tc.param}}}
			page.Handlers["t@order"] = func(*surfacetest.Page, surface.Call) (json.RawMessage, error) {
				return json.RawMessage(`{"done":true}`), nil
			}
			s := pNewSurface(t, page, nil)
			wantParam := tc.param
			if wantParam == "" {
				wantParam = "record"
			}
			caps, _ := pDescribe(t, s, "")["capabilities"].([]any)
			pContains(t, caps, pDecode(t, []byte(`[{"id":"t@order","record":{"param":"`+wantParam+`","total":5}}]`)))

			m := pDo(t, s, pInvoke("i", "t@order", tc.input))
			calls := page.Calls()
			if !tc.ok {
				if pCode(m) != "INVALID_REQUEST" || len(calls) != 0 {
					t.Errorf("code = %q, calls = %d; want INVALID_REQUEST and no call", pCode(m), len(calls))
				}
				return
			}
			if m["ok"] != true || len(calls) != 1 {
				t.Fatalf("ok = %v, calls = %d: %v", m["ok"], len(calls), m["error"])
			}
			if calls[0].Action != tc.action || string(calls[0].Input) != `{"note":"x"}` {
				t.Errorf("call = %s %s, want %s {\"note\":\"x\"}", calls[0].Action, calls[0].Input, tc.action)
			}
			if calls[0].Context.Capability != "t@order" || calls[0].Context.Record != surfacetest.RecordID(tc.action) {
				t.Errorf("call context = %+v", calls[0].Context)
			}
		})
	}
}

// pScopePage has four well-behaved capabilities (no failing, panicking or
// hanging executor), so that every exposed one can be invoked.
func pScopePage() *surfacetest.Page {
	p := pEchoPage(3)
	keep := []surface.Action{}
	for _, a := range p.Actions {
		switch a.ID {
		case "orders.search", "update_note@order", "approve@order", "p.echo":
			keep = append(keep, a)
		}
	}
	p.Actions = keep
	return p
}

func TestEffectiveCapabilities(t *testing.T) {
	all := []string{"orders.search", "update_note@order", "approve@order", "p.echo"}
	inputs := map[string]string{
		"orders.search":             `{"query":"x"}`,
		"update_note@order":         `{"record":"SO-1001","note":"x"}`,
		"approve@order":             `{"record":"SO-1001"}`,
		"p.echo":                    `{}`,
		"update_note@order:SO-1001": `{"note":"x"}`,
		"ghost":                     `{}`,
		"Orders.Search":             `{"query":"x"}`,
	}
	tests := []struct {
		name   string
		expose func(string) bool
		open   bool
		scope  []string
		want   []string
	}{
		{name: "open mode, no expose", open: true, want: all},
		{name: "open mode, expose a folded id", open: true, expose: surface.ExposeIDs("update_note@order"),
			want: []string{"update_note@order"}},
		{name: "open mode, expose a concrete row action", open: true, expose: surface.ExposeIDs("update_note@order:SO-1001"),
			want: []string{}},
		{name: "open mode, expose is case-sensitive", open: true, expose: surface.ExposeIDs("Orders.Search", "P.ECHO"),
			want: []string{}},
		{name: "scope alone", scope: []string{"approve@order", "p.echo"}, want: []string{"approve@order", "p.echo"}},
		{name: "intersection", expose: surface.ExposeIDs("orders.search", "update_note@order"),
			scope: []string{"update_note@order", "approve@order"}, want: []string{"update_note@order"}},
		{name: "folded id in both", expose: surface.ExposeIDs("approve@order"), scope: []string{"approve@order"},
			want: []string{"approve@order"}},
		{name: "empty scope", scope: []string{}, want: []string{}},
		{name: "scope names ids the page lacks", scope: []string{"ghost", "update_note@order:SO-1001"}, want: []string{}},
		{name: "expose everything, scope everything", expose: func(string) bool { return true }, scope: all, want: all},
		{name: "expose nothing", expose: func(string) bool { return false }, scope: all, want: []string{}},
		{name: "expose panics", expose: func(string) bool { panic("expose bug") }, scope: all, want: []string{}},
		{name: "open mode, expose panics", open: true, expose: func(string) bool { panic("expose bug") }, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pScopePage()
			s := pNewSurface(t, page, func(o *surface.Options) {
				o.Expose = tc.expose
				if !tc.open {
					o.Session = surface.StaticSession(pSession("s1", tc.scope...))
				}
			})
			if got := pIDs(pDescribe(t, s, "")["capabilities"]); !slices.Equal(got, tc.want) {
				t.Errorf("listed = %v, want %v", got, tc.want)
			}
			// describe and invoke agree: what is listed runs, nothing else does.
			for id, input := range inputs {
				before := len(page.Calls())
				m := pDo(t, s, pInvoke("i-"+id, id, input))
				ran := len(page.Calls()) - before
				if slices.Contains(tc.want, id) {
					if m["ok"] != true || ran != 1 {
						t.Errorf("invoke %s: ok = %v, executor calls %d (%v)", id, m["ok"], ran, m["error"])
					}
					continue
				}
				if pCode(m) != "CAPABILITY_NOT_EXPOSED" || ran != 0 {
					t.Errorf("invoke %s: code = %q, executor calls %d; want CAPABILITY_NOT_EXPOSED and none", id, pCode(m), ran)
				}
			}
		})
	}
}

func TestUncompilableSchemaWithheld(t *testing.T) {
	tests := []struct {
		name, schema string
	}{
		{"not JSON", `{"type":`},
		{"not an object or boolean", `"object"`},
		{"type is a number", `{"type":12}`},
		{"remote ref", `{"$ref":"https://schemas.example.com/note.json"}`},
		{"file ref", `{"$ref":"file:///etc/passwd"}`},
		{"missing local ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`},
		{"required not an array", `{"type":"object","required":"note"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pScopePage()
			page.Actions = append(page.Actions, surface.Action{ID: "p.bad", InputSchema: json.RawMessage(tc.schema)})
			page.Handlers["p.bad"] = page.Handlers["p.echo"]
			sess := &pSessions{}
			sess.set(pSession("s1", "orders.search", "p.bad"), nil)
			s := pNewSurface(t, page, func(o *surface.Options) { o.Session = sess.source })

			d := pDescribe(t, s, "")
			if got := pIDs(d["capabilities"]); !slices.Equal(got, []string{"orders.search"}) {
				t.Errorf("listed = %v, want only orders.search", got)
			}
			un, _ := pContext(d)["unavailable"].([]any)
			if got := pIDs(un); !slices.Equal(got, []string{"p.bad"}) {
				t.Errorf("unavailable = %v, want [p.bad]", got)
			}
			if r, _ := un[0].(map[string]any)["reason"].(string); r == "" {
				t.Error("withheld capability has no reason")
			}
			for _, in := range []string{`{}`, `{"a":"x"}`} {
				m := pDo(t, s, pInvoke("b", "p.bad", in))
				if pCode(m) != "CAPABILITY_NOT_EXPOSED" {
					t.Errorf("invoke = %v, want CAPABILITY_NOT_EXPOSED", m)
				}
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}

			// A session that cannot see p.bad does not learn it exists.
			sess.set(pSession("s2", "orders.search"), nil)
			if un := pIDs(pContext(pDescribe(t, s, ""))["unavailable"]); len(un) != 0 {
				t.Errorf("unavailable = %v for a session without p.bad in scope", un)
			}
		})
	}
}

func TestDuplicateActionIDsWithheld(t *testing.T) {
	page := pScopePage()
	dup := surface.Action{ID: "p.echo", Description: "a second echo", Effect: "write"}
	page.Actions = append(page.Actions, dup, dup)
	s := pNewSurface(t, page, nil)
	d := pDescribe(t, s, "")
	if got := pIDs(d["capabilities"]); slices.Contains(got, "p.echo") {
		t.Errorf("listed = %v: a duplicated id must be withheld", got)
	}
	if got := pIDs(pContext(d)["unavailable"]); !slices.Equal(got, []string{"p.echo"}) {
		t.Errorf("unavailable = %v, want p.echo once", got)
	}
	if m := pDo(t, s, pInvoke("i", "p.echo", `{}`)); pCode(m) != "CAPABILITY_NOT_EXPOSED" {
		t.Errorf("invoke = %v, want CAPABILITY_NOT_EXPOSED", m)
	}
	if n := len(page.Calls()); n != 0 {
		t.Errorf("executor calls = %d, want 0", n)
	}
}

func TestRegistryReadOnEveryCall(t *testing.T) {
	page := pScopePage()
	s := pNewSurface(t, page, nil)
	views := page.Views()
	step := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			f(t)
			if page.Views() <= views {
				t.Errorf("registry not read (views %d)", page.Views())
			}
			views = page.Views()
		})
	}
	step("action added is listed and callable at once", func(t *testing.T) {
		page.Lock(func(p *surfacetest.Page) {
			p.Actions = append(p.Actions, surface.Action{ID: "p.new"})
			p.Handlers["p.new"] = p.Handlers["p.echo"]
		})
		if got := pIDs(pDescribe(t, s, "")["capabilities"]); !slices.Contains(got, "p.new") {
			t.Errorf("listed = %v, want p.new", got)
		}
		if m := pDo(t, s, pInvoke("n1", "p.new", `{}`)); m["ok"] != true {
			t.Errorf("invoke p.new = %v", m)
		}
	})
	step("action removed is gone at once", func(t *testing.T) {
		page.Lock(func(p *surfacetest.Page) { p.Actions = p.Actions[:len(p.Actions)-1] })
		if m := pDo(t, s, pInvoke("n2", "p.new", `{}`)); pCode(m) != "CAPABILITY_NOT_EXPOSED" {
			t.Errorf("invoke removed action = %v", m)
		}
	})
	step("record change", func(t *testing.T) {
		page.Lock(func(p *surfacetest.Page) { p.Records[1].Fields["note"] = "changed on the page" })
		c := pContext(pDescribe(t, s, `{"record":"SO-1002"}`))
		pContains(t, c["records"], pDecode(t, []byte(`[{"id":"SO-1002","fields":{"note":"changed on the page"}}]`)))
	})
	step("record removed", func(t *testing.T) {
		page.Lock(func(p *surfacetest.Page) { p.Records = p.Records[1:] })
		c := pContext(pDescribe(t, s, `{"record":["SO-1001","SO-1002"]}`))
		if got := pIDs(c["records"]); !slices.Equal(got, []string{"SO-1002"}) {
			t.Errorf("records = %v", got)
		}
		if m := pDo(t, s, pInvoke("n3", "update_note@order", `{"record":"SO-1001","note":"x"}`)); pCode(m) != "INVALID_REQUEST" {
			t.Errorf("invoke on a removed record = %v", m)
		}
	})
	step("route", func(t *testing.T) {
		page.Lock(func(p *surfacetest.Page) { p.Route = "/orders/archive" })
		if got := pContext(pDescribe(t, s, ""))["route"]; got != "/orders/archive" {
			t.Errorf("route = %v", got)
		}
	})
}

func TestCapabilitiesChanged(t *testing.T) {
	page := pScopePage()
	sess := &pSessions{}
	all := []string{"orders.search", "update_note@order", "approve@order", "p.echo"}
	sess.set(pSession("s1", all...), nil)
	s := pNewSurface(t, page, func(o *surface.Options) { o.Session = sess.source })

	revoked := pSession("s1", all...)
	revoked.RevokedAt = surfacetest.Epoch.Add(-time.Minute)
	steps := []struct {
		name   string
		change func()
		mode   string
		// listed is the expected list length; unchanged the flag.
		listed    int
		unchanged bool
		code      string
	}{
		{name: "first changed gets the full list", mode: "changed", listed: 4},
		{name: "same list again", mode: "changed", listed: 0, unchanged: true},
		{name: "full always lists", mode: "full", listed: 4},
		{name: "changed after full", mode: "changed", listed: 0, unchanged: true},
		{name: "record edits do not change capabilities", mode: "changed", listed: 0, unchanged: true,
			change: func() { page.Lock(func(p *surfacetest.Page) { p.Records[0].Fields["note"] = "edited" }) }},
		{name: "navigation", mode: "changed", listed: 4,
			change: func() { page.Lock(func(p *surfacetest.Page) { p.Route = "/orders?tab=2" }) }},
		{name: "after navigation", mode: "changed", listed: 0, unchanged: true},
		{name: "navigation back", mode: "changed", listed: 4,
			change: func() { page.Lock(func(p *surfacetest.Page) { p.Route = "/orders" }) }},
		{name: "action description changed", mode: "changed", listed: 4,
			change: func() { page.Lock(func(p *surfacetest.Page) { p.Actions[0].Description = "Find orders" }) }},
		{name: "after action change", mode: "changed", listed: 0, unchanged: true},
		{name: "template total changed", mode: "changed", listed: 4,
			change: func() {
				page.Lock(func(p *surfacetest.Page) {
					p.Records = append(p.Records, surface.Record{ID: "SO-2000", Kind: "order", Fields: map[string]any{}})
				})
			}},
		{name: "scope narrowed", mode: "changed", listed: 3,
			change: func() { sess.set(pSession("s1", all[:3]...), nil) }},
		{name: "after scope change", mode: "changed", listed: 0, unchanged: true},
		{name: "scope restored", mode: "changed", listed: 4,
			change: func() { sess.set(pSession("s1", all...), nil) }},
		{name: "after scope restored", mode: "changed", listed: 0, unchanged: true},
		// The page lacks "ghost", so the list is the same; the grant is not.
		{name: "scope widened without a visible change", mode: "changed", listed: 4,
			change: func() { sess.set(pSession("s1", append(slices.Clone(all), "ghost")...), nil) }},
		{name: "after scope widened", mode: "changed", listed: 0, unchanged: true},
		{name: "revoked", mode: "changed", code: "SESSION_REVOKED",
			change: func() { sess.set(revoked, nil) }},
		{name: "same session id after revocation", mode: "changed", listed: 4,
			change: func() { sess.set(pSession("s1", all...), nil) }},
		{name: "after re-grant", mode: "changed", listed: 0, unchanged: true},
		// Revoked and granted again between two requests: no request saw the
		// revocation, but the new grant (a new expiry) must not inherit the
		// old cache entry.
		{name: "re-granted unseen with a new expiry", mode: "changed", listed: 4,
			change: func() {
				g := pSession("s1", all...)
				g.ExpiresAt = g.ExpiresAt.Add(time.Hour)
				sess.set(g, nil)
			}},
		{name: "new session", mode: "changed", listed: 4,
			change: func() { sess.set(pSession("s2", all...), nil) }},
		{name: "new session again", mode: "changed", listed: 0, unchanged: true},
		{name: "first session keeps its own cache", mode: "changed", listed: 0, unchanged: true,
			change: func() {
				g := pSession("s1", all...)
				g.ExpiresAt = g.ExpiresAt.Add(time.Hour)
				sess.set(g, nil)
			}},
	}
	for _, st := range steps {
		// Steps share one surface and run in order: each depends on the last.
		t.Run(st.name, func(t *testing.T) {
			if st.change != nil {
				st.change()
			}
			m := pDo(t, s, pDescribeReq(`{"capabilities":"`+st.mode+`"}`))
			if st.code != "" {
				if pCode(m) != st.code {
					t.Fatalf("code = %q, want %q", pCode(m), st.code)
				}
				return
			}
			if m["ok"] != true {
				t.Fatal(m["error"])
			}
			d := pResult(t, m)
			caps, ok := d["capabilities"].([]any)
			if !ok || len(caps) != st.listed {
				t.Errorf("capabilities = %v, want %d", d["capabilities"], st.listed)
			}
			if got := d["capabilitiesUnchanged"] == true; got != st.unchanged {
				t.Errorf("capabilitiesUnchanged = %v, want %v", d["capabilitiesUnchanged"], st.unchanged)
			}
			if _, present := d["capabilitiesUnchanged"]; present && !st.unchanged {
				t.Error("capabilitiesUnchanged present on a full list")
			}
			// The context is always current, whatever the capability mode.
			if ids := pStrings(pContext(d)["recordIds"]); len(ids) == 0 {
				t.Error("no recordIds")
			}
		})
	}

	t.Run("open mode", func(t *testing.T) {
		s := pNewSurface(t, pScopePage(), nil)
		for i, want := range []bool{false, true, true} {
			d := pDescribe(t, s, `{"capabilities":"changed"}`)
			if got := d["capabilitiesUnchanged"] == true; got != want {
				t.Errorf("describe %d: unchanged = %v, want %v", i, got, want)
			}
		}
	})
}

func TestRegistryFailure(t *testing.T) {
	tests := []struct {
		name string
		reg  func(p *surfacetest.Page) surface.Registry
	}{
		{"error", func(p *surfacetest.Page) surface.Registry {
			p.ViewErr = errors.New("db down: password=hunter2")
			return p.View
		}},
		{"panic", func(p *surfacetest.Page) surface.Registry {
			p.ViewPanic = true
			return p.View
		}},
		{"nil view", func(*surfacetest.Page) surface.Registry {
			return func(context.Context, surface.ViewQuery) (*surface.View, error) { return nil, nil }
		}},
		{"panic with an error value", func(*surfacetest.Page) surface.Registry {
			return func(context.Context, surface.ViewQuery) (*surface.View, error) {
				panic(errors.New("secret=hunter2"))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := pScopePage()
			reg := tc.reg(page)
			s := pNewSurface(t, page, func(o *surface.Options) { o.Registry = reg })
			for _, req := range []string{pDescribeReq(""), pInvoke("i", "p.echo", `{}`)} {
				m := pDo(t, s, req)
				if pCode(m) != "INTERNAL_ERROR" {
					t.Errorf("code = %q, want INTERNAL_ERROR", pCode(m))
				}
				pNoDetail(t, m)
			}
			if n := len(page.Calls()); n != 0 {
				t.Errorf("executor calls = %d, want 0", n)
			}
			if _, err := s.Describe(context.Background(), surface.DescribeInput{}); !errors.Is(err, surface.CodeInternalError) {
				t.Errorf("Describe err = %v, want INTERNAL_ERROR", err)
			}
		})
	}
}

// An in-page Describe must not reset what an agent on the same session was
// last sent: otherwise the agent's next "changed" describe could be told
// "unchanged" after a change it never saw.
func TestInPageDescribeLeavesChangedAlone(t *testing.T) {
	page := pScopePage()
	sess := &pSessions{}
	all := []string{"orders.search", "update_note@order", "approve@order", "p.echo"}
	sess.set(pSession("s1", all...), nil)
	s := pNewSurface(t, page, func(o *surface.Options) { o.Session = sess.source })

	if d := pResult(t, pDo(t, s, pDescribeReq(`{"capabilities":"changed"}`))); len(d["capabilities"].([]any)) != 4 {
		t.Fatalf("first describe lists %v", d["capabilities"])
	}
	sess.set(pSession("s1", all[:3]...), nil) // a narrower grant
	in, err := s.Describe(context.Background(), surface.DescribeInput{Changed: true})
	if err != nil {
		t.Fatal(err)
	}
	if in.CapabilitiesUnchanged || len(in.Capabilities) != 3 {
		t.Fatalf("in-page describe: unchanged=%v, %d listed", in.CapabilitiesUnchanged, len(in.Capabilities))
	}
	d := pResult(t, pDo(t, s, pDescribeReq(`{"capabilities":"changed"}`)))
	if d["capabilitiesUnchanged"] == true || len(d["capabilities"].([]any)) != 3 {
		t.Fatalf("agent after the change: unchanged=%v, capabilities=%v", d["capabilitiesUnchanged"], d["capabilities"])
	}
}
