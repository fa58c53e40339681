// A small differential oracle on one real Postgres: databases n1, n2, n3 each hold a third of the
// rows (by id % 3), database whole holds them all. A query's leaf SQL runs on n1..n3, the executor
// merges, and the result must equal the original query on whole byte for byte (names, type OIDs,
// text values, and for errors SQLSTATE and message).
import type pg from 'pg';
import type { PgServer } from '@tessera/testkit';
import { bindTransactionTime, planRead } from '@tessera/sql';
import type { PlanOptions } from '@tessera/sql';
import type { PlannerCatalog } from '@tessera/sql';
import { executeReadPlan } from './execute.js';
import { MergeError } from './errors.js';
import type { LeafMessage, LeafStream } from './types.js';

export const NODE_DATABASES = ['n1', 'n2', 'n3'] as const;
export const WHOLE = 'whole';

const SCHEMA = `
create table t (
  id int8 primary key, grp text, name text, score int4, small int2, big int8,
  amount numeric(10,3), num numeric, ratio float8, active bool, created date,
  ts timestamp, tz timestamptz, code uuid, ch char(5), vc varchar(10));
create table e (like t);
create table huge (id int8 primary key, big int8, n int4);
create table sp (id int8 primary key, v numeric, f float8);
create table r (code text primary key, label text, keep bool);
`;

// Deterministic rows; NULLs, unicode, special floats/numerics, BC and infinite dates included.
const T_ROWS = `
insert into t
select i,
  case when i % 23 = 0 then null else 'g' || (i % 7) end,
  case when i % 17 = 0 then null
       else (array['alpha','Beta','gamma','Ünïcode','zeta','beta','ALPHA','émile','Zürich','apple','','a b'])[1 + i % 12] end,
  case when i % 11 = 0 then null else (i * 37) % 101 - 20 end,
  case when i % 19 = 0 then null else (i * 13) % 200 - 100 end,
  i * 1234567890123 * (case when i % 2 = 0 then -1 else 1 end),
  case when i % 13 = 0 then null else ((i * 7919) % 100000) / 1000.0 - 30 end,
  case i % 4 when 0 then (i / 4)::numeric when 1 then i + 0.5 when 2 then i + 0.25 else null end,
  case when i = 5 then 'NaN'::float8 when i = 6 then 'Infinity' when i = 7 then '-Infinity'
       when i % 10 = 0 then null else i * 0.37 - 50 end,
  case when i % 3 = 0 then null else i % 2 = 0 end,
  case when i = 10 then 'infinity'::date when i = 20 then '0044-03-15 BC'::date
       else date '2020-01-01' + (i * 17) % 900 end,
  timestamp '2021-06-01 00:00' + i * interval '7 hours 13 minutes 1.5 seconds',
  timestamptz '2021-03-20 00:00+00' + i * interval '5 hours 1 minute',
  md5(i::text)::uuid,
  (array['a','ab','b','a b','abc'])[1 + i % 5],
  'v' || (i % 50)
from generate_series(1, 300) i`;

const OTHER_ROWS = [
  `insert into huge select i, 9000000000000000000 - i, 2147483647 - i from generate_series(1, 6) i`,
  `insert into sp values (1, 'NaN', 'NaN'), (2, 'Infinity', 'Infinity'), (3, '-Infinity', '-Infinity'),
     (4, 1.5, 1.5), (5, -2, -2), (6, null, null), (7, 0.25, 0), (8, 1.50, -0.0)`,
];

const R_ROWS = `insert into r select 'g' || i, 'label ' || i, i % 2 = 0 from generate_series(0, 6) i`;

export const ORACLE_CATALOG: PlannerCatalog = {
  textCollationIsBytewise: true,
  table: (schema, name) => {
    if (schema !== undefined && schema !== 'public') return undefined;
    if (['t', 'e', 'huge', 'sp'].includes(name))
      return { kind: 'sharded', keyColumn: 'id', keyspace: 'ks' };
    if (name === 'r') return { kind: 'reference' };
    return undefined;
  },
};

export interface Oracle {
  readonly clients: Map<string, pg.Client>;
  close(): Promise<void>;
}

export async function setUpOracle(server: PgServer): Promise<Oracle> {
  const clients = new Map<string, pg.Client>();
  for (const [k, db] of [...NODE_DATABASES, WHOLE].entries()) {
    await server.query(`create database ${db}`);
    const c = await server.connect(db);
    clients.set(db, c);
    // A zone with daylight saving: timestamptz offsets change between rows.
    await c.query(`set timezone = 'Europe/Berlin'`);
    await c.query(SCHEMA);
    const only = db === WHOLE ? '' : ` where i % 3 = ${k}`;
    await c.query(`${T_ROWS}${only}`);
    for (const sql of OTHER_ROWS) await c.query(sql);
    await c.query(R_ROWS);
  }
  // huge and sp were loaded whole into every node above; keep one copy per id on the nodes.
  for (const [k, db] of NODE_DATABASES.entries()) {
    const c = clients.get(db) as pg.Client;
    await c.query(`delete from huge where id % 3 <> ${k}`);
    await c.query(`delete from sp where id % 3 <> ${k}`);
  }
  return {
    clients,
    async close() {
      await Promise.all([...clients.values()].map((c) => c.end()));
    },
  };
}

const RAW = { getTypeParser: () => (v: string) => v };

export interface Outcome {
  readonly kind: 'rows' | 'error' | 'refused';
  readonly names?: string[];
  readonly types?: number[];
  readonly rows?: (string | null)[][];
  readonly code?: string;
  readonly message?: string;
}

function errorOutcome(e: unknown): Outcome {
  const err = e as { code?: string; sqlstate?: string; message?: string };
  const code = err instanceof MergeError ? err.sqlstate : (err.code ?? '?');
  if (code === '0A000') return { kind: 'refused', code, message: err.message ?? '' };
  return { kind: 'error', code, message: err.message ?? String(e) };
}

/** The original query on the database holding every row. */
export async function runWhole(oracle: Oracle, sql: string, params: unknown[]): Promise<Outcome> {
  const c = oracle.clients.get(WHOLE) as pg.Client;
  try {
    const res = await c.query({ text: sql, values: params, rowMode: 'array', types: RAW });
    return {
      kind: 'rows',
      names: res.fields.map((f) => f.name),
      types: res.fields.map((f) => f.dataTypeID),
      rows: (res.rows as (string | null)[][]).map((r) => [...r]),
    };
  } catch (e) {
    return errorOutcome(e);
  }
}

function leafStream(client: pg.Client, sql: string, params: unknown[]): LeafStream {
  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<LeafMessage> {
      const res = await client.query({ text: sql, values: params, rowMode: 'array', types: RAW });
      yield {
        kind: 'RowDescription',
        fields: res.fields.map((f) => ({
          name: f.name,
          tableOid: f.tableID,
          columnAttr: f.columnID,
          typeOid: f.dataTypeID,
          typeSize: f.dataTypeSize,
          typeModifier: f.dataTypeModifier,
          format: 0,
        })),
      };
      for (const r of res.rows as (string | null)[][])
        yield {
          kind: 'DataRow',
          values: r.map((v) => (v === null ? null : Buffer.from(v, 'utf8'))),
        };
      yield { kind: 'CommandComplete', tag: `SELECT ${res.rowCount ?? 0}` };
    },
  };
}

/** Plans the query, runs the leaf SQL on n1..n3 and merges; refusals come back as `refused`. */
export async function runMerged(
  oracle: Oracle,
  sql: string,
  params: unknown[],
  options: PlanOptions = {},
  transactionTime?: string,
): Promise<Outcome> {
  const planned = planRead(sql, ORACLE_CATALOG, options);
  if (planned.kind === 'refuse') return { kind: 'refused', code: '0A000', message: planned.reason };
  // As the router does: one instant for the transaction, bound before the leaves run.
  const plan =
    planned.usesTransactionTime && transactionTime !== undefined
      ? bindTransactionTime(planned, transactionTime)
      : planned;
  // As the router does: the leaf binds only the client parameters the plan names, in its order.
  const leafParams = plan.leafParams.map((i) => params[i]);
  const leaves = NODE_DATABASES.map((db) =>
    leafStream(oracle.clients.get(db) as pg.Client, plan.leafSql, leafParams),
  );
  const out: Outcome & { names: string[]; types: number[]; rows: (string | null)[][] } = {
    kind: 'rows',
    names: [],
    types: [],
    rows: [],
  };
  try {
    const textParams = params.map((p) => (p === null ? null : Array.isArray(p) ? null : String(p)));
    for await (const m of executeReadPlan(plan, leaves, { params: textParams })) {
      if (m.kind === 'RowDescription') {
        out.names = m.fields.map((f) => f.name);
        out.types = m.fields.map((f) => f.typeOid);
      } else if (m.kind === 'DataRow')
        out.rows.push(m.values.map((v) => (v === null ? null : v.toString('utf8'))));
    }
  } catch (e) {
    return errorOutcome(e);
  }
  return out;
}
