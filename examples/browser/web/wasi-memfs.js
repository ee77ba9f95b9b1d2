// wasi-memfs.js - the part of WASI preview 1 that mantra_web.wasm imports, for a web page: an
// in-memory file system under one preopened directory, stdout/stderr to callbacks, the clocks,
// arguments and environment. No server, no browser file access: a trace is written into memory
// and handed to the page when its file is closed.
//
// Facts: WebAssembly/WASI, legacy/preview1/witx/wasi_snapshot_preview1.witx and typenames.witx
// (function signatures, errno values, the fdstat/prestat/iovec/subscription/event layouts).

const ERRNO = { SUCCESS: 0, BADF: 8, EXIST: 20, INVAL: 28, ISDIR: 31, NOENT: 44, NOSYS: 52, NOTDIR: 54 };
const FILETYPE = { CHARACTER_DEVICE: 2, DIRECTORY: 3, REGULAR_FILE: 4 };
const OFLAGS = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 };
const FDFLAGS_APPEND = 1;

export class WasiExit extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code;
  }
}

// One in-memory file: bytes [0, size) of data (grown by doubling).
class MemFile {
  constructor() {
    this.data = new Uint8Array(1 << 16);
    this.size = 0;
  }
  write(pos, bytes) {
    const end = pos + bytes.length;
    if (end > this.data.length) {
      let cap = this.data.length;
      while (cap < end) cap *= 2;
      const d = new Uint8Array(cap);
      d.set(this.data.subarray(0, this.size));
      this.data = d;
    }
    this.data.set(bytes, pos);
    if (end > this.size) this.size = end;
  }
  bytes() {
    return this.data.slice(0, this.size);
  }
}

export class WasiMemFs {
  // dir: the guest path of the one preopened directory (e.g. "/traces"); onStdout/onStderr get
  // text; onClose(path, file) is called when a file written by the program is closed.
  constructor({ args = ['mantra_web'], env = {}, dir = '/traces', onStdout, onStderr, onClose } = {}) {
    this.args = args;
    this.env = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    this.dir = dir;
    this.files = new Map(); // guest path -> MemFile
    this.fds = new Map(); // fd -> { kind: 'dir' | 'file' | 'out', path, file, pos, append, emit }
    const dec = new TextDecoder();
    const out = (cb) => (bytes) => (cb ? cb(dec.decode(bytes)) : undefined);
    this.fds.set(1, { kind: 'out', emit: out(onStdout || ((t) => console.log(t))) });
    this.fds.set(2, { kind: 'out', emit: out(onStderr || ((t) => console.error(t))) });
    this.fds.set(3, { kind: 'dir', path: dir });
    this.nextFd = 4;
    this.onClose = onClose || (() => {});
    this.memory = null;
    this.t0 = performance.now();
    // a call the shim does not implement fails with ENOSYS (and is reported once) instead of
    // making the module impossible to instantiate
    const fns = this.#functions();
    const reported = new Set();
    this.imports = {
      wasi_snapshot_preview1: new Proxy(fns, {
        get: (t, name) => t[name] || ((...args) => {
          if (!reported.has(name)) {
            reported.add(name);
            console.warn(`wasi-memfs: ${String(name)} is not implemented (ENOSYS)`);
          }
          return ERRNO.NOSYS;
        }),
      }),
    };
  }

  // Instantiates a reactor (calls _initialize) or leaves a command for start().
  bind(instance) {
    this.memory = instance.exports.memory;
    if (instance.exports._initialize) instance.exports._initialize();
  }

  file(path) {
    const f = this.files.get(path);
    return f ? f.bytes() : null;
  }

  remove(path) {
    this.files.delete(path);
  }

  #view() {
    return new DataView(this.memory.buffer);
  }

  #bytes(ptr, len) {
    return new Uint8Array(this.memory.buffer, ptr, len);
  }

  #strings(list, ptrsPtr, bufPtr) {
    const enc = new TextEncoder();
    const v = this.#view();
    let p = bufPtr;
    list.forEach((s, i) => {
      const b = enc.encode(s);
      v.setUint32(ptrsPtr + 4 * i, p, true);
      this.#bytes(p, b.length).set(b);
      this.#bytes(p + b.length, 1)[0] = 0;
      p += b.length + 1;
    });
    return ERRNO.SUCCESS;
  }

  #sizes(list, countPtr, sizePtr) {
    const enc = new TextEncoder();
    const v = this.#view();
    v.setUint32(countPtr, list.length, true);
    v.setUint32(sizePtr, list.reduce((n, s) => n + enc.encode(s).length + 1, 0), true);
    return ERRNO.SUCCESS;
  }

  #functions() {
    return {
      args_sizes_get: (c, s) => this.#sizes(this.args, c, s),
      args_get: (p, b) => this.#strings(this.args, p, b),
      environ_sizes_get: (c, s) => this.#sizes(this.env, c, s),
      environ_get: (p, b) => this.#strings(this.env, p, b),
      clock_time_get: (id, _precision, timePtr) => {
        // 0 realtime, 1 monotonic, 2/3 process/thread CPU time (monotonic here)
        const ns = id === 0 ? BigInt(Date.now()) * 1000000n
          : BigInt(Math.round((performance.now() - this.t0) * 1e6)) + 1000000000n;
        this.#view().setBigUint64(timePtr, ns, true);
        return ERRNO.SUCCESS;
      },
      fd_close: (fd) => {
        const e = this.fds.get(fd);
        if (!e || fd < 3) return ERRNO.BADF;
        this.fds.delete(fd);
        if (e.kind === 'file') this.onClose(e.path, e.file);
        return ERRNO.SUCCESS;
      },
      fd_fdstat_get: (fd, ptr) => {
        const e = this.fds.get(fd);
        if (!e) return ERRNO.BADF;
        const v = this.#view();
        const type = e.kind === 'dir' ? FILETYPE.DIRECTORY : e.kind === 'file' ? FILETYPE.REGULAR_FILE
          : FILETYPE.CHARACTER_DEVICE;
        v.setUint8(ptr, type);
        v.setUint16(ptr + 2, e.append ? FDFLAGS_APPEND : 0, true);
        v.setBigUint64(ptr + 8, 0xFFFFFFFFFFFFFFFFn, true);
        v.setBigUint64(ptr + 16, 0xFFFFFFFFFFFFFFFFn, true);
        return ERRNO.SUCCESS;
      },
      fd_prestat_get: (fd, ptr) => {
        const e = this.fds.get(fd);
        if (!e || e.kind !== 'dir') return ERRNO.BADF;
        const v = this.#view();
        v.setUint8(ptr, 0); // preopentype dir
        v.setUint32(ptr + 4, new TextEncoder().encode(e.path).length, true);
        return ERRNO.SUCCESS;
      },
      fd_prestat_dir_name: (fd, ptr, len) => {
        const e = this.fds.get(fd);
        if (!e || e.kind !== 'dir') return ERRNO.BADF;
        const b = new TextEncoder().encode(e.path);
        if (len < b.length) return ERRNO.INVAL;
        this.#bytes(ptr, b.length).set(b);
        return ERRNO.SUCCESS;
      },
      fd_seek: (fd, offset, whence, newPtr) => {
        const e = this.fds.get(fd);
        if (!e) return ERRNO.BADF;
        if (e.kind !== 'file') return ERRNO.INVAL; // ESPIPE-like: not seekable
        const base = whence === 0 ? 0 : whence === 1 ? e.pos : e.file.size;
        const pos = base + Number(offset);
        if (pos < 0) return ERRNO.INVAL;
        e.pos = pos;
        this.#view().setBigUint64(newPtr, BigInt(pos), true);
        return ERRNO.SUCCESS;
      },
      fd_write: (fd, iovs, n, writtenPtr) => {
        const e = this.fds.get(fd);
        if (!e || e.kind === 'dir') return ERRNO.BADF;
        const v = this.#view();
        let total = 0;
        for (let i = 0; i < n; i++) {
          const ptr = v.getUint32(iovs + 8 * i, true);
          const len = v.getUint32(iovs + 8 * i + 4, true);
          const bytes = this.#bytes(ptr, len);
          if (e.kind === 'out') {
            e.emit(bytes.slice());
          } else {
            const at = e.append ? e.file.size : e.pos;
            e.file.write(at, bytes);
            e.pos = at + len;
          }
          total += len;
        }
        v.setUint32(writtenPtr, total, true);
        return ERRNO.SUCCESS;
      },
      fd_read: (fd, iovs, n, readPtr) => {
        const e = this.fds.get(fd);
        const v = this.#view();
        if (fd === 0) {
          v.setUint32(readPtr, 0, true); // stdin: always at its end
          return ERRNO.SUCCESS;
        }
        if (!e || e.kind !== 'file') return ERRNO.BADF;
        let total = 0;
        for (let i = 0; i < n; i++) {
          const ptr = v.getUint32(iovs + 8 * i, true);
          const len = v.getUint32(iovs + 8 * i + 4, true);
          const take = Math.max(0, Math.min(len, e.file.size - e.pos));
          this.#bytes(ptr, take).set(e.file.data.subarray(e.pos, e.pos + take));
          e.pos += take;
          total += take;
          if (take < len) break;
        }
        v.setUint32(readPtr, total, true);
        return ERRNO.SUCCESS;
      },
      fd_filestat_get: (fd, ptr) => {
        const e = this.fds.get(fd);
        if (!e) return ERRNO.BADF;
        const v = this.#view();
        for (let k = 0; k < 64; k += 8) v.setBigUint64(ptr + k, 0n, true);
        v.setUint8(ptr + 16, e.kind === 'dir' ? FILETYPE.DIRECTORY : e.kind === 'file' ? FILETYPE.REGULAR_FILE
          : FILETYPE.CHARACTER_DEVICE);
        v.setBigUint64(ptr + 24, 1n, true); // nlink
        v.setBigUint64(ptr + 32, BigInt(e.kind === 'file' ? e.file.size : 0), true);
        return ERRNO.SUCCESS;
      },
      path_open: (dirfd, _dirflags, pathPtr, pathLen, oflags, _rb, _ri, fdflags, fdPtr) => {
        const d = this.fds.get(dirfd);
        if (!d || d.kind !== 'dir') return ERRNO.BADF;
        const rel = new TextDecoder().decode(this.#bytes(pathPtr, pathLen));
        if (rel.includes('/') || rel === '..' || rel === '') return ERRNO.NOENT; // one flat directory
        if (oflags & OFLAGS.DIRECTORY) return ERRNO.NOTDIR;
        const path = `${d.path}/${rel}`;
        let file = this.files.get(path);
        if (file && (oflags & OFLAGS.EXCL) && (oflags & OFLAGS.CREAT)) return ERRNO.EXIST;
        if (!file) {
          if (!(oflags & OFLAGS.CREAT)) return ERRNO.NOENT;
          file = new MemFile();
          this.files.set(path, file);
        } else if (oflags & OFLAGS.TRUNC) {
          file.size = 0;
        }
        const fd = this.nextFd++;
        this.fds.set(fd, { kind: 'file', path, file, pos: 0, append: (fdflags & FDFLAGS_APPEND) !== 0 });
        this.#view().setUint32(fdPtr, fd, true);
        return ERRNO.SUCCESS;
      },
      // nanosleep and friends: a page cannot block, so every subscription fires at once
      poll_oneoff: (inPtr, outPtr, nsubs, neventsPtr) => {
        const v = this.#view();
        for (let i = 0; i < nsubs; i++) {
          const s = inPtr + 48 * i;
          const ev = outPtr + 32 * i;
          v.setBigUint64(ev, v.getBigUint64(s, true), true); // userdata
          v.setUint16(ev + 8, 0, true); // error
          v.setUint8(ev + 10, v.getUint8(s + 8)); // type
        }
        v.setUint32(neventsPtr, nsubs, true);
        return ERRNO.SUCCESS;
      },
      proc_exit: (code) => {
        throw new WasiExit(code);
      },
    };
  }
}
