// Where the parts of an INSERT ... VALUES sit in its text, item by item, so the router can fill
// in values the nodes would otherwise make (sequence defaults, DEFAULT, nextval('s')): the VALUES
// keyword, the column list's closing parenthesis, and each row's items with what they are.
import { scanTokens, type Token } from './parser.js';

export type ValuesItem =
  | { readonly kind: 'default'; readonly start: number; readonly end: number }
  /** `nextval('name')` (optionally `pg_catalog.` and `::regclass`): `sequence` as written inside the quotes. */
  | {
      readonly kind: 'nextval';
      readonly start: number;
      readonly end: number;
      readonly sequence: string;
    }
  | { readonly kind: 'other'; readonly start: number; readonly end: number };

export interface InsertLayout {
  /** Offset of the VALUES keyword. */
  readonly valuesAt: number;
  /** Offset of the `)` ending the column list; undefined without one. */
  readonly columnsCloseAt: number | undefined;
  /** Offset just after the target table's name (and alias): where a column list would go. */
  readonly afterTargetAt: number;
  /** Per row: its items, and the offset of its closing `)`. */
  readonly rows: readonly { readonly items: readonly ValuesItem[]; readonly closeAt: number }[];
}

/** The layout of a plain `INSERT INTO t [(cols)] [OVERRIDING ...] VALUES (...), ...`; else undefined. */
export function insertLayout(sql: string): InsertLayout | undefined {
  const tokens = scanTokens(sql).filter((t) => !t.isComment);
  let i = tokens.findIndex((t) => t.keyword === 'insert');
  if (i < 0 || tokens[i + 1]?.keyword !== 'into') return undefined;
  // A WITH before INSERT is fine; the target follows INTO.
  i += 2;
  let afterTargetAt = -1;
  let columnsCloseAt: number | undefined;
  let valuesAt = -1;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.keyword === 'values') {
      valuesAt = t.start;
      break;
    }
    if (t.text === '(') {
      if (afterTargetAt < 0) afterTargetAt = tokens[i - 1]!.end;
      const close = matching(tokens, i);
      if (close < 0) return undefined;
      columnsCloseAt = tokens[close]!.start;
      i = close;
      continue;
    }
    if (t.keyword === 'overriding' && afterTargetAt < 0) afterTargetAt = tokens[i - 1]!.end;
    if (t.keyword === 'select' || t.keyword === 'default' || t.keyword === 'with') return undefined;
  }
  if (valuesAt < 0) return undefined;
  if (afterTargetAt < 0) afterTargetAt = tokens[i - 1]!.end;
  const rows: { items: ValuesItem[]; closeAt: number }[] = [];
  for (i++; i < tokens.length; i++) {
    if (tokens[i]!.text !== '(') return undefined;
    const close = matching(tokens, i);
    if (close < 0) return undefined;
    rows.push({ items: itemsOf(tokens, i + 1, close), closeAt: tokens[close]!.start });
    i = close + 1;
    if (tokens[i]?.text !== ',') break;
  }
  return { valuesAt, columnsCloseAt, afterTargetAt, rows };
}

function matching(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    const t = tokens[k]!.text;
    if (t === '(' || t === '[') depth++;
    else if ((t === ')' || t === ']') && --depth === 0) return k;
  }
  return -1;
}

function itemsOf(tokens: readonly Token[], from: number, to: number): ValuesItem[] {
  const items: ValuesItem[] = [];
  let start = from;
  let depth = 0;
  for (let k = from; k <= to; k++) {
    const t = tokens[k]!.text;
    if (k === to || (t === ',' && depth === 0)) {
      if (k > start) items.push(classify(tokens.slice(start, k)));
      start = k + 1;
      continue;
    }
    if (t === '(' || t === '[') depth++;
    else if (t === ')' || t === ']') depth--;
  }
  return items;
}

function classify(ts: readonly Token[]): ValuesItem {
  const start = ts[0]!.start;
  const end = ts[ts.length - 1]!.end;
  if (ts.length === 1 && ts[0]!.keyword === 'default') return { kind: 'default', start, end };
  let k = 0;
  if (ts[0]?.text.toLowerCase() === 'pg_catalog' && ts[1]?.text === '.') k = 2;
  const words = ts.slice(k).map((t) => t.text);
  const lower = words.map((w) => w.toLowerCase());
  const plain = lower.length === 4;
  const cast = lower.length === 6 && lower[3] === '::' && lower[4] === 'regclass';
  if ((plain || cast) && lower[0] === 'nextval' && lower[1] === '(' && lower.at(-1) === ')') {
    const lit = words[2]!;
    if (/^'(?:[^']|'')*'$/.test(lit))
      return { kind: 'nextval', start, end, sequence: lit.slice(1, -1).replace(/''/g, "'") };
  }
  return { kind: 'other', start, end };
}
