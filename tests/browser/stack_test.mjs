// stack_test.mjs: web/stack.js, the Stack pane's text from `rewind where
// --json`, on answers of the three kinds the pane must tell apart: a static
// program with debug information, one with symbols only, one with neither
// (stripped or dynamic). Needs no browser: node runs it (t_serve.sh).
import assert from 'node:assert/strict';
import { frameLine, stackLines } from '../../web/stack.js';

const thread = (frames, why = '') => ({ tid: 7, comm: 'pool-g', state: 'sleeping', why, frames });
const where = (threads) => ({ pid: 7, step: 4242, exe: '/usr/bin/pool-g', threads });

// with -g: each frame's function, offset, file and line
const g = stackLines(where([thread([
  { pc: 0x401a2b, function: '__futex_abstimed_wait_common', offset: 0x4b, file: '', line: 0 },
  { pc: 0x401c00, function: 'main', offset: 0x1c, file: '/src/examples/pool/pool.c', line: 91 },
])]));
assert.equal(g.note, null);
assert.equal(g.lines[0].text, 'process 7 (/usr/bin/pool-g) at step 4242: 1 thread');
assert.equal(g.lines[1].text, 'thread 7 (pool-g) sleeping');
assert.equal(g.lines[3].text, '  #1   main+0x1c at /src/examples/pool/pool.c:91');
assert.equal(g.lines[3].cls, 'src');
assert.equal(g.lines[2].cls, 'sym');

// symbols, no lines: said so
const sym = stackLines(where([thread([{ pc: 0x401000, function: 'main', offset: 0, file: '', line: 0 }])]));
assert.match(sym.note, /no source lines: \/usr\/bin\/pool-g was built without debug information/);
assert.equal(sym.lines[2].text, '  #0   main');

// neither (a stripped or dynamic program): said so, the addresses kept
const raw = stackLines(where([thread([{ pc: 0x7f0012345678, function: '', offset: 0, file: '', line: 0 }],
  'cannot read the executable /usr/bin/x: invalid ELF')]));
assert.match(raw.note, /no function names: .* has no symbols, or is dynamically linked/);
assert.equal(raw.lines[2].text, '  #0   0x7f0012345678 in ??');
assert.equal(raw.lines[3].text, '  (cannot read the executable /usr/bin/x: invalid ELF)');

// no frames at all, and no threads
assert.match(stackLines(where([thread([], 'no user registers')])).note, /could not be read/);
assert.match(stackLines(where([])).note, /no thread of process 7 at step 4242/);
assert.equal(frameLine({ pc: 16, function: '', file: '' }, 12), '#12  0x10 in ??');
console.log('ok stack.js: names, lines and what is missing, in words');
