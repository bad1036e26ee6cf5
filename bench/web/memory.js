// Target 6: the Go instance's linear memory after many requests, on a page
// of its own so that nothing else has run in that instance.
//
// The memory is read from the instance's exported "mem", caught by wrapping
// WebAssembly.Instance before the runtime's module is evaluated (it captures
// the constructor then, and makes the kernel's instance with it when the
// kernel starts): this page's script runs first.
import { makePage, makeSession, NOTE_TEMPLATE, PROTOCOL } from "./fixture.js";

let memory = null;
WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args, newTarget) {
    const instance = Reflect.construct(target, args, newTarget);
    if (instance.exports.mem instanceof WebAssembly.Memory) memory = instance.exports.mem;
    return instance;
  },
});
const { loadSurface } = await import("/pling/pling-surface.js");
const api = await loadSurface({ stats: true });
const { createSurface, defineRegistry } = api;
if (!(memory instanceof WebAssembly.Memory)) throw new Error("the Go instance exported no memory");

const page = makePage(48);
let audited = 0;
// Every control on, as in the invoke benchmark, and the replay guard with
// its default five-minute window, which holds every invoke id of this run:
// what must stay flat is what the surface keeps beyond that. The rate
// limiter gets a one-second window and 10,000 requests in it: the limiter
// keeps 8 bytes for each request admitted in its window, in a ring that
// grows with the rate up to maxRequests, so the bound is not raised. A fast
// machine sustains more than that; runTo then waits as the refusal says
// and sends the request again, as a client would.
const surface = createSurface({
  registry: defineRegistry(page.parts),
  execute: page.execute,
  app: "orders",
  expose: page.ids,
  session: makeSession(page.ids),
  rateLimit: { maxRequests: 10_000, windowMs: 1000 },
  replay: true,
  onAudit: () => {
    audited += 1;
  },
});

let done = 0;
let limited = 0; // refusals of the rate limit, waited out
const request = (i) =>
  i % 2 === 0
    ? { protocol: PROTOCOL, id: `m-${i}`, method: "describe" }
    : { protocol: PROTOCOL, id: `m-${i}`, method: "invoke", capability: NOTE_TEMPLATE, input: { record: "SO-1002", note: `n${i % 4}` } };

// runTo handles requests until done reaches total, alternating describe
// and invoke, one at a time; it fails on the first failed reply.
async function runTo(total) {
  while (done < total) {
    const r = await surface.handle(request(done));
    if (!r.ok && r.error.code === "RATE_LIMITED") {
      // Refused before its id was claimed: the same request again, later.
      await new Promise((resolve) => setTimeout(resolve, r.error.retryAfterMs));
      limited += 1;
      continue;
    }
    if (!r.ok) throw new Error(`request ${done} failed: ${JSON.stringify(r.error)}`);
    done += 1;
  }
  return {
    requests: done,
    bytes: memory.buffer.byteLength,
    audited,
    limited,
    stats: { ...api.stats() },
  };
}

window.__memory = { ready: true, isolated: globalThis.crossOriginIsolated === true, runTo };
