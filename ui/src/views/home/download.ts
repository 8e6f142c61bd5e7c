// Saving a download the API streams (backup, export): fetched with the host's credential (a
// bearer token on desktop, the session cookie on the web), then handed to the browser as a
// file named as the server named it.

import { authHeaders, errorFrom, url } from '../../api/client';

/** The file name in a `Content-Disposition: attachment; filename="…"` header, else `fallback`. */
export function filenameFrom(disposition: string | null, fallback: string): string {
  const m = /filename="([^"/\\]+)"/.exec(disposition ?? '');
  return m ? m[1] : fallback;
}

/** Fetches `path` and saves it as a file; throws the server's error when it refuses. */
export async function saveDownload(path: string, fallback: string): Promise<string> {
  const get = async (refresh: boolean) =>
    fetch(await url(path), { headers: await authHeaders(refresh), credentials: 'same-origin', cache: 'no-store' });
  let res = await get(false);
  if (res.status === 401) res = await get(true);
  if (!res.ok) throw await errorFrom(res);
  const name = filenameFrom(res.headers.get('Content-Disposition'), fallback);
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  try {
    const a = document.createElement('a');
    a.href = href;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  } finally {
    // After the click has handed the blob to the download.
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
  }
  return name;
}
