import { describe, expect, it } from 'vitest';
import { callerLabel, isTerminal, runStatus, shortId, stripField, taskState } from './format';

describe('format', () => {
  it('names task states and run statuses with a tone', () => {
    expect(taskState('TASK_STATE_AUTH_REQUIRED')).toEqual({ label: 'Needs approval', tone: 'warn' });
    expect(taskState('TASK_STATE_SOMETHING_NEW')).toEqual({ label: 'something new', tone: 'neutral' });
    expect(runStatus('blocked')).toEqual({ label: 'Blocked', tone: 'bad' });
    expect(isTerminal('TASK_STATE_CANCELED')).toBe(true);
    expect(isTerminal('TASK_STATE_INPUT_REQUIRED')).toBe(false);
  });

  it('says who a principal key is', () => {
    expect(callerLabel('person:sextant:owner')).toBe('you');
    expect(callerLabel('anonymous-local:loopback:anonymous')).toBe('local (no token)');
    expect(callerLabel('peer:sextant:ci')).toBe('peer:sextant:ci');
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
