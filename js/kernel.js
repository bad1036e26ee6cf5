// kernel.js: the page's kernel, started when a surface is first called.
//
// ---------------------------------------------------------------------------
// The page's kernel: surface.wasm on the glue of pling-glue.js, started when
// a surface of this module is first called (or loadSurface, ready() or
// start: "eager" asks), with the fetch and WebAssembly functions captured
// when this module was evaluated. The glue and the host functions are
// pling-kernel.js, imported then too, while the module downloads: the
// first script is what every visitor pays for, the kernel's host only
// pages an agent speaks to. Its global object is a record of the glue's, so
// the runtime wasm/main.go publishes reaches startModule and nowhere else
// (nothing goes on globalThis).

import { WASM_FILE } from "./assets.js";
import { BASE_AT_LOAD, ErrorCtor, FETCH, PAGE_WINDOW, REQUEST_IDLE, StringCtor, THEN_ENDS_AT_KERNEL_CLASSES, URLCtor, WA_COMPILE_STREAMING, WA_MODULE, WA_MODULE_EXPORTS, XHR, responseStatusOf, addListener, append, freeze, newList, now, reflectApply, setTimer, urlHrefOf, xhrOpen, xhrResponseOf, xhrSend, xhrSetResponseType, xhrStatusOf } from "./intrinsics.js";
import { loadHost } from "./kernel-host.js";
import { whenSettled } from "./values.js";

function resolveURL(given) {
  if (given === undefined) return urlHrefOf(new URLCtor(WASM_FILE, import.meta.url));
  return urlHrefOf(new URLCtor(StringCtor(given), BASE_AT_LOAD ?? import.meta.url));
}

// The compiled module, or the compile under way: { done, waiters, module,
// error, fetchMs, compileMs, streamed }. A failed compile is forgotten, so the next
// call tries again.
//
// The module compiles while it downloads (WebAssembly.compileStreaming
// over fetch, both captured at load) where the page allows it: the two
// Promises on the way are resolved with a Response and a Module, whose
// classes end every then lookup (THEN_ENDS_AT_KERNEL_CLASSES in
// intrinsics.js), and both are waited for with the then captured at load.
// A script that ran after the first script therefore cannot answer either
// with an object of its own and hand over a kernel of its making. Where
// streaming is missing or fails (a server that does not send
// application/wasm), the bytes come by XMLHttpRequest, whose events go to
// this module's listeners only, and the synchronous WebAssembly.Module
// captured at load compiles them.
let compiling;

function compileKernel(wasmURL, done) {
  if (compiling !== undefined) {
    if (compiling.done) done(compiling);
    else append(compiling.waiters, done);
    return;
  }
  const st = { __proto__: null, done: false, waiters: newList(), module: undefined, error: undefined, fetchMs: 0, compileMs: 0, streamed: false };
  compiling = st;
  append(st.waiters, done);
  const finish = (module, error) => {
    if (st.done) return;
    st.done = true;
    st.module = module;
    st.error = error;
    if (module === undefined && compiling === st) compiling = undefined;
    const list = st.waiters;
    st.waiters = undefined;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i](st);
      } catch {
        // one waiter's failure does not keep the others
      }
    }
  };
  let url;
  try {
    url = resolveURL(wasmURL);
  } catch (e) {
    finish(undefined, e);
    return;
  }
  if (STREAMING) compileStreaming(url, st, finish);
  else downloadAndCompile(url, st, finish);
}

const STREAMING = THEN_ENDS_AT_KERNEL_CLASSES && WA_COMPILE_STREAMING !== undefined && FETCH !== undefined;

// fetchMs is the time to the response's headers; compileMs the rest, the
// download and the compile it overlaps.
function compileStreaming(url, st, finish) {
  const fallback = () => downloadAndCompile(url, st, finish);
  const t0 = now();
  try {
    whenSettled(FETCH(url), (response) => {
      try {
        const status = responseStatusOf(response); // throws for anything but a Response
        if (status < 200 || status > 299) throw new ErrorCtor(`fetching ${url} failed with HTTP ${status}`);
        const t1 = now();
        st.fetchMs = t1 - t0;
        whenSettled(WA_COMPILE_STREAMING(response), (module) => {
          try {
            WA_MODULE_EXPORTS(module); // throws for anything but a Module
            st.compileMs = now() - t1;
            st.streamed = true;
            finish(module, undefined);
          } catch {
            fallback();
          }
        }, fallback);
      } catch (e) {
        finish(undefined, e);
      }
    }, () => finish(undefined, new ErrorCtor(`fetching ${url} failed`)));
  } catch {
    fallback();
  }
}

function downloadAndCompile(url, st, finish) {
  try {
    if (XHR === undefined) throw new ErrorCtor("no XMLHttpRequest to fetch the kernel with");
    const t0 = now();
    const xhr = new XHR();
    xhrOpen(xhr, "GET", url, true);
    xhrSetResponseType(xhr, "arraybuffer");
    addListener(xhr, "load", () => {
      try {
        const status = xhrStatusOf(xhr);
        if (status < 200 || status > 299) throw new ErrorCtor(`fetching ${url} failed with HTTP ${status}`);
        const t1 = now();
        st.fetchMs = t1 - t0;
        const module = new WA_MODULE(xhrResponseOf(xhr));
        st.compileMs = now() - t1;
        finish(module, undefined);
      } catch (e) {
        finish(undefined, e);
      }
    });
    const failed = () => finish(undefined, new ErrorCtor(`fetching ${url} failed`));
    addListener(xhr, "error", failed);
    addListener(xhr, "abort", failed);
    xhrSend(xhr);
  } catch (e) {
    finish(undefined, e);
  }
}

let kernelUp; // the page's kernel, once started
let starting; // the calls waiting for it while it starts
let startTimings = freeze({ __proto__: null, fetchMs: 0, compileMs: 0, startMs: 0, streamed: false });

// Calls done(kernel) once the page's kernel is up, or done(undefined,
// error) when it could not be started; the next call tries again.
export function startKernel(wasmURL, done) {
  if (kernelUp !== undefined) {
    done(kernelUp, undefined);
    return;
  }
  if (starting !== undefined) {
    append(starting, done);
    return;
  }
  starting = newList();
  append(starting, done);
  const finish = (kernel, error) => {
    const list = starting;
    starting = undefined;
    kernelUp = kernel;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i](kernel, error);
      } catch {
        // one waiter's failure does not keep the others
      }
    }
  };
  // The compiled module and the kernel's host, fetched side by side.
  let compiled;
  let host;
  const both = () => {
    if (compiled === undefined || host === undefined) return;
    if (compiled.module === undefined || host.mod === undefined) {
      finish(undefined, compiled.module === undefined ? compiled.error : host.error);
      return;
    }
    const t2 = now();
    try {
      const kernel = host.mod.startModule(compiled.module);
      startTimings = freeze({ __proto__: null, fetchMs: compiled.fetchMs, compileMs: compiled.compileMs, startMs: now() - t2, streamed: compiled.streamed });
      finish(kernel, undefined);
    } catch (e) {
      finish(undefined, e);
    }
  };
  loadHost((h) => {
    host = h;
    both();
  });
  compileKernel(wasmURL, (st) => {
    compiled = st;
    both();
  });
}

// prefetch: "idle": when the page is idle, the module is downloaded and
// compiled, then started, then warm() runs (a describe of the runtime's own,
// so that the code a first describe needs is compiled before an agent
// asks); each step in an idle period of its own.
function whenIdle(f) {
  if (REQUEST_IDLE !== undefined) reflectApply(REQUEST_IDLE, PAGE_WINDOW, [f]);
  else setTimer(f, 0);
}

function prefetchKernel(wasmURL, warm) {
  if (kernelUp !== undefined || compiling !== undefined || starting !== undefined) return;
  whenIdle(() => {
    if (kernelUp !== undefined || compiling !== undefined || starting !== undefined) return;
    loadHost(() => {});
    compileKernel(wasmURL, (st) => {
      if (st.module === undefined) return;
      whenIdle(() => startKernel(wasmURL, (kernel) => {
        if (kernel !== undefined && warm !== undefined) whenIdle(warm);
      }));
    });
  });
}

export const PAGE_KERNEL = freeze({
  __proto__: null,
  up: () => kernelUp,
  start: startKernel,
  prefetch: prefetchKernel,
  timings: () => startTimings,
});
