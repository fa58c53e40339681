// The final-state probe (docs/soak.md, "Final-state probe"), run once the faults are healed and
// the cluster has settled: every key read back through each router (ordinary client operations
// in the history, held to the same rules as every other read), then every row of every sharded
// table read from each node directly, with the hash Postgres itself computes for its key, and
// what each node has left behind (prepared transactions, slots, publications, subscriptions).
// All of it goes into the history, so `npm run soak -- check HISTORY` needs nothing else.
import { hashFunctionName } from '@tessera/keyspace';
import type { Catalog } from '@tessera/proto';
import { TableKind, NodeRole, keyTypeName } from '@tessera/proto';
import type { CatalogRecord } from '../checker/final-state.js';
import { F, TABLES } from '../checker/values.js';
import { SOAK_DATABASE, type Cluster } from '../cluster/cluster.js';
import type { HistoryWriter } from '../history/writer.js';
import { execute } from '../workload/execute.js';
import type { PlannedOp } from '../workload/generate.js';

export interface ProbeKeys {
  lists: Iterable<number>;
  counters: Iterable<number>;
  accounts: readonly number[];
}

export function catalogRecord(c: Catalog): CatalogRecord {
  return {
    epoch: c.epoch.toString(),
    nodes: c.nodes.map((n) => ({
      name: n.name,
      host: n.host,
      port: n.port,
      role: n.role === NodeRole.HOME ? 'home' : 'data',
    })),
    keyspaces: c.keyspaces.map((k) => ({
      name: k.name,
      keyType: keyTypeName(k.keyType),
      seed: k.seed.toString(),
    })),
    ranges: c.ranges.map((r) => ({
      keyspace: r.keyspace,
      lo: r.lo.toString(),
      hi: r.hi.toString(),
      owner: r.owner,
    })),
    tables: c.tables.map((t) => ({
      schema: t.schema,
      name: t.name,
      kind:
        t.kind === TableKind.SHARDED
          ? 'sharded'
          : t.kind === TableKind.REFERENCE
            ? 'reference'
            : 'global',
      keyspace: t.keyspace,
      keyColumn: t.keyColumn,
    })),
  };
}

/** Reads through every router as client operations of new processes. */
export async function probeThroughRouters(
  cluster: Cluster,
  history: HistoryWriter,
  newProcess: () => number,
  keys: ProbeKeys,
  timeoutMs: number,
): Promise<void> {
  const lists = [...keys.lists].sort((a, b) => a - b);
  const counters = [...keys.counters].sort((a, b) => a - b);
  const ops: PlannedOp[] = [
    {
      kind: 'list-read-multi',
      f: F.list,
      value: { mode: 'auto', ops: lists.map((k) => ['r', k, null]) },
      txn: undefined,
      statements: [
        {
          sql: 'select k, vals from lists',
          params: [],
          reads: { kind: 'lists', micros: new Map(lists.map((k, i) => [k, i])) },
        },
      ],
      writes: false,
      keys: [],
    },
    {
      kind: 'counter-read',
      f: F.counter,
      value: { mode: 'auto', ops: counters.map((k) => ['r', k, null]) },
      txn: undefined,
      statements: counters.map((k, i) => ({
        sql: 'select n from counters where k = $1',
        params: [k],
        reads: { kind: 'counter' as const, micro: i },
      })),
      writes: false,
      keys: [],
    },
    {
      kind: 'balances',
      f: F.balances,
      value: { balances: null },
      txn: undefined,
      statements: [
        {
          sql: 'select id, balance from accounts order by id',
          params: [],
          reads: { kind: 'balances' },
        },
      ],
      writes: false,
      keys: [],
    },
  ];
  for (const r of cluster.routers) {
    const client = await cluster.routerClient(r);
    try {
      for (const op of ops) {
        // One statement per counter key: run them as one op each would bloat the history, so the
        // counter reads share one operation of autocommit statements (each its own snapshot).
        const pid = newProcess();
        history.write(pid, 'invoke', op.f, { ...op.value, via: r.name, probe: true });
        const res = await execute(client, { ...op, txn: undefined }, timeoutMs);
        history.write(pid, res.outcome, op.f, { ...res.value, via: r.name, probe: true });
        if (res.outcome !== 'ok')
          throw new Error(
            `the final read through ${r.name} failed: ${JSON.stringify(res.value.error)}`,
          );
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Rows from each node directly, with Postgres's own hash of each key, and leftovers. */
export async function probeNodes(
  cluster: Cluster,
  history: HistoryWriter,
  probe: number,
  catalog: Catalog,
): Promise<void> {
  const record = catalogRecord(catalog);
  history.note('probe', 'catalog', { probe, catalog: record });
  const seedOf = new Map(
    record.keyspaces.map((k) => [
      k.name,
      { seed: k.seed, fn: hashFunctionName(k.keyType as never) },
    ]),
  );
  for (const n of cluster.nodes) {
    try {
      const c = await cluster.nodeClient(n, SOAK_DATABASE, 30_000);
      try {
        for (const t of Object.values(TABLES)) {
          const ks = seedOf.get(t.keyspace);
          if (!ks) throw new Error(`keyspace ${t.keyspace} is not in the catalog`);
          const exists = await c.query('select to_regclass($1) is not null as e', [
            `public.${t.name}`,
          ]);
          if (!exists.rows[0].e) continue; // not created on this node (e.g. the home node)
          const r = await c.query({
            text: `select *, ${ks.fn}(${t.key}, '${ks.seed}'::int8)::text as h from ${t.name}`,
            rowMode: 'array',
          });
          const columns = r.fields.map((f) => f.name);
          const rows = (r.rows as unknown[][]).map((row) =>
            row.map((v, i) => (columns[i] === 'h' ? v : toNumbers(v))),
          );
          history.note('probe', 'node-rows', { probe, node: n.name, table: t.name, columns, rows });
        }
        const prepared = (
          await c.query<{ gid: string }>('select gid from pg_prepared_xacts order by gid')
        ).rows.map((x) => x.gid);
        const slots = (
          await c.query<{ slot_name: string }>('select slot_name from pg_replication_slots')
        ).rows.map((x) => x.slot_name);
        const publications = (
          await c.query<{ pubname: string }>('select pubname from pg_publication')
        ).rows.map((x) => x.pubname);
        const subscriptions = (
          await c.query<{ subname: string }>('select subname from pg_subscription')
        ).rows.map((x) => x.subname);
        history.note('probe', 'node-state', {
          probe,
          node: n.name,
          prepared,
          slots,
          publications,
          subscriptions,
        });
      } finally {
        await c.end().catch(() => undefined);
      }
    } catch (e) {
      history.note('probe', 'probe-error', {
        probe,
        node: n.name,
        message: `${n.name}: ${(e as Error).message}`,
      });
    }
  }
}

function toNumbers(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toNumbers);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return v;
}

/** Prepared transactions left on any node (the coordinator's recovery should clear them). */
export async function preparedLeft(cluster: Cluster): Promise<string[]> {
  const out: string[] = [];
  for (const n of cluster.nodes) {
    try {
      const c = await cluster.nodeClient(n, 'postgres', 5_000);
      try {
        const r = await c.query<{ gid: string }>('select gid from pg_prepared_xacts');
        out.push(...r.rows.map((x) => `${n.name}:${x.gid}`));
      } finally {
        await c.end().catch(() => undefined);
      }
    } catch {
      out.push(`${n.name}:unreachable`);
    }
  }
  return out;
}
