//go:build js && wasm

package hostbridge

import (
	"encoding/base64"
	"os"
	"runtime"
	"strconv"
	"syscall/js"
	"testing"
)

// TestLiveHeapFlatWithReplayWindow: what a surface keeps between requests
// does not grow with the number of requests, with every control on and the
// replay guard's default five-minute window, which keeps every invoke id
// of the test (the setting of make bench's row 6). The live heap after a
// forced collection is read after 2,000 requests and again after 20,000
// more, which add 10,000 claims.
func TestLiveHeapFlatWithReplayWindow(t *testing.T) {
	fx(t)
	mod := importJS(t, "../js/pling-kernel.js")
	src, err := os.ReadFile("../bench/web/fixture.js")
	if err != nil {
		t.Fatal(err)
	}
	fixture := wait(t, js.Global().Call("eval", "import("+strconv.Quote("data:text/javascript;base64,"+base64.StdEncoding.EncodeToString(src))+")"))
	api := mod.Call("fromRuntime", theRuntime(t), goOpts(t))
	// As bench/web/memory.js: describe and invoke alternating, replay: true.
	run := js.Global().Call("eval", `(api, fx) => {
	  const page = fx.makePage(48);
	  const surface = api.createSurface({
	    registry: api.defineRegistry(page.parts), execute: page.execute, app: "orders",
	    expose: page.ids, session: fx.makeSession(page.ids),
	    rateLimit: { maxRequests: 10000, windowMs: 1000 }, replay: true,
	    onAudit: () => {},
	  });
	  let done = 0;
	  const run = async (total) => {
	    while (done < total) {
	      const r = await surface.handle(done % 2 === 0
	        ? { protocol: fx.PROTOCOL, id: "m-" + done, method: "describe" }
	        : { protocol: fx.PROTOCOL, id: "m-" + done, method: "invoke", capability: fx.NOTE_TEMPLATE,
	            input: { record: "SO-1002", note: "n" + (done % 4) } });
	      // A machine past 10,000 requests a second meets the limit: the
	      // same request again once the refusal says, as memory.js does.
	      if (!r.ok && r.error.code === "RATE_LIMITED") {
	        await new Promise((resolve) => setTimeout(resolve, r.error.retryAfterMs));
	        continue;
	      }
	      if (!r.ok) throw new Error("request " + done + ": " + JSON.stringify(r.error));
	      done++;
	    }
	  };
	  run.close = () => surface.close();
	  return run;
	}`).Invoke(api, fixture)
	defer run.Call("close")
	live := func() uint64 {
		runtime.GC()
		runtime.GC() // the second also drops what sync.Pools kept through the first
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	wait(t, run.Invoke(2_000))
	before := live()
	wait(t, run.Invoke(22_000))
	after := live()
	t.Logf("live heap: %d bytes after 2,000 requests, %d after 22,000", before, after)
	// The rate limiter's ring may still grow to its bound, 10,000 admitted
	// times of 8 bytes, as the request rate rises; the claims alone would
	// take 160 KB at 16 bytes each.
	if after > before+128<<10 {
		t.Fatalf("the live heap grew by %d bytes over 20,000 requests", after-before)
	}
}
