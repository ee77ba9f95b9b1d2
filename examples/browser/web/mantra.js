// mantra.js - mantra in a web page (docs/browser.md). Loads mantra_web.wasm (libmantra threadless,
// the reference interpreter, the .NET runtime providers) over an in-memory WASI (wasi-memfs.js),
// keeps an interpreted program working in slices on the page's event loop, pumps mantra's job
// queue from a timer, and offers trace collection to the page and the developer console:
//
//   await mantra.collectPgoTrace({ seconds = 10, fileName })   // a PGO trace, downloaded
//   await mantra.collectTrace({ providers, seconds = 10, fileName, bufferMb })
//
// A collection is the library's own: its session is stopped by a pump job when its window ends
// (mantra_session_stop_after / mantra_pgo_collect_ex, by session id, so a timer of an earlier
// collection cannot stop a later one). The trace is written into memory and downloaded as a file
// (a Blob and a link: no server). Collections repeat, and each PGO trace holds a complete snapshot
// of the counters so far.
import { WasiExit, WasiMemFs } from './wasi-memfs.js';

class Mantra {
  constructor(instance, fs) {
    this.x = instance.exports;
    this.fs = fs;
    this.closed = new Map(); // trace path -> resolve() waiting for its file to be closed
    this.running = new Map(); // session id -> the collection waiting for its stop
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

  // Runs mantra's queued jobs; a collection whose session stopped during this pump notes how many
  // work slices had run (none runs during a pump: the page is one thread).
  pump() {
    const runs = this.runs;
    const n = this.x.mantra_web_pump();
    for (const [id, c] of this.running) {
      if (!this.x.mantra_web_trace_running(id)) {
        c.runsAtStop = runs;
        c.stoppedAt = performance.now();
        this.running.delete(id);
      }
    }
    return n;
  }

  // Starts a collection through start(path) (a session id, 0 on failure) and resolves with
  // { fileName, bytes, size, runsAtStop, id, stoppedAt } once the trace's file is closed, after
  // downloading it unless download is false.
  async #collect(start, name, download) {
    const path = `/traces/trace-${this.seq}.nettrace`;
    const [f] = this.#cstr(path);
    const id = start(f);
    this.x.mantra_web_free(f);
    if (id === 0n) throw new Error(this.#error());
    const c = { id };
    this.running.set(id, c);
    await new Promise((resolve) => this.closed.set(path, resolve));
    const bytes = this.fs.file(path);
    this.fs.remove(path);
    const result = { fileName: name, bytes, size: bytes.length, runsAtStop: c.runsAtStop, id: String(id),
      stoppedAt: c.stoppedAt };
    this.collections.push({ fileName: name, size: bytes.length, runsAtStop: c.runsAtStop, id: String(id) });
    if (download) this.download(name, bytes);
    return result;
  }

  collectTrace({ providers, seconds = 10, fileName, bufferMb = 0, download = true } = {}) {
    if (!providers) return Promise.reject(new Error('collectTrace: providers (dotnet-trace syntax) is required'));
    const n = ++this.seq;
    const [p] = this.#cstr(providers);
    return this.#collect((f) => {
      const id = this.x.mantra_web_trace_start(p, f, bufferMb, seconds);
      this.x.mantra_web_free(p);
      return id;
    }, fileName || `mantra-${n}.nettrace`, download).catch((e) => { throw new Error(`collectTrace: ${e.message}`); });
  }

  collectPgoTrace({ seconds = 10, fileName, download = true } = {}) {
    const n = ++this.seq;
    return this.#collect((f) => this.x.mantra_web_pgo_collect(f, seconds), fileName || `mantra-pgo-${n}.nettrace`,
      download).catch((e) => { throw new Error(`collectPgoTrace: ${e.message}`); });
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
