package surface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"pling.dev/agent/surface"
	"pling.dev/agent/surface/surfacetest"
)

// A page's registry and executor (here the in-memory orders page of
// surfacetest) become a surface; HandleJSON answers one encoded request.
func ExampleNew() {
	page := surfacetest.Orders(2)
	clock := surfacetest.NewClock()
	s, err := surface.New(surface.Options{
		Registry: page.View,
		Execute:  page.Execute,
		Now:      clock.Now,
		App:      "orders",
		// The page-wide upper bound: the folded row template only.
		Expose: surface.ExposeIDs("update_note@order"),
		// The host verified this session; the request body never carries one.
		Session: surface.StaticSession(&surface.Session{
			AgentID: "agent-7", SessionID: "sess-1", UserID: "user-3",
			ExpiresAt: clock.Now().Add(time.Hour),
			Scope:     []string{"update_note@order", "orders.search"},
		}),
	})
	if err != nil {
		panic(err)
	}
	reply := s.HandleJSON(context.Background(), []byte(
		`{"protocol":"pling.surface/0.1","id":"req-1","method":"describe","input":{"limit":1}}`))

	var out bytes.Buffer
	_ = json.Indent(&out, reply, "", "  ")
	fmt.Println(out.String())
	// Output:
	// {
	//   "protocol": "pling.surface/0.1",
	//   "id": "req-1",
	//   "ok": true,
	//   "result": {
	//     "protocol": "pling.surface/0.1",
	//     "app": "orders",
	//     "capabilities": [
	//       {
	//         "id": "update_note@order",
	//         "description": "Change an order's note",
	//         "inputSchema": {
	//           "type": "object",
	//           "properties": {
	//             "note": {
	//               "type": "string",
	//               "maxLength": 500
	//             }
	//           },
	//           "required": [
	//             "note"
	//           ],
	//           "additionalProperties": false
	//         },
	//         "effect": "write",
	//         "approval": "ask",
	//         "record": {
	//           "param": "record",
	//           "total": 2
	//         }
	//       }
	//     ],
	//     "context": {
	//       "route": "/orders",
	//       "regions": [
	//         {
	//           "id": "orders",
	//           "label": "Orders"
	//         }
	//       ],
	//       "records": [
	//         {
	//           "id": "SO-1001",
	//           "kind": "order",
	//           "fields": {
	//             "customer": "Customer 1",
	//             "note": "",
	//             "status": "open"
	//           }
	//         }
	//       ],
	//       "recordIds": [
	//         "SO-1001",
	//         "SO-1002"
	//       ],
	//       "recordIdsTotal": 2,
	//       "state": {
	//         "filter": "all",
	//         "page": 1
	//       },
	//       "feedback": [],
	//       "unavailable": [],
	//       "recordsTotal": 2,
	//       "feedbackTotal": 0,
	//       "unavailableTotal": 0
	//     }
	//   }
	// }
}

// Invoking a folded template names the row in input.record. The kernel
// resolves the concrete action, strips the record parameter and calls the
// page's executor once; the reply carries the result and what changed.
func ExampleSurface_HandleJSON() {
	page := surfacetest.Orders(3)
	s, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: surfacetest.NewClock().Now})
	if err != nil {
		panic(err)
	}
	reply := s.HandleJSON(context.Background(), []byte(`{
		"protocol": "pling.surface/0.1",
		"id": "req-2",
		"method": "invoke",
		"capability": "update_note@order",
		"input": {"record": "SO-1002", "note": "call back before Friday"}
	}`))
	fmt.Println(string(reply))

	call := page.Calls()[0]
	fmt.Println(call.Action, string(call.Input))

	// A locked order is a business failure: the exchange still succeeds.
	reply = s.HandleJSON(context.Background(), []byte(
		`{"protocol":"pling.surface/0.1","id":"req-3","method":"invoke","capability":"update_note@order","input":{"record":"SO-1003","note":"x"}}`))
	fmt.Println(string(reply))

	// A capability outside the effective set is a protocol failure.
	reply = s.HandleJSON(context.Background(), []byte(
		`{"protocol":"pling.surface/0.1","id":"req-4","method":"invoke","capability":"orders.delete_all"}`))
	fmt.Println(string(reply))
	// Output:
	// {"protocol":"pling.surface/0.1","id":"req-2","ok":true,"result":{"title":"Note updated"},"after":{"records":[{"id":"SO-1002","fields":{"note":"call back before Friday"}}]}}
	// update_note@order:SO-1002 {"note":"call back before Friday"}
	// {"protocol":"pling.surface/0.1","id":"req-3","ok":true,"result":{"error":{"code":"ACTION_UNAVAILABLE","message":"order is locked"}}}
	// {"protocol":"pling.surface/0.1","id":"req-4","ok":false,"error":{"code":"CAPABILITY_NOT_EXPOSED","message":"capability is not exposed to this session"}}
}

// Describe is the direct, in-page form of describe: it returns the
// description itself, and a session failure as an error that errors.Is
// matches against the SESSION_* sentinels.
func ExampleSurface_Describe() {
	page := surfacetest.Orders(40)
	clock := surfacetest.NewClock()
	session := &surface.Session{
		AgentID: "agent-7", SessionID: "sess-1", UserID: "user-3",
		ExpiresAt: clock.Now().Add(time.Minute),
		Scope:     []string{"orders.search", "approve@order"},
	}
	s, err := surface.New(surface.Options{
		Registry: page.View, Execute: page.Execute, Now: clock.Now,
		Session: surface.StaticSession(session),
	})
	if err != nil {
		panic(err)
	}

	d, err := s.Describe(context.Background(), surface.DescribeInput{Records: []string{"SO-1003", "SO-1040"}})
	if err != nil {
		panic(err)
	}
	for _, c := range d.Capabilities {
		fmt.Println("capability:", c.ID)
	}
	for _, r := range d.Context.Records {
		fmt.Println("record:", r.ID, r.Fields["status"])
	}
	fmt.Println("referenceable records:", d.Context.RecordIDsTotal)

	clock.Advance(2 * time.Minute)
	_, err = s.Describe(context.Background(), surface.DescribeInput{})
	fmt.Println(errors.Is(err, surface.CodeSessionExpired), err)
	// Output:
	// capability: orders.search
	// capability: approve@order
	// record: SO-1003 locked
	// record: SO-1040 open
	// referenceable records: 40
	// true surface: SESSION_EXPIRED: session has expired
}

// A host that answers some asks itself runs the kernel's steps: each
// answer goes in, and the next ask (or the end) comes out. Here the
// executor's answer is given by hand, as a page does when its Promise
// settles; everything else is answered through the Options.
func ExampleExchange() {
	page := surfacetest.Orders(2)
	clock := surfacetest.NewClock()
	s, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: clock.Now})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	x := s.Begin(nil, []byte(
		`{"protocol":"pling.surface/0.1","id":"r1","method":"invoke","capability":"orders.search","input":{"query":"x"}}`), false)
	for a := x.Ask(); a.Kind != surface.AskDone; {
		fmt.Println("ask:", a.Kind)
		ans := surface.Answer{Kind: a.Kind, Step: a.Step, Result: json.RawMessage(`{"hits":0}`)}
		if a.Kind != surface.AskExecute {
			ans = s.AnswerAsk(ctx, a)
		}
		if a, err = x.Answer(ans); err != nil {
			panic(err)
		}
	}
	reply, _, _ := x.Reply()
	fmt.Println(string(reply))
	// Output:
	// ask: view
	// ask: execute
	// ask: view
	// {"protocol":"pling.surface/0.1","id":"r1","ok":true,"result":{"hits":0}}
}

// A host that takes describe's input as JSON text from page code hands it
// to the kernel as it is: the kernel reads it by the rules of a describe
// request's input, and names what is wrong with it.
func ExampleSurface_BeginDescribe() {
	page := surfacetest.Orders(20)
	clock := surfacetest.NewClock()
	s, err := surface.New(surface.Options{Registry: page.View, Execute: page.Execute, Now: clock.Now})
	if err != nil {
		panic(err)
	}
	for _, input := range []string{`{"offset":18}`, `{"limit":"3"}`, `{"limit":1,"Limit":2}`} {
		x := s.BeginDescribe([]byte(input), false)
		s.Drive(context.Background(), x)
		if out, _, err := x.Reply(); err != nil {
			perr := err.(*surface.Error)
			fmt.Println(input, "->", perr.Code, perr.Message)
		} else {
			var d surface.Description
			_ = json.Unmarshal(out, &d)
			fmt.Println(input, "->", len(d.Context.Records), "records")
		}
		x.Release()
	}
	// Output:
	// {"offset":18} -> 2 records
	// {"limit":"3"} -> INVALID_REQUEST limit must be a non-negative integer
	// {"limit":1,"Limit":2} -> INVALID_REQUEST describe input has keys that differ only in case at /Limit
}
