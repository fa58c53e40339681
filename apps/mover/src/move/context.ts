// A move as its steps see it: the durable plan (from the plan step), the keyspace, the range and
// the two nodes (addresses from the current catalog), the tables of each database, the objects'
// names.
import type { HashRange } from '@tessera/keyspace';
import type { Catalog } from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { JobRuntime } from '../job/runtime.js';
import type { NodeAddr } from '../nodes/sessions.js';
import { nodeAddr, type KeyspaceInfo, type ShardedTable } from './catalog-view.js';
import { replicationName } from './names.js';
import type { MovePlan } from './spec.js';

export interface MoveDb {
  index: number;
  name: string;
  /** Replication objects' name for this database. */
  objects: string;
  tables: ShardedTable[];
  /** "schema"."name" of each table, for to_regclass. */
  regclasses: string[];
  digestTables: { schema: string; name: string; keyColumn: string; columns: string[] }[];
}

export interface MoveCtx {
  rt: JobRuntime;
  plan: MovePlan;
  ks: KeyspaceInfo;
  range: HashRange;
  source: NodeAddr;
  target: NodeAddr;
  dbs: MoveDb[];
}

export function planOf(rt: JobRuntime): MovePlan {
  const p = rt.step('plan').progress['plan'] as MovePlan | undefined;
  if (!p) throw new JobFailed(`job ${rt.id} has no recorded plan`);
  return p;
}

export function moveCtx(rt: JobRuntime, plan: MovePlan, catalog: Catalog): MoveCtx {
  return {
    rt,
    plan,
    ks: { name: plan.keyspace, keyType: plan.keyType, seed: BigInt(plan.seed) },
    range: { lo: BigInt(plan.lo), hi: BigInt(plan.hi) },
    source: nodeAddr(catalog, plan.source),
    target: nodeAddr(catalog, plan.target),
    dbs: plan.databases.map((d, index) => ({
      index,
      name: d.name,
      objects: replicationName(rt.id, index),
      tables: d.tables.map((t) => ({ schema: t.schema, name: t.name, keyColumn: t.keyColumn })),
      regclasses: d.tables.map(
        (t) => `"${t.schema.replace(/"/g, '""')}"."${t.name.replace(/"/g, '""')}"`,
      ),
      digestTables: d.tables.map((t) => ({
        schema: t.schema,
        name: t.name,
        keyColumn: t.keyColumn,
        columns: t.columns,
      })),
    })),
  };
}
