// Node.js workload of the compatibility suite (tests/compat/README.md):
// timers, promises, worker_threads, and an http server and client on
// localhost. Prints only order-independent results.
'use strict';
const http = require('http');
const { Worker } = require('worker_threads');

function sleep(ms, v) { return new Promise((resolve) => setTimeout(() => resolve(v), ms)); }

async function timers() {
  const micro = [];
  const timed = [];
  let intervals = 0;
  await new Promise((done) => {
    setTimeout(() => timed.push('t30'), 30);
    setTimeout(() => timed.push('t10'), 10);
    setImmediate(() => micro.push('immediate'));
    process.nextTick(() => micro.push('tick'));
    const iv = setInterval(() => { if (++intervals === 3) clearInterval(iv); }, 5);
    setTimeout(done, 60);
  });
  console.log('timers:', micro.join(' '), '|', timed.join(' '), '| interval ran', intervals, 'times');
}

async function promises() {
  const all = await Promise.all([sleep(5, 'a'), sleep(1, 'b'), Promise.resolve('c')]);
  const race = await Promise.race([sleep(50, 'slow'), sleep(2, 'fast')]);
  const settled = await Promise.allSettled([Promise.reject(new Error('no')), sleep(1, 'yes')]);
  console.log('promises:', all.join(','), race, settled.map((s) => s.status).join(','));
}

function workerSum(from, to) {
  return new Promise((resolve, reject) => {
    const w = new Worker(`
      const { parentPort, workerData } = require('worker_threads');
      let s = 0;
      for (let i = workerData.from; i < workerData.to; i++) s += i % 7;
      parentPort.postMessage(s);`, { eval: true, workerData: { from, to } });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

async function workers() {
  const parts = await Promise.all([workerSum(0, 100000), workerSum(100000, 200000)]);
  console.log('worker_threads:', parts.join(' + '), '=', parts[0] + parts[1]);
}

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(`${res.statusCode} ${body.trim()}`));
    }).on('error', reject);
  });
}

async function httpRoundTrip() {
  const srv = http.createServer((req, res) => res.end(`hello from ${req.url}\n`));
  // 'localhost' as the clients name it: Node resolves it to ::1 first (verbatim
  // getaddrinfo order), so a server on 127.0.0.1 alone would refuse them.
  await new Promise((r) => srv.listen(0, 'localhost', r));
  const port = srv.address().port;
  const got = await Promise.all([0, 1, 2].map((i) => get(`http://localhost:${port}/req${i}`)));
  await new Promise((r) => srv.close(r));
  console.log('http:', got.join('; '));
}

(async () => {
  await timers();
  await promises();
  await workers();
  await httpRoundTrip();
  console.log('node: ok');
})().catch((e) => { console.error(e); process.exit(1); });
