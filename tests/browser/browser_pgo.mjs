// browser_pgo.mjs - the browser page of examples/browser in a real browser (Debian's chromium,
// headless, driven by playwright-core): serves the page from a local static server, calls
// mantra.collectPgoTrace() from the page's JavaScript, waits for each download, and writes what
// it saw as JSON for check_browser.py (which converts the traces with `mantra pgo` and checks the
// counts). Also saves a screenshot of the page.
//
//   node browser_pgo.mjs --web DIR --wasm FILE --out DIR [--chromium PATH] [--modules DIR]
//
// Output: OUT/result.json { collections: [{ file, fileName, size, runsAtStop, steps, ms }],
// concurrent: {...}, big: {...} }, OUT/*.nettrace, OUT/page.png. Exit 0, or 1 with the reason.
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { options, serve } from './browser_common.mjs';

const { opt, chromium } = options('browser_pgo.mjs', ['web', 'wasm', 'out']);

const { server, base } = await serve((name) => (name === 'mantra_web.wasm' ? opt.wasm
  : name.startsWith('out/') ? join(opt.out, name.slice(4)) : join(opt.web, name)));
const url = `${base}/index.html`;
await mkdir(opt.out, { recursive: true });

const browser = await chromium.launch({ executablePath: opt.chromium || '/usr/bin/chromium', args: ['--no-sandbox'] });
const result = { collections: [] };
try {
  const page = await browser.newPage({ acceptDownloads: true });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  try {
    await page.waitForFunction(() => window.mantra && window.mantra.stats().runs > 5, null, { timeout: 30000 });
  } catch (e) {
    throw new Error(`the page did not start its work: ${e.message}; page errors: ${JSON.stringify(errors)}`);
  }

  // two collections in a row, from the page's JavaScript, each downloaded
  for (let k = 1; k <= 2; k++) {
    const t0 = Date.now();
    const [download, r] = await Promise.all([
      page.waitForEvent('download', { timeout: 60000 }),
      page.evaluate(async () => {
        const r = await window.mantra.collectPgoTrace({ seconds: 2 });
        return { fileName: r.fileName, size: r.size, runsAtStop: r.runsAtStop, steps: window.mantra.stats().steps };
      }),
    ]);
    const file = join(opt.out, `pgo-${k}.nettrace`);
    await download.saveAs(file);
    result.collections.push({ ...r, file, suggested: download.suggestedFilename(), ms: Date.now() - t0 });
  }

  // overlapping collections: a long one started first, a short one after; each stops only itself
  const ov = await page.evaluate(async () => {
    const t0 = performance.now();
    const long = window.mantra.collectTrace({ providers: 'Microsoft-Windows-DotNETRuntime:0x10000000018:5', seconds: 3, download: false });
    const short = window.mantra.collectTrace({ providers: 'Microsoft-Windows-DotNETRuntime:0x10000000018:5', seconds: 1, download: false });
    const [a, b] = await Promise.all([long, short]);
    return { longMs: a.stoppedAt - t0, shortMs: b.stoppedAt - t0, longSize: a.size, shortSize: b.size,
      longId: a.id, shortId: b.id };
  });
  result.concurrent = ov;

  // a big PGO trace (opt.big: a program with many instrumented methods, in OUT): the time from
  // collectPgoTrace returning to the browser having the whole download
  if (opt.big) {
    const big = await browser.newPage({ acceptDownloads: true });
    big.on('pageerror', (e) => errors.push(String(e)));
    await big.goto(`${url}?program=out/${opt.big}&entry=frame&steps=10&pgo=2`);
    await big.waitForFunction(() => window.mantra && window.mantra.stats().runs > 2, null, { timeout: 60000 });
    const [download, r] = await Promise.all([
      big.waitForEvent('download', { timeout: 120000 }),
      big.evaluate(async () => {
        const r = await window.mantra.collectPgoTrace({ seconds: 1 });
        return { fileName: r.fileName, size: r.size, returned: Date.now() };
      }),
    ]);
    const file = join(opt.out, 'pgo-big.nettrace');
    await download.saveAs(file); // resolves once the download has completed
    result.big = { ...r, file, downloadMs: Date.now() - r.returned };
    await big.close();
  }
  await page.screenshot({ path: join(opt.out, 'page.png') });
  result.errors = errors;
  result.stats = await page.evaluate(() => window.mantra.stats());
} finally {
  await browser.close();
  server.close();
}
await writeFile(join(opt.out, 'result.json'), JSON.stringify(result, null, 1));
console.log(JSON.stringify(result));
