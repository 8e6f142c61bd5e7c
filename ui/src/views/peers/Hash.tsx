// A card's pin hash as the peers page shows it: short, with the full hash on hover and for
// copying (`data-hash`).

import { shortHash } from './format';

/** A pin hash, short, with the full hash on hover and for copying. */
export function Hash(props: { hash: string | null | undefined }) {
  if (!props.hash) return <span class="muted">—</span>;
  return (
    <code class="mono hash" title={props.hash} data-hash={props.hash}>
      {shortHash(props.hash)}
    </code>
  );
}
