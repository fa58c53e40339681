// A move's initial copy done by the mover, as Citus does it (research/moves.md 1.1 and 1.4): the
// slot created on a replication connection that exports its snapshot, the range's rows read in
// that snapshot with COPY TO and written to the target with COPY FROM, binary where both sides
// can read it. Tablesync would copy in text, with a temporary slot and a worker per table and a
// handshake with the apply worker; this is one snapshot, one stream per table, no extra slot.
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { ident, literal } from '../nodes/sessions.js';
import { PINNED_SETTINGS } from './snapshots.js';

export interface ExportedSlot {
  consistentPoint: string;
  /** Valid while the replication connection stays open and runs nothing else. */
  snapshotName: string;
}

/** CREATE_REPLICATION_SLOT on a replication connection: a logical pgoutput slot exporting its snapshot. */
export async function createExportedSlot(repl: pg.Client, name: string): Promise<ExportedSlot> {
  const { rows } = await repl.query<{ consistent_point: string; snapshot_name: string }>(
    `CREATE_REPLICATION_SLOT ${ident(name)} LOGICAL pgoutput (SNAPSHOT 'export')`,
  );
  const r = rows[0];
  if (!r?.snapshot_name) throw new Error(`CREATE_REPLICATION_SLOT ${name} exported no snapshot`);
  return { consistentPoint: r.consistent_point, snapshotName: r.snapshot_name };
}

/**
 * Opens the session's transaction in the exported snapshot: from here every read sees exactly
 * what committed before the slot's consistent point. Settings that change how a value prints are
 * pinned for the tables that go as text.
 */
export async function beginInSnapshot(c: pg.ClientBase, snapshotName: string): Promise<void> {
  await c.query(
    [
      'begin isolation level repeatable read read only',
      `set transaction snapshot ${literal(snapshotName)}`,
      ...PINNED_SETTINGS,
    ].join('; '),
  );
}

// The types a column's binary form depends on: the column's own, array elements, domains' base
// types, ranges' subtypes and composites' attributes. `embedded` marks the types whose oid the
// binary form carries (array_recv and record_recv refuse an oid other than their own), which is
// the same on both nodes only for built-in types.
const COLUMNS = `
  with recursive types(oid, embedded) as (
    select a.atttypid, false from pg_attribute a
     where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    union
    select x.oid, x.embedded from types t join pg_type ty on ty.oid = t.oid
     cross join lateral (
       select ty.typelem, true where ty.typelem <> 0 and ty.typsubscript = 'array_subscript_handler'::regproc
       union all select ty.typbasetype, t.embedded where ty.typbasetype <> 0
       union all select r.rngsubtype, false from pg_range r where r.rngtypid = ty.oid or r.rngmultitypid = ty.oid
       union all select a.atttypid, true from pg_attribute a
        where ty.typrelid <> 0 and a.attrelid = ty.typrelid and a.attnum > 0 and not a.attisdropped
     ) x(oid, embedded)
  )
  select (select array_agg(a.attname::text order by a.attnum) from pg_attribute a
           where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped and a.attgenerated = '') as names,
         (select array_agg(format_type(a.atttypid, a.atttypmod) order by a.attnum) from pg_attribute a
           where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped and a.attgenerated = '') as types,
         (select coalesce(bool_and(ty.typsend::oid <> 0 and ty.typreceive::oid <> 0
                                   and (not t.embedded or t.oid < 16384)), true)
            from types t join pg_type ty on ty.oid = t.oid) as binary`;

const TARGET_TYPES = `
  select coalesce(array_agg(coalesce(format_type(a.atttypid, a.atttypmod), '') order by u.i), '{}') as types
    from unnest($2::text[]) with ordinality as u(name, i)
    left join pg_attribute a on a.attrelid = $1::regclass and a.attname = u.name and not a.attisdropped`;

export type CopyFormat = 'binary' | 'text';

export interface CopyShape {
  /** Non-dropped, non-generated columns in the source's attnum order (quoted). */
  columns: string[];
  format: CopyFormat;
  /** Why text, when it is. */
  textBecause?: string;
}

/**
 * The columns both sides copy and the format: binary when every type involved has binary
 * send/receive, carries no oid of a type made on the node, and the target's column has the very
 * same type; else text, which is what tablesync would have used.
 */
export async function copyShape(
  a: pg.ClientBase,
  b: pg.ClientBase,
  table: string,
): Promise<CopyShape> {
  const src = (
    await a.query<{
      names: string[] | null;
      types: string[] | null;
      binary: boolean;
    }>(COLUMNS, [table])
  ).rows[0]!;
  const names = src.names ?? [];
  const columns = names.map(ident);
  if (!src.binary)
    return {
      columns,
      format: 'text',
      textBecause: 'a column type has no binary form to copy',
    };
  const dst = (await b.query<{ types: string[] }>(TARGET_TYPES, [table, names])).rows[0]!;
  const differ = names.findIndex((_, i) => dst.types[i] !== src.types?.[i]);
  if (differ >= 0)
    return {
      columns,
      format: 'text',
      textBecause: `column ${names[differ]} is ${src.types?.[differ]} on the source and ${dst.types[differ] || 'missing'} on the target`,
    };
  return { columns, format: 'binary' };
}

export interface TableCopy {
  /** Qualified, quoted. */
  table: string;
  /** The rows to copy: the publication's row filter. */
  where: string;
  shape: CopyShape;
}

export interface CopyHooks {
  /** Each chunk's size as it passes from the source to the target. */
  onBytes?(n: number): void;
  /** After the target took every row, before it commits them. */
  beforeCommit?(): void | Promise<void>;
}

/**
 * Copies one table's rows from `a` (in the exported snapshot) to `b`, in one transaction on `b`,
 * so a crash leaves the table's copy whole or absent. Resolves with the rows the target's COPY
 * counted and the bytes that passed. On an error both sessions are unusable: the caller ends them.
 */
export async function copyTable(
  a: pg.ClientBase,
  b: pg.ClientBase,
  t: TableCopy,
  hooks: CopyHooks = {},
): Promise<{ rows: number; bytes: number }> {
  const cols = t.shape.columns.join(', ');
  const format = t.shape.format;
  // As the apply worker does: user triggers and foreign keys stay out of a replicated row's way
  // (a referenced row may come with a later table, or belong to another range).
  await b.query(
    [
      'begin',
      'set local session_replication_role = replica',
      ...(format === 'text' ? PINNED_SETTINGS : []),
    ].join('; '),
  );
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      hooks.onBytes?.(chunk.length);
      done(null, chunk);
    },
  });
  const into = b.query(copyFrom(`COPY ${t.table} (${cols}) FROM STDIN (FORMAT ${format})`));
  const out = a.query(
    copyTo(
      `COPY (SELECT ${cols} FROM ONLY ${t.table} WHERE ${t.where}) TO STDOUT (FORMAT ${format})`,
    ),
  );
  await pipeline(out, count, into);
  await hooks.beforeCommit?.();
  await b.query('commit');
  return { rows: into.rowCount, bytes };
}

/** The target session's COPY so far (pg_stat_progress_copy), read from another session. */
export async function copyProgressOf(
  c: pg.ClientBase,
  pid: number,
): Promise<{ rows: number; bytes: number }> {
  const { rows } = await c.query<{ rows: string; bytes: string }>(
    `select tuples_processed::text as rows, bytes_processed::text as bytes
       from pg_stat_progress_copy where pid = $1`,
    [pid],
  );
  return { rows: Number(rows[0]?.rows ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
}
