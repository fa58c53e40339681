// `tessera rebalance` and `tessera nodes drain`: measure the rows of every range (with an
// 8-bucket histogram of each, so a split can be placed), decide moves and splits
// (rebalance-plan.ts), record the plan, then run them as child jobs: one keyspace at a time per
// keyspace, a few keyspaces at once. Resumable: the plan and each child's id are durable.
import { keyHashSql } from '@tessera/keyspace';
import { NodeRole, NodeState, type Catalog } from '@tessera/proto';
import { JobFailed } from '../errors.js';
import type { JobKind, Outcome } from '../job/kind.js';
import { json, type JobRuntime } from '../job/runtime.js';
import { keyspaceInfo, nodeAddr, shardedTables } from '../move/catalog-view.js';
import { databasesOf } from '../move/facts.js';
import { ident, qualified } from '../nodes/sessions.js';
import { tableExists } from '../pg/rows.js';
import { moveChild, runChild } from './children.js';
import { planRebalance, type Action, type RangeLoad } from './rebalance-plan.js';

const BUCKETS = 8;

export interface RebalanceSpec {
  /** Only these keyspaces (all when absent). */
  keyspaces?: string[];
  tolerance?: number;
  /** Child jobs at once (different keyspaces). */
  parallel?: number;
  planOnly?: boolean;
}

export interface DrainSpec {
  node: string;
  parallel?: number;
}

/** Rows of every range of the keyspaces, with histograms, read on each range's owner. */
export async function measure(
  rt: JobRuntime,
  catalog: Catalog,
  keyspaces: string[],
): Promise<RangeLoad[]> {
  const out: RangeLoad[] = [];
  const dbCache = new Map<string, string[]>();
  for (const name of keyspaces) {
    const ks = keyspaceInfo(catalog, name);
    const tables = shardedTables(catalog, name);
    for (const r of catalog.ranges.filter((x) => x.keyspace === name)) {
      rt.checkpoint();
      const node = nodeAddr(catalog, r.owner);
      const buckets = Array.from({ length: BUCKETS }, () => 0);
      if (!dbCache.has(r.owner)) dbCache.set(r.owner, await databasesOf(rt, node));
      for (const db of dbCache.get(r.owner)!) {
        await rt.nodes.with(node, db, async (c) => {
          for (const t of tables) {
            if (!(await tableExists(c, t))) continue;
            const hash = keyHashSql(ident(t.keyColumn), ks.keyType, ks.seed);
            const { rows } = await c.query<{ b: number; n: string }>(
              `select least(width_bucket(${hash}::numeric, $1::numeric, $2::numeric + 1, ${BUCKETS}), ${BUCKETS}) as b, count(*)::text as n
                 from ${qualified(t.schema, t.name)} where ${hash} between $1::int8 and $2::int8 group by 1`,
              [r.lo.toString(), r.hi.toString()],
            );
            for (const row of rows) buckets[row.b - 1]! += Number(row.n);
          }
        });
      }
      out.push({
        keyspace: name,
        lo: r.lo,
        hi: r.hi,
        owner: r.owner,
        rows: buckets.reduce((a, b) => a + b, 0),
        buckets,
      });
    }
  }
  return out;
}

interface StoredAction {
  kind: 'split' | 'move';
  keyspace: string;
  lo: string;
  at?: string;
  from?: string;
  to?: string;
  rows: number;
}

const store = (a: Action): StoredAction =>
  a.kind === 'split'
    ? {
        kind: 'split',
        keyspace: a.keyspace,
        lo: a.lo.toString(),
        at: a.at.toString(),
        rows: a.upperRows,
      }
    : {
        kind: 'move',
        keyspace: a.keyspace,
        lo: a.lo.toString(),
        from: a.from,
        to: a.to,
        rows: a.rows,
      };

async function runActions(
  rt: JobRuntime,
  actions: StoredAction[],
  parallel: number,
): Promise<void> {
  // In order within a keyspace; keyspaces side by side, at most `parallel` children at once.
  const byKeyspace = new Map<string, { a: StoredAction; i: number }[]>();
  actions.forEach((a, i) =>
    byKeyspace.set(a.keyspace, [...(byKeyspace.get(a.keyspace) ?? []), { a, i }]),
  );
  const queues = [...byKeyspace.values()];
  const worker = async () => {
    for (;;) {
      const q = queues.shift();
      if (!q) return;
      for (const { a, i } of q) {
        const req =
          a.kind === 'split'
            ? {
                kind: 'split',
                spec: { keyspace: a.keyspace, lo: a.lo, at: a.at },
                steps: ['split'],
              }
            : moveChild({ keyspace: a.keyspace, lo: a.lo, to: a.to! });
        await runChild(
          rt,
          'run',
          String(i),
          req,
          `${a.kind} of ${a.keyspace}:${a.lo}${a.to ? ` to ${a.to}` : ''}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
}

function activeDataNodes(catalog: Catalog, except?: string): string[] {
  return catalog.nodes
    .filter((n) => n.role === NodeRole.DATA && n.state === NodeState.ACTIVE && n.name !== except)
    .map((n) => n.name);
}

async function plan(
  rt: JobRuntime,
  drain: string | undefined,
  spec: RebalanceSpec,
): Promise<StoredAction[]> {
  const catalog = await rt.catalog();
  const keyspaces = spec.keyspaces ?? catalog.keyspaces.map((k) => k.name);
  const nodes = activeDataNodes(catalog, drain);
  if (nodes.length === 0)
    throw new JobFailed('there is no other active data node to place ranges on');
  // Ranges on home are left where they are (home also holds global tables).
  const home = catalog.nodes.find((n) => n.role === NodeRole.HOME)?.name;
  const loads = (await measure(rt, catalog, keyspaces)).filter((r) => r.owner !== home);
  const p = planRebalance(loads, nodes, {
    tolerance: spec.tolerance ?? 0.1,
    drainOnly: drain !== undefined,
  });
  const actions = p.actions.map(store);
  await rt.done('plan', { actions, before: p.before, after: p.after, unbalanced: p.unbalanced });
  rt.log.info({ actions: actions.length, unbalanced: p.unbalanced }, 'rebalance planned');
  return actions;
}

async function runPlanned(
  rt: JobRuntime,
  drain: string | undefined,
  spec: RebalanceSpec,
): Promise<Outcome> {
  if (!rt.isDone('plan')) {
    await rt.phase('planning', 'plan');
    await plan(rt, drain, spec);
  }
  const planned = rt.step('plan').progress as {
    actions: StoredAction[];
    before: unknown;
    after: unknown;
    unbalanced: string[];
  };
  if (spec.planOnly) return { state: 'done', result: planned };
  if (!rt.isDone('run')) {
    await rt.phase('moving', 'run');
    await runActions(rt, planned.actions, spec.parallel ?? 2);
    await rt.done('run', rt.step('run').progress);
  }
  return { state: 'done', result: JSON.parse(json({ ...planned, done: planned.actions.length })) };
}

export const rebalanceKind: JobKind = {
  kind: 'rebalance',
  steps: () => ['plan', 'run'],
  run: (rt) => runPlanned(rt, undefined, rt.spec<RebalanceSpec>()),
  async undo() {},
};

export const drainKind: JobKind = {
  kind: 'drain',
  steps: () => ['mark', 'plan', 'run'],
  async run(rt) {
    const spec = rt.spec<DrainSpec>();
    if (!rt.isDone('mark')) {
      await rt.phase('marking', 'mark');
      const catalog = await rt.catalog();
      const n = catalog.nodes.find((x) => x.name === spec.node);
      if (!n) throw new JobFailed(`no node named ${spec.node}`);
      if (n.role === NodeRole.HOME)
        throw new JobFailed(`node ${spec.node} is the home node and cannot be drained`);
      await rt.call(() =>
        rt.coord.jobs.changeNode({
          jobId: rt.id,
          moverId: rt.moverId,
          name: spec.node,
          state: NodeState.DRAINING,
        }),
      );
      await rt.done('mark');
    }
    const out = await runPlanned(rt, spec.node, { parallel: spec.parallel ?? 2 });
    const left = (await rt.catalog()).ranges.filter((r) => r.owner === spec.node);
    if (left.length > 0)
      throw new JobFailed(
        `node ${spec.node} still owns ${left.length} range(s) after the drain's moves`,
      );
    return out;
  },
  // A cancelled drain leaves the node draining (it takes no new ranges); `tessera nodes remove`
  // refuses while it owns any.
  async undo() {},
};
