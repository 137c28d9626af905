// stack.js: the answer of api/run/REF/where (`rewind where --json`) as the
// Stack pane's lines, and what it lacks said in words. Pure (no DOM), so
// node tests it as it is (tests/browser/stack_test.mjs).

const hex = (n) => '0x' + Number(n).toString(16);

// One frame as `rewind where` prints it: "#2  main+0x1c at pool.c:93".
export function frameLine(f, i) {
  let s = `#${i}`.padEnd(4) + ' ';
  if (f.function) s += f.function + (f.offset ? '+' + hex(f.offset) : '');
  else s += `${hex(f.pc)} in ??`;
  if (f.file) s += ` at ${f.file}:${f.line}`;
  return s;
}

// { lines: [{ text, cls }], note }: a head line per thread, its frames
// (cls 'src' when the frame has a source line, 'sym' with only a name, 'raw'
// with neither), its reason when the stack is short; note says in words
// why names or lines are missing, or null.
export function stackLines(w) {
  const lines = [];
  const threads = w.threads || [];
  let named = 0, sourced = 0, frames = 0;
  lines.push({ text: `process ${w.pid} (${w.exe}) at step ${w.step}: ${threads.length} thread${threads.length === 1 ? '' : 's'}`, cls: 'head' });
  for (const t of threads) {
    lines.push({ text: `thread ${t.tid} (${t.comm}) ${t.state}`, cls: 'thread' });
    (t.frames || []).forEach((f, i) => {
      frames++;
      if (f.function) named++;
      if (f.file) sourced++;
      lines.push({ text: '  ' + frameLine(f, i), cls: f.file ? 'src' : f.function ? 'sym' : 'raw' });
    });
    if (t.why) lines.push({ text: `  (${t.why})`, cls: 'why' });
  }
  let note = null;
  if (!threads.length) note = `no thread of process ${w.pid} at step ${w.step}`;
  else if (!frames) note = `no frames: the stack of ${w.exe} could not be read (the reasons are under each thread)`;
  else if (!named)
    note = `no function names: ${w.exe} has no symbols, or is dynamically linked ` +
      '(rewind where reads static programs only: docs/debugging.md)';
  else if (!sourced) note = `no source lines: ${w.exe} was built without debug information (-g)`;
  return { lines, note };
}
