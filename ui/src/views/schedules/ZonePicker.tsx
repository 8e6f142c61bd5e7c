// A searchable IANA time zone field: type to filter `Intl.supportedValuesOf('timeZone')`,
// arrows to move, Enter to pick.

import { useMemo, useRef, useState } from 'preact/hooks';
import { allZones, searchZones } from '../../lib/time';

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
        onBlur={() => setTimeout(() => setQuery(null), 150)}
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
            if (matches[active]) pick(matches[active]);
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
