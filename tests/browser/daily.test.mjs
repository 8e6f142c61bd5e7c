// Browser tests of the console for daily use (issue #16): numbers and words that are right,
// finding things, every screen size, sign-in and errors, the inbox at volume. Against a real
// `sextant serve` (its own temp data dir) in Debian's Chromium.
//
//   bash tests/browser/run.sh            (runs console.test.mjs, then this file)

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { axeViolations, canRunAsOtherUser, client, openPage, shot, startBrowser, startServer, until } from './harness.mjs';

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

const open = (path, opts) => openPage(browser, server, path, opts);

function noErrors(page) {
  assert.deepEqual(page.errors.map(String), [], 'the page logged no errors');
}

async function task(id) {
  return (await api.call('GET', `/api/v1/tasks/${id}`)).body;
}

/** Sends `text` to the shell Agent and waits until its approval is pending. */
async function waitingShell(text) {
  const t = await api.send('shell', text);
  const pending = await api.pendingFor(t.id);
  return { task: t, pending };
}

async function answerApi(p, option) {
  const r = await api.call('POST', `/api/v1/interactions/${p.pending.interactionId}/answer`, {
    task_id: p.task.id,
    option,
    message_id: `daily-${option}-${p.task.id}`,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function ended(id) {
  return until(async () => {
    const t = await task(id);
    return ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'].includes(t.state) && t;
  }, `task ${id} to end`);
}

async function newSchedule(dialog, { name, prompt = 'x', cron = '0 9 * * *' }) {
  await dialog.locator('#s-name').fill(name);
  await dialog.locator('#s-agent').selectOption('echo');
  await dialog.locator('#s-prompt').fill(prompt);
  await dialog.locator('#s-cron').fill(cron);
}

describe('wrong data', () => {
  test('a time zone typed in full is saved as typed; anything else is an error on the field', async () => {
    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await newSchedule(dialog, { name: 'Tokyo brief' });
    // Typed, not picked from the list, then straight to Create.
    await dialog.locator('#s-zone').click();
    await dialog.locator('#s-zone').fill('Asia/Tokyo');
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/me/schedules') && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Create schedule' }).click(),
    ]);
    assert.equal(created.status(), 201);
    assert.equal((await created.json()).timezone, 'Asia/Tokyo', 'saved in the zone that was typed');
    await dialog.waitFor({ state: 'detached' });

    // A typo is the server's error on the zone field, and nothing is saved.
    const before = (await api.call('GET', '/api/v1/me/schedules')).body.schedules.length;
    await page.getByRole('button', { name: '+ New schedule' }).click();
    await newSchedule(dialog, { name: 'Typo' });
    await dialog.locator('#s-zone').click();
    await dialog.locator('#s-zone').fill('Asia/Tokio');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    const err = dialog.locator('[data-field-error="timezone"]');
    await err.waitFor();
    const expected = await api.call('POST', '/api/v1/me/schedules/preview', { cron: '0 9 * * *', timezone: 'Asia/Tokio' });
    assert.equal(expected.status, 422);
    assert.equal(await err.textContent(), expected.body.error.message.replace(/^timezone: /, ''));
    assert.equal(await dialog.locator('#s-zone').inputValue(), 'Asia/Tokio', 'the typed text stays in the field');
    assert.equal((await api.call('GET', '/api/v1/me/schedules')).body.schedules.length, before);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    noErrors(page);
    await page.close();
  });

  test('the overview counts every task in progress, not one page of them', async () => {
    const waiting = [];
    for (let i = 0; i < 6; i++) waiting.push(await waitingShell(`echo waiting-${i}`));
    // More than a page of newer tasks, all finished.
    const echoes = [];
    for (let i = 0; i < 55; i++) echoes.push(await api.send('echo', `newer ${i}`));
    await ended(echoes.at(-1).id);
    const counts = (await api.call('GET', '/api/v1/tasks/counts')).body;
    assert.equal(counts.waiting, 6);

    const page = await open('/');
    const inProgress = page.locator('section[aria-label="In progress"]');
    await inProgress.locator('.count', { hasText: /^6$/ }).waitFor();
    await inProgress.getByText('6 waiting for you').waitFor();
    // Live: one more waiting task is counted without a reload.
    const seventh = await waitingShell('echo waiting-6');
    await inProgress.locator('.count', { hasText: /^7$/ }).waitFor();
    for (const w of [...waiting, seventh]) await answerApi(w, 'decline');
    await inProgress.locator('.count', { hasText: /^0$/ }).waitFor();
    noErrors(page);
    await page.close();
  });

  test('a schedule’s page and the list follow its first cron Run live', async () => {
    // A daily schedule whose first slot is a few seconds away (seconds first: 6 fields).
    const at = new Date(Date.now() + 8000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    const made = await api.call('POST', '/api/v1/me/schedules', {
      name: 'Soon',
      prompt: 'fired by cron',
      cron,
      timezone: 'UTC',
      agent_id: 'echo',
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = made.body.id;
    const list = await open('/schedules');
    const row = list.locator(`tr[data-schedule-id="${id}"]`);
    await row.getByText('never').waitFor();
    const page = await open(`/schedules/${id}`);
    await page.getByText('No Runs yet').waitFor();

    // The first Run appears on both pages, completed, without a reload.
    await page.locator('tr[data-run-id][data-status="completed"]').waitFor({ timeout: 30_000 });
    await row.locator('.last-run', { hasText: 'Completed' }).waitFor();
    // Next fire moves on to the next slot (tomorrow), on both pages.
    const future = async (p, loc) =>
      p.waitForFunction((e) => Date.parse(e.getAttribute('data-next-fire')) > Date.now(), await loc.elementHandle(), { timeout: 5000 });
    await future(page, page.locator('[aria-label="Next fire times"] [data-next-fire]').first());
    await future(list, row.locator('[data-next-fire]'));
    assert.doesNotMatch(await page.locator('[aria-label="Next fire times"]').textContent(), /ago/);
    for (const p of [page, list]) {
      noErrors(p);
      await p.close();
    }
    await api.call('DELETE', `/api/v1/me/schedules/${id}`);
  });

  test('schedule times are the person’s local time, with the schedule’s own zone labelled', async () => {
    const made = await api.call('POST', '/api/v1/me/schedules', {
      name: 'New York standup',
      prompt: 'x',
      cron: '30 7 * * *',
      timezone: 'America/New_York',
      agent_id: 'echo',
    });
    assert.equal(made.status, 201);
    // The browser runs in Europe/Berlin: 07:30 in New York is 13:30 there in December.
    const list = await open('/schedules');
    const next = list.locator(`tr[data-schedule-id="${made.body.id}"] [data-next-fire]`);
    await next.waitFor();
    assert.match(await next.textContent(), /13:30 CET/, 'local time, with its zone');
    assert.match(await next.textContent(), /07:30 in New York/, 'and the schedule’s own time, labelled');
    // A schedule in the person's own zone says its time once, labelled.
    const local = await api.call('POST', '/api/v1/me/schedules', {
      name: 'Berlin', prompt: 'x', cron: '0 9 * * *', timezone: 'Europe/Berlin', agent_id: 'echo',
    });
    await list.reload();
    const own = list.locator(`tr[data-schedule-id="${local.body.id}"] [data-next-fire]`);
    await own.waitFor();
    assert.match(await own.textContent(), /09:00 CET/);
    assert.doesNotMatch(await own.textContent(), / in /);

    const page = await open(`/schedules/${made.body.id}`);
    const first = page.locator('[aria-label="Next fire times"] [data-next-fire]').first();
    assert.match(await first.textContent(), /13:30 CET/);
    assert.match(await first.textContent(), /07:30 in New York/);
    for (const p of [list, page]) {
      noErrors(p);
      await p.close();
    }
    for (const s of [made, local]) await api.call('DELETE', `/api/v1/me/schedules/${s.body.id}`);
  });

  test('what happened to a task is said in its words: Declined, Canceled, Completed', async () => {
    const canceled = await waitingShell('echo to-be-canceled');
    const declined = await waitingShell('echo to-be-declined');
    const accepted = await waitingShell('echo to-be-run');
    await answerApi(canceled, 'cancel');
    await answerApi(declined, 'decline');
    await answerApi(accepted, 'accept');
    for (const p of [canceled, declined, accepted]) await ended(p.task.id);
    assert.equal((await task(canceled.task.id)).outcome, 'canceled');
    assert.equal((await task(declined.task.id)).outcome, 'declined');
    assert.equal((await task(accepted.task.id)).outcome, 'completed');

    const page = await open('/tasks');
    const badge = (t) => page.locator(`tr[data-task-id="${t.task.id}"] .badge`).first();
    await page.locator(`tr[data-task-id="${canceled.task.id}"]`).waitFor();
    assert.equal((await badge(canceled).textContent()).trim(), 'Canceled');
    assert.equal((await badge(declined).textContent()).trim(), 'Declined');
    assert.equal((await badge(accepted).textContent()).trim(), 'Completed');
    // The Canceled filter finds the canceled task, and only tasks that were canceled.
    await page.getByLabel('Filter by status').selectOption({ label: 'Canceled' });
    await page.locator(`tr[data-task-id="${canceled.task.id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-task-id="${declined.task.id}"]`).count(), 0);
    assert.match(page.url(), /status=canceled/);

    const detail = await open(`/tasks/${declined.task.id}`);
    await detail.locator('.page-header .badge', { hasText: 'Declined' }).waitFor();
    for (const p of [page, detail]) {
      noErrors(p);
      await p.close();
    }
  });
});

/** `t` as a `datetime-local` field holds it in the browser's zone (Europe/Berlin). */
function berlinInput(t) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(t)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

describe('schedules, the whole plan (issue #20)', () => {
  test('a plan from plain words: the server echoes them back as cron before anything is saved', async () => {
    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#s-name').fill('Weekday words');
    await dialog.locator('#s-agent').selectOption('echo');
    await dialog.locator('#s-prompt').fill('the morning brief');
    await dialog.locator('.chip-radio', { hasText: 'In words' }).click();
    // Nothing typed yet is a hint, not an error (the preview would wait 300 ms).
    await dialog.getByText('Say when in a few words').waitFor();
    await page.waitForTimeout(800);
    assert.equal(await dialog.locator('[data-field-error]').count(), 0, 'no error before anything is typed');
    await dialog.locator('#s-when').fill('every weekday at 9');
    await dialog.locator('[data-echo-cron]', { hasText: /^0 9 \* \* 1-5$/ }).waitFor();
    assert.match(await dialog.locator('[data-echo]').textContent(), /Understood “every weekday at 9” as 0 9 \* \* 1-5, a recurring plan/);
    await dialog.locator('.next-runs li').first().waitFor();
    // "in 30 minutes" is one Run, said so, never a recurring plan.
    await dialog.locator('#s-when').fill('in 30 minutes');
    await dialog.locator('[data-echo-once]').waitFor();
    assert.match(await dialog.locator('[data-echo]').textContent(), /one Run at .* not a recurring plan/);
    // Words it cannot read are the server's error on the field, with examples.
    await dialog.locator('#s-when').fill('every 7 minutes');
    await dialog.locator('[data-field-error="when"]').waitFor();
    assert.match(await dialog.locator('#s-when').getAttribute('class'), /invalid/);
    await dialog.locator('#s-when').fill('every weekday at 9');
    await dialog.locator('[data-echo-cron]').waitFor();
    await shot(page, 'schedule-words');
    await page.setViewportSize({ width: 420, height: 860 });
    await shot(page, 'schedule-words-420');
    await page.setViewportSize({ width: 1360, height: 860 });
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/me/schedules') && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Create schedule' }).click(),
    ]);
    assert.equal(created.status(), 201);
    const body = await created.json();
    assert.equal(body.cron, '0 9 * * 1-5', 'saved as the cron it echoed');
    assert.equal(body.understood.input, 'every weekday at 9');
    await dialog.waitFor({ state: 'detached' });
    noErrors(page);
    await page.close();
    await api.call('DELETE', `/api/v1/me/schedules/${body.id}`);
  });

  test('overlap policy, jitter and pause-after-failures are saved, and each refusal is on its field', async () => {
    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await newSchedule(dialog, { name: 'Hourly sweep', cron: '0 * * * *' });
    await dialog.getByText('More settings').click();
    await dialog.locator('#s-overlap').selectOption('buffer_one');
    await dialog.locator('#s-jitter').fill('4000');
    await dialog.locator('#s-pause').fill('0');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    // Both refusals at once, each on its field.
    await dialog.locator('[data-field-error="jitter_secs"]').waitFor();
    await dialog.locator('[data-field-error="pause_after_failures"]').waitFor();
    assert.match(await dialog.locator('[data-field-error="jitter_secs"]').textContent(), /between 0 and 3600 seconds/);
    await shot(page, 'schedule-more-settings');
    assert.deepEqual(await axeViolations(page), [], 'axe, with More settings open and its errors shown');
    await dialog.locator('#s-jitter').fill('30');
    await dialog.locator('#s-pause').fill('3');
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/me/schedules') && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Create schedule' }).click(),
    ]);
    assert.equal(created.status(), 201, await created.text());
    const id = (await created.json()).id;
    const saved = (await api.call('GET', `/api/v1/me/schedules/${id}`)).body;
    assert.equal(saved.overlap_policy, 'buffer_one');
    assert.equal(saved.jitter_secs, 30);
    assert.equal(saved.pause_after_failures, 3);

    // The schedule's page says them, and editing starts from them.
    const detail = await open(`/schedules/${id}`);
    await detail.locator('[data-fact="overlap"]', { hasText: 'Queue one slot' }).waitFor();
    await detail.locator('[data-fact="jitter"]', { hasText: 'up to 30 s late' }).waitFor();
    await detail.locator('[data-fact="pause"]', { hasText: 'pauses after 3 in a row' }).waitFor();
    await detail.getByRole('button', { name: 'Edit' }).click();
    const edit = detail.locator('dialog[open]');
    assert.equal(await edit.locator('#s-overlap').inputValue(), 'buffer_one');
    assert.equal(await edit.locator('#s-jitter').inputValue(), '30');
    await edit.locator('#s-overlap').selectOption('allow_all');
    await edit.locator('#s-pause').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'detached' });
    await detail.locator('[data-fact="overlap"]', { hasText: 'Run them side by side' }).waitFor();
    await detail.locator('[data-fact="pause"]', { hasText: 'keeps running' }).waitFor();
    const after = (await api.call('GET', `/api/v1/me/schedules/${id}`)).body;
    assert.equal(after.overlap_policy, 'allow_all');
    assert.equal(after.pause_after_failures, null);
    assert.equal(after.jitter_secs, 30);
    for (const p of [page, detail]) {
      noErrors(p);
      await p.close();
    }
    await api.call('DELETE', `/api/v1/me/schedules/${id}`);
  });

  test('a one-shot plan from a date and time, with the catch-up window of a late Run', async () => {
    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await newSchedule(dialog, { name: 'Christmas note' });
    await dialog.locator('.chip-radio', { hasText: 'Once' }).click();
    const year = new Date().getFullYear() + 1;
    await dialog.locator('#s-once').fill(`${year}-12-24T09:00`);
    await dialog.locator('.cron-words', { hasText: `Once, on` }).waitFor();
    await dialog.locator('.next-runs', { hasText: 'Fires at' }).waitFor();
    assert.equal(await dialog.locator('.next-runs li').count(), 1);
    // A time in the past is the server's error on the field.
    await dialog.locator('#s-once').fill('2001-01-01T09:00');
    await dialog.locator('[data-field-error="once_at"]').waitFor();
    await dialog.locator('#s-once').fill(`${year}-12-24T09:00`);
    await dialog.locator('#s-missed').selectOption('run_once');
    await dialog.locator('#s-grace').selectOption({ label: '15 minutes' });
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/me/schedules') && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Create schedule' }).click(),
    ]);
    assert.equal(created.status(), 201, await created.text());
    const body = await created.json();
    assert.equal(body.cron, null);
    assert.equal(body.once_at, `${year}-12-24T09:00:00`);
    assert.equal(body.missed_run_policy, 'run_once');
    assert.equal(body.missed_run_grace_secs, 900);
    // Editing it starts as a one-shot plan; the page has no Backfill for it.
    const detail = await open(`/schedules/${body.id}`);
    await detail.getByText('run once, late (within 15 min)').waitFor();
    assert.equal(await detail.getByRole('button', { name: 'Backfill…' }).count(), 0);
    await detail.getByRole('button', { name: 'Edit' }).click();
    const edit = detail.locator('dialog[open]');
    assert.equal(await edit.locator('#s-once').inputValue(), `${year}-12-24T09:00`);
    assert.equal(await edit.locator('#s-grace').inputValue(), '900');
    await edit.getByRole('button', { name: 'Cancel' }).click();
    for (const p of [page, detail]) {
      noErrors(p);
      await p.close();
    }
    await api.call('DELETE', `/api/v1/me/schedules/${body.id}`);
  });

  test('backfill a past range from the schedule’s page: one backfill Run per slot, once', async () => {
    const made = await api.call('POST', '/api/v1/me/schedules', { name: 'Hourly report', prompt: 'backfilled', cron: '0 * * * *', timezone: 'UTC', agent_id: 'echo' });
    assert.equal(made.status, 201);
    const id = made.body.id;
    const page = await open(`/schedules/${id}`);
    await page.getByText('No Runs yet').waitFor();
    await page.getByRole('button', { name: 'Backfill…' }).click();
    const dialog = page.locator('dialog[open]');
    // A range that reaches into the future is refused on its field.
    const hour = 3_600_000;
    const start = new Date(Math.floor((Date.now() - 5 * hour) / hour) * hour + hour / 2); // hh:30, five hours ago
    await dialog.locator('#b-from').fill(berlinInput(start));
    await dialog.locator('#b-to').fill(berlinInput(new Date(Date.now() + 2 * hour)));
    await dialog.getByRole('button', { name: 'Backfill' }).click();
    await dialog.locator('[data-field-error="to"]', { hasText: 'must not be in the future' }).waitFor();
    // Three hourly slots.
    await dialog.locator('#b-to').fill(berlinInput(new Date(start.getTime() + 3 * hour)));
    await shot(page, 'schedule-backfill');
    assert.deepEqual(await axeViolations(page), [], 'axe, with the backfill dialog open');
    await page.setViewportSize({ width: 420, height: 860 });
    await shot(page, 'schedule-backfill-420');
    await page.setViewportSize({ width: 1360, height: 860 });
    await dialog.getByRole('button', { name: 'Backfill' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.toast', { hasText: '3 backfill Runs' }).waitFor();
    const rows = page.locator('tr[data-run-id]', { hasText: 'Backfill' });
    await until(async () => (await rows.count()) === 3, 'three backfill Runs on the page');
    // One at a time (the default), each completes.
    await until(async () => (await page.locator('tr[data-run-id][data-status="completed"]').count()) === 3, 'the backfill Runs to complete', 30_000);
    const runs = (await api.call('GET', `/api/v1/me/schedules/${id}/runs`)).body.runs;
    assert.deepEqual(runs.map((r) => r.trigger), ['backfill', 'backfill', 'backfill']);
    const slots = runs.map((r) => Date.parse(r.scheduled_for)).sort();
    assert.deepEqual(slots, [1, 2, 3].map((i) => start.getTime() + i * hour - hour / 2));
    // The same range again runs nothing twice.
    await page.getByRole('button', { name: 'Backfill…' }).click();
    await dialog.locator('#b-from').fill(berlinInput(start));
    await dialog.locator('#b-to').fill(berlinInput(new Date(start.getTime() + 3 * hour)));
    await dialog.getByRole('button', { name: 'Backfill' }).click();
    await page.locator('.toast', { hasText: '0 backfill Runs; 3 backfilled before' }).waitFor();
    assert.equal((await api.call('GET', `/api/v1/me/schedules/${id}/runs`)).body.total, 3);
    noErrors(page);
    await page.close();
    await api.call('DELETE', `/api/v1/me/schedules/${id}`);
  });
});

describe('find things', () => {
  test('each task says what it is: its input, its result, where it came from, how long it took', async () => {
    const t = await api.send('echo', 'Summarise the overnight logs\nin three lines');
    await ended(t.id);
    const page = await open('/tasks');
    const row = page.locator(`tr[data-task-id="${t.id}"]`);
    await row.locator('.task-title', { hasText: 'Summarise the overnight logs' }).waitFor();
    assert.doesNotMatch(await row.locator('.task-title').textContent(), /in three lines/, 'the first line only');
    await row.locator('.task-line', { hasText: 'Summarise the overnight logs' }).waitFor(); // the echo's output
    await row.locator('.origin', { hasText: 'you' }).waitFor();
    await row.getByText(/took (under )?\d/).waitFor();
    // A task a schedule's Run started names its schedule.
    const made = await api.call('POST', '/api/v1/me/schedules', { name: 'Nightly digest', prompt: 'digest please', cron: '0 3 * * *', timezone: 'UTC', agent_id: 'echo' });
    const run = await api.call('POST', `/api/v1/me/schedules/${made.body.id}/run`, {});
    assert.equal(run.status, 201, JSON.stringify(run.body));
    const runRow = page.locator('tr[data-task-id]', { hasText: 'digest please' });
    await runRow.locator('.origin', { hasText: 'Nightly digest' }).waitFor();
    noErrors(page);
    await page.close();
  });

  test('full-text search with filters in the URL: reload, back and a shared link keep them', async () => {
    const needle = await api.send('echo', 'rotate the zebrafish certificates');
    await api.send('echo', 'something else entirely');
    await ended(needle.id);
    const page = await open('/tasks');
    await page.locator('tr[data-task-id]').first().waitFor();
    // `/` focuses the search from anywhere.
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'task-search');
    await page.keyboard.type('zebrafi');
    await page.waitForURL(/q=zebrafi/);
    const hit = page.locator(`tr[data-task-id="${needle.id}"]`);
    await hit.waitFor();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-task-id]').length === 1);
    assert.equal((await hit.locator('mark').first().textContent()).toLowerCase(), 'zebrafish');
    await page.getByLabel('Filter by status').selectOption({ label: 'Completed' });
    await page.waitForURL(/status=completed/);
    await hit.waitFor();
    await page.reload();
    await hit.waitFor();
    assert.equal(await page.locator('#task-search').inputValue(), 'zebrafi');
    assert.equal(await page.getByLabel('Filter by status').inputValue(), 'completed');
    // Back drops the status filter, and the list follows.
    await page.goBack();
    await page.waitForURL((u) => !/status=/.test(u.href) && /q=zebrafi/.test(u.href));
    assert.equal(await page.getByLabel('Filter by status').inputValue(), '');
    // A shared link opens the same view in another tab.
    const shared = await open('/tasks?q=zebrafish&agent=echo');
    await shared.locator(`tr[data-task-id="${needle.id}"]`).waitFor();
    assert.equal(await shared.locator('tr[data-task-id]').count(), 1);
    // Hostile text searches nothing but itself.
    const odd = await open(`/tasks?q=${encodeURIComponent('"a" OR NEAR(b) ${IFS} \u202e')}`);
    await odd.getByText('No tasks match').waitFor();
    for (const p of [page, shared, odd]) {
      noErrors(p);
      await p.close();
    }
  });

  test('caller, schedule, time and every-peer filters, and grouping by Session, keep to the URL too', async () => {
    // Tasks from two callers, one from a schedule's Run, and two in one Session.
    const rpc = async (headers, message) => {
      const res = await fetch(`${server.url}/api/v1/agents/echo/a2a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `filters-${Math.random()}`, role: 'ROLE_USER', ...message }, configuration: { returnImmediately: true } } }),
      });
      const body = await res.json();
      if (body.error) throw new Error(JSON.stringify(body.error));
      return body.result.task ?? body.result;
    };
    const owner = { Authorization: `Bearer ${server.token}` };
    const mine = await rpc(owner, { parts: [{ text: 'from the owner, for the filters' }] });
    const anon = await rpc({}, { parts: [{ text: 'from the loopback caller, no token' }] });
    const plan = (await api.call('POST', '/api/v1/me/schedules', { name: 'Filter plan', prompt: 'from the filter plan', cron: '0 5 * * *', timezone: 'UTC', agent_id: 'echo' })).body;
    const run = (await api.call('POST', `/api/v1/me/schedules/${plan.id}/run`, {})).body;
    const runTask = await until(async () => (await api.call('GET', `/api/v1/me/schedules/${plan.id}/runs/${run.id}`)).body.task_id, 'the Run’s task');
    const ctx = `filters-session-${Date.now()}`;
    const first = await rpc(owner, { contextId: ctx, parts: [{ text: 'deploy the staging site' }] });
    await ended(first.id);
    const second = await rpc(owner, { contextId: ctx, parts: [{ text: 'and now the logs' }] });
    const sessionId = (await ended(second.id)).sessionId;
    for (const id of [mine.id, anon.id, runTask]) await ended(id);
    assert.equal((await task(first.id)).sessionId, sessionId, 'one Session');

    const row = (p, id) => p.locator(`tr[data-task-id="${id}"]`);
    const page = await open('/tasks');
    await row(page, mine.id).waitFor();
    // caller=: chosen, reloaded, and back.
    await page.getByLabel('Filter by caller').selectOption('anonymous-local:loopback:anonymous');
    await page.waitForURL(/caller=anonymous-local%3Aloopback%3Aanonymous/);
    await row(page, anon.id).waitFor();
    await row(page, mine.id).waitFor({ state: 'detached' });
    await page.reload();
    await row(page, anon.id).waitFor();
    assert.equal(await row(page, mine.id).count(), 0);
    assert.equal(await page.getByLabel('Filter by caller').inputValue(), 'anonymous-local:loopback:anonymous');
    await page.goBack();
    await page.waitForURL((u) => !/caller=/.test(u.href));
    await row(page, mine.id).waitFor();
    // schedule=: chosen by name, and as a shared link.
    await page.getByLabel('Filter by schedule').selectOption({ label: 'Filter plan' });
    await page.waitForURL(new RegExp(`schedule=${plan.id}`));
    await row(page, runTask).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-task-id]').length === 1);
    const shared = await open(`/tasks?schedule=${plan.id}`);
    await row(shared, runTask).waitFor();
    assert.equal(await shared.locator('tr[data-task-id]').count(), 1);
    assert.equal(await shared.getByLabel('Filter by schedule').inputValue(), plan.id);
    await page.goBack();
    await page.waitForURL((u) => !/schedule=/.test(u.href));
    // since=: the URL keeps the choice, the server is asked from an hour ago.
    const [asked] = await Promise.all([
      page.waitForRequest((r) => /\/api\/v1\/tasks\?.*from=/.test(r.url())),
      page.getByLabel('Filter by time').selectOption('1h'),
    ]);
    await page.waitForURL(/since=1h/);
    const from = Date.parse(new URL(asked.url()).searchParams.get('from'));
    assert.ok(Math.abs(Date.now() - 3_600_000 - from) < 60_000, `from ${new Date(from).toISOString()}`);
    await row(page, mine.id).waitFor();
    await page.reload();
    await row(page, mine.id).waitFor();
    assert.equal(await page.getByLabel('Filter by time').inputValue(), '1h');
    // agent=peer:*: only outbound conversations (none here), kept through a reload.
    const peers = await open('/tasks?agent=peer%3A*');
    await peers.getByText('No tasks match').waitFor();
    assert.equal(await peers.getByLabel('Filter by Agent').inputValue(), 'peer:*');
    await peers.reload();
    await peers.getByText('No tasks match').waitFor();
    assert.equal(await peers.getByLabel('Filter by Agent').inputValue(), 'peer:*');
    assert.equal(await row(peers, mine.id).count(), 0);
    // group=session: a Session's two tasks under one heading, named by its first message.
    const grouped = await open('/tasks?group=session');
    const session = grouped.locator(`tbody[data-group="${sessionId}"]`);
    await session.locator('tr.group-row', { hasText: 'Session of “deploy the staging site”' }).waitFor();
    assert.equal(await session.locator('tr[data-task-id]').count(), 2);
    await grouped.reload();
    await session.locator('tr.group-row').waitFor();
    assert.equal(await grouped.getByLabel('Group by').inputValue(), 'session');
    for (const p of [page, shared, peers, grouped]) {
      noErrors(p);
      await p.close();
    }
    await api.call('DELETE', `/api/v1/me/schedules/${plan.id}`);
  });

  test('group by caller or schedule, and the keys: g i, g t, g s, ?', async () => {
    const page = await open('/tasks?group=schedule');
    await page.locator('tr.group-row', { hasText: 'Nightly digest' }).waitFor();
    await page.locator('tr.group-row', { hasText: 'Not from a schedule' }).waitFor();
    await page.getByLabel('Group by').selectOption('caller');
    await page.waitForURL(/group=caller/);
    await page.locator('tr.group-row', { hasText: 'you' }).waitFor();
    await shot(page, 'tasks');

    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('g');
    await page.keyboard.press('i');
    await page.waitForURL(/\/inbox$/);
    await page.keyboard.press('g');
    await page.keyboard.press('s');
    await page.waitForURL(/\/schedules$/);
    await page.keyboard.press('g');
    await page.keyboard.press('t');
    await page.waitForURL(/\/tasks/);
    await page.keyboard.press('?');
    const help = page.locator('dialog[open]');
    await help.getByText('Keyboard shortcuts').waitFor();
    await help.getByText('Go to Approvals').waitFor();
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    noErrors(page);
    await page.close();
  });

  test('a burst of 1,000 tasks into an open list keeps it bounded, with the newer ones behind a button', async () => {
    const page = await open('/tasks?agent=echo');
    await page.locator('tr[data-task-id]').first().waitFor();
    const sends = [];
    for (let i = 0; i < 1000; i++) {
      sends.push(api.send('echo', `burst ${i}`));
      if (sends.length >= 50) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    const newer = page.getByRole('button', { name: /^Show \d+ newer tasks$/ });
    await newer.waitFor({ timeout: 30_000 });
    const rows = await page.locator('tr[data-task-id]').count();
    assert.ok(rows <= 200, `the list holds ${rows} rows`);
    await page.waitForFunction(() => /Show (\d+) newer/.test(document.body.innerText) && Number(/Show (\d+) newer/.exec(document.body.innerText)[1]) >= 800);
    await newer.click();
    await newer.waitFor({ state: 'detached' });
    assert.equal(await page.locator('tr[data-task-id]').count(), 50, 'the newest page');
    await page.locator('tr[data-task-id]', { hasText: 'burst 999' }).waitFor();
    noErrors(page);
    await page.close();
  });
});

describe('every screen', () => {
  const WIDTHS = [360, 420, 768, 1280];

  test('every page fits from 360 px to 1280 px, and axe finds nothing serious', async () => {
    const waiting = await waitingShell('echo a-card-for-every-screen && ls -la /var/log/with/a/rather/long/path/that/wraps');
    const sched = (await api.call('POST', '/api/v1/me/schedules', {
      name: 'A schedule with a fairly long name for small screens', prompt: 'check every screen', cron: '15 8 * * 1-5', timezone: 'America/New_York', agent_id: 'echo',
    })).body;
    const run = (await api.call('POST', `/api/v1/me/schedules/${sched.id}/run`, {})).body;
    const done = await until(async () => (await api.call('GET', `/api/v1/me/schedules/${sched.id}/runs`)).body.runs.find((r) => r.session_id), 'a Run with its Session');
    const problems = [];
    const pages = ['/', '/inbox', '/tasks', '/schedules', `/schedules/${sched.id}`, '/peers', '/webhooks', `/sessions/${done.session_id}`, `/tasks/${waiting.task.id}`];
    for (const width of WIDTHS) {
      const page = await open('/', { viewport: { width, height: 800 } });
      for (const path of pages) {
        await page.goto(server.url + path);
        await page.locator('[data-connection="live"]').waitFor();
        await page.locator('.page').first().waitFor();
        await page.locator('.state-loading').first().waitFor({ state: 'detached' }).catch(() => undefined);
        const where = `${path} at ${width} px`;
        // Nothing sticks out of its box: every element's right edge is inside the window.
        const outside = await page.evaluate(() =>
          [...document.querySelectorAll('body *')]
            .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap, pre, thead, .sr-only'))
            .slice(0, 6)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
        );
        if (outside.length) problems.push(`${where}: outside the window: ${outside.join(', ')}`);
        const fit = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth, bar: document.querySelector('.sidebar').getBoundingClientRect().height }));
        if (fit.scroll > fit.width) problems.push(`${where}: the page scrolls sideways (${fit.scroll} > ${fit.width})`);
        if (width < 900 && fit.bar > 64) problems.push(`${where}: the top bar is ${fit.bar} px tall`);

        for (const v of await axeViolations(page)) problems.push(`${where}: axe ${v}`);
      }
      // Every nav link has a name, even when only its icon shows.
      const nav = page.getByRole('navigation', { name: 'Sextant' });
      for (const n of ['Overview', 'Approvals', 'Tasks', 'Schedules', 'Peers', 'Webhooks']) {
        assert.equal(await nav.getByRole('link', { name: new RegExp(`^${n}`) }).count(), 1, `${n} at ${width} px`);
        assert.ok(await nav.getByRole('link', { name: new RegExp(`^${n}`) }).isVisible(), `${n} shows at ${width} px`);
      }
      if (width === 420) {
        await page.goto(server.url + '/');
        await page.locator('[data-connection="live"]').waitFor();
        await shot(page, 'overview-420');
        await page.goto(server.url + '/inbox');
        await page.locator('article.interaction').first().waitFor();
        await shot(page, 'inbox-420');
        await page.goto(server.url + '/tasks');
        await page.locator('tr[data-task-id]').first().waitFor();
        await shot(page, 'tasks-420');
        await page.goto(server.url + '/schedules');
        await page.locator('tr[data-schedule-id]').first().waitFor();
        await shot(page, 'schedules-420');
      }
      noErrors(page);
      await page.close();
    }
    await answerApi(waiting, 'decline');
    assert.ok(run);
    assert.deepEqual(problems, []);
  });

  test('in the dark scheme too, axe finds nothing serious on any page, at 1280 and 420 px', async () => {
    const waiting = await waitingShell('echo a-card-in-the-dark');
    const sched = (await api.call('POST', '/api/v1/me/schedules', { name: 'Dark', prompt: 'in the dark', cron: '0 9 * * *', timezone: 'UTC', agent_id: 'echo' })).body;
    await api.call('POST', `/api/v1/me/schedules/${sched.id}/run`, {});
    const done = await until(async () => (await api.call('GET', `/api/v1/me/schedules/${sched.id}/runs`)).body.runs.find((r) => r.session_id && r.status === 'completed'), 'a completed Run');
    const pages = ['/', '/inbox', '/tasks', '/schedules', `/schedules/${sched.id}`, '/peers', '/webhooks', `/sessions/${done.session_id}`, `/tasks/${waiting.task.id}`];
    const problems = [];
    for (const width of [1280, 420]) {
      const page = await open('/', { viewport: { width, height: 800 } });
      await page.emulateMedia({ colorScheme: 'dark' });
      assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
      for (const path of pages) {
        await page.goto(server.url + path);
        await page.locator('[data-connection="live"]').waitFor();
        await page.locator('.page').first().waitFor();
        await page.locator('.state-loading').first().waitFor({ state: 'detached' }).catch(() => undefined);
        for (const v of await axeViolations(page)) problems.push(`${path} at ${width} px, dark: axe ${v}`);
      }
      // A dialog, and a toast, in the dark.
      await page.goto(server.url + '/schedules');
      await page.locator('[data-connection="live"]').waitFor();
      await page.getByRole('button', { name: '+ New schedule' }).click();
      await page.locator('dialog[open] .next-runs li').first().waitFor();
      for (const v of await axeViolations(page)) problems.push(`schedule dialog at ${width} px, dark: axe ${v}`);
      if (width === 1280) await shot(page, 'schedule-dialog-dark');
      await page.keyboard.press('Escape');
      await page.goto(server.url + '/inbox');
      await page.locator('article.interaction').first().waitFor();
      await shot(page, width === 1280 ? 'inbox-dark' : 'inbox-dark-420');
      noErrors(page);
      await page.close();
    }
    await answerApi(waiting, 'decline');
    await api.call('DELETE', `/api/v1/me/schedules/${sched.id}`);
    assert.deepEqual(problems, []);
  });

  test('a skip link and a main landmark; dialogs open on their first field', async () => {
    const page = await open('/schedules');
    assert.equal(await page.locator('main#main').count(), 1);
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    assert.equal(await skip.evaluate((e) => e === document.activeElement), true, 'the first Tab reaches the skip link');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    await page.locator('dialog[open]').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 's-name', 'the first field, not ×');
    assert.deepEqual(await axeViolations(page), [], 'axe, with the dialog open');
    await page.keyboard.press('Escape');
    noErrors(page);
    await page.close();
  });
});

describe('sign-in, offline, errors', () => {
  test('a browser of another user signs in once: reloads and tabs keep it, and a restart says why it asks again', { skip: !canRunAsOtherUser() && 'needs root and the user run.sh creates' }, async () => {
    const own = await startServer();
    const other = await startBrowser({ otherUser: true });
    try {
      const page = await other.context.newPage();
      await page.goto(own.url + '/tasks');
      const form = page.locator('form.signin-card');
      await form.getByText('the browser runs as another user than Sextant').waitFor();
      await form.locator('#token').fill(own.token);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('[data-connection="live"]').waitFor();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      // A reload and a second tab use the cookie: no token asked.
      await page.reload();
      await page.locator('[data-connection="live"]').waitFor();
      assert.equal(await page.locator('form.signin-card').count(), 0, 'no sign-in after a reload');
      const tab = await other.context.newPage();
      await tab.goto(own.url + '/inbox');
      await tab.locator('[data-connection="live"]').waitFor();
      assert.equal(await tab.locator('form.signin-card').count(), 0, 'no sign-in in a new tab');
      await tab.close();
      // Sextant restarts: the cookie ends, and the page says so.
      await own.restart();
      const again = page.locator('form.signin-card');
      await again.getByText('Sextant restarted').waitFor({ timeout: 30_000 });
      await again.locator('#token').fill(own.token);
      await again.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('[data-connection="live"]').waitFor();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    } finally {
      await other.stop();
      await own.stop();
    }
  });

  test('offline: a banner, answers wait, and no raw "Failed to fetch"', async () => {
    const w = await waitingShell('echo offline-card');
    const page = await open('/inbox');
    const card = page.locator(`article[data-interaction-id="${w.pending.interactionId}"]`);
    await card.waitFor();
    await browser.context.setOffline(true);
    try {
      await page.locator('.offline-banner').waitFor();
      assert.match(await page.locator('.offline-banner').textContent(), /answers wait until it is back/);
      await card.locator('button[data-option="accept"][disabled]').waitFor();
      await page.goto(server.url + '/tasks').catch(() => undefined);
    } finally {
      await browser.context.setOffline(false);
    }
    const tasks = await open('/tasks');
    await browser.context.setOffline(true);
    try {
      await tasks.getByLabel('Filter by status').selectOption({ label: 'Completed' });
      await tasks.locator('.offline-banner').waitFor();
      await tasks.getByText('Sextant is not reachable').first().waitFor();
      assert.doesNotMatch(await tasks.locator('body').innerText(), /Failed to fetch|NetworkError|TypeError/);
      await shot(tasks, 'offline');
    } finally {
      await browser.context.setOffline(false);
    }
    await tasks.locator('[data-connection="live"]').waitFor({ timeout: 30_000 });
    await tasks.locator('.offline-banner').waitFor({ state: 'detached' });
    await answerApi(w, 'decline');
    await page.close();
    await tasks.close();
  });

  test('a form shows every invalid field at once, and cron errors name the part', async () => {
    const page = await open('/schedules');
    await page.getByRole('button', { name: '+ New schedule' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#s-name').fill('   ');
    await dialog.locator('#s-prompt').fill('');
    await dialog.locator('#s-cron').fill('61 * * * *');
    await dialog.locator('#s-zone').click();
    await dialog.locator('#s-zone').fill('Asia/Tokio');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    for (const f of ['name', 'prompt', 'timezone', 'cron']) await dialog.locator(`[data-field-error="${f}"]`).waitFor();
    assert.match(await dialog.locator('[data-field-error="cron"]').textContent(), /minute must be 0–59, not 61/);
    assert.doesNotMatch(await dialog.textContent(), /Component error|Number out of bounds/);
    await shot(page, 'form-errors');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    noErrors(page);
    await page.close();
  });

  test('registering a peer shows every invalid field at once: the browser’s and the server’s', async () => {
    const page = await open('/peers');
    await page.getByRole('button', { name: '+ Register a peer' }).click();
    const dialog = page.locator('dialog[open]');
    // What the browser can see: nothing is sent.
    let posted = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/api/v1/peers') && r.method() === 'POST') posted++;
    });
    await dialog.locator('#p-timeout').fill('soon');
    await dialog.getByRole('button', { name: 'Register peer' }).click();
    for (const f of ['name', 'url', 'timeout']) await dialog.locator(`[data-field-error="${f}"]`).waitFor();
    assert.equal(posted, 0);
    // What only the server can see: every field it refuses, each on its field, in one answer.
    await dialog.locator('#p-name').fill('Bad Name');
    await dialog.locator('#p-url').fill('ftp://example.com/agent');
    await dialog.locator('#p-token').fill('has a space');
    await dialog.locator('#p-timeout').fill('30');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/peers') && r.request().method() === 'POST'),
      dialog.getByRole('button', { name: 'Register peer' }).click(),
    ]);
    assert.equal(refused.status(), 422);
    assert.deepEqual((await refused.json()).error.fields.map((f) => f.field), ['name', 'url', 'token']);
    for (const f of ['name', 'url', 'token']) {
      await dialog.locator(`[data-field-error="${f}"]`).waitFor();
      assert.match(await dialog.locator(`#p-${f}`).getAttribute('class'), /invalid/);
    }
    assert.match(await dialog.locator('[data-field-error="url"]').textContent(), /^use an https URL/);
    assert.equal(await dialog.locator('[data-field-error="timeout"]').count(), 0);
    await shot(page, 'peer-form-errors');
    await page.setViewportSize({ width: 420, height: 860 });
    await shot(page, 'peer-form-errors-420');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    noErrors(page);
    await page.close();
  });
});

describe('the inbox at volume', () => {
  test('an answer waits a few seconds to be undone, and the next card does not slide under the pointer', async () => {
    const first = await waitingShell('echo undo-first');
    const second = await waitingShell('echo undo-second');
    const page = await open('/inbox');
    const newer = page.locator(`article[data-interaction-id="${second.pending.interactionId}"]`);
    const older = page.locator(`article[data-interaction-id="${first.pending.interactionId}"]`);
    await older.waitFor();
    // Undo: the answer is not sent.
    await newer.locator('button[data-option="decline"]').click();
    await newer.locator('.answer-waiting', { hasText: 'Answering “No, and tell the agent what to do differently”' }).waitFor();
    await newer.getByRole('button', { name: /Undo/ }).click();
    await newer.locator('.answer-waiting').waitFor({ state: 'detached' });
    await page.waitForTimeout(4500); // longer than the undo window: the answer would have gone
    assert.ok((await api.call('GET', '/api/v1/interactions')).body.interactions.some((i) => i.interactionId === second.pending.interactionId), 'nothing was sent');
    // `u` undoes from the keyboard too.
    await newer.locator('button[data-option="decline"]').click();
    await newer.locator('.answer-waiting').waitFor();
    await page.keyboard.press('u');
    await newer.locator('.answer-waiting').waitFor({ state: 'detached' });
    // Sent after the window; a placeholder keeps its place while the pointer stays.
    const button = newer.locator('button[data-option="decline"]');
    const box = await button.boundingBox();
    const olderTop = (await older.boundingBox()).y;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.up();
    const ghost = page.locator(`[data-answered="${second.pending.interactionId}"]`);
    await ghost.waitFor({ timeout: 10_000 });
    assert.equal((await older.boundingBox()).y, olderTop, 'the next card stays where it was');
    const under = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('[data-answered]')?.getAttribute('data-answered'), [box.x + box.width / 2, box.y + box.height / 2]);
    assert.equal(under, second.pending.interactionId, 'the pointer is over the placeholder, not the next card');
    await shot(page, 'inbox-answered');
    await page.mouse.move(2, 2);
    await ghost.waitFor({ state: 'detached' });
    assert.equal((await task(second.task.id)).outcome ?? 'pending', (await ended(second.task.id)).outcome);
    await answerApi(first, 'decline');
    noErrors(page);
    await page.close();
  });

  test('cards say where they come from; identical requests are answered together, each journalled', async () => {
    const made = (await api.call('POST', '/api/v1/me/schedules', { name: 'Disk check', prompt: 'df -h /', cron: '0 4 * * *', timezone: 'UTC', agent_id: 'shell' })).body;
    await api.call('POST', `/api/v1/me/schedules/${made.id}/run`, {});
    const same = [];
    for (let i = 0; i < 3; i++) same.push(await waitingShell('uptime'));
    const different = await waitingShell('echo not-like-the-others');
    const page = await open('/inbox');
    const fromSchedule = page.locator('article.interaction', { hasText: 'df -h /' });
    await fromSchedule.locator('[data-origin]', { hasText: 'from schedule “Disk check”' }).waitFor();
    await fromSchedule.locator('.first-message', { hasText: 'df -h /' }).waitFor();
    const oneOfThem = page.locator(`article[data-interaction-id="${same[0].pending.interactionId}"]`);
    await oneOfThem.locator('[data-origin]', { hasText: 'from you' }).waitFor();
    await oneOfThem.getByRole('button', { name: 'Select all 3 like this' }).click();
    const bar = page.getByRole('region', { name: 'Answer the selected' });
    await bar.getByText('3 selected').waitFor();
    await shot(page, 'inbox-bulk');
    const [bulk] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/interactions/answer'), { timeout: 15_000 }),
      bar.locator('button[data-bulk-option="decline"]').click(),
    ]);
    assert.equal(JSON.parse(bulk.request().postData()).answers.length, 3);
    for (const s of same) {
      const t = await ended(s.task.id);
      assert.equal(t.outcome, 'declined');
      const session = (await api.call('GET', `/api/v1/sessions/${t.sessionId}`)).body;
      assert.equal(session.transcript.filter((b) => b.kind === 'answer').length, 1, 'each answer in its own journal');
    }
    assert.ok((await api.call('GET', '/api/v1/interactions')).body.interactions.some((i) => i.interactionId === different.pending.interactionId), 'the different one still waits');
    await answerApi(different, 'decline');
    const sched = (await api.call('GET', '/api/v1/interactions')).body.interactions.find((i) => i.scheduleId === made.id);
    if (sched) await api.call('POST', `/api/v1/interactions/${sched.interactionId}/answer`, { task_id: sched.taskId, option: 'decline', message_id: 'sched-decline' });
    noErrors(page);
    await page.close();
  });

  test('always allow for a schedule: Run 1 asks and is allowed, Run 2 runs without a card, revoked on the schedule page', async () => {
    const word = `tidy-${Date.now()}`;
    const made = (await api.call('POST', '/api/v1/me/schedules', { name: 'Nightly tidy', prompt: `echo ${word}`, cron: '0 3 * * *', timezone: 'UTC', agent_id: 'shell' })).body;
    // A task that is no schedule's Run does not offer it.
    const plain = await waitingShell(`echo ${word}`);
    assert.ok(!plain.pending.options.some((o) => o.id === 'acceptForSchedule'), 'only a Run’s card offers it');
    await answerApi(plain, 'decline');
    // Run 1 asks; its card offers the option, with its own key.
    const run1 = (await api.call('POST', `/api/v1/me/schedules/${made.id}/run`, {})).body;
    const p1 = await api.pendingFor(run1.task_id);
    const page = await open('/inbox');
    const card = page.locator(`article[data-interaction-id="${p1.interactionId}"]`);
    const allow = card.locator('button[data-option="acceptForSchedule"]');
    await allow.waitFor();
    assert.match(await allow.innerText(), /any Run of schedule “Nightly tidy”/);
    assert.equal(await allow.locator('kbd').innerText(), 's');
    const keys = await card.locator('button.option kbd').allInnerTexts();
    assert.equal(new Set(keys).size, keys.length, `shortcuts do not collide: ${keys}`);
    await shot(page, 'inbox-always-allow');
    await allow.click();
    assert.equal((await ended(run1.task_id)).state, 'TASK_STATE_COMPLETED');
    noErrors(page);
    await page.close();

    // The schedule's page lists it; Run 2 (Run now) runs without a card.
    const sp = await open(`/schedules/${made.id}`);
    const panel = sp.getByRole('region', { name: 'Always allowed' });
    const grant = panel.locator('li.grant[data-active="true"]');
    await grant.locator('code', { hasText: `echo ${word}` }).waitFor();
    await grant.getByText(/allowed by you/).waitFor();
    const [r2] = await Promise.all([
      sp.waitForResponse((r) => r.url().endsWith(`/api/v1/me/schedules/${made.id}/run`) && r.request().method() === 'POST'),
      sp.locator('button[data-action="run-now"]').click(),
    ]);
    const run2 = await r2.json();
    const done2 = await ended(run2.task_id);
    assert.equal(done2.state, 'TASK_STATE_COMPLETED', 'Run 2 ran without asking');
    assert.ok(!(await api.call('GET', '/api/v1/interactions')).body.interactions.some((i) => i.taskId === run2.task_id), 'no card for Run 2');
    await sp.locator(`tr[data-run-id="${run2.id}"][data-status="completed"]`).waitFor();
    await shot(sp, 'schedule-always-allowed');

    // Revoked on the page: the next Run asks again.
    await grant.locator('button[data-action="revoke-grant"]').click();
    await panel.getByText('Nothing yet').waitFor();
    assert.deepEqual((await api.call('GET', `/api/v1/me/schedules/${made.id}/grants`)).body.grants, []);
    const [r3] = await Promise.all([
      sp.waitForResponse((r) => r.url().endsWith(`/api/v1/me/schedules/${made.id}/run`) && r.request().method() === 'POST'),
      sp.locator('button[data-action="run-now"]').click(),
    ]);
    const run3 = await r3.json();
    const p3 = await api.pendingFor(run3.task_id);
    await api.call('POST', `/api/v1/interactions/${p3.interactionId}/answer`, { task_id: run3.task_id, option: 'decline', message_id: `revoked-${run3.id}` });
    noErrors(sp);
    await sp.close();
  });

  test('browser notifications (opt-in) and the tab icon’s badge for new approvals', async () => {
    await browser.context.grantPermissions(['notifications'], { origin: server.url });
    const page = await browser.context.newPage();
    await page.addInitScript(() => {
      window.__notes = [];
      const Real = window.Notification;
      window.Notification = class extends Real {
        constructor(title, opts) {
          super(title, opts);
          window.__notes.push({ title, body: opts?.body });
        }
      };
      // This tab is in the background for the test.
      Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' });
    });
    await page.goto(server.url + '/inbox');
    await page.locator('[data-connection="live"]').waitFor();
    await page.getByRole('button', { name: 'Notify me' }).click();
    await page.getByRole('button', { name: 'Notifications on' }).waitFor();
    const w = await waitingShell('echo notify-me');
    await page.waitForFunction(() => window.__notes.length > 0);
    const notes = await page.evaluate(() => window.__notes);
    assert.equal(notes[0].title, 'Run this shell command?');
    assert.match(notes[0].body, /echo notify-me/);
    await page.waitForFunction(() => document.querySelector('link[rel="icon"]').href.startsWith('data:image/png'));
    const badge = await page.locator('link[rel="icon"]').getAttribute('data-badge');
    assert.equal(badge, String((await api.call('GET', '/api/v1/interactions')).body.interactions.length));
    await answerApi(w, 'decline');
    // Off again: it stays off after a reload.
    await page.getByRole('button', { name: 'Notifications on' }).click();
    await page.reload();
    await page.getByRole('button', { name: 'Notify me' }).waitFor();
    await page.close();
  });
});

describe('the page itself', () => {
  test('the UI goes brotli- or gzip-compressed, and hashed assets are cached as immutable', async () => {
    const { request } = await import('node:http');
    const raw = (path, enc) =>
      new Promise((res, rej) => {
        const u = new URL(path, server.url);
        const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: enc ? { 'Accept-Encoding': enc } : {} }, (r) => {
          const chunks = [];
          r.on('data', (c) => chunks.push(c));
          r.on('end', () => res({ headers: r.headers, bytes: Buffer.concat(chunks) }));
        });
        req.on('error', rej);
        req.end();
      });
    const html = (await raw('/', null)).bytes.toString();
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)[1];
    const css = /href="(\/assets\/[^"]+\.css)"/.exec(html)[1];
    const { brotliDecompressSync, gunzipSync } = await import('node:zlib');
    // (index.html is a few hundred bytes: sent as it is.)
    for (const path of [js, css]) {
      const plain = await raw(path, null);
      const br = await raw(path, 'gzip, deflate, br');
      const gz = await raw(path, 'gzip');
      assert.equal(plain.headers['content-encoding'], undefined, path);
      assert.equal(br.headers['content-encoding'], 'br', path);
      assert.equal(gz.headers['content-encoding'], 'gzip', path);
      assert.equal(br.headers.vary, 'accept-encoding');
      assert.ok(br.bytes.length < plain.bytes.length / 2, `${path}: ${br.bytes.length} of ${plain.bytes.length} bytes`);
      assert.deepEqual(brotliDecompressSync(br.bytes), plain.bytes);
      assert.deepEqual(gunzipSync(gz.bytes), plain.bytes);
    }
    assert.equal((await raw(js, 'br')).headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal((await raw('/', 'br')).headers['cache-control'], 'no-cache');
    // The browser gets the compressed files and runs them.
    const page = await open('/');
    const [res] = await Promise.all([page.waitForResponse((r) => r.url().endsWith(js)), page.reload()]);
    assert.equal((await res.allHeaders())['content-encoding'], 'br');
    await page.locator('[data-connection="live"]').waitFor();
    await page.close();
  });
});
