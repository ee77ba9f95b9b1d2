// speedscope_view.mjs - a speedscope file opened by the real speedscope app (the `speedscope` npm
// package's bundle, dist/release) in Debian's chromium, headless, driven by playwright-core: the
// app loads the file through its own importer (#profileURL=... from a local static server), then
// the Sandwich view (key 3) lists every function by name. Writes what it saw for
// speedscope_check.py.
//
//   node speedscope_view.mjs --app DIR --profile FILE --out DIR [--chromium PATH] [--modules DIR]
//
// Output: OUT/speedscope.json { title, errors: [...], text: the page's visible text in the
// Sandwich view }, OUT/speedscope.png. Exit 0, or 1 with the reason.
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { options, serve } from './browser_common.mjs';

const { opt, chromium } = options('speedscope_view.mjs', ['app', 'profile', 'out']);

const { server, base } = await serve((name) => (name === 'profile.json' ? opt.profile : join(opt.app, name)));
await mkdir(opt.out, { recursive: true });
const browser = await chromium.launch({ executablePath: opt.chromium || '/usr/bin/chromium', args: ['--no-sandbox'] });
let status = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profile.json')}&title=mantra`);
  // loaded: the flame graph's canvas is there and the drop-a-file welcome text is gone
  await page.waitForFunction(() => document.querySelectorAll('canvas').length > 0 &&
    !document.body.innerText.includes('Drag and drop a profile'), null, { timeout: 60000 });
  await page.waitForTimeout(500);
  await page.keyboard.press('3'); // the Sandwich view: a table of every function
  await page.waitForTimeout(1000);
  const text = await page.evaluate(() => document.body.innerText);
  const title = await page.title();
  await page.screenshot({ path: join(opt.out, 'speedscope.png') });
  await writeFile(join(opt.out, 'speedscope.json'), JSON.stringify({ title, errors, text }, null, 1));
} catch (e) {
  console.error(`speedscope_view.mjs: ${e}`);
  status = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(status);
