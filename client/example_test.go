package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pling.dev/agent/client"
	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// ordersSurface is the in-memory orders page behind an in-process surface
// with a replay guard, as a native host would embed it.
func ordersSurface(records int) (*surfacetest.Page, *surface.Surface) {
	page := surfacetest.Orders(records)
	s, err := surface.New(surface.Options{
		Registry: page.View, Execute: page.Execute, Now: surfacetest.NewClock().Now,
		App: "orders", Replay: &surface.ReplayOptions{},
	})
	if err != nil {
		panic(err)
	}
	return page, s
}

// Every invoke ends in exactly one of success, business failure, protocol
// failure, or an error without a usable reply.
func ExampleClient_Invoke() {
	_, s := ordersSurface(3)
	c := client.New(client.KernelTransport(s), client.Options{App: "orders"})
	ctx := context.Background()

	report := func(r *client.Result, err error) {
		var perr *client.ProtocolError
		switch {
		case errors.As(err, &perr):
			fmt.Println("protocol failure:", perr.Code)
		case err != nil:
			fmt.Println("no usable reply:", err)
		case r.Kind == client.BusinessFailure:
			fmt.Println("business failure:", r.Code, "-", r.Message)
		case r.Approval == client.ApprovalPending:
			fmt.Println("waiting for approval")
		default:
			fmt.Println("success:", string(r.Value))
		}
	}
	report(c.Invoke(ctx, "orders.search", map[string]any{"query": "acme"}, client.InvokeOptions{}))
	report(c.Invoke(ctx, "update_note@order", map[string]any{"record": "SO-1003", "note": "x"}, client.InvokeOptions{}))
	report(c.Invoke(ctx, "approve@order", map[string]any{"record": "SO-1001"}, client.InvokeOptions{}))
	report(c.Invoke(ctx, "orders.delete_all", nil, client.InvokeOptions{}))
	// Output:
	// success: {"title":"Search applied"}
	// business failure: ACTION_UNAVAILABLE - order is locked
	// waiting for approval
	// protocol failure: CAPABILITY_NOT_EXPOSED
}

// InvokeRecord finds the template's record parameter and checks the record
// id against what the surface offered before anything is sent.
func ExampleClient_InvokeRecord() {
	_, s := ordersSurface(3)
	c := client.New(client.KernelTransport(s), client.Options{App: "orders"})
	ctx := context.Background()

	d, err := c.Describe(ctx, client.DescribeInput{})
	if err != nil {
		panic(err)
	}
	cp, _ := d.Capability("update_note@order")
	fmt.Println("record parameter:", cp.Record.Param, "of", cp.Record.Total, "records")

	r, err := c.InvokeRecord(ctx, "update_note@order", "SO-1002", map[string]any{"note": "Call Friday"}, client.InvokeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Kind, string(r.Value))
	fmt.Println("after:", r.After.Records[0].ID, r.After.Records[0].Fields["note"])

	_, err = c.InvokeRecord(ctx, "update_note@order", "SO-4711", map[string]any{"note": "x"}, client.InvokeOptions{})
	fmt.Println(errors.Is(err, client.ErrUnknownRecord))
	// Output:
	// record parameter: record of 3 records
	// success {"title":"Note updated"}
	// after: SO-1002 Call Friday
	// true
}

// Records pages through the page's records with offset and limit.
func ExampleClient_Records() {
	_, s := ordersSurface(12)
	c := client.New(client.KernelTransport(s), client.Options{})
	n := 0
	for rec, err := range c.Records(context.Background(), 5) {
		if err != nil {
			panic(err)
		}
		if n++; n == 1 || n == 12 {
			fmt.Println(rec.ID, rec.Fields["customer"])
		}
	}
	fmt.Println(n, "records")
	// Output:
	// SO-1001 Customer 1
	// SO-1012 Customer 12
	// 12 records
}

// SyncCapabilities tells a facade when to announce a new tool list.
func ExampleClient_SyncCapabilities() {
	page, s := ordersSurface(2)
	c := client.New(client.KernelTransport(s), client.Options{})
	ctx := context.Background()
	sync := func() {
		d, changed, err := c.SyncCapabilities(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(len(d.Capabilities), "capabilities, changed:", changed)
	}
	sync()
	sync()
	page.Lock(func(p *surfacetest.Page) { p.Actions = p.Actions[:2] })
	sync()
	// Output:
	// 6 capabilities, changed: true
	// 6 capabilities, changed: false
	// 2 capabilities, changed: true
}

// A reply lost after the page ran the invoke: the retry carries the same id,
// the replay guard refuses it, and the client reports that the outcome is
// unknown instead of a success or a plain refusal.
func ExampleOutcomeUnknownError() {
	page, s := ordersSurface(2)
	attempt := 0
	lossy := client.TransportFunc(func(ctx context.Context, req []byte) ([]byte, error) {
		attempt++
		reply := s.HandleJSON(ctx, req)
		if attempt == 1 {
			return nil, errors.New("reply lost")
		}
		return reply, nil
	})
	c := client.New(lossy, client.Options{Backoff: func(int) time.Duration { return 0 }})
	_, err := c.Invoke(context.Background(), "update_note@order",
		map[string]any{"record": "SO-1001", "note": "x"}, client.InvokeOptions{})

	var u *client.OutcomeUnknownError
	fmt.Println(errors.As(err, &u), u.Attempts)
	fmt.Println(errors.Is(err, surface.CodeReplayDetected))
	fmt.Println("executor runs:", len(page.Calls()))
	// Output:
	// true 2
	// true
	// executor runs: 1
}
