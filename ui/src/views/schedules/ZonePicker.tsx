// A searchable IANA time zone field: type to filter `Intl.supportedValuesOf('timeZone')`,
// arrows to move, Enter to pick. Text typed and left without picking is the value too (see
// `resolveZone`): an exact zone name is that zone, anything else goes to the server as typed
// and comes back as the field's error, never replaced by the previous zone.

import { useMemo, useRef, useState } from 'preact/hooks';
import { allZones, resolveZone, searchZones } from '../../lib/time';

let zonesCache: string[] | null = null;

export function ZonePicker(props: { id: string; value: string; invalid?: boolean; onChange(zone: string): void }) {
  const zones = (zonesCache ??= allZones());
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const listRef = useRef<HTMLUListElement>(null);
  const open = query !== null;
  const matches = useMemo(() => (open ? searchZones(zones, query, 80) : []), [zones, query, open]);
  const pick = (z: string) => {
    props.onChange(z);
    setQuery(null);
  };
  /** Leaves the field: what was typed (if anything) becomes the value. */
  const commit = () => {
    const z = query === null ? null : resolveZone(zones, query);
    if (z !== null && z !== props.value) props.onChange(z);
    setQuery(null);
  };
  const move = (d: number) => {
    const n = Math.max(0, Math.min(matches.length - 1, active + d));
    setActive(n);
    listRef.current?.children[n]?.scrollIntoView({ block: 'nearest' });
  };
  return (
    <div class="combo">
      <input
        id={props.id}
        class={`input${props.invalid ? ' invalid' : ''}`}
        role="combobox"
        aria-expanded={open}
        aria-controls={`${props.id}-list`}
        aria-autocomplete="list"
        autocomplete="off"
        spellcheck={false}
        value={open ? query : props.value}
        placeholder="Search zones, e.g. Berlin"
        onFocus={(e) => {
          setQuery('');
          setActive(0);
          (e.target as HTMLInputElement).select();
        }}
        onInput={(e) => {
          setQuery((e.target as HTMLInputElement).value);
          setActive(0);
        }}
        onBlur={commit}
        onKeyDown={(e) => {
          if (!open) return;
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            move(1);
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            move(-1);
          } else if (e.key === 'Enter') {
            e.preventDefault();
            if (query?.trim() && matches[active]) pick(matches[active]);
            else commit();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            setQuery(null);
          }
        }}
      />
      {open && (
        <ul class="combo-list" id={`${props.id}-list`} role="listbox" ref={listRef}>
          {matches.length === 0 && <li class="combo-empty">No zone matches “{query}”</li>}
          {matches.map((z, i) => (
            <li
              key={z}
              role="option"
              aria-selected={i === active}
              class={`combo-item${i === active ? ' active' : ''}${z === props.value ? ' current' : ''}`}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(z);
              }}
              onMouseEnter={() => setActive(i)}
            >
              {z.replace(/_/g, ' ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
