// browser.mjs: start Debian's chromium through playwright-core (no browser
// download): headless, no sandbox (tests run as root), nothing fetched from
// the network, a fresh profile directory each time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

export async function launch() {
  const dir = mkdtempSync(join(tmpdir(), 'rewind-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    timeout: 300000, // the launch itself, on a software CPU
    viewport: { width: 1400, height: 900 },
    bypassCSP: true, // playwright's waitForFunction evaluates strings; the page itself runs under the CSP
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // the nested test host's /dev/shm is not a tmpfs of any size
      '--disable-dev-shm-usage', `--crash-dumps-dir=${join(dir, 'crash')}`],
    // Everything chromium writes goes under the fresh profile: the test
    // host's HOME is the host's, mounted read-only, and on a fresh machine
    // chromium cannot create its dirs there (crashpad then starts without
    // --database and the browser closes at launch).
    env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'), XDG_DATA_HOME: join(dir, 'data') },
  });
  const close = async () => { await ctx.close(); rmSync(dir, { recursive: true, force: true }); };
  return { ctx, close };
}
