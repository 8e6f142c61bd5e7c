// Browser tests of the console's pages other than the Inbox at volume (issue #37): origins as
// a real filter. Against a real `sextant serve` (its own temp data dir) in Debian's Chromium.
//
//   bash tests/browser/run.sh            (runs every file)

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { client, openPage, shot, startBrowser, startServer, until } from './harness.mjs';

let server;
let browser;
let api;

// echo, configured so that peer `alice` may call it: a task from another agent.
const AGENTS = `
[[agents]]
id = "echo"
access = { call = ["person", "anonymous-local", "peer:alice"] }
`;

before(async () => {
  server = await startServer({ files: { 'agents.toml': AGENTS } });
  browser = await startBrowser();
  api = client(server);
});

after(async () => {
  await browser?.stop();
  await server?.stop();
});

// A tab left open keeps its live streams (see daily.test.mjs).
afterEach(async () => {
  for (const p of browser?.context.pages() ?? []) await p.close().catch(() => undefined);
});

const open = (path, opts) => openPage(browser, server, path, opts);

/** SendMessage to echo with `headers`; the task as first journalled. */
async function rpc(headers, text) {
  const res = await fetch(`${server.url}/api/v1/agents/echo/a2a`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `pages-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } } }),
  });
  const body = await res.json();
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result.task ?? body.result;
}

describe('origins', () => {
  test('a peer shows by its name; "Any origin" sorts tasks into mine, other agents\' and schedules\', by the server and in the URL', async () => {
    const token = (await api.call('POST', '/api/v1/peer-tokens', { name: 'alice' })).body.token;
    const mine = await rpc({ Authorization: `Bearer ${server.token}` }, 'my own question');
    const theirs = await rpc({ Authorization: `Bearer ${token}` }, 'a question from alice');
    const plan = (await api.call('POST', '/api/v1/me/schedules', { name: 'Origin plan', prompt: 'from the origin plan', cron: '0 5 * * *', timezone: 'UTC', agent_id: 'echo' })).body;
    const run = (await api.call('POST', `/api/v1/me/schedules/${plan.id}/run`, {})).body;
    const runTask = await until(async () => (await api.call('GET', `/api/v1/me/schedules/${plan.id}/runs/${run.id}`)).body.task_id, 'the Run’s task');

    const row = (p, id) => p.locator(`tr[data-task-id="${id}"]`);
    const page = await open('/tasks');
    for (const id of [mine.id, theirs.id, runTask]) await row(page, id).waitFor();
    const only = async (p, id) => {
      await row(p, id).waitFor();
      await p.waitForFunction(() => document.querySelectorAll('tr[data-task-id]').length === 1);
    };
    // A peer shows by its name, in the row and in the caller menu, never as its principal key.
    assert.equal((await row(page, theirs.id).locator('.col-origin .origin').textContent()).trim(), 'peer alice');
    assert.ok((await page.getByLabel('Filter by caller').locator('option').allTextContents()).includes('peer alice'));
    assert.equal(await page.locator('main').getByText('peer:sextant:alice').count(), 0);
    const menu = page.getByLabel('Filter by origin');
    assert.deepEqual(await menu.locator('option').allTextContents(), ['Any origin', 'Mine', 'From other agents', 'From schedules']);
    const [asked] = await Promise.all([page.waitForRequest((r) => /\/api\/v1\/tasks\?.*origin=agents/.test(r.url())), menu.selectOption({ label: 'From other agents' })]);
    assert.ok(asked, 'the server is asked');
    await page.waitForURL(/origin=agents/);
    await only(page, theirs.id);
    await menu.selectOption({ label: 'Mine' });
    await page.waitForURL(/origin=mine/);
    await only(page, mine.id);
    await shot(page, 'tasks-origin-mine-1280');
    // A shared link, and a reload, keep it; the schedule filter is its own menu.
    const shared = await open('/tasks?origin=schedules');
    await only(shared, runTask);
    assert.equal(await shared.getByLabel('Filter by origin').inputValue(), 'schedules');
    assert.equal(await shared.getByLabel('Filter by schedule').inputValue(), '');
    await shared.reload();
    await only(shared, runTask);
    // A new task of another origin arriving live does not join the filtered list.
    const later = await rpc({ Authorization: `Bearer ${server.token}` }, 'my own, later');
    await row(page, later.id).waitFor();
    assert.equal(await row(shared, later.id).count(), 0, 'mine is not from a schedule');
  });
});

/**
 * How each table on the page overflows: for every table, the pixels it is wider than the box
 * that holds it (its `.table-wrap`, else its panel), and the buttons or links of its rows that
 * are cut off (not wholly inside that box and the window, so a person would have to scroll
 * sideways to reach them, or could not at all).
 */
async function overflows(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('main table')].map((table) => {
      const wrap = table.closest('.table-wrap') ?? table.closest('.panel') ?? table.parentElement;
      const box = wrap.getBoundingClientRect();
      const right = Math.min(box.right, window.innerWidth);
      const hidden = [...table.querySelectorAll('tbody button, tbody a')]
        .filter((el) => el.getClientRects().length > 0)
        .filter((el) => {
          const r = el.getBoundingClientRect();
          return r.left < Math.max(box.left, 0) - 0.5 || r.right > right + 0.5;
        })
        .map((el) => el.textContent.trim());
      const over = Math.max(wrap.scrollWidth - wrap.clientWidth, table.getBoundingClientRect().right - box.right, document.documentElement.scrollWidth - window.innerWidth);
      return { table: table.getAttribute('aria-label') ?? '?', over: Math.round(over), hidden };
    }),
  );
}

describe('every list fits', () => {
  test('no table is wider than its box, and every row action is reachable, at 1440, 1280, 420 and 360 px', async () => {
    const plan = (await api.call('POST', '/api/v1/me/schedules', { name: 'Morning brief for the whole family, weekdays', prompt: 'summarise the night', cron: '30 7 * * 1-5', timezone: 'America/New_York', agent_id: 'echo' })).body;
    const run = (await api.call('POST', `/api/v1/me/schedules/${plan.id}/run`, {})).body;
    await until(async () => (await api.call('GET', `/api/v1/me/schedules/${plan.id}/runs/${run.id}`)).body.task_id, 'the Run’s task');
    // A replay's row says which Run it replays: the widest row of the Runs table.
    const replay = await api.call('POST', `/api/v1/me/schedules/${plan.id}/runs/${run.id}/replay`, {});
    assert.equal(replay.status, 201, JSON.stringify(replay.body));
    await rpc({ Authorization: `Bearer ${server.token}` }, 'a long request that goes on to say what it wants done with the staging database tonight');
    // Each page, its name in screenshots, and a row it shows once its list is read.
    const pages = [
      ['/tasks', 'tasks', 'tr[data-task-id]'],
      ['/schedules', 'schedules', 'table[aria-label="Schedules"] tbody tr'],
      [`/schedules/${plan.id}`, 'schedule', 'tr[data-run-id]'],
    ];
    const bad = [];
    for (const width of [1440, 1280, 420, 360]) {
      const page = await open('/', { viewport: { width, height: 900 } });
      for (const [path, name, ready] of pages) {
        await page.goto(server.url + path);
        await page.locator(ready).first().waitFor();
        for (const t of await overflows(page)) {
          if (t.over > 0 || t.hidden.length) bad.push(`${path} at ${width}px: ${t.table} ${t.over}px too wide${t.hidden.length ? `, cut off: ${t.hidden.join(', ')}` : ''}`);
        }
        if (width === 1280 || width === 420) await shot(page, `fit-${name}-${width}`);
      }
      await page.close();
    }
    assert.deepEqual(bad, []);
  });
});

describe('words for people', () => {
  test('a search match shows in its context, the marked word whole and visible', async () => {
    const t = await rpc({ Authorization: `Bearer ${server.token}` }, 'the quick brown fox jumps over the lazy dog while the farmer counts every yellow banana in the crate by the barn door at dawn');
    for (const width of [1280, 420]) {
      const page = await open('/tasks?q=banana', { viewport: { width, height: 900 } });
      const line = page.locator(`tr[data-task-id="${t.id}"] .task-line`);
      await line.locator('mark').waitFor();
      assert.equal(await line.locator('mark').textContent(), 'banana');
      const seen = await line.evaluate((el) => {
        const box = el.getBoundingClientRect();
        const mark = el.querySelector('mark').getBoundingClientRect();
        return { inside: mark.right <= box.right + 0.5 && mark.bottom <= box.bottom + 0.5 && mark.width > 0, text: el.textContent };
      });
      assert.ok(seen.inside, `the match is cut off at ${width}px`);
      assert.match(seen.text, /yellow banana in the/, 'words around the match');
      if (width === 1280) await shot(page, 'tasks-search-match-1280');
    }
  });
});
