// The standby names in a synchronous_standby_names value: `FIRST 1 (a, b)`, `ANY 2 (a, "B")`,
// `2 (a, b)` and the plain list `a, b`. `*` (any standby) is returned as such.

export interface StandbyNames {
  /** Lower-cased unless double-quoted, as Postgres compares them. */
  names: string[];
  /** The value names `*`: any standby counts, so a name cannot be checked. */
  any: boolean;
}

export function parseStandbyNames(value: string): StandbyNames {
  let text = value.trim();
  const m = /^(?:(?:first|any)\s+)?\d+\s*\((.*)\)$/is.exec(text);
  if (m) text = m[1] ?? '';
  const names: string[] = [];
  let any = false;
  for (const raw of splitList(text)) {
    const t = raw.trim();
    if (t === '') continue;
    if (t === '*') any = true;
    else if (t.startsWith('"') && t.endsWith('"') && t.length >= 2)
      names.push(t.slice(1, -1).replaceAll('""', '"'));
    else names.push(t.toLowerCase());
  }
  return { names, any };
}

function splitList(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}
