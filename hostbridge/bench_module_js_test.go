//go:build js && wasm

package hostbridge

import (
	"encoding/base64"
	"os"
	"strconv"
	"syscall/js"
	"testing"
)

// BenchmarkModuleInvoke measures what a page's invoke costs end to end in
// Node: js/pling-surface.js bound to this module through its exports, the
// bench fixture's page (48 orders, 50 actions), every control on (session,
// scope, expose, replay guard, rate limit, schema, audit), and the
// executor answering with a Promise, as row 7 of make bench does. The JS
// loop runs b.N invokes; allocs/op are the Go side's per invoke.
//
//	GOOS=js GOARCH=wasm go test -run=NONE -bench=ModuleInvoke -exec="node --stack-size=8192 $PWD/hostbridge/testdata/exec_node.js" ./hostbridge/
func BenchmarkModuleInvoke(b *testing.B) {
	run := moduleBench(b, `
	      seq++;
	      const r = await surface.handle({ protocol: fx.PROTOCOL, id: "m-" + seq, method: "invoke",
	        capability: fx.NOTE_TEMPLATE, input: { record: "SO-1003", note: "n" + (seq % 2) } });
	      if (!r.ok) throw new Error(JSON.stringify(r));`)
	wait(b, run.Invoke(200)) // warm: schemas compiled, buffers pooled
	b.ReportAllocs()
	b.ResetTimer()
	wait(b, run.Invoke(b.N))
}

// BenchmarkModuleDescribe is row 1's describe in Node: handle() with the
// same page and controls, the default window of 8 records.
func BenchmarkModuleDescribe(b *testing.B) {
	run := moduleBench(b, `
	      const r = await surface.handle({ protocol: fx.PROTOCOL, id: "d-" + ++seq, method: "describe" });
	      if (!r.ok || r.result.capabilities.length !== fx.ACTION_COUNT || r.result.context.records.length !== 8) throw new Error(JSON.stringify(r).slice(0, 300));`)
	wait(b, run.Invoke(100))
	b.ReportAllocs()
	b.ResetTimer()
	wait(b, run.Invoke(b.N))
}

// BenchmarkModuleFloor is row 2f's request in Node: one the kernel refuses
// at its first step (an unknown protocol), so one trip into Go and back.
func BenchmarkModuleFloor(b *testing.B) {
	run := moduleBench(b, `
	      const r = await surface.handle({ protocol: "pling.surface/9", id: "f-" + ++seq, method: "invoke" });
	      if (r.ok !== false || r.error.code !== "PROTOCOL_VERSION_UNSUPPORTED") throw new Error(JSON.stringify(r));`)
	wait(b, run.Invoke(200))
	b.ReportAllocs()
	b.ResetTimer()
	wait(b, run.Invoke(b.N))
}

// moduleBench binds js/pling-surface.js to this module through its
// exports, makes a surface over the bench fixture's page with every
// control on, and returns an async function of n that runs body n times
// (body sees surface, fx and a counter seq).
func moduleBench(b *testing.B, body string) js.Value {
	fx(b)
	mod := importJS(b, "../js/pling-kernel.js")
	src, err := os.ReadFile("../bench/web/fixture.js")
	if err != nil {
		b.Fatal(err)
	}
	fixture := wait(b, js.Global().Call("eval", "import("+strconv.Quote("data:text/javascript;base64,"+base64.StdEncoding.EncodeToString(src))+")"))
	api := mod.Call("fromRuntime", theRuntime(b), goOpts(b))
	return js.Global().Call("eval", `(api, fx) => {
	  const page = fx.makePage(48);
	  const surface = api.createSurface({
	    registry: api.defineRegistry(page.parts), execute: page.execute, app: "orders-bench",
	    expose: page.ids, session: fx.makeSession(page.ids),
	    rateLimit: { maxRequests: 1e9, windowMs: 60000 }, replay: { windowMs: 60000 },
	    onAudit: () => {},
	  });
	  let seq = 0;
	  return async (n) => {
	    for (let i = 0; i < n; i++) {`+body+`
	    }
	  };
	}`).Invoke(api, fixture)
}
