// `select nextval('s')`, `select currval('s')`, `select lastval()` for the router's sequences
// (those a column of a sharded or reference table owns: serial, identity, OWNED BY): answered
// from the router's blocks and this session's values, written into the statement as literals so
// that it still runs on a node and its RowDescription is Postgres's. setval() of such a sequence
// is refused: the nodes' own sequence is not where the values come from.
import { sequenceCallSelect, type Analysis, type SelectAnalysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { unsupported } from '../errors.js';
import { lookupTable } from '../routing/tables.js';
import type { Session } from '../session/session.js';
import type { SequenceDef } from './blocks.js';
import { currval, hasLastval, lastval, noteValue } from './session-values.js';

/** Whether the text may call a sequence function (cheap test before any tokenising). */
const MAY_CALL = /(?:nextval|currval|lastval|setval)\s*\(/i;

/** False when the SELECT's text cannot call a sequence function (the common case: no work). */
export function mayCallSequence(sql: string): boolean {
  return MAY_CALL.test(sql);
}

/**
 * A sequence by name as a node resolves it ($1: the name as written): its parameters and the
 * table owning it, if any.
 */
export const NAMED_SEQUENCE_SQL = `select sn.nspname::text, sc.relname::text, s.seqstart::text, s.seqincrement::text,
  s.seqmin::text, s.seqmax::text, s.seqcycle::text,
  coalesce(pg_catalog.pg_sequence_last_value(s.seqrelid)::numeric + s.seqincrement, s.seqstart)::text,
  tn.nspname::text, tc.relname::text
from pg_catalog.pg_sequence s
join pg_catalog.pg_class sc on sc.oid = s.seqrelid
join pg_catalog.pg_namespace sn on sn.oid = sc.relnamespace
left join pg_catalog.pg_depend dep on dep.classid = 'pg_catalog.pg_class'::regclass
  and dep.objid = s.seqrelid and dep.refclassid = 'pg_catalog.pg_class'::regclass
  and dep.deptype in ('a', 'i')
left join pg_catalog.pg_class tc on tc.oid = dep.refobjid
left join pg_catalog.pg_namespace tn on tn.oid = tc.relnamespace
where s.seqrelid = $1::regclass`;

/** The router's definition of the sequence in `rows` (NAMED_SEQUENCE_SQL), or null when not its. */
export function namedSequenceOf(
  database: string,
  rows: readonly (string | null)[][],
  catalog: Snapshot,
): SequenceDef | null {
  const r = rows[0];
  if (r === undefined) return null;
  const [schema, name, start, inc, min, max, cycle, floor, tableSchema, table] = r;
  if (tableSchema == null || table == null) return null;
  const kind = lookupTable(catalog, tableSchema, table).kind;
  if (kind !== 'sharded' && kind !== 'reference') return null;
  return {
    key: `${database}.${schema!}.${name!}`,
    name: `${quoteName(schema!)}.${quoteName(name!)}`,
    start: BigInt(start!),
    increment: BigInt(inc!),
    minValue: BigInt(min!),
    maxValue: BigInt(max!),
    cycle: cycle === 'true',
    floor: BigInt(floor!),
  };
}

function quoteName(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`;
}

export type Lookup = (written: string) => SequenceDef | null | Promise<SequenceDef | null>;
export type Draw = (def: SequenceDef) => bigint | Promise<bigint>;

/**
 * The SELECT's text with the router's answers written in, or undefined when the nodes answer it
 * (no sequence call, another shape, or no sequence of the router's).
 */
export function fillCalls(
  s: Session,
  a: Analysis,
  lookup: Lookup,
  draw: Draw,
  /** A bind parameter's text (undefined: not known; null: SQL NULL). */
  param: (index: number) => string | null | undefined = () => undefined,
): string | undefined | Promise<string | undefined> {
  if (a.kind !== 'select' || !mayCallSequence(a.sql)) return undefined;
  const calls = sequenceCallSelect((a as SelectAnalysis).sql);
  if (calls === undefined) return undefined;
  const defs = calls.map((c) => {
    const written = c.param === undefined ? c.sequence : param(c.param);
    return written == null ? null : lookup(written);
  });
  const answer = (
    got: readonly (SequenceDef | null)[],
  ): string | undefined | Promise<string | undefined> => {
    // Nothing of the router's: the nodes answer (lastval too, before any value of the router's).
    if (!got.some((d) => d !== null) && (!calls.some((c) => c.fn === 'lastval') || !hasLastval(s)))
      return undefined;
    // In order, as Postgres evaluates the select list.
    const texts: string[] = [];
    let chain: Promise<void> | undefined;
    calls.forEach((c, i) => {
      const def = got[i] ?? null;
      const put = (v: bigint): void => {
        // A parameter stays referenced (the Bind still carries it); NULL gives NULL, as nextval does.
        const value =
          c.param === undefined
            ? `${v.toString()}::bigint`
            : `(select ${v.toString()}::bigint where $${c.param + 1}::text is not null)`;
        texts[i] = `${value}${c.aliased ? '' : ` as ${c.fn}`}`;
      };
      const step = (): void | Promise<void> => {
        if (c.fn === 'lastval') return put(lastval(s));
        if (def === null) throw notOurs(c.fn);
        if (c.fn === 'setval')
          throw unsupported(
            `setval() of sequence ${def.name} is not supported: its values are made by the router across the cluster (a reset would not reach them)`,
          );
        if (c.fn === 'currval') return put(currval(s, def));
        const v = draw(def);
        if (typeof v === 'bigint') {
          noteValue(s, def, v);
          return put(v);
        }
        return v.then((x) => {
          noteValue(s, def, x);
          put(x);
        });
      };
      if (chain !== undefined) chain = chain.then(step);
      else {
        const r = step();
        if (r instanceof Promise) chain = r;
      }
    });
    const build = (): string => {
      let out = a.sql;
      for (let i = calls.length - 1; i >= 0; i--)
        out = out.slice(0, calls[i]!.start) + texts[i]! + out.slice(calls[i]!.end);
      return out;
    };
    return chain === undefined ? build() : chain.then(build);
  };
  if (defs.some((d) => d instanceof Promise)) return Promise.all(defs).then(answer);
  return answer(defs as (SequenceDef | null)[]);
}

/** A sequence call mixed with the router's in one SELECT: the router cannot answer only part. */
function notOurs(fn: string): Error {
  return unsupported(
    `${fn}() of a node-local sequence together with a cluster-wide sequence call in one SELECT is not supported; send them separately`,
  );
}
