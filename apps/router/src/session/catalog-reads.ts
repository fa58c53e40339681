// What psql's \d and \dt+, pg_dump and the size functions read of the catalog, made true of the
// cluster rather than of the node that answers (docs/operations.md, "psql and pg_dump"):
// - the fences (`tessera_owns`, DESIGN.md section 2) are Tessera's, not the application's: every
//   read of pg_constraint through the router leaves them out (home's `CHECK (false)` on a sharded
//   table's empty copy, restored into plain Postgres, would refuse every row);
// - the size functions of a sharded table or its indexes measure every node's copy and add them
//   up, where home's copy alone is empty: each call becomes a CASE over the sums measured now.
import type { Snapshot } from '@tessera/keyspace';
import {
  quoteLiteral,
  quoteQualified,
  replaceCalls,
  replaceColumn,
  restrictTables,
  type Analysis,
} from '@tessera/sql';
import { unsupported } from '../errors.js';
import { queryText } from '../pool/query-text.js';
import type { Session } from './session.js';

/** The fence's rows in pg_constraint: what catalog reads through the router leave out. */
const NOT_A_FENCE = "NOT (conname = 'tessera_owns' AND contype = 'c')";

const reads = (a: Analysis, relation: string): boolean =>
  a.tables.some(
    (t) => t.name === relation && (t.schema === undefined || t.schema === 'pg_catalog'),
  );

/**
 * pg_class.relchecks counts the CHECK constraints pg_constraint shows: without the fences (pg_dump
 * expects as many as it finds, and reads past its array when they differ).
 */
const CHECKS_WITHOUT_FENCES = {
  relation: 'pg_class',
  column: 'relchecks',
  expression: (q: string): string =>
    `(${q}.relchecks - (SELECT pg_catalog.count(*) FROM pg_catalog.pg_constraint tessera_fence WHERE tessera_fence.conrelid = ${q}.oid AND tessera_fence.conname = 'tessera_owns' AND tessera_fence.contype = 'c'))::pg_catalog.int2`,
};

/**
 * `a`'s text with the fences left out of what it reads of pg_constraint (and of pg_class's count
 * of CHECK constraints); `sql` when it reads neither.
 */
export function fencesHidden(catalog: Snapshot, sql: string, a: Analysis): string {
  if (a.kind === 'ddl') return sql;
  const constraints = reads(a, 'pg_constraint');
  const classes = reads(a, 'pg_class');
  if (!constraints && !classes) return sql;
  if (!catalog.tables.some((t) => t.kind === 'sharded')) return sql;
  let out = sql;
  if (constraints)
    out = restrictTables(
      out,
      (schema, name) =>
        name === 'pg_constraint' && (schema === undefined || schema === 'pg_catalog')
          ? () => NOT_A_FENCE
          : undefined,
      true,
    );
  // After the above: the count's own read of pg_constraint must see the fences.
  if (classes && /relchecks/i.test(out)) out = replaceColumn(out, CHECKS_WITHOUT_FENCES);
  return out;
}

const SIZE_FUNCTIONS: ReadonlySet<string> = new Set([
  'pg_relation_size',
  'pg_total_relation_size',
  'pg_table_size',
  'pg_indexes_size',
]);

/** Whether `a` calls a size function that may be asked about a sharded table. */
export function callsSizes(catalog: Snapshot, a: Analysis): boolean {
  if (a.kind === 'ddl') return false;
  if (!a.functions.some((f) => SIZE_FUNCTIONS.has(f.replace(/^pg_catalog\./, '')))) return false;
  return catalog.tables.some((t) => t.kind === 'sharded');
}

/** Every node's measures of the sharded tables and their indexes, by `schema.name`. */
type Measures = Map<string, { readonly schema: string; readonly name: string; sizes: bigint[] }>;

const FORKS = ['main', 'fsm', 'vm', 'init'] as const;
/** Columns after schema and name: the forks' sizes, then these functions. */
const TOTALS = ['pg_table_size', 'pg_indexes_size', 'pg_total_relation_size'] as const;

const MEASURE_SQL = `select n.nspname, c.relname,
    ${FORKS.map((f) => `pg_catalog.pg_relation_size(c.oid, '${f}')`).join(', ')},
    ${TOTALS.map((f) => `pg_catalog.${f}(c.oid)`).join(', ')}
  from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
 where c.oid in (
   select t.oid from pg_catalog.pg_class t
     join pg_catalog.pg_namespace tn on tn.oid = t.relnamespace
     join pg_catalog.json_array_elements($1::pg_catalog.json) x
       on x->>0 = tn.nspname and x->>1 = t.relname
   union all
   select i.indexrelid from pg_catalog.pg_index i
     join pg_catalog.pg_class t on t.oid = i.indrelid
     join pg_catalog.pg_namespace tn on tn.oid = t.relnamespace
     join pg_catalog.json_array_elements($1::pg_catalog.json) x
       on x->>0 = tn.nspname and x->>1 = t.relname)`;

const MEASURE_TIMEOUT_MS = 10_000;

/** The sizes of the sharded tables and their indexes on every node, added up. */
async function measure(s: Session, catalog: Snapshot): Promise<Measures> {
  const tables = JSON.stringify(
    catalog.tables.filter((t) => t.kind === 'sharded').map((t) => [t.schema, t.name]),
  );
  const perNode = await Promise.all(
    catalog.nodes.map(async (node) => {
      const pool = s.services.pools.pool(catalog, node, s.database, s.user);
      const b = await pool.acquire(s.services.config.acquireTimeoutMs, s.passThrough);
      try {
        return await queryText(b, MEASURE_SQL, [tables], MEASURE_TIMEOUT_MS);
      } finally {
        pool.release(b);
      }
    }),
  );
  const out: Measures = new Map();
  for (const rows of perNode)
    for (const [schema, name, ...values] of rows) {
      const key = `${schema}.${name}`;
      let m = out.get(key);
      if (m === undefined)
        out.set(key, (m = { schema: schema!, name: name!, sizes: values.map(() => 0n) }));
      values.forEach((v, i) => (m.sizes[i]! += BigInt(v ?? 0)));
    }
  return out;
}

/** Which measure a call asks for (its index in MEASURE_SQL's values), or refused. */
function measureOf(fn: string, args: readonly string[]): number {
  if (fn !== 'pg_relation_size')
    return FORKS.length + TOTALS.indexOf(fn as (typeof TOTALS)[number]);
  if (args.length === 1) return 0;
  const fork = /^'(main|fsm|vm|init)'(::text)?$/.exec(args[1] ?? '')?.[1];
  if (fork === undefined)
    throw unsupported(
      'pg_relation_size with a fork that is not a constant is not supported through the router (it may measure a sharded table, whose rows are on several nodes)',
    );
  return FORKS.indexOf(fork as (typeof FORKS)[number]);
}

/**
 * `sql` with each size function call answered for the sharded tables and their indexes: the sum
 * of every node's copy (home's included), measured now; other relations keep the call.
 */
export async function sizesMeasured(s: Session, catalog: Snapshot, sql: string): Promise<string> {
  const measures = await measure(s, catalog);
  if (measures.size === 0) return sql;
  return replaceCalls(sql, SIZE_FUNCTIONS, (fn, args) => {
    if (args.length < 1 || args.length > 2) return undefined;
    const at = measureOf(fn, args);
    const whens = [...measures.values()].map(
      (m) =>
        `WHEN pg_catalog.to_regclass(${quoteLiteral(quoteQualified(m.schema, m.name))}) THEN ${m.sizes[at]!.toString()}::pg_catalog.int8`,
    );
    return `(CASE (${args[0]!})::pg_catalog.regclass ${whens.join(' ')} ELSE pg_catalog.${fn}(${args.join(', ')}) END)`;
  });
}
