// Test harness: a real `sextant serve` on a temp data dir and port 0 (ready when it prints
// `sextant: listening on http://…`; no sleeps), Debian's Chromium driven by playwright-core,
// and small API helpers that act as other clients (A2A callers, the owner's token).

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { chmodSync, mkdtempSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../..');
export const SCREENSHOTS = join(ROOT, 'docs/screenshots');

/** A free TCP port on loopback (for a server that must know its own public URL). */
export async function freePort() {
  const { createServer: net } = await import('node:net');
  return new Promise((resolvePort) => {
    const s = net().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolvePort(port));
    });
  });
}

function spawnServer(bin, args) {
  const child = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' },
  });
  const stderr = [];
  child.stderr.on('data', (d) => {
    stderr.push(d.toString());
    if (process.env.SEXTANT_LOG) process.stderr.write(d);
  });
  const url = new Promise((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const m = /^sextant: listening on (http:\/\/\S+)/.exec(line);
      if (m) resolveUrl(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`sextant exited (${code}) before listening:\n${stderr.join('')}`)));
  });
  return { child, url };
}

async function kill(child) {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * Starts `sextant serve`; resolves once it prints its URL. `port` and `publicUrl` serve it at
 * a chosen address (port 0 otherwise); `args` are more arguments, `files` files to write into
 * the data dir first (`{ 'outbound.toml': '…' }`); `restart()` stops it and starts it again on
 * the same data dir and port.
 */
export async function startServer({ port = 0, publicUrl, args: extra = [], files = {} } = {}) {
  const bin = process.env.SEXTANT_BIN ?? join(ROOT, 'target/debug/sextant');
  const dataDir = mkdtempSync(join(tmpdir(), 'sextant-browser-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dataDir, name), text);
  const args = ['serve', '--data-dir', dataDir, '--port', String(port), ...extra];
  if (publicUrl) args.push('--public-url', publicUrl);
  let running = spawnServer(bin, args);
  const url = await running.url;
  const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
  return {
    url,
    token,
    async restart() {
      await kill(running.child);
      running = spawnServer(bin, args.map((a, i) => (args[i - 1] === '--port' ? String(new URL(url).port) : a)));
      await running.url;
    },
    async stop() {
      await kill(running.child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium, headless, with a fresh profile and no background traffic. */
export async function startBrowser({ args = [], otherUser = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'sextant-chromium-'));
  // Another user's Chromium must own its profile.
  if (otherUser) chmodSync(profile, 0o777);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: otherUser ? join(import.meta.dirname, 'chromium-as-other-user.sh') : (process.env.CHROMIUM ?? '/usr/bin/chromium'),
    headless: true,
    viewport: { width: 1360, height: 860 },
    colorScheme: 'light',
    timezoneId: 'Europe/Berlin',
    locale: 'en-GB',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async stop() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A client of the server with the owner's token (another tab, a script, an assistant). */
export function client(server) {
  const call = async (method, path, body) => {
    const res = await fetch(server.url + path, {
      method,
      headers: {
        Authorization: `Bearer ${server.token}`,
        'Content-Type': 'application/json',
        'A2A-Version': '1.0',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  let n = 0;
  return {
    call,
    /** Sends a message to an Agent over A2A JSON-RPC; returns the Task as soon as it is journalled. */
    async send(agent, text) {
      const r = await call('POST', `/api/v1/agents/${agent}/a2a`, {
        jsonrpc: '2.0',
        id: ++n,
        method: 'SendMessage',
        params: {
          message: { messageId: `browser-${Date.now()}-${n}`, role: 'ROLE_USER', parts: [{ text }] },
          configuration: { returnImmediately: true },
        },
      });
      if (r.body.error) throw new Error(JSON.stringify(r.body.error));
      return r.body.result.task ?? r.body.result;
    },
    /** The pending interaction of a task, once it is raised. */
    async pendingFor(taskId, timeoutMs = 15_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', '/api/v1/interactions');
        const hit = r.body.interactions.find((i) => i.taskId === taskId);
        if (hit) return hit;
        if (Date.now() > end) throw new Error(`no interaction for task ${taskId}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    },
  };
}

/** Saves a screenshot of `page` as docs/screenshots/<name>.png. */
export async function shot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** A POST with exactly these headers (fetch() will not send a chosen Host). */
export function rawPost(base, path, headers, body) {
  return new Promise((resolveRes, reject) => {
    const u = new URL(path, base);
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolveRes({ status: res.statusCode, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A new tab of `browser` on `path` of `server`, with the console loaded and live. */
export async function openPage(browser, server, path, { viewport } = {}) {
  const page = await browser.context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(new Error(m.text()));
  });
  page.errors = errors;
  await page.goto(server.url + path);
  await page.locator('[data-connection="live"]').waitFor();
  return page;
}

/** Polls `fn` until it returns a truthy value (an API state the test waits for). */
export async function until(fn, what, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let axeSource;

/**
 * Runs axe-core (npm) on the page and returns its serious and critical violations, each as
 * "rule: target (summary)". axe is evaluated over the DevTools protocol, which the page's CSP
 * (no inline script) does not govern.
 */
export async function axeViolations(page) {
  axeSource ??= readFileSync(join(import.meta.dirname, 'node_modules/axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(' ')} (${n.failureSummary?.split('\n')[1]?.trim() ?? ''})`) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) => v.nodes.map((n) => `${v.id}: ${n}`));
}

/** Whether the tests can run a browser as another Unix user (root, and run.sh made the user). */
export function canRunAsOtherUser() {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('id', ['sextant-browser-other'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
