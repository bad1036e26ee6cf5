package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

func TestInvokeRecord(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		records    int
		describe   bool // describe before invoking
		capability string
		record     string
		input      any
		want       string // outcome, or a local error below
		local      error
		wantSent   []string // methods sent, in order
		wantAction string   // the concrete action the executor ran
	}{
		{name: "folded template", records: 5, describe: true, capability: "update_note@order", record: "SO-1002",
			input: map[string]any{"note": "call"}, want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "update_note@order:SO-1002"},
		{name: "raw input", records: 5, describe: true, capability: "update_note@order", record: "SO-1002",
			input: json.RawMessage(` { "note" : "call" } `), want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "update_note@order:SO-1002"},
		{name: "no input", records: 5, describe: true, capability: "approve@order", record: "SO-1004",
			want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "approve@order:SO-1004"},
		{name: "describes first when it has no list", records: 5, capability: "update_note@order", record: "SO-1001",
			input: map[string]any{"note": "x"}, want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "update_note@order:SO-1001"},
		{name: "its own record parameter", records: 5, describe: true, capability: "tag@order", record: "SO-1003",
			input: map[string]any{"tag": "vip"}, want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "tag@order:SO-1003"},
		{name: "the same record in input too", records: 5, describe: true, capability: "update_note@order", record: "SO-1002",
			input: map[string]any{"note": "x", "record": "SO-1002"}, want: "success", wantSent: []string{"describe", "invoke"}, wantAction: "update_note@order:SO-1002"},
		{name: "business failure", records: 5, describe: true, capability: "update_note@order", record: "SO-1003",
			input: map[string]any{"note": "x"}, want: "business:ACTION_UNAVAILABLE", wantSent: []string{"describe", "invoke"}, wantAction: "update_note@order:SO-1003"},
		{name: "never offered, full list", records: 5, describe: true, capability: "update_note@order", record: "SO-9999",
			input: map[string]any{"note": "x"}, local: client.ErrUnknownRecord, wantSent: []string{"describe"}},
		{name: "another record in input", records: 5, describe: true, capability: "update_note@order", record: "SO-1002",
			input: map[string]any{"note": "x", "record": "SO-1001"}, local: client.ErrInvalidInput, wantSent: []string{"describe"}},
		{name: "case variant of the parameter", records: 5, describe: true, capability: "update_note@order", record: "SO-1002",
			input: map[string]any{"note": "x", "Record": "SO-1001"}, local: client.ErrInvalidInput, wantSent: []string{"describe"}},
		{name: "not a template", records: 5, describe: true, capability: "orders.search", record: "SO-1002",
			local: client.ErrNotTemplate, wantSent: []string{"describe"}},
		{name: "not listed", records: 5, describe: true, capability: "delete@order", record: "SO-1002",
			local: client.ErrNotTemplate, wantSent: []string{"describe"}},
		{name: "empty record id", records: 5, describe: true, capability: "update_note@order", record: "",
			local: client.ErrInvalidInput, wantSent: []string{"describe"}},
		// 250 records: recordIds stops at 200, so an id past it is looked up.
		{name: "past the listed ids", records: 250, describe: true, capability: "update_note@order", record: "SO-1240",
			input: map[string]any{"note": "x"}, want: "success", wantSent: []string{"describe", "describe", "invoke"}, wantAction: "update_note@order:SO-1240"},
		{name: "past the listed ids, unknown", records: 250, describe: true, capability: "update_note@order", record: "SO-9999",
			input: map[string]any{"note": "x"}, local: client.ErrUnknownRecord, wantSent: []string{"describe", "describe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel(t, kernelConfig{records: tt.records, replay: true})
			w := &wire{next: client.KernelTransport(k.s)}
			c := client.New(w, fast(client.Options{App: "orders"}))
			if tt.describe {
				if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := c.InvokeRecord(ctx, tt.capability, tt.record, tt.input, client.InvokeOptions{})
			if tt.local != nil {
				if r != nil || !errors.Is(err, tt.local) {
					t.Fatalf("got %+v, %v; want %v", r, err, tt.local)
				}
			} else if got := outcome(r, err); got != tt.want {
				t.Fatalf("outcome %s (%v), want %s", got, err, tt.want)
			}
			var sent []string
			for _, r := range w.requests() {
				sent = append(sent, r.Method)
			}
			if !slices.Equal(sent, tt.wantSent) {
				t.Fatalf("sent %v, want %v", sent, tt.wantSent)
			}
			calls := k.page.Calls()
			if tt.wantAction == "" {
				if len(calls) != 0 {
					t.Fatalf("executor ran %v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].Action != tt.wantAction {
				t.Fatalf("executor ran %+v, want %s", calls, tt.wantAction)
			}
			// The record parameter reaches the kernel, never the executor.
			var in map[string]any
			_ = json.Unmarshal(calls[0].Input, &in)
			if _, leaked := in["record"]; leaked {
				t.Fatalf("executor input %s", calls[0].Input)
			}
		})
	}
}

func TestInvokeRecordAfterNavigation(t *testing.T) {
	ctx := context.Background()
	k := newKernel(t, kernelConfig{records: 5})
	c := client.New(client.KernelTransport(k.s), fast(client.Options{}))
	if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
		t.Fatal(err)
	}
	// Another view with other records: the ids of the old one are forgotten.
	k.page.Lock(func(p *surfacetest.Page) {
		p.Route = "/archive"
		p.Records = []surface.Record{{ID: "AR-1", Kind: "order", Fields: map[string]any{"note": ""}}}
	})
	if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InvokeRecord(ctx, "update_note@order", "SO-1001", map[string]any{"note": "x"}, client.InvokeOptions{}); !errors.Is(err, client.ErrUnknownRecord) {
		t.Fatalf("old id after navigation: %v", err)
	}
	if r, err := c.InvokeRecord(ctx, "update_note@order", "AR-1", map[string]any{"note": "x"}, client.InvokeOptions{}); err != nil || r.Kind != client.Success {
		t.Fatalf("new id: %+v %v", r, err)
	}
}

func TestRecords(t *testing.T) {
	ctx := context.Background()
	ids := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("SO-%d", 1001+i))
		}
		return out
	}
	tests := []struct {
		name      string
		records   int
		pageSize  int
		stopAfter int // 0: read everything
		want      []string
		describes int
	}{
		{name: "pages of 5", records: 23, pageSize: 5, want: ids(23), describes: 5},
		{name: "exact pages", records: 10, pageSize: 5, want: ids(10), describes: 2},
		{name: "the surface's default window", records: 20, want: ids(20), describes: 3},
		{name: "a page larger than the surface allows", records: 150, pageSize: 500, want: ids(150), describes: 2},
		{name: "empty table", records: 0, pageSize: 5, want: nil, describes: 1},
		{name: "stop early", records: 23, pageSize: 5, stopAfter: 7, want: ids(7), describes: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKernel(t, kernelConfig{records: tt.records})
			if tt.records == 0 {
				k.page.Lock(func(p *surfacetest.Page) { p.Records = nil })
			}
			w := &wire{next: client.KernelTransport(k.s)}
			c := client.New(w, fast(client.Options{}))
			var got []string
			for r, err := range c.Records(ctx, tt.pageSize) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.ID)
				if len(got) == tt.stopAfter {
					break
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %d records %v, want %d", len(got), got, len(tt.want))
			}
			if n := len(w.requests()); n != tt.describes {
				t.Fatalf("%d describes, want %d", n, tt.describes)
			}
		})
	}
	t.Run("paged records become referenceable", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 250})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, fast(client.Options{}))
		for _, err := range c.Records(ctx, 100) {
			if err != nil {
				t.Fatal(err)
			}
		}
		before := len(w.requests())
		if _, err := c.InvokeRecord(ctx, "update_note@order", "SO-1240", map[string]any{"note": "x"}, client.InvokeOptions{}); err != nil {
			t.Fatal(err)
		}
		if n := len(w.requests()) - before; n != 1 {
			t.Fatalf("%d requests for an id already paged through, want the invoke only", n)
		}
	})
	t.Run("an empty page short of the total", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 7, wrap: func(r registry) registry {
			return func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
				v, err := r(ctx, q)
				if err == nil && q.Offset >= 5 {
					v.Records, v.RecordsTotal = nil, 7 // claims seven, shows five
				}
				return v, err
			}
		}})
		c := client.New(client.KernelTransport(k.s), fast(client.Options{}))
		n, failed := 0, false
		for _, err := range c.Records(ctx, 5) {
			if err != nil {
				failed = true
				continue
			}
			n++
		}
		if n != 5 || !failed {
			t.Fatalf("%d records, failed %v: want 5 and a failure", n, failed)
		}
	})
	t.Run("a page that claims records without end", func(t *testing.T) {
		// One record a page, whatever the offset, of a total that never
		// comes: the iteration stops at MaxRecords and says so.
		endless := func(max int) (records, describes int, last error) {
			k := newKernel(t, kernelConfig{records: 1, wrap: func(r registry) registry {
				return func(ctx context.Context, q surface.ViewQuery) (*surface.View, error) {
					v, err := r(ctx, q)
					if err == nil && q.IDs == nil {
						v.Records = []surface.Record{{ID: fmt.Sprintf("R-%d", q.Offset), Fields: map[string]any{"n": 1}}}
						v.RecordsTotal = 1e15
					}
					return v, err
				}
			}})
			w := &wire{next: client.KernelTransport(k.s)}
			c := client.New(w, fast(client.Options{MaxRecords: max}))
			for _, err := range c.Records(ctx, 5) {
				if err != nil {
					last = err
					continue
				}
				if records++; records > 5000 {
					break // the test's own bound: the client has none
				}
			}
			return records, len(w.requests()), last
		}
		n, describes, err := endless(0)
		if n != client.DefaultMaxRecords || describes != client.DefaultMaxRecords || !errors.Is(err, client.ErrRecordLimit) {
			t.Fatalf("%d records in %d describes, then %v: want %d, %d and ErrRecordLimit", n, describes, err, client.DefaultMaxRecords, client.DefaultMaxRecords)
		}
		if n, _, err := endless(1500); n != 1500 || !errors.Is(err, client.ErrRecordLimit) {
			t.Fatalf("MaxRecords 1500: %d records, then %v", n, err)
		}
	})
	t.Run("MaxRecords reached exactly at the end", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 20})
		c := client.New(client.KernelTransport(k.s), fast(client.Options{MaxRecords: 20}))
		n := 0
		for _, err := range c.Records(ctx, 7) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 20 {
			t.Fatalf("%d records, want 20", n)
		}
	})
	t.Run("MaxRecords short of the total", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 20})
		w := &wire{next: client.KernelTransport(k.s)}
		c := client.New(w, fast(client.Options{MaxRecords: 12}))
		n, failed := 0, error(nil)
		for _, err := range c.Records(ctx, 5) {
			if err != nil {
				failed = err
				continue
			}
			n++
		}
		if n != 12 || !errors.Is(failed, client.ErrRecordLimit) || len(w.requests()) != 3 {
			t.Fatalf("%d records in %d describes, then %v: want 12 in 3 and ErrRecordLimit", n, len(w.requests()), failed)
		}
	})
	t.Run("navigation while paging", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 12})
		c := client.New(client.KernelTransport(k.s), fast(client.Options{}))
		n, failed := 0, false
		for _, err := range c.Records(ctx, 5) {
			if err != nil {
				failed = true
				continue
			}
			if n++; n == 5 {
				k.page.Lock(func(p *surfacetest.Page) { p.Route = "/elsewhere" })
			}
		}
		if n != 5 || !failed {
			t.Fatalf("%d records, failed %v: want 5 and a failure", n, failed)
		}
	})
	t.Run("a protocol failure ends the iteration", func(t *testing.T) {
		k := newKernel(t, kernelConfig{records: 12})
		k.revoke()
		c := client.New(client.KernelTransport(k.s), fast(client.Options{}))
		var errs []error
		for _, err := range c.Records(ctx, 5) {
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.Is(errs[0], surface.CodeSessionRevoked) {
			t.Fatalf("got %v", errs)
		}
	})
}

func TestSyncCapabilities(t *testing.T) {
	ctx := context.Background()
	k := newKernel(t, kernelConfig{records: 3})
	w := &wire{next: client.KernelTransport(k.s)}
	c := client.New(w, fast(client.Options{}))
	capIDs := func(d *client.Description) []string {
		var out []string
		for _, cp := range d.Capabilities {
			out = append(out, cp.ID)
		}
		return out
	}
	steps := []struct {
		name        string
		before      func()
		wantChanged bool
		wantWire    string // what the surface sent: "list" or "unchanged"
		wantIDs     []string
	}{
		{name: "first sync", before: func() { k.setScope("orders.search", "update_note@order") },
			wantChanged: true, wantWire: "list", wantIDs: []string{"orders.search", "update_note@order"}},
		{name: "nothing changed", wantChanged: false, wantWire: "unchanged", wantIDs: []string{"orders.search", "update_note@order"}},
		{name: "scope narrowed", before: func() { k.setScope("orders.search") },
			wantChanged: true, wantWire: "list", wantIDs: []string{"orders.search"}},
		{name: "stable again", wantChanged: false, wantWire: "unchanged", wantIDs: []string{"orders.search"}},
		// A full describe in between takes the new list first, so the
		// surface answers "unchanged"; the sync still reports the change
		// against the list it returned last.
		{name: "changed behind a describe", before: func() {
			k.setScope("orders.search", "approve@order")
			if _, err := c.Describe(ctx, client.DescribeInput{}); err != nil {
				t.Fatal(err)
			}
		}, wantChanged: true, wantWire: "unchanged", wantIDs: []string{"orders.search", "approve@order"}},
		// A route change makes the surface send the list again; it is the
		// same list, so nothing changed for the agent.
		{name: "navigation, same list", before: func() { k.page.Lock(func(p *surfacetest.Page) { p.Route = "/orders?page=2" }) },
			wantChanged: false, wantWire: "list", wantIDs: []string{"orders.search", "approve@order"}},
		{name: "page action removed", before: func() {
			k.page.Lock(func(p *surfacetest.Page) {
				p.Actions = slices.DeleteFunc(p.Actions, func(a surface.Action) bool { return a.ID == "approve@order" })
			})
		}, wantChanged: true, wantWire: "list", wantIDs: []string{"orders.search"}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		d, changed, err := c.SyncCapabilities(ctx)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if changed != st.wantChanged || !slices.Equal(capIDs(d), st.wantIDs) {
			t.Fatalf("%s: changed %v, list %v; want %v, %v", st.name, changed, capIDs(d), st.wantChanged, st.wantIDs)
		}
		if got := map[bool]string{false: "list", true: "unchanged"}[d.CapabilitiesUnchanged]; got != st.wantWire {
			t.Fatalf("%s: the surface sent %s, want %s", st.name, got, st.wantWire)
		}
		if len(d.Context.Records) != 0 {
			t.Fatalf("%s: sync asked for no records, got %d", st.name, len(d.Context.Records))
		}
	}
	// The first sync holds no list, so it must not ask for changes; every
	// later one does.
	syncs := 0
	for _, r := range w.requests() {
		if r.Input == nil {
			continue // the plain describe
		}
		want := `{"limit":0,"capabilities":"changed"}`
		if syncs == 0 {
			want = `{"limit":0}`
		}
		if string(r.Input) != want {
			t.Fatalf("sync %d sent %s, want %s", syncs, r.Input, want)
		}
		syncs++
	}
	if syncs != len(steps) {
		t.Fatalf("%d syncs on the wire, want %d", syncs, len(steps))
	}
}
