// mantra.js - mantra in a web page (docs/browser.md). Loads mantra_web.wasm (libmantra threadless,
// the reference interpreter, the .NET runtime providers) over an in-memory WASI (wasi-memfs.js),
// keeps an interpreted program working in slices on the page's event loop, pumps mantra's job
// queue from a timer, and offers trace collection to the page and the developer console:
//
//   await mantra.collectPgoTrace({ seconds = 10, fileName })   // a PGO trace, downloaded
//   await mantra.collectTrace({ providers, seconds = 10, fileName, bufferMb })
//
// A collection starts its own session and stops exactly that session when its window ends (each
// has a handle that is never reused, so a timer of an earlier collection cannot stop a later one);
// the trace is written into memory and downloaded as a file (a Blob and a link: no server).
// Collections repeat, and each PGO trace holds a complete snapshot of the counters so far.
import { WasiExit, WasiMemFs } from './wasi-memfs.js';

// The runtime provider with the JitInstrumentationData keyword (0x10000000000), and Loader (0x8)
// and Jit (0x10) for the module and method identity events written with the data.
export const PGO_PROVIDERS = 'Microsoft-Windows-DotNETRuntime:0x10000000018:5';

class Mantra {
  constructor(instance, fs) {
    this.x = instance.exports;
    this.fs = fs;
    this.closed = new Map(); // trace path -> resolve() waiting for its file to be closed
    this.seq = 0;
    this.runs = 0; // calls of the work method so far
    this.lastResult = 0n;
    this.collections = [];
  }

  #cstr(s) {
    const b = new TextEncoder().encode(`${s}\0`);
    const p = this.x.mantra_web_alloc(b.length);
    new Uint8Array(this.x.memory.buffer, p, b.length).set(b);
    return [p, b.length - 1];
  }

  #error() {
    const p = this.x.mantra_web_last_error();
    const m = new Uint8Array(this.x.memory.buffer, p);
    return new TextDecoder().decode(m.subarray(0, m.indexOf(0)));
  }

  init() {
    if (this.x.mantra_web_init() !== 0) throw new Error(`mantra_web_init: ${this.#error()}`);
  }

  load(text, file, pgoMode) {
    const [t, n] = this.#cstr(text);
    const [f] = this.#cstr(file);
    const rc = this.x.mantra_web_load(t, n, f, pgoMode);
    this.x.mantra_web_free(t);
    this.x.mantra_web_free(f);
    if (rc !== 0) throw new Error(this.#error());
  }

  run(entry, arg) {
    const [e] = this.#cstr(entry);
    const r = this.x.mantra_web_alloc(8);
    const rc = this.x.mantra_web_run(e, BigInt(arg), r);
    const v = new DataView(this.x.memory.buffer).getBigInt64(r, true);
    this.x.mantra_web_free(e);
    this.x.mantra_web_free(r);
    if (rc !== 0) throw new Error(this.#error());
    return v;
  }

  pump() {
    return this.x.mantra_web_pump();
  }

  // Starts a session into /traces/<n>.nettrace and stops exactly it after `seconds`; resolves with
  // { fileName, bytes, runsAtStop, handle } once the trace's file is closed, after downloading it
  // unless download is false.
  async collectTrace({ providers, seconds = 10, fileName, bufferMb = 0, download = true } = {}) {
    if (!providers) throw new Error('collectTrace: providers (dotnet-trace syntax) is required');
    const n = ++this.seq;
    const path = `/traces/trace-${n}.nettrace`;
    const name = fileName || `mantra-${n}.nettrace`;
    const [p] = this.#cstr(providers);
    const [f] = this.#cstr(path);
    const handle = this.x.mantra_web_trace_start(p, f, bufferMb);
    this.x.mantra_web_free(p);
    this.x.mantra_web_free(f);
    if (handle === 0) throw new Error(`collectTrace: ${this.#error()}`);
    const closed = new Promise((resolve) => this.closed.set(path, resolve));
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const runsAtStop = this.runs;
    if (this.x.mantra_web_trace_stop(handle) !== 0) throw new Error(`collectTrace: ${this.#error()}`);
    this.pump();
    await closed;
    const bytes = this.fs.file(path);
    this.fs.remove(path);
    const result = { fileName: name, bytes, size: bytes.length, runsAtStop, handle, stoppedAt: performance.now() };
    this.collections.push({ fileName: name, size: bytes.length, runsAtStop, handle });
    if (download) this.download(name, bytes);
    return result;
  }

  collectPgoTrace({ seconds = 10, fileName, download = true } = {}) {
    return this.collectTrace({ providers: PGO_PROVIDERS, seconds, fileName: fileName || `mantra-pgo-${this.seq + 1}.nettrace`, download });
  }

  download(name, bytes) {
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }
}

// Loads the module and the program, starts the work loop and the pump, and returns the object
// also set as window.mantra.
export async function startMantra({ wasmUrl = 'mantra_web.wasm', programUrl = 'work.masm', entry = 'frame',
  steps = 2000, pgoMode = 1, sliceMs = 16, pumpMs = 20, onOutput, onFrame } = {}) {
  const fs = new WasiMemFs({
    env: { MANTRA_InterpPgo: String(pgoMode) },
    onStdout: onOutput,
    onStderr: onOutput,
    onClose: (path) => {
      const resolve = m.closed.get(path);
      if (resolve) {
        m.closed.delete(path);
        resolve();
      }
    },
  });
  const [bytes, text] = await Promise.all([
    fetch(wasmUrl).then((r) => r.arrayBuffer()),
    fetch(programUrl).then((r) => r.text()),
  ]);
  const { instance } = await WebAssembly.instantiate(bytes, fs.imports);
  fs.bind(instance);
  const m = new Mantra(instance, fs);
  m.init();
  m.load(text, programUrl, pgoMode);
  const work = () => {
    try {
      m.lastResult = m.run(entry, steps);
      m.runs++;
      if (onFrame) onFrame(m);
    } catch (e) {
      if (!(e instanceof WasiExit)) throw e;
    }
    setTimeout(work, sliceMs);
  };
  setTimeout(work, 0);
  setInterval(() => m.pump(), pumpMs);
  window.mantra = {
    collectPgoTrace: (o) => m.collectPgoTrace(o),
    collectTrace: (o) => m.collectTrace(o),
    stats: () => ({ runs: m.runs, lastResult: String(m.lastResult), steps, collections: m.collections.slice() }),
  };
  return m;
}
