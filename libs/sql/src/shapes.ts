// Analyses of statements that differ only in their literals, without the WebAssembly parse: a
// template is built once per shape (literals replaced by the scanner of literals.ts) from the full
// analysis of a text of that shape with every literal swapped for a sentinel, which shows exactly
// where each literal lands (a KeyPin value, a VALUES item, a LIMIT). Instantiating the template
// for another text puts that text's literals there and shifts every text position. A template is
// kept only if instantiating it for the text it was built from gives that text's full analysis.
import type { Analysis } from './types.js';
import { analyzeAll } from './analyze.js';
import { deepFreeze } from './freeze.js';
import type { LiteralClass, LiteralSlot, NormalizedText } from './literals.js';

/** Where literal `slot` lands: the `text` of the ConstValue at `path`, negated or not. */
interface Hole {
  readonly path: readonly (string | number)[];
  readonly slot: number;
  readonly negated: boolean;
}

export interface ShapeTemplate {
  /** The analyses of the sentinel text (frozen); positions refer to `sentinelSlots`. */
  readonly analyses: readonly Analysis[];
  readonly sentinelSlots: readonly { readonly start: number; readonly end: number }[];
  readonly holes: readonly Hole[];
}

const ELIGIBLE = new Set<Analysis['kind']>(['select', 'insert', 'update', 'delete']);

// Sentinels keep each literal's class (the parse tree's node kind) and are found by their text.
const INT_BASE = 2_147_000_000;
const MAX_SLOTS = 400_000;

function sentinel(cls: LiteralClass, slot: number): string {
  switch (cls) {
    case 'i':
      return String(INT_BASE + slot);
    case 'I':
      return `5${String(slot).padStart(12, '0')}`;
    case 'n':
      return `${INT_BASE + slot}.5`;
    case 's':
      return `\u27e6${slot}\u27e7`;
  }
}

function sentinelLiteral(cls: LiteralClass, slot: number, arrayShaped: boolean): string {
  if (cls !== 's') return sentinel(cls, slot);
  return arrayShaped ? `'{${sentinel(cls, slot)}}'` : `'${sentinel(cls, slot)}'`;
}

/** Which slot a string names, if it is exactly a sentinel (optionally negated). */
function sentinelSlot(
  text: string,
  slots: readonly LiteralSlot[],
): { slot: number; negated: boolean } | undefined {
  const negated = text.startsWith('-');
  const body = negated ? text.slice(1) : text;
  let slot: number | undefined;
  if (/^\u27e6\d+\u27e7$/.test(body)) slot = Number(body.slice(1, -1));
  else if (/^2147\d{6}$/.test(body)) slot = Number(body) - INT_BASE;
  else if (/^5\d{12}$/.test(body)) slot = Number(body.slice(1));
  else if (/^2147\d{6}\.5$/.test(body)) slot = Number(body.slice(0, -2)) - INT_BASE;
  if (slot === undefined || slot < 0 || slot >= slots.length) return undefined;
  if (negated && (slots[slot] as LiteralSlot).cls === 's') return undefined;
  return { slot, negated };
}

/** A string that mentions any sentinel at all (then the literal is used in a way not modelled). */
function mentionsSentinel(text: string): boolean {
  return /\u27e6\d+\u27e7|2147\d{6}|5\d{12}/.test(text);
}

// Fields whose text is the statement's own (recomputed from the new text).
const TEXT_FIELDS = new Set(['sql', 'rowSlices']);

function findHoles(
  value: unknown,
  path: (string | number)[],
  slots: readonly LiteralSlot[],
  out: Hole[],
): boolean {
  if (typeof value === 'string') return !mentionsSentinel(value);
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const ok = findHoles(value[i], path, slots, out);
      path.pop();
      if (!ok) return false;
    }
    return true;
  }
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (TEXT_FIELDS.has(k) && path.length === 0) continue;
    const v = o[k];
    if (o['kind'] === 'const' && k === 'text' && typeof v === 'string') {
      const found = sentinelSlot(v, slots);
      if (found !== undefined) {
        out.push({ path: [...path, k], slot: found.slot, negated: found.negated });
        continue;
      }
    }
    path.push(k);
    const ok = findHoles(v, path, slots, out);
    path.pop();
    if (!ok) return false;
  }
  return true;
}

/** The text with each literal replaced by its sentinel, and where the sentinels sit. */
function sentinelText(
  sql: string,
  slots: readonly LiteralSlot[],
  arrayShaped = false,
): { text: string; at: { start: number; end: number }[] } {
  let text = '';
  let copied = 0;
  const at: { start: number; end: number }[] = [];
  slots.forEach((s, i) => {
    text += sql.slice(copied, s.start);
    const lit = sentinelLiteral(s.cls, i, arrayShaped);
    at.push({ start: text.length, end: text.length + lit.length });
    text += lit;
    copied = s.end;
  });
  return { text: text + sql.slice(copied), at };
}

/**
 * The template of `norm`'s shape from `sql` and its full analysis, or undefined when this shape
 * cannot be instantiated exactly (then every text of the shape takes the full parse).
 */
export function buildTemplate(
  sql: string,
  norm: NormalizedText,
  full: readonly Analysis[],
): ShapeTemplate | undefined {
  if (norm.slots.length === 0 || norm.slots.length > MAX_SLOTS) return undefined;
  if (full.length === 0 || full.some((a) => !ELIGIBLE.has(a.kind))) return undefined;
  const { text, at } = sentinelText(sql, norm.slots);
  if (mentionsSentinel(sql)) return undefined;
  let analyses: readonly Analysis[];
  try {
    analyses = analyzeAll(text);
  } catch {
    return undefined;
  }
  if (analyses.length !== full.length) return undefined;
  const holes: Hole[] = [];
  for (let i = 0; i < analyses.length; i++) {
    const found: Hole[] = [];
    if (!findHoles(analyses[i], [], norm.slots, found)) return undefined;
    for (const h of found) holes.push({ ...h, path: [i, ...h.path] });
  }
  if (norm.slots.some((s) => s.cls === 's') && !stringsOnlyCopied(sql, norm, analyses))
    return undefined;
  const template: ShapeTemplate = { analyses, sentinelSlots: at, holes };
  // The self-check: the template must give back the full analysis it was made beside.
  const again = instantiate(template, sql, norm);
  if (JSON.stringify(again) !== JSON.stringify(full)) return undefined;
  return template;
}

// Fields that hold positions or the statement's text, which differ between two probe texts.
const POSITION_FIELDS = new Set([
  'sql',
  'location',
  'rowSlices',
  'rowSpans',
  'valuesSpan',
  'paramSpans',
]);

function withoutPositions(analyses: readonly Analysis[]): string {
  return JSON.stringify(
    analyses.map((a) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(a)) if (!POSITION_FIELDS.has(k)) o[k] = v;
      return o;
    }),
  );
}

/**
 * The analysis copies string constants but reads one kind: an array literal under `= ANY(...)`
 * becomes pins. A second probe with every string sentinel written as a one-element array literal
 * must give the same analysis, else some string literal of the shape is read, not copied.
 */
function stringsOnlyCopied(sql: string, norm: NormalizedText, plain: readonly Analysis[]): boolean {
  let arrayShaped: readonly Analysis[];
  try {
    arrayShaped = analyzeAll(sentinelText(sql, norm.slots, true).text);
  } catch {
    return false;
  }
  const unwrapped = withoutPositions(arrayShaped).replace(/\{(\u27e6\d+\u27e7)\}/g, '$1');
  return unwrapped === withoutPositions(plain);
}

/** The value the parse tree gives literal `s` (negated when a unary minus was folded into it). */
function constText(s: LiteralSlot, negated: boolean): string {
  if (s.cls === 'i') {
    const v = Number(s.value);
    return String(negated ? -v : v);
  }
  return negated ? `-${s.value}` : s.value;
}

/** Copy-on-write setter over frozen data: copies each object on the way once. */
class Patch {
  private readonly copies = new Map<object, Record<string | number, unknown>>();
  /** The copies made: everything else is shared with the (frozen) template. */
  readonly made: object[] = [];

  constructor(readonly root: Record<string | number, unknown>) {}

  private own(
    o: object,
    parent: Record<string | number, unknown> | undefined,
    key: string | number,
  ) {
    let c = this.copies.get(o);
    if (c === undefined) {
      c = (Array.isArray(o) ? [...(o as unknown[])] : { ...o }) as Record<string | number, unknown>;
      this.copies.set(o, c);
      this.copies.set(c, c);
      this.made.push(c);
      if (parent !== undefined) parent[key] = c;
    }
    return c;
  }

  set(path: readonly (string | number)[], value: unknown): void {
    let node = this.root;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i] as string | number;
      const child = node[k] as object;
      node = this.own(child, node, k);
    }
    node[path[path.length - 1] as string | number] = value;
  }
}

/** Maps a position of the sentinel text to the same place in the new text. */
function positionMap(
  from: readonly { readonly start: number; readonly end: number }[],
  to: readonly LiteralSlot[],
): (p: number) => number {
  return (p) => {
    let delta = 0;
    for (let i = 0; i < from.length; i++) {
      const f = from[i] as { start: number; end: number };
      if (f.end > p) break;
      const t = to[i] as LiteralSlot;
      delta = t.end - f.end;
    }
    return p + delta;
  };
}

/** The analyses of `sql` (of the template's shape, literals `norm.slots`), frozen. */
export function instantiate(
  t: ShapeTemplate,
  sql: string,
  norm: NormalizedText,
): readonly Analysis[] {
  const map = positionMap(t.sentinelSlots, norm.slots);
  const root: unknown[] = [...t.analyses];
  const patch = new Patch(root as unknown as Record<number, unknown>);
  for (const h of t.holes)
    patch.set(h.path, constText(norm.slots[h.slot] as LiteralSlot, h.negated));
  t.analyses.forEach((a, i) => {
    const location = map(a.location);
    const stmtSql = sql.slice(location, map(a.location + a.sql.length));
    patch.set([i, 'location'], location);
    patch.set([i, 'sql'], stmtSql);
    if (a.kind !== 'insert') return;
    const shift = (p: number) => map(a.location + p) - location;
    const span = (s: { start: number; end: number }) => ({
      start: shift(s.start),
      end: shift(s.end),
    });
    if (a.rowSpans !== undefined) {
      const rows = a.rowSpans.map(span);
      patch.set([i, 'rowSpans'], rows);
      patch.set(
        [i, 'rowSlices'],
        rows.map((r) => stmtSql.slice(r.start, r.end)),
      );
    }
    if (a.valuesSpan !== undefined) patch.set([i, 'valuesSpan'], span(a.valuesSpan));
    if (a.paramSpans !== undefined)
      patch.set(
        [i, 'paramSpans'],
        a.paramSpans.map((p) => ({ ...span(p), index: p.index })),
      );
  });
  // Values set are strings, numbers and fresh span objects; everything else is frozen already.
  for (const c of patch.made) deepFreeze(c);
  return Object.freeze(root) as readonly Analysis[];
}
