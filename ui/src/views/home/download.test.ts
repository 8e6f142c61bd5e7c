import { describe, expect, it } from 'vitest';
import { filenameFrom } from './download';

describe('filenameFrom', () => {
  it('takes the name the server gave', () => {
    expect(filenameFrom('attachment; filename="sextant-backup-20261202T071500Z.tar"', 'x.tar')).toBe(
      'sextant-backup-20261202T071500Z.tar',
    );
  });
  it('falls back without a header, or on a name with a path in it', () => {
    expect(filenameFrom(null, 'sextant-export.jsonl')).toBe('sextant-export.jsonl');
    expect(filenameFrom('attachment; filename="../evil"', 'x.tar')).toBe('x.tar');
  });
});
