//go:build js && wasm

package hostbridge

import (
	"context"
	"encoding/json"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"pling.dev/agent/surface"
)

// benchHost is a page with 50 actions and 48 orders whose view answers the
// default window of 8 records, like the facts' describe measurement.
const benchHost = `(() => {
  const actions = [];
  for (let i = 0; i < 50; i++) actions.push({ id: "orders.a" + i, description: "Action " + i, effect: "read", approval: "none",
    inputSchema: { type: "object", properties: { ["v" + i]: { type: "string" } }, additionalProperties: false }, scopePath: ["orders", "toolbar"] });
  const rows = [];
  for (let i = 0; i < 48; i++) rows.push({ id: "SO-" + (1001 + i), kind: "order", fields: { customer: "Customer " + i, note: "", status: "open" } });
  const session = { agentId: "a", sessionId: "s", userId: "u", expiresAt: Date.now() + 3600e3, scope: actions.map((a) => a.id) };
  return {
    version: () => 1,
    actions: () => JSON.stringify(actions),
    view: (q) => { q = JSON.parse(q);
      const recs = q.ids ? rows.filter((r) => q.ids.includes(r.id)) : rows.slice(q.offset, q.offset + q.limit);
      return JSON.stringify({ route: "/orders", regions: [{ id: "orders", label: "Orders" }], records: recs,
        recordIds: rows.slice(0, q.maxRecordIds).map((r) => r.id), recordIdsTotal: rows.length, recordsTotal: rows.length, state: { filter: "all" } }); },
    execute: () => Promise.resolve("{}"),
    session: () => JSON.stringify(session),
  };
})()`

// goRegistry answers the same view from Go, to separate kernel cost from
// boundary cost.
type goRegistry struct{ view surface.View }

func (g *goRegistry) View(_ context.Context, q surface.ViewQuery) (*surface.View, error) {
	v := g.view
	v.Records = g.view.Records[q.Offset:min(q.Offset+q.Limit, len(g.view.Records))]
	return &v, nil
}

const benchReq = `{"protocol":"pling.surface/0.1","id":"b","method":"describe","input":{"limit":8}}`

// BenchmarkDescribe separates the kernel's own cost (kernel-only) from the
// boundary: bridge calls the export with a reply function answered within
// the call, bridge-via-js-promise waits for a Promise of the answer.
//
//	GOOS=js GOARCH=wasm go test -run=NONE -bench=. -exec="node --stack-size=8192 $PWD/hostbridge/testdata/exec_node.js" ./hostbridge/
func BenchmarkDescribe(b *testing.B) {
	fx(b)
	h := js.Global().Call("eval", benchHost)
	inst := create(b, h, Config{})
	// The answer of a host that answers at once comes within the call.
	var last js.Value
	reply := js.FuncOf(func(_ js.Value, args []js.Value) any {
		last = args[0]
		return nil
	})
	defer reply.Release()
	b.Run("bridge", func(b *testing.B) {
		inst.Call("handle", benchReq, js.Undefined(), reply)
		if !strings.Contains(last.String(), `"ok":true`) {
			b.Fatalf("handle: %s", last.String())
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			inst.Call("handle", benchReq, js.Undefined(), reply)
		}
	})
	b.Run("bridge-via-js-promise", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			v, err := awaitJS(inst.Call("handle", benchReq))
			if err != nil || !strings.Contains(v.String(), `"ok":true`) {
				b.Fatalf("handle: %v %s", err, v.String())
			}
		}
	})
	b.Run("kernel-only", func(b *testing.B) {
		var v surface.View
		_ = json.Unmarshal([]byte(h.Call("view", `{"offset":0,"limit":48,"maxRecordIds":200}`).String()), &v)
		_ = json.Unmarshal([]byte(h.Call("actions").String()), &v.Actions)
		var sess surface.Session
		_ = json.Unmarshal([]byte(h.Call("session").String()), &sess)
		sess.ExpiresAt = time.Now().Add(time.Hour)
		k, err := surface.New(surface.Options{Registry: (&goRegistry{v}).View, Execute: func(context.Context, surface.Call) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }, Now: time.Now, Session: surface.StaticSession(&sess)})
		if err != nil {
			b.Fatal(err)
		}
		k.HandleJSON(context.Background(), []byte(benchReq))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k.HandleJSON(context.Background(), []byte(benchReq))
		}
	})
}
