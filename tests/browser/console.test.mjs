// Browser end-to-end tests of the console against a real `sextant serve` (temp data dir),
// in Debian's Chromium. Each test saves screenshots of what it checked to docs/screenshots/.
//
//   bash tests/browser/run.sh            (installs chromium and playwright-core if missing)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import { startFakePeer } from './fake-peer.mjs';
import { axeViolations, client, openPage, rawPost, shot, startBrowser, startServer } from './harness.mjs';

let server;
let browser;
let api;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
  api = client(server);
});

after(async () => {
  await browser?.stop();
  await server?.stop();
});

// Every tab is closed after each test, passed or failed: a tab left open keeps its live streams,
// and Chromium opens at most six connections to one host, so one failure would starve the
// tests after it.
afterEach(async () => {
  for (const p of browser?.context.pages() ?? []) await p.close().catch(() => undefined);
});

/** A new tab on `path`, with the console loaded and live. */
async function open(path) {
  const page = await browser.context.newPage();
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

/**
 * Waits until the tab's title does (or, with `absent`, does not) match `re`. The title follows
 * the pending count one render after the cards do, so a single read right after a card appears
 * or leaves can see the old count.
 */
async function titleSettles(page, re, { absent = false } = {}) {
  try {
    await page.waitForFunction(([src, absent]) => new RegExp(src).test(document.title) !== absent, [re.source, absent], {
      timeout: 5000,
    });
  } catch {
    const title = await page.title();
    absent ? assert.doesNotMatch(title, re) : assert.match(title, re);
  }
}

function noErrors(page) {
  assert.deepEqual(page.errors.map(String), [], 'the page logged no errors');
}

describe('the server serves the console', () => {
  test('with a strict CSP, and index.html for deep links', async () => {
    for (const path of ['/', '/sessions/0193-deep-link', '/tasks/x', '/schedules', '/peers', '/webhooks', '/inbox']) {
      const res = await fetch(server.url + path);
      assert.equal(res.status, 200, path);
      const csp = res.headers.get('content-security-policy');
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /connect-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|\*/);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.match(await res.text(), /<div id="app"><\/div>/);
    }
    assert.equal((await fetch(server.url + '/api/v1/nope')).status, 404);
    assert.equal((await fetch(server.url + '/api/v1/nope')).headers.get('content-type'), 'application/json');
    assert.equal((await fetch(server.url + '/no/such/page')).status, 404);
  });

  test('the console session is refused to other origins, and the token never appears in a URL', async () => {
    const cross = await fetch(server.url + '/api/v1/session/bootstrap', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      body: '{}',
    });
    assert.equal(cross.status, 403);
    assert.equal(cross.headers.get('set-cookie'), null);
    // fetch() will not send another Host: a raw request, as a DNS-rebound page's would be.
    const rebound = await rawPost(server.url, '/api/v1/session/bootstrap', { Host: 'evil.example', 'Content-Type': 'application/json' }, '{}');
    assert.equal(rebound.status, 403, 'a page on a non-loopback name gets nothing');
    assert.equal(rebound.headers['set-cookie'], undefined);

    const page = await open('/');
    const urls = [];
    page.on('request', (r) => urls.push(r.url()));
    await page.reload();
    await page.locator('[data-connection="live"]').waitFor();
    assert.ok(urls.length > 0);
    for (const u of urls) assert.ok(!u.includes(server.token), `token in ${u}`);
    const cookies = await browser.context.cookies(server.url + '/api/v1/health');
    const c = cookies.find((x) => x.name === 'sextant_console');
    assert.ok(c, 'the console cookie is set');
    assert.equal(c.httpOnly, true);
    assert.equal(c.sameSite, 'Strict');
    assert.notEqual(c.value, server.token);
    assert.equal(c.path, '/api', 'sent to the API only');
    assert.equal(await page.evaluate(() => document.cookie), '', 'scripts cannot read it');
    // The cookie makes a same-origin request the owner, and is worth nothing cross-site.
    const withCookie = (site) =>
      fetch(server.url + '/api/v1/interactions', { headers: { Cookie: `sextant_console=${c.value}`, 'Sec-Fetch-Site': site } });
    assert.equal((await withCookie('same-origin')).status, 200);
    assert.notEqual((await withCookie('cross-site')).status, 200);
    assert.notEqual((await withCookie('same-site')).status, 200, 'not even from another port of localhost');
    await page.close();
  });
});

describe('schedules', () => {
  test('create a schedule, run it now, open its Run transcript, replay it', async () => {
    const page = await open('/schedules');
    await page.getByText('No schedules yet').waitFor();
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#s-name').fill('Morning brief');
    await dialog.locator('#s-agent').selectOption('echo');
    await dialog.locator('#s-prompt').fill('Summarise what changed overnight');
    await dialog.locator('#s-cron').fill('30 7 * * 1-5');
    // Plain words at once, next fire times from the server's preview.
    await dialog.getByText('At 07:30, on weekdays (Monday through Friday).').waitFor();
    await dialog.locator('#s-zone').click();
    await dialog.locator('#s-zone').fill('new york');
    await dialog.getByRole('option', { name: 'America/New York' }).click();
    assert.equal(await dialog.locator('#s-zone').inputValue(), 'America/New_York');
    await dialog.getByText('Next fire times (America/New York)').waitFor();
    assert.equal(await dialog.locator('.next-runs li').count(), 5);
    await shot(page, 'schedule-dialog');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.waitFor({ state: 'detached' }).catch(() => undefined);
    const row = page.locator('tr', { hasText: 'Morning brief' });
    await row.waitFor();
    await row.getByText('At 07:30, on weekdays').waitFor();
    await row.getByText('never').waitFor();

    // A second, paused schedule so the list shows both states.
    const made = await api.call('POST', '/api/v1/me/schedules', {
      name: 'Weekly repo digest',
      prompt: 'List the merged pull requests of the week',
      cron: '0 17 * * FRI',
      timezone: 'Europe/Berlin',
      agent_id: 'echo',
      enabled: false,
    });
    assert.equal(made.status, 201);
    await page.reload();
    await page.locator('tr', { hasText: 'Weekly repo digest' }).getByText('paused').waitFor();
    await shot(page, 'schedules');

    // Enable, then delete with confirmation.
    const digest = page.locator('tr', { hasText: 'Weekly repo digest' });
    await digest.getByRole('switch').click();
    await digest.locator('[role="switch"][aria-checked="true"]').waitFor();
    assert.equal((await api.call('GET', `/api/v1/me/schedules/${made.body.id}`)).body.enabled, true);
    await digest.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.locator('dialog[open]');
    await confirm.getByText('Delete this schedule?').waitFor();
    await confirm.getByRole('button', { name: 'Delete schedule' }).click();
    await digest.waitFor({ state: 'detached' });
    assert.equal((await api.call('GET', `/api/v1/me/schedules/${made.body.id}`)).status, 404);

    await row.getByRole('link', { name: 'Morning brief' }).click();
    await page.getByRole('heading', { name: 'Morning brief' }).waitFor();
    await page.getByText('No Runs yet').waitFor();
    await page.getByRole('button', { name: '▶ Run now' }).click();
    const run = page.locator('tr[data-run-id]').first();
    await page.locator('tr[data-run-id][data-status="completed"]').waitFor();
    await shot(page, 'schedule');

    await run.getByRole('link', { name: /Session .* →/ }).click();
    await page.waitForURL(/\/sessions\//);
    const sessionUrl = page.url();
    await page.getByText('Created by a schedule').waitFor();
    await page.locator('.run-panel').getByText('Run now', { exact: true }).waitFor();
    await page.locator('[data-kind="user_input"]', { hasText: 'Summarise what changed overnight' }).waitFor();
    await page.locator('[data-kind="agent_text"]', { hasText: 'Summarise what changed overnight' }).waitFor();
    await page.locator('[data-kind="state"][data-state="TASK_STATE_COMPLETED"]').waitFor();
    await shot(page, 'session');

    // The same page as a deep link (the console link Sextant puts in results).
    const deep = await open(new URL(sessionUrl).pathname);
    await deep.locator('[data-kind="user_input"]', { hasText: 'Summarise what changed overnight' }).waitFor();
    noErrors(deep);
    await deep.close();

    await page.getByRole('button', { name: '↻ Replay this Run' }).click();
    await page.waitForURL((u) => u.href !== sessionUrl && /\/sessions\//.test(u.href));
    await page.locator('.run-panel').getByText('Replay', { exact: true }).waitFor();
    await page.locator('[data-kind="user_input"]', { hasText: 'Summarise what changed overnight' }).waitFor();

    // Both Runs are in the history.
    await page.locator('.run-panel').getByRole('link', { name: 'Morning brief' }).click();
    await page.locator('tr[data-run-id]').nth(1).waitFor();
    assert.equal(await page.locator('tr[data-run-id]').count(), 2);
    await page.locator('tr[data-run-id]').first().getByText('Replay', { exact: true }).waitFor();
    noErrors(page);
    await page.close();
  });

  test('a bad cron expression shows the server’s field error on the field', async () => {
    const expected = await api.call('POST', '/api/v1/me/schedules', {
      name: 'x',
      prompt: 'x',
      cron: '0 9 30 2 *',
      timezone: 'UTC',
      agent_id: 'echo',
    });
    assert.equal(expected.status, 422);
    assert.equal(expected.body.error.field, 'cron');

    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#s-name').fill('Never');
    await dialog.locator('#s-prompt').fill('x');
    await dialog.locator('#s-cron').fill('0 9 30 2 *');
    await dialog.locator('#s-zone').click();
    await dialog.locator('#s-zone').fill('UTC');
    await dialog.locator('#s-zone').press('Enter');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    const err = dialog.locator('[data-field-error="cron"]');
    await err.waitFor();
    // The server's words, without the "cron: " its place on the field already says.
    assert.equal(await err.textContent(), expected.body.error.message.replace(/^cron: /, ''));
    assert.match(await dialog.locator('#s-cron').getAttribute('class'), /invalid/);
    await shot(page, 'cron-error');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    noErrors(page);
    await page.close();
  });
});

describe('approvals', () => {
  test('a shell task reaches the inbox, is accepted with the keyboard, and completes live', async () => {
    const inbox = await open('/inbox');
    await inbox.getByText('Nothing is waiting for you').waitFor();
    const tasks = await open('/tasks');

    const task = await api.send('shell', 'echo hello-from-the-console');
    const card = inbox.locator('article.interaction', { hasText: 'echo hello-from-the-console' });
    await card.waitFor();
    await card.getByText('Expires in').waitFor();
    const options = await card.locator('button.option').evaluateAll((bs) => bs.map((b) => b.dataset.option));
    assert.deepEqual(options, ['accept', 'acceptForSession', 'decline', 'cancel'], 'exactly the declared options, in order');
    await titleSettles(inbox, /^\(1\) /);
    await tasks.locator(`tr[data-task-id="${task.id}"][data-state="TASK_STATE_AUTH_REQUIRED"]`).waitFor();

    // A second waiting task, so the inbox shows a list and j/k matter.
    const other = await api.send('shell', 'ls -la /tmp');
    await inbox.locator('article.interaction', { hasText: 'ls -la /tmp' }).waitFor();
    await titleSettles(inbox, /^\(2\) /);
    await shot(inbox, 'inbox');
    await shot(tasks, 'tasks');

    const detail = await open(`/tasks/${task.id}`);
    await detail.locator('[data-task-state="TASK_STATE_AUTH_REQUIRED"]').waitFor({ state: 'attached' });

    // Newest first: the ls card is selected; j moves to ours, y arms accept, Enter answers.
    await inbox.locator('article.interaction.selected', { hasText: 'ls -la /tmp' }).waitFor();
    await inbox.keyboard.press('j');
    await inbox.locator('article.interaction.selected', { hasText: 'hello-from-the-console' }).waitFor();
    await inbox.keyboard.press('y');
    await card.locator('button.option.armed[data-option="accept"]').waitFor();
    await inbox.keyboard.press('Enter');
    await card.waitFor({ state: 'detached' });
    await titleSettles(inbox, /^\(1\) /);

    // The task page follows it to completion, with the command's output.
    await detail.locator('[data-task-state="TASK_STATE_COMPLETED"]').waitFor({ state: 'attached' });
    await detail.locator('[data-kind="agent_text"]', { hasText: 'hello-from-the-console' }).waitFor();
    await detail.locator('[data-kind="answer"]', { hasText: 'Yes, run it' }).waitFor();
    await shot(detail, 'task');
    await tasks.locator(`tr[data-task-id="${task.id}"][data-state="TASK_STATE_COMPLETED"]`).waitFor();

    // Clean up the other one through the inbox's mouse path.
    await inbox.locator('article.interaction', { hasText: 'ls -la /tmp' }).locator('button[data-option="decline"]').click();
    await inbox.getByText('Nothing is waiting for you').waitFor();
    await tasks.locator(`tr[data-task-id="${other.id}"][data-state="TASK_STATE_COMPLETED"]`).waitFor();
    for (const p of [inbox, tasks, detail]) {
      noErrors(p);
      await p.close();
    }
  });

  test('a card answered through the API disappears from a second open page without reload', async () => {
    const first = await open('/inbox');
    const second = await open('/inbox');
    const task = await api.send('shell', 'echo answered-elsewhere');
    const sel = { hasText: 'echo answered-elsewhere' };
    await first.locator('article.interaction', sel).waitFor();
    await second.locator('article.interaction', sel).waitFor();
    const pending = await api.pendingFor(task.id);
    let navigations = 0;
    second.on('framenavigated', () => navigations++);

    const r = await api.call('POST', `/api/v1/interactions/${pending.interactionId}/answer`, {
      task_id: task.id,
      option: 'decline',
      reason: 'not now',
      message_id: 'browser-api-answer',
    });
    assert.equal(r.status, 200);
    await second.locator('article.interaction', sel).waitFor({ state: 'detached' });
    await first.locator('article.interaction', sel).waitFor({ state: 'detached' });
    assert.equal(navigations, 0, 'no reload');
    await titleSettles(second, /^\(\d+\)/, { absent: true });
    for (const p of [first, second]) {
      noErrors(p);
      await p.close();
    }
  });

  test('an argv approval shows its exact, escaped action and digest, though it has no command', async () => {
    // Its own Sextant with an exec agent that asks about an argument list (with a bidi
    // override in it), never a shell command.
    const script =
      `read -r line; printf '%s\\n' '{"type":"interaction","kind":"tool_approval","title":"Run a program?",` +
      `"argv":["rm","-rf","/tmp/x y","\\u202eevil"]}'; read -r answer; ` +
      `printf '%s\\n' '{"type":"final","status":"completed"}'`;
    const toml = `[[agents]]
id = "tool"
name = "Tool"
description = "asks about an argument list"
engine = { kind = "exec", command = ["sh", "-c", '''${script}'''] }
`;
    const own = await startServer({ files: { 'agents.toml': toml } });
    const ownApi = client(own);
    const page = await openPage(browser, own, '/inbox');
    try {
      const task = await ownApi.send('tool', 'go');
      const pending = await ownApi.pendingFor(task.id);
      const card = page.locator(`article.interaction[data-interaction-id="${pending.interactionId}"]`);
      const action = card.locator('.command[data-action-kind="argv"]');
      await action.getByText("rm -rf '/tmp/x y' \\u{202E}evil").waitFor();
      await card.locator('.action-flags [data-flag="bidi"]').waitFor();
      const digest = pending.action.digest.replace('sha256:', '').slice(0, 16);
      await card.locator('.action-digest code', { hasText: digest }).waitFor();
      noErrors(page);
    } finally {
      await page.close();
      await own.stop();
    }
  });
});

describe('overview', () => {
  test('shows what waits, what runs and what fires next', async () => {
    await api.send('shell', 'df -h');
    const page = await open('/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('section[aria-label="Waiting for you"]').getByText('df -h').waitFor();
    await page.locator('section[aria-label="Next scheduled"]').getByText('Morning brief').waitFor();
    await shot(page, 'overview');
    noErrors(page);
    await page.close();
  });

  test('downloads a backup that says it has no secrets, and the export as JSON lines', async () => {
    await api.send('echo', 'in the export');
    const page = await open('/');
    const panel = page.getByRole('region', { name: 'Backup and export' });
    await panel.getByText('It leaves out secrets').waitFor();
    const [backup] = await Promise.all([
      page.waitForEvent('download'),
      panel.getByRole('button', { name: 'Download backup' }).click(),
    ]);
    assert.match(backup.suggestedFilename(), /^sextant-backup-\d{8}T\d{6}Z\.tar$/);
    const tar = readFileSync(await backup.path());
    // A tar whose first entry is the manifest: name at 0, octal size at 124, data at 512.
    assert.equal(tar.subarray(0, 19).toString(), 'sextant-backup.json');
    const size = parseInt(tar.subarray(124, 136).toString().replace(/\0/g, '').trim(), 8);
    const manifest = JSON.parse(tar.subarray(512, 512 + size).toString());
    assert.equal(manifest.format, 'sextant-backup');
    assert.equal(manifest.secrets_included, false);
    assert.ok(manifest.files.some((f) => f.name === 'journal.db'));
    assert.ok(!manifest.files.some((f) => f.name === 'token'), 'no owner token in a download');

    const [exported] = await Promise.all([
      page.waitForEvent('download'),
      panel.getByRole('button', { name: 'Export (JSON lines)' }).click(),
    ]);
    assert.match(exported.suggestedFilename(), /^sextant-export-\d{8}T\d{6}Z\.jsonl$/);
    const lines = readFileSync(await exported.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].type, 'header');
    assert.equal(lines.at(-1).type, 'end');
    assert.ok(lines.some((l) => l.type === 'event' && JSON.stringify(l.body).includes('in the export')));
    await panel.getByRole('button', { name: 'Download backup' }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'axe, on the Overview with its Backup panel');
    noErrors(page);
    await page.close();
  });
});

describe('webhooks', () => {
  test('a stopped webhook shows its health, keeps the final state and is re-enabled', async () => {
    // Its own Sextant: the conformance Agent sends push notifications, and this data dir lets
    // webhooks reach loopback and gives up after one failure.
    const own = await startServer({
      args: ['--conformance'],
      files: { 'outbound.toml': '[push]\nallow_loopback = true\nmax_failures = 1\n' },
    });
    // A receiver that refuses everything until told otherwise.
    let accept = false;
    let finalArrived;
    const final = new Promise((r) => (finalArrived = r));
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (accept && body.includes('TASK_STATE_COMPLETED') && body.includes('statusUpdate')) finalArrived();
        res.writeHead(accept ? 200 : 503).end();
      });
    });
    await new Promise((r) => hook.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${hook.address().port}/hook`;
    const page = await browser.context.newPage();
    try {
      const ownApi = client(own);
      const r = await ownApi.call('POST', '/api/v1/agents/conformance/a2a', {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: `tck-complete-task-browser-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
          configuration: { taskPushNotificationConfig: { id: 'browser-hook', url: hookUrl } },
        },
      });
      assert.equal(r.body.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(r.body));

      await page.goto(own.url + '/webhooks');
      const card = page.locator('[data-webhook="browser-hook"]');
      await card.locator('.badge', { hasText: 'Stopped' }).waitFor({ timeout: 15_000 });
      await card.getByText('the task’s final state among them').waitFor();
      await card.getByText('HTTP 503').waitFor();
      await shot(page, 'webhooks-stopped');
      await page.setViewportSize({ width: 420, height: 860 });
      await card.getByRole('button', { name: 'Re-enable' }).waitFor();
      await shot(page, 'webhooks-narrow');
      await page.setViewportSize({ width: 1280, height: 860 });

      accept = true;
      await card.getByRole('button', { name: 'Re-enable' }).click();
      await page.getByText('Webhook re-enabled').waitFor();
      // Everything it owed arrives, the final state last, and the page says so.
      await final;
      await card.locator('.badge', { hasText: 'Up to date' }).waitFor({ timeout: 15_000 });
    } finally {
      await page.close();
      hook.close();
      await own.stop();
    }
  });
});

describe('peers', () => {
  test('register a peer, its changed card disables it, review and re-pin it, remove it', async () => {
    const fake = await startFakePeer();
    try {
      const page = await open('/peers');
      await page.getByText('No peers yet').waitFor();

      // Register through the dialog; a name the server refuses shows on the name field.
      await page.getByRole('button', { name: '+ Register a peer' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.locator('#p-name').fill('Not A Name');
      await dialog.locator('#p-url').fill(fake.url);
      await dialog.locator('#p-token').fill('peer-secret-token-123');
      await dialog.locator('#p-timeout').fill('30');
      await dialog.getByRole('button', { name: 'Register peer' }).click();
      await dialog.locator('[data-field-error="name"]').waitFor();
      assert.match(await dialog.locator('#p-name').getAttribute('class'), /invalid/);
      await shot(page, 'peer-dialog');
      await dialog.locator('#p-name').fill('helper');
      const [created] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/peers') && r.request().method() === 'POST'),
        dialog.getByRole('button', { name: 'Register peer' }).click(),
      ]);
      assert.equal(created.status(), 201);
      assert.doesNotMatch(await created.text(), /peer-secret-token/, 'the token is never returned');

      const card = page.locator('article[data-peer="helper"]');
      await card.locator('.badge', { hasText: 'Enabled' }).waitFor();
      await card.getByText('set (kept by Sextant, never shown)').waitFor();
      const pinned = (await api.call('GET', '/api/v1/peers/helper')).body.pin.hash;
      await card.locator(`.peer-facts [data-hash="${pinned}"]`).waitFor();
      await card.getByText('no calls yet').waitFor();
      assert.doesNotMatch(await page.content(), /peer-secret-token/);

      // A call as the owner: the metrics and the conversation follow live.
      const ok = await api.call('POST', '/api/v1/peers/call', { agent: 'helper', message: 'hi' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.status, 'ok');
      assert.equal(fake.seen.at(-1).authorization, 'Bearer peer-secret-token-123');
      await card.getByText('1 call, no failures').waitFor();
      const conversation = page.locator(`tr[data-session-id="${ok.body.session_id}"]`);
      await conversation.getByText('helper').waitFor();
      await shot(page, 'peers');

      // The card changes: the next use is refused (409) and disables the peer.
      fake.addSkill('translate', 'Translate');
      const refused = await api.call('POST', '/api/v1/peers/call', { agent: 'helper', message: 'hi again' });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(fake.seen.length, 1, 'nothing was sent to the changed peer');
      const disabled = (await api.call('GET', '/api/v1/peers/helper')).body.disabled;
      await page.reload();
      await page.locator('[data-connection="live"]').waitFor();
      await card.locator('.badge', { hasText: 'Disabled' }).waitFor();
      const changed = card.locator('section[aria-label="Card changed"]');
      await changed.getByText('skill added: translate (Translate)').waitFor();
      await changed.locator(`dl [data-hash="${disabled.old_hash}"]`).waitFor();
      await changed.locator(`dl [data-hash="${disabled.new_hash}"]`).waitFor();
      assert.equal(disabled.old_hash, pinned);

      // Review the card as it is now.
      await changed.getByRole('button', { name: 'Review card' }).click();
      const review = card.locator('section[aria-label="Card review"]');
      await review.getByText('Differs from the pin').waitFor();
      await review.locator('.skill-list li', { hasText: 'Translate' }).waitFor();
      await review.locator(`dl [data-hash="${disabled.new_hash}"]`).waitFor();
      await review.getByText('No problems found with this card.').waitFor();
      await shot(page, 'peer-changed');

      // It changes again before the re-pin: the server refuses (409), the page says why and
      // reloads; a fresh review pins the card as it is now.
      fake.addSkill('summarize', 'Summarize');
      const [conflict] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/peers/helper/pin')),
        changed.getByRole('button', { name: 'Re-pin' }).click(),
      ]);
      assert.equal(conflict.status(), 409);
      assert.equal(JSON.parse(conflict.request().postData()).hash, disabled.new_hash, 'the reviewed hash');
      await page.locator('.toast-bad', { hasText: 'review it again before pinning' }).waitFor();
      await review.waitFor({ state: 'detached' });
      await card.locator('.badge', { hasText: 'Disabled' }).waitFor();

      await changed.getByRole('button', { name: 'Review card' }).click();
      await review.locator('.skill-list li', { hasText: 'Summarize' }).waitFor();
      const [repinned] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/peers/helper/pin')),
        changed.getByRole('button', { name: 'Re-pin' }).click(),
      ]);
      assert.equal(repinned.status(), 200);
      await card.locator('.badge', { hasText: 'Enabled' }).waitFor();
      await changed.waitFor({ state: 'detached' });
      const now = (await api.call('GET', '/api/v1/peers/helper')).body;
      assert.equal(now.enabled, true);
      assert.equal(JSON.parse(repinned.request().postData()).hash, now.pin.hash);
      await card.locator(`.peer-facts [data-hash="${now.pin.hash}"]`).waitFor();
      assert.equal((await api.call('POST', '/api/v1/peers/call', { agent: 'helper', message: 'back' })).status, 200);
      assert.equal(await card.locator('[data-hop-limited]').count(), 0, 'no hop warning before a hop refusal');

      // The peer refuses a call at its A2A-Hop limit: the card warns about it.
      fake.refuseHops = true;
      const deep = await api.call('POST', '/api/v1/peers/call', { agent: 'helper', message: 'too deep' });
      fake.refuseHops = false;
      assert.notEqual(deep.status, 200, JSON.stringify(deep.body));
      await card.locator('[data-hop-limited]').getByText('Refused a call at its A2A-Hop limit').waitFor();

      // Pause it by hand: calls are refused without reaching it, and Resume brings it back.
      await card.getByRole('button', { name: 'Pause' }).click();
      await card.locator('.badge', { hasText: 'Paused' }).waitFor();
      await page.getByText('0 enabled, 1 paused').waitFor();
      const seen = fake.seen.length;
      const paused = await api.call('POST', '/api/v1/peers/call', { agent: 'helper', message: 'while paused' });
      assert.equal(paused.status, 409, JSON.stringify(paused.body));
      assert.match(paused.body.error.message, /is paused/);
      assert.equal(fake.seen.length, seen, 'nothing was sent to the paused peer');
      await shot(page, 'peer-paused');
      await card.getByRole('button', { name: 'Resume' }).click();
      await card.locator('.badge', { hasText: 'Enabled' }).waitFor();
      assert.equal((await api.call('GET', '/api/v1/peers/helper')).body.paused_at, null);

      // Remove it; its conversations stay.
      await card.getByRole('button', { name: 'Remove' }).click();
      const confirm = page.locator('dialog[open]');
      await confirm.getByText('Its conversations stay in the journal').waitFor();
      await confirm.getByRole('button', { name: 'Remove peer' }).click();
      await card.waitFor({ state: 'detached' });
      assert.equal((await api.call('GET', '/api/v1/peers/helper')).status, 404);
      await page.getByText('No peers yet').waitFor();
      await conversation.getByRole('link', { name: /Session .* →/ }).click();
      await page.waitForURL(new RegExp(`/sessions/${ok.body.session_id}$`));
      await page.locator('[data-kind="user_input"]', { hasText: 'hi' }).first().waitFor();
      noErrors(page);
      await page.close();
    } finally {
      await fake.close();
    }
  });
  test('an assistant gets the owner’s Agents as peers, shown once; its paused plan says why', async () => {
    const page = await open('/peers');
    const panel = page.locator('[data-assistants]');
    await panel.getByText('No assistant tokens yet').waitFor();
    await panel.getByLabel('Assistant name').fill('hermes');
    await panel.getByRole('button', { name: 'New assistant token' }).click();
    const once = page.locator('dialog[open]');
    const token = (await once.locator('[data-shown-once]').textContent()).trim();
    assert.match(token, /^sxa_[0-9a-f]{64}$/);
    await once.getByRole('button', { name: 'Done' }).click();
    const row = panel.locator('[data-assistant="hermes"]');
    await row.getByText('workspace token').waitFor();

    // Its peers: a credential per Agent, with the Hermes block, shown once.
    await row.getByRole('button', { name: 'Issue peers' }).click();
    const block = page.locator('dialog[open] [data-shown-once]');
    await block.waitFor();
    const yaml = await block.textContent();
    assert.match(yaml, /a2a_agents:\n {2}echo:\n/);
    assert.match(yaml, /auth: \{ type: bearer, token: "sxa_[0-9a-f]{64}" \}/);
    await page.setViewportSize({ width: 1280, height: 860 });
    await shot(page, 'assistant-peers');
    await page.locator('dialog[open]').getByRole('button', { name: 'Done' }).click();
    await row.locator('[data-peer="echo"]').waitFor();
    await row.locator('[data-peer="shell"]').waitFor();
    await panel.scrollIntoViewIfNeeded();
    await shot(page, 'assistants');
    await page.setViewportSize({ width: 420, height: 860 });
    await panel.scrollIntoViewIfNeeded();
    await shot(page, 'assistants-narrow');
    await page.setViewportSize({ width: 1360, height: 860 });
    await row.getByRole('button', { name: "Revoke hermes's credential for echo" }).click();
    await row.locator('[data-peer="echo"]').waitFor({ state: 'detached' });

    // A plan the assistant makes with its token is the owner's, and says so.
    const made = await fetch(`${server.url}/api/v1/me/schedules`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Nightly backup check',
        prompt: 'check the backup',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        agent_id: 'echo',
        pause_after_failures: 1,
      }),
    }).then((r) => r.json());
    assert.equal(made.source, 'assistant');
    // Its Run is blocked (the owner denies themselves the Agent for a moment): one failure
    // pauses it, and the page says why.
    const deny = (denied) => api.call('PUT', '/api/v1/agents/echo/access', { denied });
    assert.equal((await deny(['person:sextant:owner'])).status, 200);
    const run = await api.call('POST', `/api/v1/me/schedules/${made.id}/run`);
    assert.equal(run.body.status, 'blocked');
    assert.equal((await deny([])).status, 200);
    const plan = await open(`/schedules/${made.id}`);
    const paused = plan.locator('[data-paused]');
    await paused.getByText('paused after a failed Run').waitFor();
    await plan.getByText('assistant hermes').waitFor();
    await plan.locator('.history-strip').getByText('0 succeeded · 1 failed').waitFor();
    await plan.setViewportSize({ width: 1280, height: 860 });
    await shot(plan, 'schedule-paused');
    await plan.setViewportSize({ width: 420, height: 860 });
    await shot(plan, 'schedule-paused-narrow');
    noErrors(plan);
    await plan.close();

    // Revoking the assistant stops its token at once.
    await row.getByRole('button', { name: 'Revoke', exact: true }).click();
    const confirm = page.locator('dialog[open]');
    await confirm.getByText('stop working at once').waitFor();
    await confirm.getByRole('button', { name: 'Revoke', exact: true }).click();
    await row.getByText('revoked').waitFor();
    const refused = await fetch(`${server.url}/api/v1/me/schedules`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(refused.status, 401);
    noErrors(page);
    await page.close();
  });
});
