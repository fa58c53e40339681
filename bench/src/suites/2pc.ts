// Suite `2pc`: money transfers between two accounts through the router, with the accounts on two
// different nodes (two-phase commit) or on the same node (one plain COMMIT), and the same local
// transfer on one plain Postgres holding every account (issue 5's last check). After the runs the
// total money is checked: transfers neither lose nor make any.
import type pg from 'pg';
import { KeyType } from '@tessera/proto';
import { postgresSettings } from '../harness/machine.js';
import { roundOrder } from '../harness/stats.js';
import { measure } from '../pgbench/measure.js';
import { wants } from '../options.js';
import {
  summarize,
  type CheckResult,
  type Measurement,
  type Metric,
  type SuiteResult,
  type TargetInfo,
} from '../report/model.js';
import { addRatios } from '../report/ratios.js';
import type { Target } from '../targets/target.js';
import { progressLine } from './overhead.js';
import {
  insertPairs,
  makePairs,
  pairsDdl,
  transferScript,
  type Pair,
  type PairKind,
} from './transfers.js';
import {
  DATA_NODES,
  FEATURE_NOT_SUPPORTED,
  connectTo,
  describeError,
  startShardedCluster,
  type ShardedCluster,
} from './sharded-cluster.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_ACCOUNTS = 10_000;
const DEFAULT_CLIENTS = 8;
const START_BALANCE = 1000;
/** The lookup, BEGIN, two UPDATEs, COMMIT. */
const STATEMENTS_PER_TXN = 5;

const METRICS: Metric[] = [
  { key: 'tps', label: 'TPS', digits: 0 },
  { key: 'p50Ms', label: 'p50 ms', digits: 2 },
  { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  { key: 'vsLocal', label: 'x transfer-local', digits: 2 },
  { key: 'vsDirect', label: 'x direct-local', digits: 2 },
  { key: 'cpuUsPerStmt', label: 'router CPU µs/stmt', digits: 1 },
];

const ACCOUNTS_DDL = 'create table accounts (id bigint primary key, balance bigint not null)';

/**
 * Accounts 1..n with START_BALANCE: into `single` directly, and into the cluster through the
 * router as multi-row INSERTs that each hold one node's accounts (a one-node write, so loading
 * does not depend on two-phase commit). Returns the accounts of each data node.
 */
async function load(
  ctx: SuiteContext,
  c: ShardedCluster,
  n: number,
): Promise<{ byNode: bigint[][]; routerFailed?: string }> {
  const ids = Array.from({ length: n }, (_, i) => BigInt(i + 1));
  const owners = await c.ownersOf(ids);
  const byNode: bigint[][] = Array.from({ length: DATA_NODES }, () => []);
  ids.forEach((id, i) => byNode[owners[i]!]!.push(id));
  await c.single.query(
    `insert into accounts (id, balance) select g, ${START_BALANCE} from generate_series(1, ${n}) g`,
  );
  let routerFailed: string | undefined;
  if (c.router) {
    let client: pg.Client | undefined;
    try {
      client = await connectTo(c.router);
      for (const list of byNode) {
        for (let at = 0; at < list.length; at += 1000) {
          const values = list.slice(at, at + 1000).map((id) => `(${id}, ${START_BALANCE})`);
          await client.query(`insert into accounts (id, balance) values ${values.join(', ')}`);
        }
      }
      await client.query('analyze accounts').catch((e: unknown) => {
        ctx.log(
          `  ANALYZE through the router failed (${describeError(e).text}); ran it on each node`,
        );
        return Promise.all(c.data.map((d) => d.query('analyze accounts')));
      });
    } catch (e) {
      routerFailed = `loading the accounts through the router failed: ${describeError(e).text}`;
    } finally {
      await client?.end().catch(() => undefined);
    }
  }
  await c.single.query('analyze accounts');
  ctx.log(`  accounts per node: ${byNode.map((l) => l.length).join(', ')}`);
  return routerFailed === undefined ? { byNode } : { byNode, routerFailed };
}

/** One transfer of 0 between a cross pair through the router: undefined, or why it failed. */
async function probeCross(router: Target, pair: Pair): Promise<string | undefined> {
  let client: pg.Client | undefined;
  try {
    client = await connectTo(router);
    await client.query('begin');
    await client.query(`update accounts set balance = balance - 0 where id = ${pair[0]}`);
    await client.query(`update accounts set balance = balance + 0 where id = ${pair[1]}`);
    await client.query('commit');
    return undefined;
  } catch (e) {
    await client?.query('rollback').catch(() => undefined);
    const err = describeError(e);
    return err.code === FEATURE_NOT_SUPPORTED
      ? `two-phase commit is not available in the router: a transaction writing on two nodes is refused (${err.text})`
      : `a transaction writing on two nodes failed through the router: ${err.text}`;
  } finally {
    await client?.end().catch(() => undefined);
  }
}

/** Total money and accounts, through the router (and on the nodes directly) and on single. */
async function balanceChecks(
  c: ShardedCluster,
  router: Target | undefined,
  n: number,
): Promise<CheckResult[]> {
  const expected = BigInt(n) * BigInt(START_BALANCE);
  // Plain aggregates, no expressions over them, so the router can answer it across the nodes;
  // `pg` hands bigint and numeric back as text.
  const sumSql = 'select count(*) as n, sum(balance) as s from accounts';
  const checks: CheckResult[] = [];
  const say = (where: string, count: bigint, sum: bigint, extra = ''): CheckResult => ({
    name: `total balance ${where}`,
    ok: count === BigInt(n) && sum === expected,
    detail: `sum ${sum} over ${count} accounts, expected ${expected} over ${n}${extra}`,
  });
  if (router) {
    let nodesCount = 0n;
    let nodesSum = 0n;
    let prepared = 0;
    for (const d of c.data) {
      const [r] = await d.query<{ n: string; s: string | null }>(sumSql);
      nodesCount += BigInt(r!.n);
      nodesSum += BigInt(r!.s ?? 0);
      const [p] = await d.query<{ n: string }>('select count(*)::text as n from pg_prepared_xacts');
      prepared += Number(p!.n);
    }
    const onNodes = `; on the nodes directly: sum ${nodesSum} over ${nodesCount}; ${prepared} prepared transaction(s) left`;
    let client: pg.Client | undefined;
    try {
      client = await connectTo(router);
      const r = await client.query<{ n: string; s: string | null }>(sumSql);
      const viaRouter = say(
        'through the router',
        BigInt(r.rows[0]!.n),
        BigInt(r.rows[0]!.s ?? 0),
        onNodes,
      );
      // The router's answer and the nodes' own rows must both be right.
      viaRouter.ok &&= nodesCount === BigInt(n) && nodesSum === expected;
      checks.push(viaRouter);
    } catch (e) {
      checks.push({
        ...say('on the nodes (the router could not sum)', nodesCount, nodesSum),
        detail: `router: ${describeError(e).text}${onNodes}`,
      });
    } finally {
      await client?.end().catch(() => undefined);
    }
  }
  const [r] = await c.single.query<{ n: string; s: string | null }>(sumSql);
  checks.push(say('on single', BigInt(r!.n), BigInt(r!.s ?? 0)));
  return checks;
}

interface Workload {
  name: string;
  host: string;
  port: number;
  pid: number | undefined;
  script: string;
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const n = opts.accounts ?? DEFAULT_ACCOUNTS;
  const pairCount = n;
  const clientCounts = opts.clients ?? [DEFAULT_CLIENTS];
  const maxClients = Math.max(...clientCounts);
  const c = await startShardedCluster({
    name: 'bench-2pc',
    opts,
    keyspace: {
      name: 'accounts',
      keyType: KeyType.BIGINT,
      tables: [{ name: 'accounts', keyColumn: 'id' }],
    },
    tableDdl: [ACCOUNTS_DDL],
    maxClients,
    withRouter: wants(opts, 'transfer-cross') || wants(opts, 'transfer-local'),
    poolSize: maxClients + 2,
    log: ctx.log,
  });
  try {
    ctx.log(`loading ${n} accounts with balance ${START_BALANCE} each`);
    const { byNode, routerFailed } = await load(ctx, c, n);
    const routerInfo = c.infos.find((t) => t.name === 'router');
    let router = c.router;
    if (routerFailed !== undefined && routerInfo) {
      ctx.log(`  router SKIPPED: ${routerFailed}`);
      routerInfo.skipped = routerFailed;
      router = undefined;
    }
    // The pair tables are not in the catalog: global tables, on the home node, read there.
    const pairs = {
      local: makePairs(byNode, 'local', pairCount),
      cross: makePairs(byNode, 'cross', pairCount),
    };
    for (const server of [c.home, c.single]) {
      for (const kind of ['local', 'cross'] as const) {
        await server.query(pairsDdl(`${kind}_pairs`));
        await insertPairs(server, `${kind}_pairs`, pairs[kind]);
      }
    }
    const infos: TargetInfo[] = c.infos.filter((t) => t.name !== 'router' && t.name !== 'single');
    const refusedCross = router ? await probeCross(router, pairs.cross[0]!) : undefined;
    if (refusedCross) ctx.log(`  transfer-cross: ${refusedCross}`);
    const workloads: Workload[] = [];
    const add = (
      name: string,
      at: { host: string; port: number; pid?: number | undefined },
      kind: PairKind,
      detail: string,
    ) => {
      if (!wants(opts, name)) return;
      workloads.push({
        name,
        host: at.host,
        port: at.port,
        pid: at.pid,
        script: transferScript(`${kind}_pairs`, pairCount),
      });
      infos.push({ name, detail });
    };
    if (router) {
      add(
        'transfer-cross',
        router,
        'cross',
        `through the router, the two accounts on different nodes: two-phase commit; ${routerInfo?.detail ?? ''}`,
      );
      add(
        'transfer-local',
        router,
        'local',
        'through the router, the two accounts on the same node: one plain COMMIT',
      );
    } else if (routerInfo?.skipped) {
      for (const name of ['transfer-cross', 'transfer-local'])
        infos.push({ name, skipped: routerInfo.skipped });
    }
    add(
      'direct-local',
      c.single,
      'local',
      `the local transfer on one plain Postgres holding every account (${c.single.host}:${c.single.port})`,
    );

    const spec = (w: Workload, clients: number, durationS: number) => ({
      legs: [{ host: w.host, port: w.port, script: w.script, clients }],
      pids: w.pid === undefined ? [] : [w.pid],
      durationS,
      threads: opts.threads,
      statementsPerTxn: STATEMENTS_PER_TXN,
      protocol: 'prepared' as const,
    });
    const runnable = (w: Workload) => !(w.name === 'transfer-cross' && refusedCross);
    if (opts.warmupS > 0) {
      ctx.log(`warm-up: ${opts.warmupS} s per workload`);
      for (const w of workloads.filter(runnable)) await measure(spec(w, maxClients, opts.warmupS));
    }
    const measurements: Measurement[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(workloads, round - 1);
      ctx.log(`round ${round}/${opts.rounds}: ${order.map((w) => w.name).join(', ')}`);
      for (const clients of clientCounts) {
        const group = `transfer, ${clients} clients`;
        for (const w of order) {
          if (!runnable(w)) {
            if (round === 1) {
              measurements.push({ round, group, target: w.name, values: {}, error: refusedCross });
              ctx.log(progressLine(group, w.name, {}, 'refused (see above)'));
            }
            continue;
          }
          const r = await measure(spec(w, clients, opts.durationS));
          measurements.push({ round, group, target: w.name, values: r.values, error: r.error });
          ctx.log(progressLine(group, w.name, r.values, r.error));
        }
      }
    }
    addRatios(measurements, 'transfer-local', 'vsLocal');
    addRatios(measurements, 'direct-local', 'vsDirect');
    for (const m of measurements) {
      // Each ratio is read on the row it compares: cross vs local, and router-local vs direct.
      if (m.target !== 'transfer-cross') m.values['vsLocal'] = null;
      if (m.target !== 'transfer-local') m.values['vsDirect'] = null;
    }
    const checks = await balanceChecks(c, router, n);
    for (const check of checks)
      ctx.log(`  check ${check.ok ? 'OK' : 'FAILED'}: ${check.name}: ${check.detail}`);
    const notes = [
      `Data: accounts(id bigint primary key, balance bigint), ${n.toLocaleString('en-US')} accounts of ${START_BALANCE}, sharded by id (bigint hash) over ${DATA_NODES} data nodes with one range each, loaded through the router as one-node multi-row INSERTs.`,
      `Each transaction looks its two accounts up in a table of ${pairCount.toLocaleString('en-US')} precomputed pairs (local_pairs: both on one node; cross_pairs: always on two different nodes), on the home node through the router and on the same server for direct-local, then moves +-1 between them in BEGIN; UPDATE; UPDATE; COMMIT (-M prepared). The lookup is one of the ${STATEMENTS_PER_TXN} statements of every workload alike.`,
      'x transfer-local: transfer-cross TPS over transfer-local TPS (the cost of two-phase commit); x direct-local: transfer-local TPS through the router over the same script on one plain Postgres; both within each round, then the median.',
      "Router CPU counts the router process only: the coordinator's decision log (one durable write per cross-node commit) runs in its own process on the catalog server.",
      "Postgres runs with fsync=off and synchronous_commit=off (the test kit's settings): PREPARE TRANSACTION and the decision log cost no disk flush here, as they would on a durable server.",
    ];
    if (refusedCross) notes.unshift(`transfer-cross did not run: ${refusedCross}.`);
    return {
      suite: '2pc',
      title: `Tessera cross-node transfers: two-phase commit vs one node, ${DATA_NODES} nodes`,
      ...runStamp(ctx, startedAt),
      settings: {
        rounds: opts.rounds,
        durationS: opts.durationS,
        warmupS: opts.warmupS,
        accounts: n,
        pairs: pairCount,
        dataNodes: DATA_NODES,
        clients: clientCounts,
        pgbenchProtocol: 'prepared',
        pgbenchThreads: opts.threads,
        routerPoolMode: opts.routerPoolMode,
        postgres: await postgresSettings(c.single),
      },
      targets: infos,
      groups: clientCounts.map((k) => ({
        name: `transfer, ${k} clients`,
        description: `a transfer of +-1 between two accounts (looked up by a random index), ${STATEMENTS_PER_TXN} statements per transaction, ${k} clients`,
      })),
      metrics: METRICS,
      chartMetric: 'tps',
      measurements,
      summary: summarize(measurements, METRICS),
      notes,
      baseline: 'direct-local',
      checks,
    };
  } finally {
    await c.stop();
  }
}

export const twoPhase: Suite = {
  name: '2pc',
  summary:
    'transfers across nodes (two-phase commit) vs on one node through the router vs one Postgres',
  run,
};
