// serve.mjs URL: drive the page of `rewind serve` like a person (run by
// tests/system/t_serve.sh, which passes what it knows in the environment):
//   FAIL, PASS   the failing and the passing run of the pool's check
//   SEGV         the step of the failing run's SIGSEGV
//   LOG_AT_SEGV  a file with `rewind log FAIL SEGV`
//   CAT_WANT     the root's /etc/hostname (what cat at SEGV must show)
//   SHOTS        where the screenshots go
//   SHORT=1      make check's short version: SEGV is the step of another
//                event (EVENT_RE names it: default SIGSEGV) of FAIL, and
//                only what needs no VM is driven (no cat, fork or shell)
//   STACK_STEP   a step where FAIL's job (a static program built with -g)
//                runs its main: the Stack box must show main with its source
//                line there (`rewind where` on the server)
//   FILE_RUN     a run whose job writes FILE_PATH (the short version's
//                third run): opened by a deep link (the hash) at step
//                FILE_BEFORE, before the write, where the files list must
//                not have it; the playhead is moved to FILE_STEP, after the
//                write, where it must; a click on it must show exactly
//                FILE_WANT's content (a file) in #cat (`rewind cat`, a VM)
//                (the long version: at its end, after the shell)
//   CRASH_STACK_RE  the Stack box opened at SEGV must show the job's stack,
//                matching this regex
// Prints one "ok ..." line per check; exits 1 at the first that fails.
import { readFileSync } from 'node:fs';
import { launch } from './browser.mjs';

const url = process.argv[2];
const { FAIL, PASS, SEGV, LOG_AT_SEGV, CAT_WANT, SHOTS, SHORT, STACK_STEP } = process.env;
const { FILE_RUN, FILE_BEFORE, FILE_STEP, FILE_PATH, FILE_WANT, CRASH_STACK_RE } = process.env;
const eventRe = new RegExp(process.env.EVENT_RE || 'SIGSEGV');
const segv = Number(SEGV);
const { ctx, close: closeAll } = await launch();
// closing chromium took minutes under the loaded test host: bounded, then
// node exits (chromium follows its closed pipe)
const close = () => Promise.race([closeAll(), new Promise((r) => setTimeout(r, 15000))]);
// Under the nested test host chromium runs on a software CPU: a page load
// takes tens of seconds there, so the waits are long (the test's own limit
// is its duration, printed per check).
ctx.setDefaultTimeout(180000);
ctx.setDefaultNavigationTimeout(240000);
const page = ctx.pages()[0] || (await ctx.newPage());
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
const t0 = Date.now();
const ok = (m) => console.log(`ok [${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);
function must(cond, m) { if (!cond) throw new Error(m); }
const shot = (name) => page.screenshot({ path: `${SHOTS}/${name}.png` });
const text = (sel) => page.locator(sel).innerText();

// the files written so far: another run opened by its deep link (no page
// load), the playhead moved past the write, a click on the file
async function filePart() {
  if (await page.evaluate(() => document.getElementById('where-box').open)) {
    await page.click('#where-box summary'); // no more `rewind where`
    await page.waitForFunction(() => document.getElementById('where').dataset.state === 'closed', null, { timeout: 60000 });
  }
  const before = Number(FILE_BEFORE), after = Number(FILE_STEP);
  const fileSel = `#files [data-path="${FILE_PATH}"]`;
  await page.evaluate(([r, s]) => { location.hash = `run=${r}&step=${s}`; }, [FILE_RUN, before]);
  await page.waitForFunction(([r, s]) => window.rewind.state.run === r &&
    document.body.dataset.atStep === String(s), [FILE_RUN, before], { timeout: 240000 });
  must((await text('#title')).includes(FILE_RUN), 'the deep link opens the run that writes a file');
  must(await page.locator(fileSel).count() === 0,
    `${FILE_PATH} is listed at step ${before}, before it was written: ` + (await text('#files')));
  ok(`deep link: run ${FILE_RUN.slice(0, 10)} at step ${before}, before the write; files: ` +
    (await text('#files')).replace(/\n/g, ' | '));
  await page.fill('#step', String(after));
  await page.press('#step', 'Tab');
  await page.waitForFunction((c) => document.body.dataset.atStep === String(c), after, { timeout: 120000 });
  await page.waitForSelector(fileSel, { timeout: 60000 });
  ok(`at step ${after} the files list has: ` + (await page.locator(fileSel).innerText()));
  // no earlier answer can pass for this one
  await page.evaluate(() => { const c = document.getElementById('cat'); delete c.dataset.done; c.textContent = ''; });
  await page.click(fileSel);
  // the click starts the page's cat at once (then its VM takes a while)
  await page.waitForFunction((p) => { const c = document.getElementById('cat');
    return !c.hidden && (c.dataset.done || c.textContent.startsWith(`reading ${p} `)); }, FILE_PATH, { timeout: 30000 })
    .catch(() => { throw new Error(`a click on ${FILE_PATH} in the files list started no cat`); });
  await page.waitForFunction(() => document.getElementById('cat').dataset.done, null, { timeout: 300000 });
  const want = `${FILE_PATH} at step ${after}:\n` + readFileSync(FILE_WANT, 'utf8');
  const got = await page.locator('#cat').textContent();
  must(await page.locator('#cat').getAttribute('data-done') === 'ok' && got === want,
    `a click on ${FILE_PATH} in the files list: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  ok(`a click on ${FILE_PATH} in the files list shows its content at step ${after}: ${JSON.stringify(got)}`);
  await shot('file-cat');
}

try {
  await page.goto(`${url}#run=${FAIL}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready="1"]');
  must((await text('#title')).includes(FAIL), 'the title names the failing run');
  ok('the page opens the failing run');

  // drag the playhead from the start to where the SIGSEGV is, then the
  // arrow keys (previous/next event) to the exact step; the whole run in
  // view first (the page may open zoomed in, where step 0 lies left of the
  // plot, under the lanes' names, and a drag there does not start)
  await page.click('#zfit');
  await page.waitForFunction(() => window.rewind.tl.from === 0, null, { timeout: 60000 });
  // the page's x for a step: the canvas's offsetX is measured from inside
  // its border, and boundingBox includes the border (step 0 lies within a
  // pixel of the lanes' names, so the border alone moves it under them)
  const xAt = (s) => page.evaluate((s) => { const c = document.getElementById('timeline');
    return c.getBoundingClientRect().left + c.clientLeft + window.rewind.tl.x(s); }, s);
  const y = (await page.locator('#timeline').boundingBox()).y + 30;
  await page.mouse.move(await xAt(0), y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++)
    await page.mouse.move(await xAt(Math.round(segv * i / 10)), y);
  await page.mouse.up();
  const atStep = async () => Number(await page.locator('body').getAttribute('data-at-step'));
  // the panes follow the playhead once its last move is painted
  const settled = () => page.waitForFunction(
    () => document.body.dataset.atStep === String(window.rewind.state.step), null, { timeout: 120000 });
  await settled();
  const dragged = await atStep();
  must(Math.abs(dragged - segv) <= Math.max(2, segv / 50), `the drag ends near step ${segv}: at ${dragged}`);
  ok(`dragged the playhead to step ${dragged}`);
  await page.locator('#timeline').focus();
  for (let i = 0; i < 400 && (await atStep()) !== segv; i++) {
    const cur = await atStep();
    await page.keyboard.press(cur < segv ? 'ArrowRight' : 'ArrowLeft');
    await page.waitForFunction((c) => window.rewind.state.step !== c, cur, { timeout: 120000 });
    await settled();
  }
  must((await atStep()) === segv, `the arrows reach step ${segv}: at ${await atStep()}`);
  // previous event, next event: back where it was
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((c) => window.rewind.state.step < c, segv, { timeout: 120000 });
  await settled();
  const before = await atStep();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((c) => window.rewind.state.step === c, segv, { timeout: 120000 });
  await settled();
  ok(`the arrow keys: previous event at step ${before}, next event back at ${segv}`);
  await page.waitForFunction((re) => new RegExp(re).test(document.getElementById('event').innerText), eventRe.source, { timeout: 120000 });
  ok(`at step ${segv}: ${(await text('#event')).split('\n')[0]}`);
  must(/pool/.test(await text('#ps')), `the process tree at step ${segv} shows the pool`);
  ok('the process tree shows: ' + (await text('#ps')).replace(/\n/g, ' | '));
  const want = readFileSync(LOG_AT_SEGV, 'utf8');
  const got = await page.locator('#log').textContent();
  must(got === want, `the log up to the step is rewind log's: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  ok(`the log up to step ${segv} is rewind log's (${want.length} bytes)`);
  await page.waitForFunction((c) => location.hash.includes(`step=${c}`), segv, { timeout: 60000 });
  ok('the URL names the step: ' + new URL(page.url()).hash);
  await shot('playhead');

  // zoom from the whole run down to single steps around the playhead (the
  // '+' key), each step its own column with its events drawn one by one,
  // then '0': the whole run again
  {
    await page.locator('#timeline').focus();
    const span = () => page.evaluate(() => window.rewind.tl.to - window.rewind.tl.from);
    for (let i = 0; i < 12 && (await span()) > 20; i++) await page.keyboard.press('+');
    must((await span()) <= 20, `'+' zooms down to 20 steps: ${await span()}`);
    await page.waitForFunction(() => window.rewind.tl.data && window.rewind.tl.data.exact &&
      /^steps \d+–\d+ of \d+$/.test(document.getElementById('range').innerText), null, { timeout: 120000 });
    const view = await page.evaluate(() => [window.rewind.tl.from, window.rewind.tl.to, window.rewind.state.step]);
    must(view[0] <= view[2] && view[2] <= view[1], `the zoomed view holds the playhead: ${view}`);
    ok(`zoomed in to single steps: ${await text('#range')} (${await page.evaluate(() => window.rewind.tl.data.exact.length)} events drawn one by one)`);
    await shot('zoom');
    await page.keyboard.press('0');
    await page.waitForFunction(() => window.rewind.tl.from === 0 && window.rewind.tl.to === window.rewind.tl.steps);
    ok('0: the whole run again');
  }

  // a file as the job saw it at the step, through the page (a throwaway fork)
  if (!SHORT) {
    await page.fill('#cat-path', '/etc/hostname');
    await page.click('#cat-go');
    await page.waitForFunction(() => document.getElementById('cat').dataset.done, null, { timeout: 240000 });
    const catWant = `/etc/hostname at step ${segv}:\n` + readFileSync(CAT_WANT, 'utf8');
    const catGot = await page.locator('#cat').textContent();
    must(catGot === catWant, `cat at the step: ${JSON.stringify(catGot)} vs ${JSON.stringify(catWant)}`);
    ok(`cat of /etc/hostname at step ${segv}: ${JSON.stringify(catGot)}`);
    await shot('cat');
  }


  // compare with the passing run
  await page.selectOption('#cmp-select', PASS);
  await page.waitForFunction(() => /part at event/.test(document.querySelector('#diff')?.innerText || ''), null, { timeout: 120000 });
  const parted = await page.locator('body').getAttribute('data-parted');
  must(/^\d+$/.test(parted), 'the comparison names the step where they part');
  ok('compare: ' + (await text('#diff .words')));
  await page.waitForFunction((c) => location.hash.includes(`cmp=${c}`), PASS, { timeout: 60000 });
  await shot('compare');

  // a deep link opens the same view (a second page: the long version only,
  // as a page load costs minutes under the test host's software CPU)
  if (!SHORT) {
    const link = page.url();
    const p2 = await ctx.newPage();
    await p2.goto(link, { waitUntil: 'domcontentloaded' });
    await p2.waitForSelector('body[data-ready="1"]');
    await p2.waitForFunction(() => /part at event/.test(document.querySelector('#diff')?.innerText || ''), null, { timeout: 120000 });
    must((await p2.locator('body').getAttribute('data-at-step')) === String(segv), 'the deep link opens the step');
    await p2.close();
    ok('the deep link opens the same run, step and comparison');
  }

  // the stack at a step: the Stack box opened, the job's main lane chosen
  // by its name; a fetch for a step the playhead leaves is dropped
  if (STACK_STEP) {
    const want = Number(STACK_STEP);
    const goStep = async (n) => {
      await page.fill('#step', String(n));
      await page.press('#step', 'Tab'); // commits the number: the playhead moves
      await page.waitForFunction((c) => document.body.dataset.atStep === String(c), n, { timeout: 120000 });
    };
    await goStep(want - 1);
    const tbox = await page.locator('#timeline').boundingBox();
    const lane = await page.evaluate(() => {
      const i = window.rewind.tl.lanes.findIndex((l) => l.pid === l.tid && /pool/.test(l.name));
      return i < 0 ? null : { i, y: window.rewind.tl.laneY(i), pid: window.rewind.tl.lanes[i].pid };
    });
    must(lane, 'a lane of the pool process');
    await page.mouse.click(tbox.x + 20, tbox.y + lane.y); // its name: the playhead stays
    must((await page.evaluate(() => window.rewind.state.wherePid)) === lane.pid, 'the lane is chosen');
    must((await atStep()) === want - 1, 'a click on a lane\'s name leaves the playhead');
    // Shift+→: the next event of the chosen lane's thread, skipping the others'
    await page.locator('#timeline').focus();
    await page.keyboard.press('Shift+ArrowRight');
    await page.waitForFunction((c) => window.rewind.state.step !== c, want - 1, { timeout: 120000 });
    await settled();
    const own = await atStep();
    const here = await page.evaluate(async ([run, st]) =>
      (await (await fetch(`api/run/${run}/at?step=${st}`)).json()).here, [FAIL, own]);
    must(own > want - 1 && here.some((e) => e.tid === lane.pid), `Shift+→ stops at an event of thread ${lane.pid}: step ${own} ${JSON.stringify(here)}`);
    ok(`Shift+→: the next event of thread ${lane.pid} is at step ${own}: ${here.filter((e) => e.tid === lane.pid)[0].text}`);
    await goStep(want - 1);
    await page.click('#where-box summary');
    await page.waitForFunction(() => document.getElementById('where').dataset.state === 'loading', null, { timeout: 60000 });
    await page.locator('#timeline').focus();
    await page.keyboard.press('.'); // one step on, while the stack of want-1 is being read
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('where').dataset.state), null, { timeout: 300000 });
    const stack = await text('#where');
    must(await page.locator('#where').getAttribute('data-step') === String(want),
      `the stack shown is of step ${want}: ` + (await text('#where-box')));
    must(/\bmain(\+0x[0-9a-f]+)? at \S*pool\.c:\d+/.test(stack), 'the stack names main at its pool.c line: ' + (await text('#where-box')));
    const wt = await page.evaluate(() => window.rewind.timings.where);
    must(wt.every((t) => t.step === want), 'no answer for the step the playhead left was shown: ' + JSON.stringify(wt));
    ok(`the stack of process ${lane.pid} at step ${want} (${Math.round(wt[0].ms)} ms): ` +
      stack.split('\n').filter((l) => /main/.test(l)).join(' | ').trim());
    await page.waitForFunction(() => /stack=\d+/.test(location.hash), null, { timeout: 60000 });
    ok('the URL names the stack box: ' + new URL(page.url()).hash);
    await shot('stack');
  }

  // the stack at the crash: the Stack box at the SIGSEGV step shows the
  // job's threads (rewind where reads the program at its exec's step, as
  // the process dies at this one); CRASH_STACK_RE: what it must name
  if (CRASH_STACK_RE) {
    await page.waitForFunction((c) => document.body.dataset.atStep === String(c), segv, { timeout: 60000 });
    // the pool's lane chosen by its name (the drag began on init's name,
    // which chose init's process for the box)
    const tb = await page.locator('#timeline').boundingBox();
    const lane = await page.evaluate(() => {
      const i = window.rewind.tl.lanes.findIndex((l) => l.pid === l.tid && /pool/.test(l.name));
      return i < 0 ? null : { y: window.rewind.tl.laneY(i), pid: window.rewind.tl.lanes[i].pid };
    });
    must(lane, 'a lane of the pool process');
    await page.mouse.click(tb.x + 20, tb.y + lane.y);
    must((await page.evaluate(() => window.rewind.state.wherePid)) === lane.pid, 'the pool\'s lane is chosen');
    must((await atStep()) === segv, 'a click on a lane\'s name leaves the playhead');
    await page.click('#where-box summary');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('where').dataset.state), null, { timeout: 300000 });
    must(await page.locator('#where').getAttribute('data-state') === 'done' &&
      await page.locator('#where').getAttribute('data-step') === String(segv),
      `the stack at the SIGSEGV (step ${segv}): ` + (await text('#where-box')));
    const st = await text('#where');
    must(new RegExp(CRASH_STACK_RE).test(st), `the stack at step ${segv} names /${CRASH_STACK_RE}/: ` + st);
    ok(`the stack at the SIGSEGV (step ${segv}): ` + st.split('\n').filter((l) => new RegExp(CRASH_STACK_RE).test(l)).join(' | ').trim());
    await shot('crash-stack');
    await page.click('#where-box summary'); // no more `rewind where`
    await page.waitForFunction(() => document.getElementById('where').dataset.state === 'closed', null, { timeout: 60000 });
  }

  if (SHORT && FILE_RUN) await filePart();

  if (SHORT) {
    must(errors.length === 0, 'no page errors: ' + errors.join('; '));
    ok('no page errors (short version: no second page, fork or shell; cat only by a click on a written file)');
    await close();
    process.exit(0);
  }
  // the check that found the failing run is in the tree, under its base run
  const chk = (await text('#runs [data-check]')).replace(/\s+/g, ' ');
  must(/\d+ failing/.test(chk) && /first: schedule \d+/.test(chk), 'the check in the tree: ' + chk);
  ok('the check in the tree: ' + chk);

  // fork from the playhead under schedule 3
  await page.fill('#schedule', '3');
  await page.click('#fork');
  await page.waitForFunction(() => document.body.dataset.forked ||
    /^fork:/.test(document.getElementById('action-status').innerText), null, { timeout: 240000 });
  const forked = await page.locator('body').getAttribute('data-forked');
  must(forked, 'the fork: ' + (await text('#action-status')));
  await page.waitForSelector(`#runs [data-id="${forked}"]`, { timeout: 60000 });
  ok(`forked run ${forked} is in the tree under its parent: ` + (await text('#action-status')));
  must(await page.locator(`#runs [data-id="${FAIL}"] + ul [data-id="${forked}"]`).count() === 1,
    'the fork sits under the failing run in the tree');
  await shot('fork');

  // a shell at the playhead: type ls, see its output
  await page.click('#shell');
  await page.waitForFunction(() => window.rewind.shell && window.rewind.shell.sid, null, { timeout: 120000 });
  // the first output of the session (its prompt) says the shell is up
  await page.waitForFunction(() => window.rewind.shell.text.length > 0 || window.rewind.shell.ended, null, { timeout: 180000 });
  must(!(await page.evaluate(() => window.rewind.shell.ended)), 'the shell session ended at once: ' +
    (await page.evaluate(() => window.rewind.shell.text)));
  await page.click('#term');
  await page.keyboard.type('ls /\r', { delay: 20 });
  await page.waitForFunction(() => /usr/.test(window.rewind.shell.text.split('ls /')[1] || ''), null, { timeout: 120000 });
  const out = await page.evaluate(() => window.rewind.shell.text.split('ls /')[1]);
  ok('the shell ran ls: ' + JSON.stringify(out.slice(0, 120)));
  await page.waitForFunction(() => /usr/.test(document.querySelector('#term .xterm-rows')?.innerText || ''));
  ok('the terminal shows it');
  await shot('shell');
  await page.keyboard.type('exit\r', { delay: 20 });
  await page.waitForFunction(() => window.rewind.shell.ended, null, { timeout: 120000 });
  const kept = await page.evaluate(() => window.rewind.shell.keptAs);
  must(kept, 'the session is kept as a run');
  await page.waitForSelector(`#runs [data-id="${kept}"]`, { timeout: 60000 });
  ok(`the session is kept as run ${kept}, in the tree`);
  await shot('tree');
  if (FILE_RUN) await filePart();
  must(errors.length === 0, 'no page errors: ' + errors.join('; '));
  ok('no page errors');
} catch (e) {
  console.log('FAIL ' + e.message);
  await shot('failure').catch(() => {});
  await close();
  process.exit(1);
}
await close();
process.exit(0);
