package surface_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// cAfterJSON is the encoded after of r, or "" when it has none.
func cAfterJSON(t testing.TB, r *surface.Response) string {
	t.Helper()
	if r.After == nil {
		return ""
	}
	return cMarshal(t, r.After)
}

// TestAfterObservation: after names only what changed, on the target record
// and in the page state.
func TestAfterObservation(t *testing.T) {
	tests := []struct {
		name  string
		h     surfacetest.Handler // for "orders.custom" / "custom@order"
		cap   string
		input map[string]any
		limit surface.Limits
		want  string // encoded after; "" = none
	}{
		{
			name: "changed record field only",
			cap:  "update_note@order", input: map[string]any{"record": "SO-1002", "note": "call back"},
			want: `{"records":[{"id":"SO-1002","fields":{"note":"call back"}}]}`,
		},
		{
			name: "changed state key only",
			cap:  "orders.search", input: map[string]any{"query": "late"},
			want: `{"state":{"filter":"late"}}`,
		},
		{
			name: "no change",
			cap:  "update_note@order", input: map[string]any{"record": "SO-1002", "note": ""},
			want: "",
		},
		{
			name: "business failure changes nothing",
			cap:  "update_note@order", input: map[string]any{"record": "SO-1003", "note": "x"},
			want: "",
		},
		{
			name: "record and state, added and removed members",
			cap:  "custom@order", input: map[string]any{"record": "SO-1002"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				r := cFind(p, surfacetest.RecordID(c.Action))
				r.Fields["status"] = "shipped"
				r.Fields["tracking"] = "TRK-1"
				delete(r.Fields, "customer")
				p.State["page"] = json.Number("2")
				p.State["selected"] = "SO-1002"
				delete(p.State, "filter")
				return json.RawMessage(`{}`), nil
			},
			want: `{"records":[{"id":"SO-1002","fields":{"customer":null,"status":"shipped","tracking":"TRK-1"}}],` +
				`"state":{"filter":null,"page":2,"selected":"SO-1002"}}`,
		},
		{
			name: "other records are not reported",
			cap:  "custom@order", input: map[string]any{"record": "SO-1002"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				cFind(p, "SO-1001").Fields["note"] = "side effect"
				return json.RawMessage(`{}`), nil
			},
			want: "",
		},
		{
			name: "removed record",
			cap:  "custom@order", input: map[string]any{"record": "SO-1002"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				cRemove(p, surfacetest.RecordID(c.Action))
				return json.RawMessage(`{"title":"Archived"}`), nil
			},
			want: `{"records":[{"id":"SO-1002","removed":true}]}`,
		},
		{
			name: "removed record and state",
			cap:  "custom@order", input: map[string]any{"record": "SO-1004"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				cRemove(p, surfacetest.RecordID(c.Action))
				p.State["filter"] = "archived"
				return json.RawMessage(`{}`), nil
			},
			want: `{"records":[{"id":"SO-1004","removed":true}],"state":{"filter":"archived"}}`,
		},
		{
			name: "capped",
			cap:  "custom@order", input: map[string]any{"record": "SO-1001"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				r := cFind(p, surfacetest.RecordID(c.Action))
				for _, k := range []string{"a", "b", "c", "note"} {
					r.Fields[k] = "v-" + k
				}
				for _, k := range []string{"s1", "s2", "s3"} {
					p.State[k] = k
				}
				return json.RawMessage(`{}`), nil
			},
			limit: surface.Limits{MaxAfterFields: 2, MaxAfterState: 1},
			want: `{"records":[{"id":"SO-1001","fields":{"a":"v-a","b":"v-b"},"fieldsOmitted":2}],` +
				`"state":{"s1":"s1"},"stateOmitted":2}`,
		},
		{
			name: "default caps",
			cap:  "custom@order", input: map[string]any{"record": "SO-1001"},
			h: func(p *surfacetest.Page, c surface.Call) (json.RawMessage, error) {
				r := cFind(p, surfacetest.RecordID(c.Action))
				for i := 0; i < surface.DefaultLimits.MaxAfterFields+5; i++ {
					r.Fields[fmt.Sprintf("f%02d", i)] = i
				}
				return json.RawMessage(`{}`), nil
			},
			want: "max-fields",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			if tt.h != nil {
				cAddAction(page, surface.Action{ID: "custom@order", Record: &surface.RecordTemplate{Kind: "order"}}, tt.h)
			}
			f := cNewFix(t, page, surface.Options{Limits: tt.limit})
			r := f.handle(cInvoke("i", tt.cap, tt.input))
			cCheck(t, r, "")
			got := cAfterJSON(t, r)
			if tt.want == "max-fields" {
				rec := r.After.Records
				if len(rec) != 1 || len(rec[0].Fields) != surface.DefaultLimits.MaxAfterFields || rec[0].FieldsOmitted != 5 {
					t.Fatalf("after = %s", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("after = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

// TestAfterAbsentWhenUnchanged: the encoded response has no after member
// when nothing observable changed.
func TestAfterAbsentWhenUnchanged(t *testing.T) {
	f := cNewFix(t, nil, surface.Options{})
	out := f.s.HandleJSON(context.Background(), cInvoke("i", "update_note@order", map[string]any{"record": "SO-1001", "note": ""}))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["after"]; ok {
		t.Fatalf("unchanged page produced an after: %s", out)
	}
	if string(m["ok"]) != "true" {
		t.Fatalf("response: %s", out)
	}
}

func cFind(p *surfacetest.Page, id string) *surface.Record {
	for i := range p.Records {
		if p.Records[i].ID == id {
			return &p.Records[i]
		}
	}
	panic("no record " + id)
}

func cRemove(p *surfacetest.Page, id string) {
	for i := range p.Records {
		if p.Records[i].ID == id {
			p.Records = append(p.Records[:i], p.Records[i+1:]...)
			return
		}
	}
}

// cFlakyRegistry fails (or panics) from read number failFrom on.
type cFlakyRegistry struct {
	inner    surface.Registry
	failFrom int
	panics   bool

	mu    sync.Mutex
	reads int
}

func (r *cFlakyRegistry) View(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
	r.mu.Lock()
	r.reads++
	n := r.reads
	r.mu.Unlock()
	if n >= r.failFrom {
		if r.panics {
			panic("registry broke")
		}
		return nil, errors.New("registry unavailable")
	}
	return r.inner(ctx, q)
}

// TestAfterRegistryFailsAfterExecute: the executor has run, so a page that
// cannot be read again costs the after, not the call.
func TestAfterRegistryFailsAfterExecute(t *testing.T) {
	tests := []struct {
		name   string
		panics bool
		nilErr bool
		cap    string
		input  map[string]any
	}{
		{"error, folded template", false, false, "update_note@order", map[string]any{"record": "SO-1002", "note": "x"}},
		{"panic, folded template", true, false, "update_note@order", map[string]any{"record": "SO-1002", "note": "x"}},
		{"error, plain capability", false, false, "orders.search", map[string]any{"query": "x"}},
		{"panic, plain capability", true, false, "orders.search", map[string]any{"query": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := surfacetest.Orders(4)
			reg := &cFlakyRegistry{inner: page.View, failFrom: 2, panics: tt.panics}
			f := cNewFix(t, page, surface.Options{Registry: reg.View})
			r := f.handle(cInvoke("i", tt.cap, tt.input))
			cCheck(t, r, "")
			if r.After != nil {
				t.Fatalf("after = %s, want none", cMarshal(t, r.After))
			}
			if n := cCalls(f); n != 1 {
				t.Fatalf("executor ran %d times, want 1", n)
			}
			if reg.reads != 2 {
				t.Fatalf("registry read %d times, want 2 (one before, one after)", reg.reads)
			}
		})
	}
	t.Run("registry returns nil view", func(t *testing.T) {
		page := surfacetest.Orders(4)
		calls := 0
		reg := func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
			calls++
			if calls >= 2 {
				return nil, nil
			}
			return page.View(ctx, q)
		}
		f := cNewFix(t, page, surface.Options{Registry: reg})
		r := f.handle(cInvoke("i", "orders.search", map[string]any{"query": "x"}))
		cCheck(t, r, "")
		if r.After != nil || cCalls(f) != 1 {
			t.Fatalf("after = %v, calls = %d", r.After, cCalls(f))
		}
	})
}
