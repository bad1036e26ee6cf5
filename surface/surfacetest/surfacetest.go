// Package surfacetest provides an in-memory page and a fake clock for
// testing code built on package surface: its View and Execute methods are
// a surface.Options.Registry and Execute, it records every executor call,
// and it can be scripted to fail, panic, hang or report approval.
package surfacetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"pling.dev/agent/surface"
)

// Clock is a settable clock for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Epoch is the time a new Clock starts at.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// NewClock returns a clock standing at Epoch.
func NewClock() *Clock { return &Clock{t: Epoch} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock by d (which may be negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Handler runs one concrete action on the page. It is called with the page
// lock held, so it may change the page directly.
type Handler func(p *Page, call surface.Call) (json.RawMessage, error)

// Page is an in-memory page: a table of records, a state view and a set of
// actions, with handlers keyed by concrete action id or by template id.
type Page struct {
	mu sync.Mutex

	Route       string
	Actions     []surface.Action
	Records     []surface.Record // the active region, in display order
	Regions     []surface.Region
	State       map[string]any
	Feedback    []surface.Feedback
	Unavailable []surface.Unavailable
	Handlers    map[string]Handler
	// Blocking handlers run without the page lock, so they may wait (on
	// their context, say) while the page is read. Looked up before Handlers.
	Blocking map[string]func(ctx context.Context, call surface.Call) (json.RawMessage, error)

	// ViewErr, when set, makes every View fail.
	ViewErr error
	// ViewPanic, when set, makes every View panic.
	ViewPanic bool

	calls []surface.Call
	views int
}

// Lock runs f with the page locked, for changing it between calls.
func (p *Page) Lock(f func(p *Page)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// Calls returns a copy of the executor calls made so far.
func (p *Page) Calls() []surface.Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]surface.Call(nil), p.calls...)
}

// Views reports how many times the registry was read.
func (p *Page) Views() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.views
}

// Record returns a copy of the record with id, or nil.
func (p *Page) Record(id string) *surface.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.find(id); r != nil {
		c := copyRecord(*r)
		return &c
	}
	return nil
}

func (p *Page) find(id string) *surface.Record {
	for i := range p.Records {
		if p.Records[i].ID == id {
			return &p.Records[i]
		}
	}
	return nil
}

// View answers as surface.Options.Registry does. It copies everything it returns, so the
// kernel never shares memory with the page.
func (p *Page) View(_ context.Context, q surface.ViewQuery) (*surface.View, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.views++
	if p.ViewPanic {
		panic("surfacetest: view panics")
	}
	if p.ViewErr != nil {
		return nil, p.ViewErr
	}
	v := &surface.View{
		Route:          p.Route,
		Actions:        append([]surface.Action(nil), p.Actions...),
		Regions:        append([]surface.Region(nil), p.Regions...),
		State:          copyMap(p.State),
		Feedback:       append([]surface.Feedback(nil), p.Feedback...),
		Unavailable:    append([]surface.Unavailable(nil), p.Unavailable...),
		RecordsTotal:   len(p.Records),
		RecordIDsTotal: len(p.Records),
	}
	for i := range v.Actions {
		if t := v.Actions[i].Record; t != nil {
			c := *t
			c.Total = len(p.Records)
			c.Offscreen = 0
			for _, r := range p.Records {
				if r.Offscreen {
					c.Offscreen++
				}
			}
			v.Actions[i].Record = &c
		}
	}
	for i, r := range p.Records {
		if q.MaxRecordIDs > 0 && i >= q.MaxRecordIDs {
			break
		}
		v.RecordIDs = append(v.RecordIDs, r.ID)
	}
	if q.IDs != nil {
		for _, id := range q.IDs {
			if r := p.find(id); r != nil {
				v.Records = append(v.Records, copyRecord(*r))
			}
		}
		return v, nil
	}
	for i := q.Offset; i < len(p.Records) && i < q.Offset+q.Limit; i++ {
		v.Records = append(v.Records, copyRecord(p.Records[i]))
	}
	return v, nil
}

// Execute answers as surface.Options.Execute does: it records the call and runs the
// handler registered for the concrete action id, or else for its template
// (the part before ':').
func (p *Page) Execute(ctx context.Context, call surface.Call) (json.RawMessage, error) {
	p.mu.Lock()
	p.calls = append(p.calls, call)
	if b := p.Blocking[call.Action]; b != nil {
		p.mu.Unlock()
		return b(ctx, call)
	}
	h := p.Handlers[call.Action]
	if h == nil {
		if i := strings.LastIndexByte(call.Action, ':'); i >= 0 {
			h = p.Handlers[call.Action[:i]]
		}
	}
	if h == nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("surfacetest: no handler for %q", call.Action)
	}
	// Deferred so that a panicking handler (orders.panic) does not leave
	// the page locked for every later View.
	defer p.mu.Unlock()
	return h(p, call)
}

// RecordID returns the record part of a concrete action id "template:record".
func RecordID(action string) string {
	if i := strings.LastIndexByte(action, ':'); i >= 0 {
		return action[i+1:]
	}
	return ""
}

func copyRecord(r surface.Record) surface.Record {
	r.Fields = copyMap(r.Fields)
	if r.Actions != nil {
		m := make(map[string]string, len(r.Actions))
		for k, v := range r.Actions {
			m[k] = v
		}
		r.Actions = m
	}
	return r
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Orders returns the orders page the project's tests and demo share in
// spirit: n orders SO-1001..., SO-1003 locked, and these actions:
//
//	orders.search      read, no input record
//	update_note@order  write, approval "ask", input {note: string}
//	approve@order      write, approval "always": answers approval pending
//	orders.fail        executor returns a Go error
//	orders.panic       executor panics
//	orders.hang        executor blocks until its context ends
func Orders(n int) *Page {
	p := &Page{
		Route:   "/orders",
		Regions: []surface.Region{{ID: "orders", Label: "Orders"}},
		State:   map[string]any{"filter": "all", "page": json.Number("1")},
		Actions: []surface.Action{
			{ID: "orders.search", Description: "Search orders", Effect: "read", Approval: "none",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"additionalProperties":false}`)},
			{ID: "update_note@order", Description: "Change an order's note", Effect: "write", Approval: "ask",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","maxLength":500}},"required":["note"],"additionalProperties":false}`),
				Record:      &surface.RecordTemplate{Kind: "order"}},
			{ID: "approve@order", Description: "Approve an order", Effect: "write", Approval: "always",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
				Record:      &surface.RecordTemplate{Kind: "order"}},
			{ID: "orders.fail", Effect: "write"},
			{ID: "orders.panic", Effect: "write"},
			{ID: "orders.hang", Effect: "write"},
		},
		Handlers: map[string]Handler{},
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("SO-%d", 1001+i)
		p.Records = append(p.Records, surface.Record{
			ID: id, Kind: "order",
			Fields: map[string]any{"customer": fmt.Sprintf("Customer %d", i+1), "note": "", "status": "open"},
		})
	}
	if r := p.find("SO-1003"); r != nil {
		r.Fields["status"] = "locked"
	}
	p.Handlers["orders.search"] = func(p *Page, call surface.Call) (json.RawMessage, error) {
		var in struct{ Query string }
		_ = json.Unmarshal(call.Input, &in)
		p.State["filter"] = in.Query
		return json.RawMessage(`{"title":"Search applied"}`), nil
	}
	p.Handlers["update_note@order"] = func(p *Page, call surface.Call) (json.RawMessage, error) {
		r := p.find(RecordID(call.Action))
		if r == nil {
			return json.RawMessage(`{"error":{"code":"NOT_FOUND","message":"no such order"}}`), nil
		}
		if r.Fields["status"] == "locked" {
			return json.RawMessage(`{"error":{"code":"ACTION_UNAVAILABLE","message":"order is locked"}}`), nil
		}
		var in struct{ Note string }
		if err := json.Unmarshal(call.Input, &in); err != nil {
			return nil, err
		}
		r.Fields["note"] = in.Note
		return json.RawMessage(`{"title":"Note updated"}`), nil
	}
	p.Handlers["approve@order"] = func(p *Page, call surface.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"title":"Approval requested","approval":{"status":"pending","requestedBy":"agent"}}`), nil
	}
	p.Handlers["orders.fail"] = func(*Page, surface.Call) (json.RawMessage, error) {
		return nil, errors.New("backend exploded: secret=hunter2")
	}
	p.Handlers["orders.panic"] = func(*Page, surface.Call) (json.RawMessage, error) {
		panic("executor panics: secret=hunter2")
	}
	p.Blocking = map[string]func(context.Context, surface.Call) (json.RawMessage, error){
		"orders.hang": func(ctx context.Context, _ surface.Call) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	return p
}
