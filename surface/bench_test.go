package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// Benchmarks of the kernel's request path. Names are stable and
// benchstat-friendly (sub-benchmarks use key=value).

// cNoAudit is an audit sink that keeps nothing, so benchmarks pay for
// building events but not for storing them.
func cNoAudit(context.Context, surface.AuditEvent) error { return nil }

// BenchmarkDecodeEnvelope measures strict decoding plus the envelope
// checks: the session source answers no session, so the request stops at
// step 2 and the cost is dominated by decoding the body.
func BenchmarkDecodeEnvelope(b *testing.B) {
	ids := make([]string, surface.MaxRecordSelection)
	for i := range ids {
		ids[i] = fmt.Sprintf("SO-%d", 1001+i)
	}
	bodies := []struct {
		name string
		req  []byte
	}{
		{"body=describe", cDescribe("bench-1")},
		{"body=describe-20-ids", cRequest("bench-1", "describe", "", map[string]any{"record": ids})},
		{"body=invoke-4KiB", cInvoke("bench-1", "update_note@order", map[string]any{"record": "SO-1001", "note": strings.Repeat("n", 4<<10)})},
	}
	for _, bb := range bodies {
		b.Run(bb.name, func(b *testing.B) {
			f := cNewFix(b, surfacetest.Orders(8), surface.Options{Session: surface.StaticSession(nil), OnAudit: cNoAudit})
			ctx := context.Background()
			if r := f.handle(bb.req); cCode(r) != surface.CodeSessionRequired {
				b.Fatalf("setup: %s", cMarshal(b, r))
			}
			b.SetBytes(int64(len(bb.req)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.s.Handle(ctx, bb.req)
			}
		})
	}
}

// cBenchPage is surfacetest.Orders(records) with synthetic actions added up
// to actions in total, and a session scoped to all of them.
func cBenchPage(records, actions int) (*surfacetest.Page, *surface.Session) {
	page := surfacetest.Orders(records)
	sess := cSession("bench")
	page.Lock(func(p *surfacetest.Page) {
		for i := len(p.Actions); i < actions; i++ {
			id := fmt.Sprintf("orders.extra_%02d", i)
			p.Actions = append(p.Actions, surface.Action{
				ID: id, Description: "Synthetic action " + strconv.Itoa(i), Effect: "read", Approval: "none",
				InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"v%d":{"type":"string"}},"additionalProperties":false}`, i)),
				ScopePath:   []string{"orders", "toolbar"},
			})
			sess.Scope = append(sess.Scope, id)
		}
	})
	return page, sess
}

// BenchmarkDescribe: a 48-order page with 50 actions and the default window
// of 8 records, through HandleJSON (decode, session, describe, encode).
func BenchmarkDescribe(b *testing.B) {
	page, sess := cBenchPage(48, 50)
	f := cNewFix(b, page, surface.Options{Session: surface.StaticSession(sess), OnAudit: cNoAudit})
	req := cDescribe("bench-describe")
	ctx := context.Background()
	r := f.handle(req)
	cCheck(b, r, "")
	d := r.Result.(*surface.Description)
	if len(d.Capabilities) != 50 || len(d.Context.Records) != surface.DefaultRecordLimit {
		b.Fatalf("setup: %d capabilities, %d records", len(d.Capabilities), len(d.Context.Records))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.s.HandleJSON(ctx, req)
	}
}

// cLazyTable is a registry over a table of n orders that materialises only
// the records a query asks for, as a page with a virtualised table would.
// surfacetest.Page scans every record on each read, which would measure
// the fixture rather than the kernel.
type cLazyTable struct {
	n       int
	actions []surface.Action
}

func newLazyTable(n int) *cLazyTable {
	t := &cLazyTable{n: n, actions: surfacetest.Orders(0).Actions}
	for i := range t.actions {
		if r := t.actions[i].Record; r != nil {
			c := *r
			c.Total = n
			t.actions[i].Record = &c
		}
	}
	return t
}

func (t *cLazyTable) record(i int) surface.Record {
	return surface.Record{ID: "SO-" + strconv.Itoa(1001+i), Kind: "order",
		Fields: map[string]any{"customer": "Customer " + strconv.Itoa(i+1), "note": "", "status": "open"}}
}

func (t *cLazyTable) View(_ context.Context, q surface.ViewQuery) (*surface.View, error) {
	v := &surface.View{
		Route:          "/orders",
		Actions:        t.actions,
		Regions:        []surface.Region{{ID: "orders", Label: "Orders"}},
		State:          map[string]any{"filter": "all"},
		RecordsTotal:   t.n,
		RecordIDsTotal: t.n,
	}
	for i := 0; i < t.n && i < q.MaxRecordIDs; i++ {
		v.RecordIDs = append(v.RecordIDs, "SO-"+strconv.Itoa(1001+i))
	}
	for _, id := range q.IDs {
		if k, err := strconv.Atoi(strings.TrimPrefix(id, "SO-")); err == nil && k >= 1001 && k < 1001+t.n {
			v.Records = append(v.Records, t.record(k-1001))
		}
	}
	for i := q.Offset; q.IDs == nil && i < t.n && i < q.Offset+q.Limit; i++ {
		v.Records = append(v.Records, t.record(i))
	}
	return v, nil
}

// BenchmarkDescribeLargeTable compares a 100-record table with a
// 100,000-record one: the kernel reads only the window, so the two should
// cost about the same.
func BenchmarkDescribeLargeTable(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run("records="+strconv.Itoa(n), func(b *testing.B) {
			table := newLazyTable(n)
			page := surfacetest.Orders(0)
			f := cNewFix(b, page, surface.Options{Registry: table.View, Session: surface.StaticSession(cSession("bench")),
				OnAudit: cNoAudit})
			req := cDescribe("bench-large")
			ctx := context.Background()
			r := f.handle(req)
			cCheck(b, r, "")
			if c := r.Result.(*surface.Description).Context; c.RecordsTotal != n || len(c.Records) != surface.DefaultRecordLimit {
				b.Fatalf("setup: total %d, %d records", c.RecordsTotal, len(c.Records))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.s.HandleJSON(ctx, req)
			}
		})
	}
}

// BenchmarkInvoke: a folded update_note@order on a 48-order page through
// HandleJSON. controls=all turns on everything a production page would: a
// verified session with a scope, the replay guard (a fresh id each
// iteration), a rate limit with a budget large enough never to refuse,
// schema validation and an audit sink. controls=none is open mode with
// no audit, for the overhead.
func BenchmarkInvoke(b *testing.B) {
	modes := []struct {
		name string
		opts func(sess *surface.Session) surface.Options
	}{
		{"controls=all", func(sess *surface.Session) surface.Options {
			return surface.Options{
				Session:   surface.StaticSession(sess),
				Replay:    &surface.ReplayOptions{Window: time.Minute},
				RateLimit: &surface.RateLimitOptions{MaxRequests: 100_000, Window: time.Minute},
				OnAudit:   cNoAudit,
			}
		}},
		{"controls=none", func(*surface.Session) surface.Options { return surface.Options{} }},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			page, sess := cBenchPage(48, 50)
			clock := surfacetest.NewClock()
			opts := m.opts(sess)
			opts.Registry, opts.Execute, opts.Now = page.View, page.Execute, clock.Now
			s, err := surface.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			cRunInvokes(b, clock, func(req []byte) []byte { return s.HandleJSON(ctx, req) })
			if n := len(page.Calls()); n != b.N+1 {
				b.Fatalf("executor ran %d times for %d invokes", n, b.N+1)
			}
		})
	}
}

// cStaticPage answers every read with one of two prepared views (the
// record before and after the update, in turn) and runs no executor work,
// so that BenchmarkInvokeKernel measures the kernel alone: the in-memory
// page behind BenchmarkInvoke copies its records on every read, which costs
// more than the kernel does.
type cStaticPage struct {
	views [2]*surface.View
	reads int
}

func (p *cStaticPage) View(context.Context, surface.ViewQuery) (*surface.View, error) {
	v := *p.views[p.reads%2]
	p.reads++
	return &v, nil
}

func (*cStaticPage) Execute(context.Context, surface.Call) (json.RawMessage, error) {
	return json.RawMessage(`{"title":"Note updated"}`), nil
}

// BenchmarkInvokeKernel is BenchmarkInvoke/controls=all over a page that
// costs nothing to read or run.
func BenchmarkInvokeKernel(b *testing.B) {
	page, sess := cBenchPage(48, 50)
	ctx := context.Background()
	var static cStaticPage
	for i := range static.views {
		v, err := page.View(ctx, surface.ViewQuery{IDs: []string{"SO-1002"}})
		if err != nil || len(v.Records) != 1 {
			b.Fatalf("setup: %v", err)
		}
		v.ActionsVersion = "v1" // as a page with version() gives it
		v.Records[0].Fields["note"] = "note " + strconv.Itoa(i)
		static.views[i] = v
	}
	clock := surfacetest.NewClock()
	s, err := surface.New(surface.Options{
		Registry: static.View, Execute: static.Execute, Now: clock.Now,
		Session:   surface.StaticSession(sess),
		Replay:    &surface.ReplayOptions{Window: time.Minute},
		RateLimit: &surface.RateLimitOptions{MaxRequests: 100_000, Window: time.Minute},
		OnAudit:   cNoAudit,
	})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 0, 4096)
	cRunInvokes(b, clock, func(req []byte) []byte {
		x := s.Begin(out[:0], req, true)
		s.Drive(ctx, x)
		out, _, _ = x.Reply()
		x.Release()
		return out
	})
}

// cRunInvokes checks that a first invoke succeeds and reports a change,
// then times b.N more through handle, each checked. The clock moves one
// millisecond per request, which keeps the live replay claims and
// rate-limit entries at most one minute's worth.
func cRunInvokes(b *testing.B, clock *surfacetest.Clock, handle func(req []byte) []byte) {
	b.Helper()
	req := cNoteInvoke(make([]byte, 0, 256), -1)
	if out := handle(req); !bytes.Contains(out, []byte(`"ok":true`)) || !bytes.Contains(out, []byte(`"after"`)) {
		b.Fatalf("setup: %s", out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clock.Advance(time.Millisecond)
		req = cNoteInvoke(req[:0], i)
		if out := handle(req); !bytes.Contains(out, []byte(`"ok":true`)) {
			b.Fatalf("response %s", out)
		}
	}
	b.StopTimer()
}

// cNoteInvoke appends the i-th request of the invoke benchmarks: an
// update_note@order on SO-1002 whose id is new every time and whose note
// alternates, so that the replay guard accepts it and the record changes.
// Bodies are built in place: the benchmark should not measure their making.
func cNoteInvoke(dst []byte, i int) []byte {
	dst = append(dst, `{"protocol":"pling.surface/0.1","method":"invoke","capability":"update_note@order","id":"bench-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `","input":{"record":"SO-1002","note":"n`...)
	dst = strconv.AppendInt(dst, int64(i%2), 10)
	return append(dst, `"}}`...)
}
