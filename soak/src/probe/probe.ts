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
import { SOAK_DATABASE, type Cluster, type ServiceMember } from '../cluster/cluster.js';
import type { NodeMember } from '../cluster/nodes.js';
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

/** The final reads, as client operations: every list key, every counter, all balances. */
export function probeOps(keys: ProbeKeys): PlannedOp[] {
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
  return ops;
}

/**
 * Reads everything through one router as client operations of new processes; throws at the first
 * that does not succeed (the caller retries: each attempt is in the history like any other read).
 */
export async function probeThroughRouter(
  cluster: Cluster,
  router: ServiceMember,
  history: HistoryWriter,
  newProcess: () => number,
  ops: readonly PlannedOp[],
  timeoutMs: number,
): Promise<void> {
  const r = router;
  {
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

/** What one node holds: its rows of every sharded table, and what it has left behind. */
export interface NodeProbe {
  rows: { table: string; columns: string[]; rows: unknown[][] }[];
  state: {
    /** The catalog address of the instance read (the node's primary). */
    instance: string;
    prepared: string[];
    /** Logical slots (a move's); a streaming replica's physical slots are in physicalSlots. */
    slots: string[];
    physicalSlots: string[];
    publications: string[];
    subscriptions: string[];
  };
}

/** The catalog goes into the history first; the checker judges every node's rows by it. */
export function noteCatalog(history: HistoryWriter, probe: number, catalog: Catalog): void {
  history.note('probe', 'catalog', { probe, catalog: catalogRecord(catalog) });
}

/**
 * Rows from one node directly, with Postgres's own hash of each key, and its leftovers. Nothing
 * is written to the history here: an attempt that fails half-way must not leave half its rows.
 */
export async function probeNode(
  cluster: Cluster,
  n: NodeMember,
  catalog: Catalog,
  timeoutMs = 30_000,
): Promise<NodeProbe> {
  const record = catalogRecord(catalog);
  const seedOf = new Map(
    record.keyspaces.map((k) => [
      k.name,
      { seed: k.seed, fn: hashFunctionName(k.keyType as never) },
    ]),
  );
  const instance = n.primary.catalogKey;
  const out: NodeProbe = {
    rows: [],
    state: {
      instance,
      prepared: [],
      slots: [],
      physicalSlots: [],
      publications: [],
      subscriptions: [],
    },
  };
  const c = await cluster.nodeClient(n, SOAK_DATABASE, timeoutMs);
  try {
    const standby = await c.query<{ r: boolean }>('select pg_is_in_recovery() as r');
    if (standby.rows[0]?.r)
      throw new Error(`${n.primary.member} (${instance}) is a standby, not ${n.name}'s primary`);
    for (const t of Object.values(TABLES)) {
      const ks = seedOf.get(t.keyspace);
      if (!ks) throw new Error(`keyspace ${t.keyspace} is not in the catalog`);
      const exists = await c.query('select to_regclass($1) is not null as e', [`public.${t.name}`]);
      if (!exists.rows[0].e) continue; // not created on this node (e.g. the home node)
      const r = await c.query({
        text: `select *, ${ks.fn}(${t.key}, '${ks.seed}'::int8)::text as h from ${t.name}`,
        rowMode: 'array',
      });
      const columns = r.fields.map((f) => f.name);
      const rows = (r.rows as unknown[][]).map((row) =>
        row.map((v, i) => (columns[i] === 'h' ? v : toNumbers(v))),
      );
      out.rows.push({ table: t.name, columns, rows });
    }
    const col = async <K extends string>(sql: string, k: K): Promise<string[]> =>
      (await c.query<Record<K, string>>(sql)).rows.map((x) => x[k]);
    const slots = (type: string) =>
      `select slot_name from pg_replication_slots where slot_type = '${type}' order by slot_name`;
    out.state = {
      instance,
      prepared: await col('select gid from pg_prepared_xacts order by gid', 'gid'),
      slots: await col(slots('logical'), 'slot_name'),
      physicalSlots: await col(slots('physical'), 'slot_name'),
      publications: await col('select pubname from pg_publication', 'pubname'),
      subscriptions: await col('select subname from pg_subscription', 'subname'),
    };
    return out;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Writes one node's probe into the history. */
export function noteNodeProbe(
  history: HistoryWriter,
  probe: number,
  node: string,
  p: NodeProbe,
): void {
  for (const r of p.rows) history.note('probe', 'node-rows', { probe, node, ...r });
  history.note('probe', 'node-state', { probe, node, ...p.state });
}

function toNumbers(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toNumbers);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return v;
}

/** Prepared transactions left on any node's primary (the coordinator's recovery should clear them). */
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
