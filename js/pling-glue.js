// pling-glue.js: the glue between the surface's Go program (GOOS=js) and
// the page, in place of Go's wasm_exec.js.
//
// It implements the same imports as wasm_exec.js (runtime.* and
// syscall/js.*), with two differences that make the kernel unreachable for
// a script that runs after the first script was evaluated:
//
//   - Every built-in it uses was captured by the first script
//     (intrinsics.js) and is called without being looked up again, so the
//     glue may itself be loaded late, when the kernel starts: the memory's buffer, the
//     instance's exports, DataView and typed array methods, Reflect, Map,
//     the clock, timers, randomness and the text codecs. wasm_exec.js looks
//     most of these up on every crossing, where a later script could
//     redefine them and be handed the exports, the memory or a value.
//   - The Go program's global object (js.Global()) is a record made here,
//     without prototype, holding only what the program reads, never the
//     page's globalThis; and the Go object (syscall/js's jsGo) is another
//     such record. Everything the glue makes for Go (an event, the
//     arguments of a call) has no prototype, so no setter or getter a later
//     script plants on Object.prototype or Array.prototype sees it.
//
// Nothing is published on globalThis. The module's exports are copied into
// a frozen record without prototype and reach only the caller of run.
//
// The imports are those of the Go release the project builds with
// (GOROOT/lib/wasm/wasm_exec.js); js/test/glue.test.mjs fails when the
// module asks for one this file does not provide.
import { CRYPTO, DataViewCtor, ErrorCtor, MapCtor, PERFORMANCE, StringCtor, Uint8ArrayCtor, Uint8ClampedArrayCtor, clearTimer, consoleLog, cryptoGetRandomValues, dateNow, defineProperty, dvGetFloat64, dvGetInt32, dvGetUint32, dvSetFloat64, dvSetInt32, dvSetUint32, dvSetUint8, freeze, functionBind, hasInstance, instanceExports, mapDelete, mapGet, mapHas, mapSet, mathFloor, mathMin, memoryBuffer, objectCreate, performanceNow, reflectApply, reflectConstruct, reflectDeleteProperty, reflectGet, reflectSet, setPrototypeOf, setTimer, stringLastIndexOf, stringSlice, textDecode, textDecoder, textEncode, textEncoder, typedArrayBuffer, typedArrayLength, typedByteOffset, typedSet, typedTag } from "./intrinsics.js";
/** An array without prototype: filled by assignment, which no index setter sees. */
function bareList() {
  const a = [];
  setPrototypeOf(a, null);
  return a;
}

function enosys() {
  const err = new ErrorCtor("not implemented");
  defineProperty(err, "code", { __proto__: null, value: "ENOSYS", enumerable: true, writable: true, configurable: true });
  return err;
}

// What the Go program reads from its global object, and nothing else:
// syscall's file system and process (wasm_exec.js's stand-ins, which
// answer ENOSYS), Uint8Array, a Date whose time zone is UTC (the kernel
// keeps time in UTC and never reads the page's zone), and the few
// built-ins hostbridge calls through syscall/js, each as an own member of a
// record without prototype so that reading it runs no getter:
// Object.create and freeze, Reflect.get, and Function.prototype.bind.call.
function makeGlobal(ready, write) {
  const fs = { __proto__: null };
  const fsNames = ["chmod", "chown", "close", "fchmod", "fchown", "fstat", "ftruncate", "lchown", "link", "lstat",
    "mkdir", "open", "read", "readdir", "readlink", "rename", "rmdir", "stat", "symlink", "truncate", "unlink", "utimes"];
  for (let i = 0; i < fsNames.length; i++) {
    // Node's callback convention: the callback is the last argument.
    fs[fsNames[i]] = function () {
      const callback = arguments[arguments.length - 1];
      callback(enosys());
    };
  }
  fs.constants = freeze({ __proto__: null, O_WRONLY: -1, O_RDWR: -1, O_CREAT: -1, O_TRUNC: -1, O_APPEND: -1, O_EXCL: -1, O_DIRECTORY: -1 });
  fs.writeSync = (fd, buf) => {
    write(buf);
    return typedArrayLength(buf);
  };
  fs.write = (fd, buf, offset, length, position, callback) => {
    if (offset !== 0 || length !== typedArrayLength(buf) || position !== null) {
      callback(enosys());
      return;
    }
    write(buf);
    callback(null, length);
  };
  fs.fsync = (fd, callback) => callback(null);
  const fail = () => {
    throw enosys();
  };
  const process = freeze({
    __proto__: null,
    getuid: () => -1,
    getgid: () => -1,
    geteuid: () => -1,
    getegid: () => -1,
    getgroups: fail,
    pid: -1,
    ppid: -1,
    umask: fail,
    cwd: fail,
    chdir: fail,
  });
  const path = freeze({
    __proto__: null,
    resolve() {
      let s = "";
      for (let i = 0; i < arguments.length; i++) s += (i > 0 ? "/" : "") + StringCtor(arguments[i]);
      return s;
    },
  });
  class UTCDate {
    getTimezoneOffset() {
      return 0;
    }
  }
  freeze(UTCDate.prototype);
  const bind = freeze({ __proto__: null, call: (f, thisArg) => reflectApply(functionBind, f, [thisArg]) });
  return {
    __proto__: null,
    fs: freeze(fs),
    process,
    path,
    Uint8Array: Uint8ArrayCtor,
    Date: freeze(UTCDate),
    Object: freeze({ __proto__: null, create: objectCreate, freeze }),
    Reflect: freeze({ __proto__: null, get: reflectGet }),
    Function: freeze({ __proto__: null, prototype: freeze({ __proto__: null, bind }) }),
    __plingSurfaceReady: ready,
  };
}

/**
 * A Go program's glue. ready(runtime) is called when the program has
 * published its runtime (wasm/main.go); exit() when it exited.
 *
 *   const glue = goGlue({ ready, exit });
 *   const instance = await WebAssembly.instantiate(module, glue.importObject);
 *   const exports = glue.run(instance); // runs main until it waits
 *
 * glue.resume() runs the program's pending work (finalizers, callbacks);
 * glue.exited() tells whether it has exited.
 */
export function goGlue({ ready, exit }) {
  let exports; // the instance's exports, copied into a record without prototype
  let mem; // a DataView over the memory
  let exited = false;
  let output = "";
  const write = (buf) => {
    output += textDecode(textDecoder, buf);
    const nl = stringLastIndexOf(output, "\n");
    if (nl !== -1) {
      if (consoleLog !== undefined) consoleLog(stringSlice(output, 0, nl));
      output = stringSlice(output, nl + 1);
    }
  };
  const global = makeGlobal(ready, write);
  // syscall/js's jsGo: js.FuncOf makes its functions through
  // _makeFuncWrapper and hands each call over in _pendingEvent.
  const goObject = { __proto__: null, _pendingEvent: null, _makeFuncWrapper: undefined };

  // JS values Go holds, by id (wasm_exec.js's _values, _goRefCounts, _ids
  // and _idPool), all private to this closure.
  const values = bareList();
  const refCounts = bareList();
  const ids = new MapCtor();
  const idPool = bareList();
  const fixed = [NaN, 0, null, true, false, global, goObject];
  for (let i = 0; i < fixed.length; i++) {
    values[i] = fixed[i];
    refCounts[i] = Infinity;
    if (i > 0) mapSet(ids, fixed[i], i);
  }
  const timeouts = new MapCtor();
  let nextTimeoutID = 1;

  const buffer = () => memoryBuffer(exports.mem);
  const setInt64 = (addr, v) => {
    dvSetUint32(mem, addr + 0, v, true);
    dvSetUint32(mem, addr + 4, mathFloor(v / 4294967296), true);
  };
  const getInt64 = (addr) => dvGetUint32(mem, addr + 0, true) + dvGetInt32(mem, addr + 4, true) * 4294967296;
  const loadValue = (addr) => {
    const f = dvGetFloat64(mem, addr, true);
    if (f === 0) return undefined;
    if (f === f) return f; // not NaN: a number
    return values[dvGetUint32(mem, addr, true)];
  };
  const storeValue = (addr, v) => {
    const nanHead = 0x7ff80000;
    if (typeof v === "number" && v !== 0) {
      if (v !== v) {
        dvSetUint32(mem, addr + 4, nanHead, true);
        dvSetUint32(mem, addr, 0, true);
        return;
      }
      dvSetFloat64(mem, addr, v, true);
      return;
    }
    if (v === undefined) {
      dvSetFloat64(mem, addr, 0, true);
      return;
    }
    let id = mapGet(ids, v);
    if (id === undefined) {
      id = idPool.length > 0 ? idPool[idPool.length - 1] : undefined;
      if (id !== undefined) idPool.length--;
      else id = values.length;
      values[id] = v;
      refCounts[id] = 0;
      mapSet(ids, v, id);
    }
    refCounts[id]++;
    let typeFlag = 0;
    switch (typeof v) {
      case "object":
        if (v !== null) typeFlag = 1;
        break;
      case "string":
        typeFlag = 2;
        break;
      case "symbol":
        typeFlag = 3;
        break;
      case "function":
        typeFlag = 4;
        break;
    }
    dvSetUint32(mem, addr + 4, nanHead | typeFlag, true);
    dvSetUint32(mem, addr, id, true);
  };
  const loadSlice = (addr) => new Uint8ArrayCtor(buffer(), getInt64(addr + 0), getInt64(addr + 8));
  const loadSliceOfValues = (addr) => {
    const array = getInt64(addr + 0);
    const len = getInt64(addr + 8);
    const a = bareList();
    for (let i = 0; i < len; i++) a[i] = loadValue(array + i * 8);
    return a;
  };
  const loadString = (addr) => {
    const saddr = getInt64(addr + 0);
    const len = getInt64(addr + 8);
    return textDecode(textDecoder, new DataViewCtor(buffer(), saddr, len));
  };
  const isBytes = (v) => {
    const tag = typedTag(v);
    return tag === "Uint8Array" || tag === "Uint8ClampedArray";
  };
  const getsp = () => exports.getsp() >>> 0;
  // copyBytesToGo and copyBytesToJS: the JS side (dst when toJS, else src)
  // must be a Uint8Array or Uint8ClampedArray; as many bytes as both hold.
  const copyBytes = (sp, dst, src, toJS) => {
    if (!isBytes(toJS ? dst : src)) {
      dvSetUint8(mem, sp + 48, 0);
      return;
    }
    const n = mathMin(typedArrayLength(src), typedArrayLength(dst));
    typedSet(dst, new Uint8ArrayCtor(typedArrayBuffer(src), typedByteOffset(src), n));
    setInt64(sp + 40, n);
    dvSetUint8(mem, sp + 48, 1);
  };

  const resume = () => {
    if (exited) throw new ErrorCtor("Go program has already exited");
    exports.resume();
  };
  goObject._makeFuncWrapper = (id) =>
    function () {
      const args = bareList();
      for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
      const event = { __proto__: null, id, this: this, args, result: undefined };
      goObject._pendingEvent = event;
      resume();
      return event.result;
    };

  const call = (sp, at, f) => {
    try {
      const result = f();
      sp = getsp();
      storeValue(sp + at, result);
      dvSetUint8(mem, sp + at + 8, 1);
    } catch (err) {
      sp = getsp();
      storeValue(sp + at, err);
      dvSetUint8(mem, sp + at + 8, 0);
    }
  };

  const timeOrigin = dateNow() - performanceNow(PERFORMANCE);
  const gojs = {
    __proto__: null,
    // Go's SP does not change while no Go code runs, but a call into
    // JavaScript can run Go code (a callback), which may move the stack:
    // after one, the SP is read again (getsp).
    "runtime.wasmExit": (sp) => {
      sp >>>= 0;
      const code = dvGetInt32(mem, sp + 8, true);
      exited = true;
      if (exit !== undefined) exit(code);
    },
    "runtime.wasmWrite": (sp) => {
      sp >>>= 0;
      const p = getInt64(sp + 16);
      const n = dvGetInt32(mem, sp + 24, true);
      write(new Uint8ArrayCtor(buffer(), p, n));
    },
    "runtime.resetMemoryDataView": (sp) => {
      mem = new DataViewCtor(buffer());
    },
    "runtime.nanotime1": (sp) => {
      sp >>>= 0;
      setInt64(sp + 8, (timeOrigin + performanceNow(PERFORMANCE)) * 1000000);
    },
    "runtime.walltime": (sp) => {
      sp >>>= 0;
      const msec = dateNow();
      setInt64(sp + 8, msec / 1000);
      dvSetInt32(mem, sp + 16, (msec % 1000) * 1000000, true);
    },
    "runtime.scheduleTimeoutEvent": (sp) => {
      sp >>>= 0;
      const id = nextTimeoutID++;
      mapSet(timeouts, id, setTimer(() => {
        resume();
        // Go failed to register the event: try once more, as wasm_exec.js does.
        while (mapHas(timeouts, id)) resume();
      }, getInt64(sp + 8)));
      dvSetInt32(mem, sp + 16, id, true);
    },
    "runtime.clearTimeoutEvent": (sp) => {
      sp >>>= 0;
      const id = dvGetInt32(mem, sp + 8, true);
      clearTimer(mapGet(timeouts, id));
      mapDelete(timeouts, id);
    },
    "runtime.getRandomData": (sp) => {
      sp >>>= 0;
      cryptoGetRandomValues(CRYPTO, loadSlice(sp + 8));
    },
    "syscall/js.finalizeRef": (sp) => {
      sp >>>= 0;
      const id = dvGetUint32(mem, sp + 8, true);
      refCounts[id]--;
      if (refCounts[id] === 0) {
        const v = values[id];
        values[id] = null;
        mapDelete(ids, v);
        idPool[idPool.length] = id;
      }
    },
    "syscall/js.stringVal": (sp) => {
      sp >>>= 0;
      storeValue(sp + 24, loadString(sp + 8));
    },
    "syscall/js.valueGet": (sp) => {
      sp >>>= 0;
      const result = reflectGet(loadValue(sp + 8), loadString(sp + 16));
      sp = getsp();
      storeValue(sp + 32, result);
    },
    "syscall/js.valueSet": (sp) => {
      sp >>>= 0;
      reflectSet(loadValue(sp + 8), loadString(sp + 16), loadValue(sp + 32));
    },
    "syscall/js.valueDelete": (sp) => {
      sp >>>= 0;
      reflectDeleteProperty(loadValue(sp + 8), loadString(sp + 16));
    },
    "syscall/js.valueIndex": (sp) => {
      sp >>>= 0;
      storeValue(sp + 24, reflectGet(loadValue(sp + 8), getInt64(sp + 16)));
    },
    "syscall/js.valueSetIndex": (sp) => {
      sp >>>= 0;
      reflectSet(loadValue(sp + 8), getInt64(sp + 16), loadValue(sp + 24));
    },
    "syscall/js.valueCall": (sp) => {
      sp >>>= 0;
      call(sp, 56, () => {
        const v = loadValue(sp + 8);
        const m = reflectGet(v, loadString(sp + 16));
        return reflectApply(m, v, loadSliceOfValues(sp + 32));
      });
    },
    "syscall/js.valueInvoke": (sp) => {
      sp >>>= 0;
      call(sp, 40, () => reflectApply(loadValue(sp + 8), undefined, loadSliceOfValues(sp + 16)));
    },
    "syscall/js.valueNew": (sp) => {
      sp >>>= 0;
      call(sp, 40, () => reflectConstruct(loadValue(sp + 8), loadSliceOfValues(sp + 16)));
    },
    "syscall/js.valueLength": (sp) => {
      sp >>>= 0;
      const v = loadValue(sp + 8);
      let n;
      if (typeof v === "string") n = v.length;
      else if (typedTag(v) !== undefined) n = typedArrayLength(v);
      else n = reflectGet(v, "length");
      setInt64(sp + 16, typeof n === "number" ? n : NaN);
    },
    "syscall/js.valuePrepareString": (sp) => {
      sp >>>= 0;
      const str = textEncode(textEncoder, StringCtor(loadValue(sp + 8)));
      storeValue(sp + 16, str);
      setInt64(sp + 24, typedArrayLength(str));
    },
    "syscall/js.valueLoadString": (sp) => {
      sp >>>= 0;
      const str = loadValue(sp + 8);
      typedSet(loadSlice(sp + 16), str);
    },
    "syscall/js.valueInstanceOf": (sp) => {
      sp >>>= 0;
      const v = loadValue(sp + 8);
      const t = loadValue(sp + 16);
      let is;
      if (t === Uint8ArrayCtor) is = typedTag(v) === "Uint8Array";
      else if (t === Uint8ClampedArrayCtor) is = typedTag(v) === "Uint8ClampedArray";
      else is = reflectApply(hasInstance, t, [v]);
      dvSetUint8(mem, sp + 24, is ? 1 : 0);
    },
    "syscall/js.copyBytesToGo": (sp) => {
      sp >>>= 0;
      copyBytes(sp, loadSlice(sp + 8), loadValue(sp + 32), false);
    },
    "syscall/js.copyBytesToJS": (sp) => {
      sp >>>= 0;
      copyBytes(sp, loadValue(sp + 8), loadSlice(sp + 16), true);
    },
    debug: (value) => {
      if (consoleLog !== undefined) consoleLog(value);
    },
  };

  return freeze({
    __proto__: null,
    importObject: freeze({ __proto__: null, gojs: freeze(gojs) }),
    /**
     * Runs the program's main until it waits, and answers the instance's
     * exports as a frozen record without prototype.
     */
    run(instance) {
      if (exports !== undefined) throw new ErrorCtor("the Go program runs already");
      const raw = instanceExports(instance); // throws for anything but a WebAssembly.Instance
      const record = { __proto__: null };
      const names = ["mem", "run", "resume", "getsp"];
      for (let i = 0; i < names.length; i++) record[names[i]] = raw[names[i]];
      exports = record;
      mem = new DataViewCtor(buffer());
      // argv ["js"] and no environment, as wasm_exec.js writes them: at
      // 4096, the string, then the pointers (argv, 0, 0).
      let offset = 4096;
      const arg = textEncode(textEncoder, "js\0");
      typedSet(new Uint8ArrayCtor(buffer(), offset, typedArrayLength(arg)), arg);
      const argPtr = offset;
      offset += 8;
      const argv = offset;
      const ptrs = [argPtr, 0, 0];
      for (let i = 0; i < ptrs.length; i++) {
        dvSetUint32(mem, offset, ptrs[i], true);
        dvSetUint32(mem, offset + 4, 0, true);
        offset += 8;
      }
      exports.run(1, argv);
      return raw;
    },
    resume,
    exited: () => exited,
  });
}
