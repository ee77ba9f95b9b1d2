#!/usr/bin/env node
// mantra-wasi.mjs - runs a mantra WebAssembly command (build-wasm/tools/mantra.wasm, `make wasm`)
// under Node's built-in WASI (node:wasi, preview 1; no npm packages), with preopened directories
// and the MANTRA_* environment, and exits with the program's status.
//
//   node tools/wasm/mantra-wasi.mjs [--dir HOST[:GUEST]]... [--env NAME=VALUE]... MODULE.wasm [ARGS...]
//
// --dir preopens HOST as GUEST (default: the same path), so `--dir /tmp/out` lets the program write
// /tmp/out/x.nettrace; --env sets a variable in the program's environment. The host's own MANTRA_*
// variables are passed through, so startup tracing (MANTRA_EnableEventPipe=1, ...) works as natively.
// The program pumps its own loop (mantra_pump); when it returns, its exit handlers (mantra_shutdown
// from atexit) have drained every session. Exit status: the program's, or 2 for a usage error, 1
// when the module cannot be loaded.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import process from 'node:process';
import { WASI } from 'node:wasi';

const usage = `Usage: node mantra-wasi.mjs [--dir HOST[:GUEST]]... [--env NAME=VALUE]... MODULE.wasm [ARGS...]

Runs a WASI command (mantra.wasm) under Node's WASI with HOST directories preopened as GUEST
(default: the same path) and the host's MANTRA_* variables plus --env ones in its environment.
`;

function main(argv) {
  const preopens = {};
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('MANTRA_')) env[k] = v;
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      process.stdout.write(usage);
      return Promise.resolve(0);
    }
    if (a === '--dir' || a === '--env') {
      const v = argv[++i];
      if (v === undefined) return fail(`${a} needs a value`);
      if (a === '--dir') {
        const c = v.indexOf(':');
        const host = c < 0 ? v : v.slice(0, c);
        preopens[c < 0 ? v : v.slice(c + 1)] = resolve(host);
      } else {
        const e = v.indexOf('=');
        if (e <= 0) return fail(`--env needs NAME=VALUE (got '${v}')`);
        env[v.slice(0, e)] = v.slice(e + 1);
      }
      continue;
    }
    break;
  }
  if (i >= argv.length) return fail('no MODULE.wasm');
  const module = argv[i];
  const args = ['mantra', ...argv.slice(i + 1)];
  return run(module, args, env, preopens);
}

function fail(msg) {
  process.stderr.write(`mantra-wasi: ${msg}\n${usage}`);
  return Promise.resolve(2);
}

async function run(path, args, env, preopens) {
  let bytes;
  try {
    bytes = await readFile(path);
  } catch (e) {
    process.stderr.write(`mantra-wasi: cannot read ${path}: ${e.message}\n`);
    return 1;
  }
  const wasi = new WASI({ version: 'preview1', args, env, preopens, returnOnExit: true });
  let instance;
  try {
    ({ instance } = await WebAssembly.instantiate(bytes, wasi.getImportObject()));
  } catch (e) {
    process.stderr.write(`mantra-wasi: ${path} is not a WASI module this host can run: ${e.message}\n`);
    return 1;
  }
  return wasi.start(instance);
}

// node:wasi prints an ExperimentalWarning on first use; it is not the program's output.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning') process.stderr.write(`${w.name}: ${w.message}\n`);
});
process.exitCode = await main(process.argv.slice(2));
