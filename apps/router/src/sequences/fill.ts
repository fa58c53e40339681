// Deciding which values of an INSERT the router must make itself, and writing them in: a column
// whose default is a cluster-wide sequence (serial, identity, nextval('s')) or, for the key
// column, gen_random_uuid(), when the INSERT leaves it out, says DEFAULT, or calls nextval('s')
// of one of the table's sequences. Pure: the values come from the caller (blocks.ts).
import {
  implicitInsertColumns,
  quoteIdent,
  type InsertAnalysis,
  type InsertLayout,
} from '@tessera/sql';
import { RouterError, SQLSTATE } from '../errors.js';
import type { SequenceDef } from './blocks.js';
import type { TableInfo } from './columns.js';

/** Where a value the router makes comes from. */
export type Source =
  { readonly kind: 'seq'; readonly seq: SequenceDef } | { readonly kind: 'uuid' };

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Index into `slots`: the value is appended to `text`. */
  readonly slot?: number;
}

export interface FillPlan {
  readonly edits: readonly Edit[];
  /** The values to make, in the order Postgres would make them (row by row, column by column). */
  readonly slots: readonly Source[];
}

export interface FillTarget {
  /** Quoted name of the table for messages. */
  readonly name: string;
  /** The key column of a sharded table (its uuid default is made here); undefined otherwise. */
  readonly keyColumn: string | undefined;
}

/**
 * The edits that make the INSERT's values explicit, or undefined when the nodes may make them
 * (nothing of the router's to fill, and a column list present). Throws for what cannot be
 * honoured (0A000) and for what Postgres refuses itself (428C9).
 */
export function planFill(
  a: InsertAnalysis,
  layout: InsertLayout | undefined,
  info: TableInfo,
  target: FillTarget,
): FillPlan | undefined {
  const tableColumns = info.columns.map((c) => c.name);
  const routerMade = (name: string): Source | undefined => {
    const c = info.columns.find((x) => x.name === name);
    if (c === undefined) return undefined;
    if (c.default.kind === 'sequence') return { kind: 'seq', seq: c.default.seq };
    if (c.default.kind === 'uuid' && name === target.keyColumn) return { kind: 'uuid' };
    return undefined;
  };
  const needsColumns = a.columns === undefined && target.keyColumn !== undefined;
  if (!info.routerDefaults && !needsColumns) return undefined;
  if (a.source !== 'values' || layout === undefined || a.rows === undefined) {
    if (!info.routerDefaults) return undefined;
    const omitted = tableColumns.filter(
      (c) => routerMade(c) !== undefined && a.columns !== undefined && !a.columns.includes(c),
    );
    if (a.source === 'default_values' || a.columns === undefined || omitted.length > 0)
      throw new RouterError(
        SQLSTATE.featureNotSupported,
        `an INSERT into ${target.name} that leaves column "${omitted[0] ?? tableColumns[0]}" to its cluster-wide sequence needs a VALUES list (INSERT ... SELECT and DEFAULT VALUES would take node-local values); name the column and give values, or use VALUES`,
      );
    return undefined;
  }
  const columns = implicitInsertColumns(a, tableColumns);
  const edits: Edit[] = [];
  const slots: Source[] = [];
  const added = tableColumns.filter((c) => !columns.includes(c) && routerMade(c) !== undefined);
  let overriding = false;
  const always = (name: string): boolean =>
    info.columns.some((c) => c.name === name && c.default.kind === 'sequence' && c.default.always);
  if (a.overriding === 'user' && info.columns.some((c) => c.default.kind === 'sequence'))
    throw new RouterError(
      SQLSTATE.featureNotSupported,
      `OVERRIDING USER VALUE is not supported on ${target.name}, whose sequence values the router makes; leave the identity column out instead`,
    );
  // The column list: written out when absent, extended with the columns the router fills.
  const list = [...columns, ...added];
  if (a.columns === undefined)
    edits.push({
      start: layout.afterTargetAt,
      end: layout.afterTargetAt,
      text: ` (${list.map(quoteIdent).join(', ')})`,
    });
  else if (added.length > 0 && layout.columnsCloseAt !== undefined)
    edits.push({
      start: layout.columnsCloseAt,
      end: layout.columnsCloseAt,
      text: `, ${added.map(quoteIdent).join(', ')}`,
    });
  else if (added.length > 0) return undefined;
  for (const row of layout.rows) {
    row.items.forEach((item, i) => {
      const column = columns[i];
      if (column === undefined) return;
      if (item.kind === 'default') {
        const src = routerMade(column);
        if (src === undefined) return;
        if (always(column)) overriding = true;
        edits.push({ start: item.start, end: item.end, text: '', slot: slots.push(src) - 1 });
      } else if (item.kind === 'nextval') {
        const seq = ownSequence(info, item.sequence);
        if (seq === undefined)
          throw new RouterError(
            SQLSTATE.featureNotSupported,
            `nextval('${item.sequence}') in an INSERT into ${target.name} is supported only for the table's own column sequences (other sequences are node-local)`,
          );
        if (always(column) && a.overriding !== 'system') throw nonDefault(column);
        edits.push({
          start: item.start,
          end: item.end,
          text: '',
          slot: slots.push({ kind: 'seq', seq }) - 1,
        });
      } else if (always(column) && a.overriding !== 'system') {
        throw nonDefault(column);
      }
    });
    for (const c of added) {
      if (always(c)) overriding = true;
      edits.push({
        start: row.closeAt,
        end: row.closeAt,
        text: ', ',
        slot: slots.push(routerMade(c)!) - 1,
      });
    }
  }
  if (overriding && a.overriding === undefined)
    edits.push({ start: layout.valuesAt, end: layout.valuesAt, text: 'overriding system value ' });
  if (edits.length === 0) return undefined;
  return { edits, slots };
}

function ownSequence(info: TableInfo, written: string): SequenceDef | undefined {
  const wanted = written.includes('.') ? written : undefined;
  for (const c of info.columns) {
    if (c.default.kind !== 'sequence') continue;
    const seq = c.default.seq;
    const bare = seq.name.slice(seq.name.indexOf('.') + 1);
    if (wanted !== undefined ? seq.name === wanted : bare === written) return seq;
  }
  return undefined;
}

function nonDefault(column: string): RouterError {
  return new RouterError(
    '428C9',
    `cannot insert a non-DEFAULT value into column "${column}"`,
    'ERROR',
    `Column "${column}" is an identity column defined as GENERATED ALWAYS.`,
    'Use OVERRIDING SYSTEM VALUE to override.',
  );
}

/** Literal text of a made value. */
export function literalOf(v: bigint | string): string {
  return typeof v === 'bigint' ? v.toString() : `'${v}'`;
}

/** `sql` with the plan's edits applied, `values[i]` the text of slot i. */
export function applyFill(sql: string, plan: FillPlan, values: readonly string[]): string {
  // From the end, so offsets stay valid; edits at one offset last first, so they keep their order.
  const order = plan.edits
    .map((_, i) => i)
    .sort((x, y) => plan.edits[y]!.start - plan.edits[x]!.start || y - x);
  let out = sql;
  for (const i of order) {
    const e = plan.edits[i]!;
    const text = e.slot === undefined ? e.text : e.text + values[e.slot]!;
    out = out.slice(0, e.start) + text + out.slice(e.end);
  }
  return out;
}
