// Browser tests of stopping and steering (issue #15): a running command's output is visible
// while it runs, and Stop ends it after a confirmation that says what will happen, keeping what
// it printed. Against a real `sextant serve` in Debian's Chromium.
//
//   bash tests/browser/run.sh            (runs console.test.mjs, daily.test.mjs, then this file)

import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { startFakePeer } from './fake-peer.mjs';
import { client, openPage, shot, startBrowser, startServer, until } from './harness.mjs';

let server;
let browser;
let api;

before(async () => {
  server = await startServer({ args: ['--cancel-grace-secs', '1'] });
  browser = await startBrowser();
  api = client(server);
});

after(async () => {
  await browser?.stop();
  await server?.stop();
});

// Pages are closed after each test, passed or not: a page left open keeps its live streams,
// and Chromium opens at most six connections to one host.
const pages = [];
async function open(path) {
  const page = await openPage(browser, server, path);
  pages.push(page);
  return page;
}
afterEach(async () => {
  for (const p of pages.splice(0)) await p.close().catch(() => undefined);
});

const task = async (id) => (await api.call('GET', `/api/v1/tasks/${id}`)).body;

/** Sends a shell command and approves it through the API; the task. */
async function approvedShell(command) {
  const t = await api.send('shell', command);
  const pending = await api.pendingFor(t.id);
  const r = await api.call('POST', `/api/v1/interactions/${pending.interactionId}/answer`, {
    task_id: t.id,
    option: 'accept',
    digest: pending.action?.digest,
    message_id: `steer-${t.id}`,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return t;
}

test('a running command shows its output live, and Stop ends it keeping what it printed', async () => {
  const t = await approvedShell('echo line-$((0+1)); sleep 1; echo line-$((1+1)); sleep 60; echo fin$((1+1))shed');
  const page = await open(`/tasks/${t.id}`);
  // Output appears while the command runs, long before it would end (the lines are computed,
  // so the command's own text, shown on the page, never matches them).
  await page.getByText('line-1').first().waitFor();
  await page.getByText('line-2').first().waitFor();
  assert.equal((await task(t.id)).state, 'TASK_STATE_WORKING');
  assert.match(await page.locator('[data-elapsed]').innerText(), /^running for /);

  await page.locator(`[data-stop-task="${t.id}"]`).first().click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByText('SIGTERM').waitFor();
  await dialog.getByRole('textbox').fill('not needed any more');
  await shot(page, 'task-stop-confirm');
  await dialog.getByRole('button', { name: 'Stop task' }).click();

  const ended = await until(async () => {
    const x = await task(t.id);
    return x.state === 'TASK_STATE_CANCELED' && x;
  }, 'the task to be canceled');
  assert.equal(ended.outcome, 'canceled');
  await page.getByText('Canceled by you. Reason: not needed any more').first().waitFor();
  await page.locator('[data-task-state="TASK_STATE_CANCELED"]').waitFor({ state: 'attached' });
  // What it printed before is kept; the Stop button is gone with the running task.
  assert.ok(await page.getByText('line-2').first().isVisible());
  await page.locator('[data-elapsed]', { hasText: /^took / }).waitFor();
  assert.equal(await page.locator(`[data-stop-task="${t.id}"]`).count(), 0);
  // The command's last line (its text shows in the card, so it is computed) never ran.
  assert.equal(await page.getByText('fin2shed').count(), 0);
  await shot(page, 'task-stopped');
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('Stop in the task list ends a task that waits for a decision and closes its card', async () => {
  const t = await api.send('shell', 'touch should-never-exist');
  await api.pendingFor(t.id);
  const page = await open('/tasks');
  const row = page.locator(`tr[data-task-id="${t.id}"]`);
  await row.locator(`[data-stop-task="${t.id}"]`).click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByText('Its open decision is closed').waitFor();
  await dialog.getByRole('button', { name: 'Stop task' }).click();
  await page.locator(`tr[data-task-id="${t.id}"][data-outcome="canceled"]`).waitFor();
  assert.ok(page.url().endsWith('/tasks'), `stays on the list: ${page.url()}`);
  assert.equal(await row.locator(`[data-stop-task="${t.id}"]`).count(), 0);
  const inbox = await api.call('GET', '/api/v1/interactions');
  assert.equal(inbox.body.interactions.filter((i) => i.taskId === t.id).length, 0);
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('New task sends a message as you and its page follows it; Reply continues the Session', async () => {
  const page = await open('/tasks');
  await page.locator('[data-new-task]').click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('#nt-agent').selectOption('echo');
  await dialog.locator('#nt-text').fill('hello from the console');
  await dialog.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(/\/tasks\/[0-9a-f-]+$/);
  const first = page.url().split('/tasks/')[1];
  await page.getByText('hello from the console').first().waitFor();
  const t1 = await until(async () => {
    const x = await task(first);
    return x.state === 'TASK_STATE_COMPLETED' && x;
  }, 'the new task to complete');
  assert.ok(t1.caller.startsWith('person:'), t1.caller);

  await page.goto(`${server.url}/sessions/${t1.sessionId}`);
  await page.locator('#reply-text').fill('and a second message');
  await shot(page, 'session-reply');
  await page.getByRole('button', { name: 'Send reply' }).click();
  await page.waitForURL((u) => u.pathname.startsWith('/tasks/') && !u.pathname.endsWith(first));
  const second = page.url().split('/tasks/')[1];
  const t2 = await until(async () => {
    const x = await task(second);
    return x.state === 'TASK_STATE_COMPLETED' && x;
  }, 'the reply to complete');
  assert.equal(t2.sessionId, t1.sessionId, 'the reply continues the same Session');
  assert.equal(t2.contextId, t1.contextId);
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('Pause all schedules is stored: the page, the API and a reload agree', async () => {
  const page = await open('/schedules');
  await page.locator('[data-pause-all="pause"]').click();
  await page.locator('[data-schedules-paused]').waitFor();
  assert.equal((await api.call('GET', '/api/v1/me/schedules/pause')).body.paused, true);
  await page.reload();
  await page.locator('[data-pause-all="resume"]').waitFor();
  await shot(page, 'schedules-paused-all');
  await page.locator('[data-pause-all="resume"]').click();
  await page.locator('[data-pause-all="pause"]').waitFor();
  assert.equal((await api.call('GET', '/api/v1/me/schedules/pause')).body.paused, false);
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('Run with edits sends another prompt once; the plan keeps its own', async () => {
  const created = await api.call('POST', '/api/v1/me/schedules', {
    name: 'Edited once',
    prompt: 'the plan prompt',
    cron: '0 9 * * *',
    timezone: 'Europe/Berlin',
    agent_id: 'echo',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  const page = await open(`/schedules/${id}`);
  await page.locator('[data-action="run-edited"]').click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('#re-prompt').fill('only this time');
  await dialog.getByRole('button', { name: 'Run now' }).click();
  await page.waitForURL(/\/sessions\//);
  await page.getByText('only this time').first().waitFor();
  const runs = (await api.call('GET', `/api/v1/me/schedules/${id}/runs`)).body.runs;
  assert.equal(runs[0].prompt, 'only this time');
  assert.match(runs[0].reason, /edited prompt/);
  assert.equal((await api.call('GET', `/api/v1/me/schedules/${id}`)).body.prompt, 'the plan prompt');
  assert.deepEqual(page.errors.map(String), []);
  await page.close();
});

test('Call on a peer sends it a message as you and opens the conversation', async () => {
  const fake = await startFakePeer();
  try {
    const reg = await api.call('POST', '/api/v1/peers', { name: 'callee', url: fake.url });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const page = await open('/peers');
    await page.locator('article[data-peer="callee"] [data-action="call"]').click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#cp-message').fill('hello peer');
    await dialog.getByRole('button', { name: 'Call' }).click();
    await page.waitForURL(/\/sessions\//);
    await page.getByText('helper heard: hello peer').first().waitFor();
    assert.equal(fake.seen.length, 1);
    assert.equal(fake.seen[0].method, 'SendMessage');
    assert.deepEqual(page.errors.map(String), []);
  } finally {
    await fake.close();
  }
});

test('Pause an Agent from the Overview: new messages are refused until it is resumed; Stop all', async () => {
  const page = await open('/');
  const row = page.locator('li[data-agent="echo"]');
  await row.locator('[data-action="pause-agent"]').click();
  await page.locator('li[data-agent="echo"][data-paused="true"]').waitFor();
  await assert.rejects(api.send('echo', 'while paused'), /paused/);
  await row.locator('[data-action="resume-agent"]').click();
  await page.locator('li[data-agent="echo"]:not([data-paused])').waitFor();
  const sent = await api.send('echo', 'after resuming');
  assert.ok(sent.id);

  // Stop all: the shell Agent's waiting tasks are canceled, after a confirmation.
  const a = await api.send('shell', 'touch one');
  const b = await api.send('shell', 'touch two');
  await api.pendingFor(a.id);
  await page.locator('li[data-agent="shell"] [data-action="stop-all"]').click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByText('Every unfinished task').waitFor();
  await shot(page, 'agent-stop-all');
  await dialog.getByRole('button', { name: 'Stop all' }).click();
  for (const t of [a, b]) {
    await until(async () => (await task(t.id)).state === 'TASK_STATE_CANCELED', `task ${t.id} to be canceled`);
  }
  assert.deepEqual(page.errors.map(String), []);
});
