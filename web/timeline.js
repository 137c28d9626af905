// timeline.js: one run's timeline on a canvas: a lane per process/thread,
// its events as marks (single events when the view holds few, else the
// server's per-bucket counts), the playhead, the point where a compared run
// parts. Pure drawing: app.js owns the state.
const KIND_COLOR = {
  1: '#555', 2: '#58a6ff', 3: '#3fb950', 4: '#a371f7', 5: '#d29922', 6: '#f85149',
  7: '#8b949e', 8: '#db6d28', 9: '#db6d28', 10: '#ffcc33', 11: '#ff7b72', 12: '#6e7681',
};
// for a bucket: the most telling kind in its mask wins
const PRIORITY = [6, 11, 5, 3, 10, 4, 8, 9, 7, 2, 12, 1];
export const KIND_NAMES = { 2: 'output', 3: 'exec', 4: 'fork', 5: 'exit', 6: 'signal', 7: 'open', 10: 'mark', 11: 'assert' };
export function kindColor(k) { return KIND_COLOR[k] || '#999'; }
const FATAL = /\((SIGSEGV|SIGBUS|SIGFPE|SIGILL|SIGABRT|SIGKILL|SIGTERM|SIGINT|SIGQUIT|SIGSYS|SIGTRAP)\)$/;
const HEAD = '#ffcc33', PART = '#ff7b72', FAULT = '#f0883e', LABEL_W = 120, ROW_MIN = 14, AXIS_H = 18;

export class Timeline {
  constructor(canvas) {
    this.c = canvas;
    this.lanes = [];
    this.data = null;   // the lanes reply for the current view
    this.marks = [];
    this.from = 0; this.to = 1; this.steps = 1;
    this.step = 0; this.part = null; this.selTid = null;
  }
  get plotW() { return Math.max(10, this.c.clientWidth - LABEL_W); }
  x(step) { return LABEL_W + (step - this.from + 0.5) * this.plotW / (this.to - this.from + 1); }
  stepAt(px) {
    const s = this.from + Math.floor((px - LABEL_W) * (this.to - this.from + 1) / this.plotW);
    return Math.min(this.steps, Math.max(0, s));
  }
  inLabels(px) { return px < LABEL_W; }
  laneY(i) { return AXIS_H + (i + 0.5) * this.rowH(); } // the middle of lane i
  laneAt(py) {
    const h = this.rowH();
    const i = Math.floor((py - AXIS_H) / h);
    return i >= 0 && i < this.lanes.length ? this.lanes[i] : null;
  }
  rowH() {
    // many lanes share the height (labels only where a row has room for one)
    const avail = this.c.clientHeight - AXIS_H;
    return Math.max(2, Math.min(22, avail / Math.max(1, this.lanes.length)));
  }
  draw() {
    const c = this.c, dpr = window.devicePixelRatio || 1;
    const W = c.clientWidth, H = c.clientHeight;
    if (c.width !== W * dpr || c.height !== H * dpr) { c.width = W * dpr; c.height = H * dpr; }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    g.font = '11px ui-monospace, monospace';
    const rh = this.rowH();
    const laneIndex = new Map(this.lanes.map((l, i) => [l.pid + '/' + l.tid, i]));
    // axis
    g.fillStyle = '#8b95a3';
    const span = this.to - this.from + 1;
    const ticks = Math.max(1, Math.min(8, span - 1));
    let lastEnd = -1;
    for (let i = 0; i <= ticks; i++) {
      const s = Math.round(this.from + (span - 1) * i / ticks);
      const x = this.x(s);
      g.fillRect(x, AXIS_H - 4, 1, 4);
      const label = String(s), lw = g.measureText(label).width;
      const lx = Math.min(x + 2, W - lw - 2);
      if (lx > lastEnd + 4) { g.fillText(label, lx, 11); lastEnd = lx + lw; }
    }
    // lanes
    this.lanes.forEach((l, i) => {
      const y = AXIS_H + i * rh;
      g.fillStyle = l.tid === this.selTid ? '#24324a' : (i % 2 ? '#161a20' : '#1a1f26');
      g.fillRect(0, y, W, rh);
      if (rh < ROW_MIN - 4) return;
      g.fillStyle = '#d8dee6';
      const label = `${l.node ? '[' + l.node + '] ' : ''}${l.name || '?'} ${l.pid}${l.tid !== l.pid ? '/' + l.tid : ''}`;
      g.fillText(label.slice(0, 17), 4, y + Math.min(rh - 3, 11));
    });
    // events
    const d = this.data;
    if (d && d.exact) {
      for (const e of d.exact) {
        const i = laneIndex.get(e.pid + '/' + e.tid);
        if (i === undefined) continue;
        g.fillStyle = kindColor(KIND_CODE[e.kind]);
        const x = this.x(e.step);
        const w = Math.max(2, this.plotW / span - 1);
        g.fillRect(x - w / 2, AXIS_H + i * rh + (rh > 6 ? 2 : 0), w, rh > 6 ? rh - 4 : rh);
      }
    } else if (d) {
      const bw = this.plotW / d.n;
      for (const [key, cells] of Object.entries(d.buckets)) {
        const i = laneIndex.get(key);
        if (i === undefined) continue;
        for (const [b, [count, mask]] of Object.entries(cells)) {
          let k = 1;
          for (const p of PRIORITY) if (mask & (1 << p)) { k = p; break; }
          g.globalAlpha = Math.min(1, 0.35 + Math.log2(1 + count) / 6);
          g.fillStyle = kindColor(k);
          g.fillRect(LABEL_W + b * bw, AXIS_H + i * rh + (rh > 6 ? 2 : 0), Math.max(1, bw - 0.3), rh > 6 ? rh - 4 : rh);
        }
      }
      g.globalAlpha = 1;
    }
    // notable events on top: signals and failed exits as triangles
    for (const m of this.marks) {
      if (m.step < this.from || m.step > this.to) continue;
      if (m.kind === 'fault') { // docs/faults.md: an injected fault, across every lane
        const x = this.x(m.step);
        g.strokeStyle = FAULT; g.setLineDash([2, 2]);
        g.beginPath(); g.moveTo(x, AXIS_H); g.lineTo(x, H); g.stroke();
        g.setLineDash([]);
        g.fillStyle = FAULT; g.font = '10px sans-serif';
        g.fillText((m.text.split(' ')[1] || 'fault') + ' ' + (m.node || ''), x + 3, AXIS_H + 10);
        continue;
      }
      // what went wrong: a fatal signal, a process killed or exiting non-zero
      // (not SIGCHLD and the like, which every shell gets)
      if (!(m.kind === 'signal' && FATAL.test(m.text)) &&
          !(m.kind === 'exit' && /killed|exited [1-9]/.test(m.text))) continue;
      const i = laneIndex.get(m.pid + '/' + m.tid);
      const y = AXIS_H + (i === undefined ? 0 : i * rh);
      const x = this.x(m.step);
      g.fillStyle = '#f85149';
      g.beginPath(); g.moveTo(x - 5, y); g.lineTo(x + 5, y); g.lineTo(x, y + 7); g.fill();
    }
    if (this.part !== null && this.part >= this.from && this.part <= this.to) {
      g.strokeStyle = PART; g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(this.x(this.part), AXIS_H); g.lineTo(this.x(this.part), H); g.stroke();
      g.setLineDash([]);
    }
    if (this.step >= this.from && this.step <= this.to) {
      const x = this.x(this.step);
      g.fillStyle = HEAD;
      g.fillRect(x - 1, 0, 2, H);
      g.beginPath(); g.moveTo(x - 6, 0); g.lineTo(x + 6, 0); g.lineTo(x, 8); g.fill();
    }
  }
}

export const KIND_CODE = { console: 1, output: 2, exec: 3, fork: 4, exit: 5, signal: 6, open: 7,
  unlink: 8, rename: 9, mark: 10, assert: 11, init: 12 };
