// What the router must know of a table to fill in the values a node would have made itself: its
// columns in order, and for each whether its default draws from a sequence (serial, identity,
// `nextval('s')`) or is gen_random_uuid(). Asked of one node by regclass (TABLE_SEQUENCES_SQL),
// kept per database, table and catalog epoch, and forgotten when DDL through the router touches
// the table (forgetTable).
import type { SequenceDef } from './blocks.js';

/** How a column's value is made when an INSERT does not give it. */
export type ColumnDefault =
  /** serial, identity, or a default that is exactly nextval('s'): the router draws from `seq`. */
  | {
      readonly kind: 'sequence';
      readonly seq: SequenceDef;
      /** GENERATED ALWAYS AS IDENTITY: an explicit value needs OVERRIDING SYSTEM VALUE. */
      readonly always: boolean;
    }
  /** gen_random_uuid() (or uuid_generate_v4()): evaluated at the router when it is the key. */
  | { readonly kind: 'uuid' }
  /** Anything else (or none): the node evaluates it. `expr` is its text. */
  | { readonly kind: 'node'; readonly expr: string | undefined };

export interface ColumnInfo {
  readonly name: string;
  readonly default: ColumnDefault;
}

export interface TableInfo {
  readonly columns: readonly ColumnInfo[];
  /** Some column's default the router makes (sequence; uuid only matters for the key). */
  readonly routerDefaults: boolean;
}

/**
 * Per column, in order ($1: the table as regclass text): name, identity kind, default text, and
 * its sequence (from the default's dependency, else the identity or serial sequence) with its
 * parameters and the node's own next value.
 */
export const TABLE_SEQUENCES_SQL = `select a.attname::text, a.attidentity::text, pg_catalog.pg_get_expr(d.adbin, d.adrelid),
  sn.nspname::text, sc.relname::text, s.seqstart::text, s.seqincrement::text, s.seqmin::text,
  s.seqmax::text, s.seqcycle::text,
  coalesce(pg_catalog.pg_sequence_last_value(s.seqrelid)::numeric + s.seqincrement, s.seqstart)::text
from pg_catalog.pg_attribute a
left join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
left join lateral (
  select seqid from (
    select 1 as ord, dep.refobjid as seqid from pg_catalog.pg_depend dep
      where dep.classid = 'pg_catalog.pg_attrdef'::regclass and dep.objid = d.oid
        and dep.refclassid = 'pg_catalog.pg_class'::regclass
    union all
    select 2, dep.objid from pg_catalog.pg_depend dep
      where a.attidentity <> '' and dep.classid = 'pg_catalog.pg_class'::regclass
        and dep.refclassid = 'pg_catalog.pg_class'::regclass and dep.refobjid = a.attrelid
        and dep.refobjsubid = a.attnum and dep.deptype = 'i'
  ) x join pg_catalog.pg_sequence ps on ps.seqrelid = x.seqid order by ord limit 1
) q on true
left join pg_catalog.pg_sequence s on s.seqrelid = q.seqid
left join pg_catalog.pg_class sc on sc.oid = s.seqrelid
left join pg_catalog.pg_namespace sn on sn.oid = sc.relnamespace
where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped
order by a.attnum`;

const NEXTVAL = /^nextval\('(?:[^']|'')+'::regclass\)$/;
const UUID = /^(?:gen_random_uuid|uuid_generate_v4|public\.uuid_generate_v4)\(\)$/;

/** The rows of TABLE_SEQUENCES_SQL as a TableInfo. Pure. */
export function tableInfoOf(database: string, rows: readonly (string | null)[][]): TableInfo {
  let routerDefaults = false;
  const columns = rows.map((r): ColumnInfo => {
    const [name, identity, expr, seqSchema, seqName, start, inc, min, max, cycle, floor] = r;
    const isIdentity = identity === 'a' || identity === 'd';
    const fromSequence = isIdentity || (expr != null && NEXTVAL.test(expr));
    if (fromSequence && seqSchema != null && seqName != null) {
      routerDefaults = true;
      return {
        name: name!,
        default: {
          kind: 'sequence',
          always: identity === 'a',
          seq: {
            key: `${database}.${seqSchema}.${seqName}`,
            name: `${quoteName(seqSchema)}.${quoteName(seqName)}`,
            start: BigInt(start!),
            increment: BigInt(inc!),
            minValue: BigInt(min!),
            maxValue: BigInt(max!),
            cycle: cycle === 'true',
            floor: BigInt(floor!),
          },
        },
      };
    }
    if (expr != null && UUID.test(expr)) {
      routerDefaults = true;
      return { name: name!, default: { kind: 'uuid' } };
    }
    return { name: name!, default: { kind: 'node', expr: expr ?? undefined } };
  });
  return { columns, routerDefaults };
}

function quoteName(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`;
}

/** Definitions (tables' columns, sequences) per database and name, valid for one catalog epoch. */
export class EpochCache<T> {
  private epoch = -1n;
  private readonly entries = new Map<string, T>();
  private readonly loading = new Map<string, Promise<T>>();

  get(epoch: bigint, key: string): T | undefined {
    if (epoch !== this.epoch) {
      this.epoch = epoch;
      this.entries.clear();
    }
    return this.entries.get(key);
  }

  /** One load per key at a time, however many sessions ask. */
  load(epoch: bigint, key: string, fetch: () => Promise<T>): Promise<T> {
    let p = this.loading.get(key);
    if (p === undefined) {
      p = fetch()
        .then((v) => {
          if (epoch === this.epoch) this.entries.set(key, v);
          return v;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  /** DDL through the router: everything is read again when next needed. */
  forget(): void {
    this.entries.clear();
  }
}

export type TableInfoCache = EpochCache<TableInfo>;
