//go:build js && wasm

package hostbridge

import (
	"strconv"
	"strings"
	"syscall/js"
	"testing"
)

// BenchmarkPagePath measures the calls js/pling-surface.js makes: handle
// with a reply function, shared mode for the postMessage transport, and a
// host that answers synchronously (as benchHost does; its executor is made
// synchronous here, so no Promise needs the event loop).
//
//	GOOS=js GOARCH=wasm go test -run=NONE -bench=PagePath -exec="node --stack-size=8192 $PWD/hostbridge/testdata/exec_node.js" ./hostbridge/
func BenchmarkPagePath(b *testing.B) {
	fx(b)
	h := js.Global().Call("eval", "(() => { const h = "+benchHost+`;
	  h.execute = () => '{"ok":true}'; return h; })()`)
	inst := create(b, h, Config{Replay: &ReplayConfig{WindowMs: 1000}, RateLimit: &RateLimitConfig{MaxRequests: 1_000_000, WindowMs: 1000}})
	var last string
	keep := false // copy the answer into Go only when checking it
	done := make(chan struct{}, 1)
	reply := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if keep {
			last = args[0].String()
		}
		done <- struct{}{}
		return nil
	})
	defer reply.Release()
	call := func(req string, shared bool) {
		inst.Call("handle", req, js.Undefined(), reply, shared)
		<-done
	}
	seq := 0 // invoke ids are claimed by the replay guard: never reuse one
	for _, bc := range []struct {
		name   string
		shared bool
		req    func(i int) string
	}{
		{"op=describe/shared=true", true, func(int) string { return benchReq }},
		{"op=describe/shared=false", false, func(int) string { return benchReq }},
		{"op=invoke", true, func(int) string {
			seq++
			return `{"protocol":"pling.surface/0.1","id":"p-` + strconv.Itoa(seq) + `","method":"invoke","capability":"orders.a1","input":{"v1":"x"}}`
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			keep = true
			call(bc.req(-1), bc.shared)
			keep = false
			if !strings.Contains(last, `"ok":true`) {
				b.Fatalf("setup: %s", last)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				call(bc.req(i), bc.shared)
			}
		})
	}
}
