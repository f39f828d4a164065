// Drives the HTML flame graph in the system's Chromium, as a user would. profile/tests/browser.rs
// renders the pages and computes what they must show, then runs
//   node tests/browser/check.mjs PAGE.html SCREENSHOT.png EXPECT.json [BIG.html]
// Exit status 0: every check passed; 1: a check failed; 2: bad arguments; 3: Chromium would not start.
// BIG.html, when given, is only measured (load, search, invert, zoom times are printed, not judged).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [page1, shot, expectFile, big] = process.argv.slice(2);
if (!page1 || !shot || !expectFile) {
  console.error('usage: node check.mjs PAGE.html SCREENSHOT.png EXPECT.json [BIG.html]');
  process.exit(2);
}
const expected = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
const executablePath = '/usr/bin/chromium';
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

function check(ok, what, detail) {
  if (!ok) throw new Error(what + (detail === undefined ? '' : ': ' + JSON.stringify(detail)));
  console.log('ok: ' + what);
}

// A fresh profile directory each run: nothing left by an earlier run (or by a user) can change the page.
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'instr-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath, args, headless: true, viewport: { width: 1200, height: 800 }, timeout: 60000,
  });
} catch (e) {
  console.error(`check.mjs: Chromium (${executablePath}) did not start: ${e.message}\n` +
    'fix: run scripts/setup.sh (as root or with sudo): it installs the chromium package');
  fs.rmSync(userDataDir, { recursive: true, force: true });
  process.exit(3);
}

let status = 0;
try {
  const page = await context.newPage();
  const foreign = [];
  const errors = [];
  // The page must need nothing but itself.
  page.on('request', (r) => { if (!/^(file|data|blob|about):/.test(r.url())) foreign.push(r.url()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  await page.goto(pathToFileURL(path.resolve(page1)).href);
  await page.waitForFunction(() => window.instrFlame && window.instrFlame.drawn().length > 0, null, { timeout: 20000 });
  const drawn = () => page.evaluate(() => window.instrFlame.drawn());
  const state = () => page.evaluate(() => window.instrFlame.state());
  const text = (sel) => page.locator(sel).textContent();
  const canvas = await page.locator('#flame').boundingBox();
  // The colour on the canvas near a drawn box's top left corner, clear of its label (css px; the page
  // scales by devicePixelRatio).
  const pixel = (b) => page.evaluate(({ x, y }) => {
    const c = document.getElementById('flame');
    const k = c.width / c.getBoundingClientRect().width;
    return Array.from(c.getContext('2d').getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data);
  }, { x: b.x + 1.5, y: b.y + 1.5 });
  const boxNamed = async (name) => (await drawn()).find((b) => b.name === name && !b.faded);
  const clickBox = (b) => page.mouse.click(canvas.x + b.x + Math.min(b.w / 2, 20), canvas.y + b.y + b.h / 2);

  // 1. It renders: frames drawn, pixels painted, the first view's total shown.
  const first = expected.views[0];
  const boxes = await drawn();
  check(boxes.length >= expected.min_frames, `${boxes.length} frames drawn`, boxes.length);
  const painted = await page.evaluate(() => {
    const c = document.getElementById('flame');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  });
  check(painted > 5000, `${painted} pixels painted`);
  const total0 = await text('#total');
  check(total0.startsWith(first.total), `total shown: "${total0}"`, first.total);

  // 2. Search: the matching frames turn the match colour, and the share is the one Rust computed.
  for (const s of expected.searches) {
    await page.fill('#search', s.query);
    await page.waitForFunction((t) => document.getElementById('matched').textContent === t, s.text, { timeout: 5000 })
      .catch(async () => { throw new Error(`search ${s.query}: shown "${await text('#matched')}", expected "${s.text}"`); });
    console.log(`ok: search ${s.query}: "${s.text}"`);
    const hit = await boxNamed(s.highlighted);
    check(hit, `${s.highlighted} drawn`);
    const [r, g, b] = await pixel(hit);
    check(r === 224 && g === 64 && b === 208, `${s.highlighted} highlighted`, [r, g, b]);
  }
  await page.fill('#search', '');
  await page.waitForFunction(() => document.getElementById('matched').textContent === '');

  // 3. Tooltip: the exact count and its share.
  const tipBox = await boxNamed(expected.tooltip.name);
  await page.mouse.move(canvas.x + tipBox.x + 5, canvas.y + tipBox.y + tipBox.h / 2);
  const tip = await text('#tip');
  check(await page.locator('#tip').isVisible() && tip.includes(expected.tooltip.text),
    `tooltip of ${expected.tooltip.name}: ${JSON.stringify(tip)}`, expected.tooltip.text);

  // 4. Zoom: clicking a frame makes it the visible root, full width; clicking "all" zooms out.
  const target = await boxNamed(expected.zoom);
  check(target && target.w < canvas.width - 2, `${expected.zoom} drawn narrower than the chart before the zoom`, target);
  await clickBox(target);
  const zoomed = await state();
  check(zoomed.zoom === expected.zoom, `zoomed to ${zoomed.zoom}`, zoomed);
  const after = await boxNamed(expected.zoom);
  check(Math.abs(after.w - canvas.width) < 1, `${expected.zoom} now spans the chart (${after.w} px)`);
  check((await text('#zoom')).includes(expected.zoom), `zoom shown: "${await text('#zoom')}"`);
  await clickBox((await drawn()).find((b) => b.name === 'all'));
  check((await state()).zoom === 'all', 'clicking the root zooms out');

  // 5. Inverted: the leaves hang from the root, at the top.
  const flameTotal = (await state()).total;
  await page.check('#invert');
  check((await state()).total === flameTotal, 'the inverted tree has the same total');
  const inv = await drawn();
  const root = inv.find((b) => b.name === 'all');
  const rootRow = root.y;
  check(rootRow === 0, 'the inverted root is the top row');
  check(inv.some((b) => b.name === expected.leaf && b.y === rootRow + b.h), `${expected.leaf} is a caller-view root frame`);
  await page.uncheck('#invert');

  // 6. Views: each shows its own total.
  const shown = new Set();
  for (const [i, v] of expected.views.entries()) {
    await page.selectOption('#view', String(i));
    const t = await text('#total');
    check(t.startsWith(v.total) && (await state()).view === v.id, `view ${v.id}: "${t}"`, v.total);
    shown.add(t);
  }
  check(shown.size === expected.views.length, 'every view shows a different total');

  // The picture, with a search on, for people to look at.
  await page.selectOption('#view', '0');
  await page.fill('#search', expected.searches[0].query);
  await page.waitForFunction(() => document.getElementById('matched').textContent !== '');
  await page.screenshot({ path: shot, fullPage: true });
  console.log('ok: screenshot ' + shot);

  check(foreign.length === 0, 'no request left the file', foreign);
  check(errors.length === 0, 'no script error', errors);

  if (big) {
    // Figures only: the machine running the tests is shared, times vary too much to judge.
    const t0 = Date.now();
    await page.goto(pathToFileURL(path.resolve(big)).href);
    await page.waitForFunction(() => window.instrFlame && window.instrFlame.drawn().length > 0, null, { timeout: 120000 });
    const loaded = Date.now() - t0;
    const m = await page.evaluate(async () => {
      const time = (f) => { const t = performance.now(); f(); return Math.round(performance.now() - t); };
      const s = document.getElementById('search');
      // The search draws on the next animation frame: wait for it, since that is what a user waits for.
      let t = performance.now();
      s.value = 'method7';
      s.dispatchEvent(new Event('input'));
      await new Promise((r) => requestAnimationFrame(r));
      const search = Math.round(performance.now() - t);
      const inv = document.getElementById('invert');
      const invert = time(() => { inv.checked = true; inv.dispatchEvent(new Event('change')); });
      const invertAgain = time(() => { inv.checked = false; inv.dispatchEvent(new Event('change')); inv.checked = true; inv.dispatchEvent(new Event('change')); });
      const c = document.getElementById('flame').getBoundingClientRect();
      // The widest frame below the root: in the caller view of 400 evenly used classes none is wide.
      const b = window.instrFlame.drawn().filter((x) => x.name !== 'all' && !x.merged).sort((p, q) => q.w - p.w)[0];
      const zoom = time(() => document.getElementById('flame').dispatchEvent(new MouseEvent('click', { clientX: c.left + b.x + 5, clientY: c.top + b.y + 5 })));
      return { search, invert, invertAgain, zoom, frames: window.instrFlame.drawn().length, matched: document.getElementById('matched').textContent };
    });
    console.log(`big page: loaded and drawn in ${loaded} ms; search and redraw ${m.search} ms (${m.matched}); ` +
      `first inverted view ${m.invert} ms (tree built in the page), switching back and forth ${m.invertAgain} ms; ` +
      `zoom ${m.zoom} ms; ${m.frames} boxes drawn`);
    check(errors.length === 0, 'no script error on the big page', errors);
  }
} catch (e) {
  console.error('FAILED: ' + e.message);
  status = 1;
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(status);
