// browser_common.mjs - what the browser scripts share: their `--name value` options (those named
// required must be there, else exit 2), playwright-core's chromium from --modules DIR, and a local
// static server whose files a function names.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import process from 'node:process';

export function options(script, required) {
  const opt = {};
  for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
  for (const k of required) {
    if (!opt[k]) {
      console.error(`${script}: --${k} is required`);
      process.exit(2);
    }
  }
  const require = createRequire(join(resolve(opt.modules || '.'), 'node_modules') + '/');
  return { opt, chromium: require('playwright-core').chromium };
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.png': 'image/png', '.masm': 'text/plain' };

// Serves on 127.0.0.1 (a free port) the file pathOf(name) gives for each request's path (no '..';
// favicon.ico: empty). Returns { server, base: 'http://127.0.0.1:PORT' }.
export async function serve(pathOf) {
  const server = createServer(async (req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
    if (name === 'favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (name.includes('..')) {
      res.writeHead(403).end();
      return;
    }
    const path = pathOf(name);
    try {
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': types[extname(path)] || 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}
