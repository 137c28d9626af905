// app.js: the page of `rewind serve` (docs/serve.md). State lives in the
// URL's hash (#run=ID&step=N&cmp=ID2&from=A&to=B), so a pasted link opens
// the same view. window.rewind exposes the page's own timers to the tests
// and the benchmark (tests/browser, bench/serve.sh).
import { get, post } from './api.js';
import { Timeline } from './timeline.js';
import { Shell } from './shell.js';
import { stackLines } from './stack.js';

const $ = (id) => document.getElementById(id);
// wherePid: the process whose stack the Stack box shows (null: the job)
const state = { run: null, step: 0, cmp: null, summary: null, runs: [], wherePid: null };
const tl = new Timeline($('timeline'));
const cmpTl = new Timeline($('cmp-timeline'));
const timings = { start: performance.now(), firstPaint: null, moves: [], where: [] };
let laneSeq = 0, newRun = null;

function status(msg) { $('status').textContent = msg; }
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])); }

// ---- the URL ----
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  return { run: h.get('run'), step: Number(h.get('step') || 0), cmp: h.get('cmp'),
    from: h.has('from') ? Number(h.get('from')) : null, to: h.has('to') ? Number(h.get('to')) : null,
    stack: h.get('stack') };
}
let hashTimer = null;
function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    const h = new URLSearchParams();
    if (state.run) h.set('run', state.run);
    h.set('step', state.step);
    if (state.cmp) h.set('cmp', state.cmp);
    if (state.summary && (tl.from !== 0 || tl.to !== tl.steps)) { h.set('from', tl.from); h.set('to', tl.to); }
    if ($('where-box').open) h.set('stack', state.wherePid || 'job');
    const s = '#' + h.toString();
    if (location.hash !== s) history.replaceState(null, '', s);
    $('deeplink').href = location.href;
  }, 150);
}

// ---- runs as a tree ----
function outcomeBadge(r) {
  if (r.incomplete) return '<span class="badge bad">incomplete</span>';
  const ok = r.outcome === 'exited' && r.exit_code === 0;
  return `<span class="badge ${ok ? 'ok' : 'bad'}">${esc(r.outcome)}:${r.exit_code}</span>`;
}
async function loadRuns() {
  const { runs, checks = [] } = await get('runs');
  state.runs = runs.filter((r) => r.id);
  // a stored check sits under its schedule 0 run, its verdict at a glance
  const checksOf = new Map();
  for (const c of checks) {
    if (!checksOf.has(c.base)) checksOf.set(c.base, []);
    checksOf.get(c.base).push(c);
  }
  const checkNode = (c) => `<li><div class="check" data-check="${esc(c.id)}" title="rewind show ${esc(c.id)}">
      check <span class="id">${esc(c.id.slice(0, 10))}</span><span class="badge ${c.found ? 'bad' : 'ok'}">${c.found ? `${c.failures} failing` : 'no difference'}</span>
      <span class="cmd">${c.tried} of ${c.schedules} schedules${c.found ? ` · first: schedule ${c.schedule}, run ${esc(c.failing.slice(0, 10))}` + (c.deciding ? `, deciding step ${esc(c.deciding)}` : '') : ''}</span></div></li>`;
  const byId = new Map(state.runs.map((r) => [r.id, r]));
  const kids = new Map();
  const roots = [];
  for (const r of state.runs) {
    if (r.parent && byId.has(r.parent)) {
      if (!kids.has(r.parent)) kids.set(r.parent, []);
      kids.get(r.parent).push(r);
    } else roots.push(r);
  }
  const node = (r) => {
    const sched = (r.schedules || []).filter((n) => n > 0);
    const what = (r.session ? `${r.session} session` : r.parent ? 'fork' : '') +
      (r.parent ? ` at step ${r.fork_step}` : '') + (sched.length ? `, schedule ${sched.join('+')}` : '');
    const sub = (checksOf.get(r.id) || []).map(checkNode).join('') + (kids.get(r.id) || []).map(node).join('');
    return `<li><div data-id="${esc(r.id)}" class="${r.id === state.run ? 'open' : ''}${r.id === newRun ? ' new' : ''}">
      <span class="cmp" data-cmp="${esc(r.id)}" title="compare the open run with this one">compare</span>
      <span class="id">${esc(r.id.slice(0, 10))}</span>${r.name ? ' ' + esc(r.name) : ''}${outcomeBadge(r)}
      <span class="cmd">${esc(what ? what + ' · ' : '')}${r.steps ?? ''} steps · ${esc(r.command || '')}</span></div>
      ${sub ? '<ul>' + sub + '</ul>' : ''}</li>`;
  };
  $('runs').innerHTML = '<ul>' + roots.map(node).join('') + '</ul>';
  const sel = $('cmp-select');
  sel.innerHTML = '<option value="">(another run)</option>' + state.runs.map((r) =>
    `<option value="${esc(r.id)}"${r.id === state.cmp ? ' selected' : ''}>${esc(r.id.slice(0, 10))} ${esc(r.outcome)}:${r.exit_code} ${esc((r.command || '').slice(0, 30))}</option>`).join('');
}
$('runs').addEventListener('click', (e) => {
  const c = e.target.closest('[data-cmp]');
  if (c) { e.stopPropagation(); setCompare(c.dataset.cmp); return; }
  if (e.target.closest('[data-check]')) return;
  const d = e.target.closest('[data-id]');
  if (d) openRun(d.dataset.id, 0);
});

// ---- the timeline ----
async function fetchLanes() {
  if (!state.summary) return;
  const seq = ++laneSeq;
  const n = Math.max(50, Math.min(4096, Math.floor(tl.plotW)));
  const d = await get(`run/${state.run}/lanes`, { from: tl.from, to: tl.to, n });
  if (seq !== laneSeq) return;
  tl.data = d;
  tl.draw();
  $('range').textContent = `steps ${tl.from}–${tl.to} of ${tl.steps}` + (d.exact ? '' : ` (${d.count} events in ${d.n} buckets)`);
  if (timings.firstPaint === null) timings.firstPaint = performance.now(); // ms since navigation start
}
function setView(from, to) {
  const span = Math.max(20, to - from);
  from = Math.max(0, Math.round(from));
  to = Math.min(tl.steps, from + Math.round(span));
  from = Math.max(0, to - Math.round(span));
  tl.from = from; tl.to = Math.max(from + 1, to);
  tl.draw();
  writeHash();
  fetchLanes();
}
function zoom(f, around = state.step) {
  const span = (tl.to - tl.from) * f;
  const r = (around - tl.from) / Math.max(1, tl.to - tl.from);
  setView(around - span * r, around - span * r + span);
}
$('zin').onclick = () => zoom(0.25);
$('zout').onclick = () => zoom(4);
$('zfit').onclick = () => setView(0, tl.steps);

let dragging = false;
const canvas = $('timeline');
canvas.addEventListener('pointerdown', (e) => {
  const lane = tl.laneAt(e.offsetY);
  if (lane) selectLane(lane);
  if (tl.inLabels(e.offsetX)) { tl.draw(); return; } // a lane's name: choose it, the playhead stays
  dragging = true;
  canvas.setPointerCapture(e.pointerId);
  moveTo(tl.stepAt(e.offsetX));
});
// a lane chosen: its process for Shift+arrows and for the Stack box
function selectLane(lane) {
  tl.selTid = lane.tid;
  if (state.wherePid !== lane.pid) {
    state.wherePid = lane.pid;
    writeHash();
    showWhere(state.step);
  }
}
canvas.addEventListener('pointermove', (e) => { if (dragging) moveTo(tl.stepAt(e.offsetX)); });
canvas.addEventListener('pointerup', () => { dragging = false; });
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  zoom(e.deltaY > 0 ? 1.5 : 1 / 1.5, tl.stepAt(e.offsetX));
}, { passive: false });
window.addEventListener('resize', () => { tl.draw(); fetchLanes(); });

async function nav(dir, own) {
  if (!state.summary) return;
  const args = { step: state.step, dir };
  if (own) {
    if (tl.selTid === null) { status('click a lane to choose its process'); return; }
    args.tid = tl.selTid;
  }
  const r = await get(`run/${state.run}/nav`, args);
  if (r.step === null) { status(`no ${dir === 'next' ? 'later' : 'earlier'} event`); return; }
  moveTo(r.step, true);
}
$('prev').onclick = () => nav('prev', false);
$('next').onclick = () => nav('next', false);
$('pprev').onclick = () => nav('prev', true);
$('pnext').onclick = () => nav('next', true);
document.addEventListener('keydown', (e) => {
  if (e.target.closest('input, select, textarea, #term')) return;
  if (e.key === 'ArrowLeft') nav('prev', e.shiftKey);
  else if (e.key === 'ArrowRight') nav('next', e.shiftKey);
  else if (e.key === ',') moveTo(state.step - 1, true);
  else if (e.key === '.') moveTo(state.step + 1, true);
  else if (e.key === '+' || e.key === '=') zoom(0.25);
  else if (e.key === '-') zoom(4);
  else if (e.key === '0') setView(0, tl.steps);
  else return;
  e.preventDefault();
});
$('step').addEventListener('change', () => moveTo(Number($('step').value), true));

// ---- the playhead and what it shows ----
function moveTo(step, follow) {
  if (!state.summary) return Promise.resolve();
  step = Math.max(0, Math.min(tl.steps, Math.round(step)));
  state.step = step;
  tl.step = step;
  if (follow && (step < tl.from || step > tl.to)) {
    const span = tl.to - tl.from;
    setView(step - span / 2, step + span / 2);
  }
  tl.draw();
  $('step').value = step;
  $('at-step').textContent = step;
  writeHash();
  showWhere(step); // at once: a stack being read for the step left is dropped
  return requestAt(step, performance.now());
}

// One request for the panes in flight at a time: moves made meanwhile (a
// drag) collapse into the newest, so the server never works for a step the
// playhead has already left.
let atWant = null, atBusy = false, atWaiters = [];
function requestAt(step, t0) {
  atWant = { step, t0 };
  const p = new Promise((resolve) => atWaiters.push(resolve));
  if (!atBusy) pumpAt();
  return p;
}
async function pumpAt() {
  atBusy = true;
  while (atWant) {
    const w = atWant;
    atWant = null;
    try { await showAt(w.step, w.t0); } catch (err) { status(err.message); }
  }
  atBusy = false;
  const ws = atWaiters;
  atWaiters = [];
  ws.forEach((r) => r());
}

function describeHere(at) {
  const lines = [];
  if (at.here.length) for (const e of at.here) lines.push(`<span class="here${e.kind === 'signal' ? ' sig' : ''}">step ${e.step}: ${esc(e.text)}</span>`);
  else {
    lines.push(`<span class="muted">no event at step ${at.step}</span>`);
    if (at.before) lines.push(`last before it, at step ${at.before.step}: ${esc(at.before.text)}`);
  }
  return lines.join('\n');
}

async function showAt(step, t0) {
  const at = await get(`run/${state.run}/at`, { step });
  $('event').innerHTML = describeHere(at);
  const log = $('log');
  log.textContent = at.log;
  $('log-note').textContent = at.log_total > at.log.length ? `the last 64 KiB of ${at.log_total} bytes` : '';
  log.scrollTop = log.scrollHeight;
  $('ps').innerHTML = at.ps.map((p) => `<div>${'  '.repeat(p.depth)}${p.pid} ${esc(p.argv || '?')}${p.threads > 1 ? ` (${p.threads} threads)` : ''}</div>`).join('');
  const files = Object.entries(at.files);
  $('files').innerHTML = files.length ? files.map(([path, f]) =>
    `<div data-path="${esc(path)}" title="click: its content at step ${step}">${esc(path)} <span class="muted">${f.state} at step ${f.step}</span></div>`).join('')
    : '<span class="muted">none</span>';
  if (t0 !== undefined) timings.moves.push(performance.now() - t0);
  document.body.dataset.atStep = String(step);
}

// cat: a file as the job saw it at the playhead (a throwaway fork, `rewind
// cat`): a written file from the list, or any path typed in
async function catAt(path) {
  const cat = $('cat');
  cat.hidden = false;
  delete cat.dataset.done;
  cat.textContent = `reading ${path} at step ${state.step} (a throwaway fork)...`;
  try {
    const r = await post('cat', { run: state.run, step: state.step, path });
    cat.textContent = `${r.path} at step ${r.step}${r.truncated ? ' (first 1 MiB)' : ''}:\n` + (r.binary ? '(binary)' : r.content);
    cat.dataset.done = 'ok';
  } catch (err) { cat.textContent = String(err.message); cat.dataset.done = 'error'; }
}
$('files').addEventListener('click', (e) => {
  const d = e.target.closest('[data-path]');
  if (d) catAt(d.dataset.path);
});
$('cat-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const p = $('cat-path').value.trim();
  if (p) catAt(p);
});

// ---- the stack at the playhead: `rewind where` on the server ----
// Each answer boots throwaway VMs there, so it is asked for only while the
// Stack box is open and once the playhead has rested WHERE_REST ms. A move
// aborts the fetch in flight (the server then ends its `rewind where`), and
// an answer for a step the playhead has left is never shown.
const WHERE_REST = 400;
let whereCtl = null, whereTimer = null;
function whereWho() {
  const l = state.wherePid && tl.lanes.find((x) => x.pid === state.wherePid);
  return state.wherePid ? `of process ${state.wherePid}${l && l.name ? ' ' + l.name : ''}` : 'of the job (click a lane\'s name for another process)';
}
function whereShow(lines, note, st) {
  const box = $('where');
  box.replaceChildren(...lines.map(({ text, cls }) => {
    const d = document.createElement('div');
    d.textContent = text;
    if (cls) d.className = cls;
    return d;
  }));
  $('where-note').textContent = note || '';
  box.dataset.state = st;
}
function showWhere(step) {
  clearTimeout(whereTimer);
  if (whereCtl) { whereCtl.abort(); whereCtl = null; }
  $('where-who').textContent = whereWho();
  if (!$('where-box').open || !state.run) { whereShow([], '', 'closed'); return; }
  if (step === 0) { whereShow([], 'no stack at step 0: the job has not started', 'done'); return; }
  const run = state.run, pid = state.wherePid;
  whereShow([], `the stack at step ${step}: once the playhead rests`, 'waiting');
  whereTimer = setTimeout(async () => {
    const ctl = new AbortController();
    whereCtl = ctl;
    const t0 = performance.now();
    whereShow([], `reading the stack at step ${step} (rewind where: throwaway VMs on the server)...`, 'loading');
    try {
      const w = await get(`run/${run}/where`, pid ? { step, pid } : { step }, ctl.signal);
      if (whereCtl !== ctl) return; // the playhead moved on
      const { lines, note } = stackLines(w);
      whereShow(lines, note, 'done');
      $('where').dataset.step = String(step);
      timings.where.push({ step, ms: performance.now() - t0, cached: !!w.cached });
    } catch (err) {
      if (whereCtl !== ctl || err.name === 'AbortError') return;
      whereShow([], `no stack at step ${step}: ${err.message}`, 'error');
    } finally {
      if (whereCtl === ctl) whereCtl = null;
    }
  }, WHERE_REST);
}
$('where-box').addEventListener('toggle', () => { writeHash(); showWhere(state.step); });

// ---- fork and shell ----
$('fork').onclick = async () => {
  const schedule = Number($('schedule').value || 1);
  $('action-status').textContent = `forking at step ${state.step} under schedule ${schedule}...`;
  try {
    const r = await post('fork', { run: state.run, step: state.step, schedule });
    newRun = r.id;
    $('action-status').textContent = `new run ${r.id}: ${r.line}`;
    document.body.dataset.forked = r.id;
    await loadRuns();
  } catch (err) { $('action-status').textContent = 'fork: ' + err.message; }
};
let shell = null;
$('shell').onclick = async () => {
  if (shell && !shell.ended) { status('a shell is open already'); return; }
  $('shell-panel').hidden = false;
  $('shell-title').textContent = `in ${state.run.slice(0, 10)} at step ${state.step}`;
  shell = new Shell($('term'), state.run, state.step, async (run) => {
    if (run) { newRun = run; await loadRuns(); }
  });
  window.rewind.shell = shell;
  try { await shell.start(); } catch (err) { $('action-status').textContent = 'shell: ' + err.message; }
};
$('shell-end').onclick = () => shell && shell.end();

// ---- compare ----
async function setCompare(id) {
  state.cmp = id || null;
  $('cmp-select').value = id || '';
  writeHash();
  if (!id || !state.run) { $('diff').innerHTML = ''; tl.part = null; tl.draw(); $('cmp-timeline').hidden = true; return; }
  const d = await get('diff', { a: state.run, b: id });
  $('diff').innerHTML = `<div class="words">${esc(d.words)}</div>` + (d.identical ? '' :
    `<button id="goto-part">go to where they part (step ${d.step_a})</button>`);
  document.body.dataset.parted = d.identical ? 'identical' : String(d.step_a);
  tl.part = d.identical ? null : d.step_a;
  tl.draw();
  if (!d.identical) $('goto-part').onclick = () => moveTo(d.step_a, true);
  // the other run's timeline, whole, with the same point marked
  const s = await get(`run/${id}/summary`);
  cmpTl.lanes = s.lanes; cmpTl.marks = s.marks; cmpTl.steps = s.steps; cmpTl.from = 0; cmpTl.to = Math.max(1, s.steps);
  cmpTl.part = d.identical ? null : d.step_b; cmpTl.step = -1;
  $('cmp-timeline').hidden = false;
  $('cmp-timeline').style.height = Math.max(60, 24 + 16 * s.lanes.length) + 'px';
  cmpTl.data = await get(`run/${id}/lanes`, { from: 0, to: cmpTl.to, n: Math.max(50, Math.floor(cmpTl.plotW)) });
  cmpTl.draw();
}
$('cmp-select').addEventListener('change', (e) => setCompare(e.target.value));

// ---- opening a run ----
async function openRun(id, step, from = null, to = null) {
  status('loading ' + id);
  // the summary brings the whole run's buckets from the same pass: one
  // request for the first paint
  const n = Math.max(50, Math.min(4096, Math.floor(tl.plotW)));
  const s = await get(`run/${id}/summary`, { n });
  state.run = s.run.id;
  state.summary = s;
  tl.lanes = s.lanes; tl.marks = s.marks; tl.steps = Math.max(1, s.steps);
  tl.from = 0; tl.to = tl.steps; tl.data = null; tl.selTid = null;
  if (state.wherePid && !s.lanes.some((l) => l.pid === state.wherePid)) state.wherePid = null;
  if (state.wherePid) tl.selTid = state.wherePid;
  canvas.style.height = Math.max(120, Math.min(420, 18 + 18 * s.lanes.length)) + 'px';
  if (from !== null && to !== null) { tl.from = Math.max(0, from); tl.to = Math.min(tl.steps, Math.max(from + 1, to)); }
  $('title').textContent = `${s.run.id} · ${s.run.command} · ${s.run.outcome}:${s.run.exit_code} · ${s.steps} steps, ${s.events} events`;
  $('legend').textContent = 'green exec · blue output · purple fork · orange exit · red signal/failed exit · grey open · yellow playhead · dashed red: where the compared run parts';
  document.querySelectorAll('#runs [data-id]').forEach((d) => d.classList.toggle('open', d.dataset.id === state.run));
  if (s.view && tl.from === 0 && tl.to === s.view.to) {
    tl.data = s.view;
    tl.draw();
    $('range').textContent = `steps 0–${tl.to} of ${tl.steps}` + (s.view.exact ? '' : ` (${s.view.count} events in ${s.view.n} buckets)`);
    if (timings.firstPaint === null) timings.firstPaint = performance.now();
  } else await fetchLanes();
  await moveTo(step, true);
  if (state.cmp) await setCompare(state.cmp);
  status('');
}

async function main() {
  window.rewind = { timings, state, tl, moveTo, openRun, setCompare, zoom, setView, shell: null };
  const h = readHash();
  state.cmp = h.cmp;
  if (h.stack) {
    $('where-box').open = true;
    state.wherePid = /^\d+$/.test(h.stack) ? Number(h.stack) : null;
  }
  try {
    await loadRuns();
    const run = h.run || (state.runs[0] && state.runs[0].id);
    if (run) await openRun(run, h.step, h.from, h.to);
    else status('no runs yet: rewind run ... records one');
  } catch (err) { status(err.message); }
  document.body.dataset.ready = '1';
}
window.addEventListener('hashchange', () => {
  const h = readHash();
  if (h.run && h.run !== state.run) openRun(h.run, h.step, h.from, h.to);
  else if (h.step !== state.step) moveTo(h.step, true);
});
main();
