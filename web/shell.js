// shell.js: a terminal (xterm.js) on a `rewind shell` session the server
// runs: keystrokes are POSTed to its input (the session's rendezvous input,
// as for `rewind shell` in a terminal) and its output is long-polled.
import { get, post } from './api.js';

export class Shell {
  constructor(el, run, step, onEnd) {
    this.el = el; this.run = run; this.step = step; this.onEnd = onEnd;
    this.text = ''; this.next = 0; this.ended = false; this.sid = null;
    this.queue = Promise.resolve();
  }
  async start() {
    this.el.innerHTML = '';
    this.term = new window.Terminal({ convertEol: false, fontSize: 13, cols: 100, rows: 18,
      theme: { background: '#0b0e12' } });
    this.term.open(this.el);
    this.term.write(`\x1b[2m[starting a shell in ${this.run} at step ${this.step}...]\x1b[0m\r\n`);
    const r = await post('shell', { run: this.run, step: this.step });
    this.sid = r.session;
    // keystrokes in order, one POST at a time
    this.term.onData((d) => this.send(d));
    this.term.focus();
    this.poll();
  }
  send(data, close = false) {
    if (!this.sid || this.ended) return this.queue;
    this.queue = this.queue.then(() => post('shell/' + this.sid, close ? { data, close: true } : { data }).catch(() => {}));
    return this.queue;
  }
  end() { return this.send('exit\r'); }
  async poll() {
    while (!this.ended) {
      let r;
      try { r = await get('shell/' + this.sid, { from: this.next }); } catch (err) {
        this.term.write(`\r\n[${err.message}]\r\n`); return;
      }
      if (r.data) { this.term.write(r.data); this.text += r.data; }
      this.next = r.next;
      if (r.ended) {
        this.ended = true;
        this.term.write(`\r\n\x1b[2m[session ended (exit ${r.status})${r.run ? ', kept as run ' + r.run : ''}]\x1b[0m\r\n`);
        this.keptAs = r.run;
        if (this.onEnd) this.onEnd(r.run);
      }
    }
  }
}
