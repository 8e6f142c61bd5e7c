import { describe, expect, it } from 'vitest';
import { callerLabel, isTerminal, runStatus, shortId, statusMatches, stripField, taskState, taskStatus } from './format';

describe('format', () => {
  it('names task states and run statuses with a tone', () => {
    expect(taskState('TASK_STATE_AUTH_REQUIRED')).toEqual({ label: 'Needs approval', tone: 'warn' });
    expect(taskState('TASK_STATE_SOMETHING_NEW')).toEqual({ label: 'something new', tone: 'neutral' });
    expect(runStatus('blocked')).toEqual({ label: 'Blocked', tone: 'bad' });
    expect(isTerminal('TASK_STATE_CANCELED')).toBe(true);
    expect(isTerminal('TASK_STATE_INPUT_REQUIRED')).toBe(false);
  });

  it('says how a task ended by its outcome, else where it is', () => {
    expect(taskStatus('TASK_STATE_COMPLETED', 'declined')).toEqual({ label: 'Declined', tone: 'muted' });
    expect(taskStatus('TASK_STATE_FAILED', 'canceled').label).toBe('Canceled');
    expect(taskStatus('TASK_STATE_FAILED', null)).toEqual({ label: 'Failed', tone: 'bad' });
    expect(taskStatus('TASK_STATE_WORKING', undefined).label).toBe('Working');
  });

  it('matches the status filter as the server does', () => {
    const canceled = { state: 'TASK_STATE_FAILED', outcome: 'canceled' } as const;
    expect(statusMatches('canceled', canceled)).toBe(true);
    expect(statusMatches('failed', canceled)).toBe(false);
    expect(statusMatches('unfinished', canceled)).toBe(false);
    expect(statusMatches('waiting', { state: 'TASK_STATE_AUTH_REQUIRED' })).toBe(true);
    expect(statusMatches('unfinished', { state: 'TASK_STATE_AUTH_REQUIRED' })).toBe(true);
    expect(statusMatches('active', { state: 'TASK_STATE_AUTH_REQUIRED' })).toBe(false);
    expect(statusMatches('', canceled)).toBe(true);
  });

  it('says who a principal key is', () => {
    expect(callerLabel('person:sextant:owner')).toBe('you');
    expect(callerLabel('anonymous-local:loopback:anonymous')).toBe('local (no token)');
    expect(callerLabel('peer:sextant:ci')).toBe('peer ci');
    expect(callerLabel('assistant:sextant:helper')).toBe('assistant helper');
    expect(callerLabel('jwt:https://idp.test:svc')).toBe('jwt:https://idp.test:svc');
  });

  it('shortens UUIDv7 ids by their random tail, not their shared timestamp', () => {
    expect(shortId('01a2298e-dd4b-7453-a706-14a9e3694503')).toBe('e3694503');
    expect(shortId('short')).toBe('short');
  });

  it('drops the field prefix of a field error', () => {
    expect(stripField('cron', 'cron: "x" is not valid')).toBe('"x" is not valid');
    expect(stripField('cron', 'something else')).toBe('something else');
  });
});
