// The Overview's "Backup and export": download a backup of the profile (without its secrets,
// which the panel says) or the export as JSON lines. Both are streamed by the server.

import { useState } from 'preact/hooks';
import { toast } from '../../components/ui';
import { download } from './api';

export function BackupPanel() {
  const [busy, setBusy] = useState<'backup' | 'export' | null>(null);
  const run = async (what: 'backup' | 'export') => {
    setBusy(what);
    try {
      const name = await download(what);
      toast(`Saved ${name}.`, 'ok');
    } catch (e) {
      toast(`Could not download the ${what}: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(null);
    }
  };
  return (
    <section class="panel" aria-labelledby="backup-title">
      <h2 class="panel-title" id="backup-title">
        Backup and export
      </h2>
      <p class="small" id="backup-what">
        The backup is one file with your journal (Sessions, transcripts, schedules, Runs), settings and audit log.{' '}
        <strong>It leaves out secrets</strong>: your token, peer tokens and signing keys. To include them, run{' '}
        <code>sextant backup FILE</code> on this machine. Restore with <code>sextant restore FILE</code>.
      </p>
      <p class="small" id="export-what">
        The export is the same records as JSON lines, to read or load elsewhere.
      </p>
      <div class="backup-actions">
        <button
          type="button"
          class="btn"
          aria-describedby="backup-what"
          disabled={busy !== null}
          onClick={() => void run('backup')}
        >
          {busy === 'backup' ? 'Preparing backup…' : 'Download backup'}
        </button>
        <button
          type="button"
          class="btn"
          aria-describedby="export-what"
          disabled={busy !== null}
          onClick={() => void run('export')}
        >
          {busy === 'export' ? 'Exporting…' : 'Export (JSON lines)'}
        </button>
      </div>
    </section>
  );
}
