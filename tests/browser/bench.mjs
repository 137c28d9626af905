// bench.mjs URL RUN: the page's own timers (window.rewind.timings) on RUN:
// the first paint of the whole timeline (ms since navigation start, median
// of ROUNDS fresh loads) and playhead moves across the run (each from the
// step's change to its panes painted: event, log, processes, files), by
// moveTo calls at 20 points and by a mouse drag over the whole timeline.
import { launch } from './browser.mjs';

const [url, run] = process.argv.slice(2);
const rounds = Number(process.env.ROUNDS || 5);
const { ctx, close } = await launch();
const page = ctx.pages()[0] || (await ctx.newPage());
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const paints = [];
let info;
for (let i = 0; i < rounds; i++) {
  await page.goto('about:blank');
  await page.goto(`${url}#run=${run}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  paints.push(await page.evaluate(() => window.rewind.timings.firstPaint));
  info = await page.evaluate(() => ({ steps: window.rewind.tl.steps, lanes: window.rewind.tl.lanes.length,
    events: window.rewind.state.summary.events }));
}
// moves by the API the keyboard and the step box use
const jumps = await page.evaluate(async () => {
  const r = window.rewind, t = [];
  for (let i = 1; i <= 20; i++) {
    const t0 = performance.now();
    await r.moveTo(Math.round(r.tl.steps * i / 20));
    t.push(performance.now() - t0);
  }
  return t;
});
// a drag over the whole run: 50 pointer moves; the panes follow the last
// (the canvas's offsetX is measured from inside its border; boundingBox
// includes it, and step 0 lies within a pixel of the lanes' names)
const xAt = (s) => page.evaluate((s) => { const c = document.getElementById('timeline');
  return c.getBoundingClientRect().left + c.clientLeft + window.rewind.tl.x(s); }, s);
const y = (await page.locator('#timeline').boundingBox()).y + 30;
await page.evaluate(() => { window.rewind.timings.moves.length = 0; });
const d0 = Date.now();
await page.mouse.move(await xAt(0), y);
await page.mouse.down();
for (let i = 1; i <= 50; i++) await page.mouse.move(await xAt(Math.round(info.steps * i / 50)), y);
await page.mouse.up();
await page.waitForFunction(() => document.body.dataset.atStep === String(window.rewind.state.step), null, { timeout: 60000 });
const dragEnd = await page.evaluate(() => window.rewind.state.step);
const dragMs = Date.now() - d0;
const dragMoves = await page.evaluate(() => window.rewind.timings.moves.slice());
await close();
console.log(`run ${run}: ${info.steps} steps, ${info.events} events, ${info.lanes} lanes`);
console.log(`first paint (ms since navigation start, ${rounds} loads): median ${med(paints).toFixed(0)}, max ${Math.max(...paints).toFixed(0)}`);
console.log(`playhead jumps across the run (20, each until its panes are painted): median ${med(jumps).toFixed(0)} ms, max ${Math.max(...jumps).toFixed(0)} ms`);
console.log(`drag over the whole run (50 pointer moves, to step ${dragEnd}): ${dragMs} ms until that step's panes are painted; ${dragMoves.length} pane updates, median ${med(dragMoves).toFixed(0)} ms`);
