// Suite `scaleout`: the same pgbench workloads over N nodes, without the router (one pgbench per
// node, on the branches that node owns, all at once; TPS summed) and through K router processes
// (pgbench over every branch, spread across the routers). The catalog lives on an extra home
// server that owns no data, so N counts data nodes on both sides.
import { startPostgresCluster, type PgServer } from '@tessera/testkit';
import { postgresSettings } from '../harness/machine.js';
import { roundOrder } from '../harness/stats.js';
import { loadBranches } from '../pgbench/load.js';
import { measure, type Leg } from '../pgbench/measure.js';
import { WORKLOADS, workloadScript, type WorkloadKind } from '../pgbench/scripts.js';
import { wants } from '../options.js';
import {
  summarize,
  type Measurement,
  type Metric,
  type SuiteResult,
  type TargetInfo,
} from '../report/model.js';
import { addRatios } from '../report/ratios.js';
import { ownerOf, startBenchCatalog, type BenchCatalog } from '../targets/catalog.js';
import { startRouter } from '../targets/router.js';
import type { Target } from '../targets/target.js';
import { ROUTER_POOL_SIZE, progressLine } from './overhead.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_BRANCHES_PER_NODE = 10;
const DEFAULT_CLIENTS_PER_NODE = 16;
const KINDS: readonly WorkloadKind[] = ['select', 'write', 'tpcb-branch'];

const METRICS: Metric[] = [
  { key: 'tps', label: 'TPS', digits: 0 },
  { key: 'p50Ms', label: 'p50 ms', digits: 2 },
  { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  { key: 'vsDirect', label: 'x direct', digits: 2 },
  { key: 'cpuUsPerStmt', label: 'router CPU µs/stmt', digits: 1 },
];

/** A way to drive the cluster: pgbench legs and the processes whose CPU is the proxy's. */
interface Driver {
  name: string;
  legs(kind: WorkloadKind): Leg[];
  pids: number[];
}

/**
 * Picks `perNode` branches for every node, in bid order, by the owner of each bid's hash: what
 * the router will do with them, so the no-router side hits the same rows on the same nodes.
 */
async function assignBranches(
  home: PgServer,
  nodes: number,
  perNode: number,
  catalog: BenchCatalog | undefined,
): Promise<number[][]> {
  const out: number[][] = Array.from({ length: nodes }, () => []);
  if (!catalog) {
    // No catalog: any even split serves the no-router side.
    for (let b = 1; b <= nodes * perNode; b++) out[(b - 1) % nodes]!.push(b);
    return out;
  }
  const limit = nodes * perNode * 50;
  const rows = await home.query(
    'select b, hashint4extended(b, $2)::text as h from generate_series(1, $1) b',
    [limit, catalog.seed.toString()],
  );
  for (const r of rows) {
    const h = BigInt(String(r['h']));
    const owner = ownerOf(catalog.ranges, h);
    const i = owner === undefined ? -1 : Number(/^data(\d+)$/.exec(owner)?.[1] ?? 0) - 1;
    if (i >= 0 && i < nodes && out[i]!.length < perNode) out[i]!.push(Number(r['b']));
    if (out.every((l) => l.length >= perNode)) break;
  }
  if (out.some((l) => l.length < perNode))
    throw new Error('could not find enough branches for every node');
  return out;
}

function split(total: number, parts: number): number[] {
  return Array.from(
    { length: parts },
    (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0),
  );
}

async function runNodes(
  ctx: SuiteContext,
  n: number,
  measurements: Measurement[],
  infos: TargetInfo[],
): Promise<Record<string, string>> {
  const { opts } = ctx;
  const perNode = opts.scale ?? DEFAULT_BRANCHES_PER_NODE;
  const clients = opts.clients?.[0] ?? DEFAULT_CLIENTS_PER_NODE;
  const maxRouters = Math.max(...opts.routers);
  const withRouter = wants(opts, 'router');
  const maxConnections = Math.max(300, maxRouters * n * clients + clients + 50);
  ctx.log(`\n${n} node(s): starting ${n + 1} Postgres servers (one holds the catalog only)`);
  const servers = await startPostgresCluster(n + 1, {
    name: 'bench-scaleout',
    settings: { max_connections: String(maxConnections) },
  });
  const [home, ...data] = servers as [PgServer, ...PgServer[]];
  let catalog: BenchCatalog | undefined;
  const routers: Target[] = [];
  try {
    if (withRouter) {
      try {
        catalog = await startBenchCatalog({ home, data });
      } catch (e) {
        const reason = `no coordinator: ${e instanceof Error ? e.message : String(e)}`;
        infos.push({ name: `router (${n} nodes)`, skipped: reason });
        ctx.log(`  router side SKIPPED: ${reason}`);
      }
    }
    const bids = await assignBranches(home, n, perNode, catalog);
    ctx.log(`  loading ${perNode} branches per node`);
    await Promise.all(data.map((node, i) => loadBranches(node, bids[i]!)));
    const allBids = bids.flat().sort((a, b) => a - b);

    if (catalog) {
      for (let k = 0; k < maxRouters; k++) {
        const s = await startRouter({
          name: `router ${k + 1}`,
          coordinator: catalog.address,
          poolSize: opts.routerPoolSize ?? ROUTER_POOL_SIZE,
          poolMode: opts.routerPoolMode,
          workers: opts.routerWorkers,
          pipelineDepth: opts.routerPipelineDepth,
          maxClients: n * clients + 20,
          startTimeoutMs: opts.routerStartTimeoutMs,
        });
        if (!s.ok) {
          infos.push({ name: `router (${n} nodes)`, skipped: s.reason });
          ctx.log(`  router side SKIPPED: ${s.reason}`);
          break;
        }
        routers.push(s.target);
      }
    }
    const drivers: Driver[] = [];
    if (wants(opts, 'direct')) {
      drivers.push({
        name: 'direct',
        pids: [],
        legs: (kind) =>
          data.map((node, i) => ({
            host: node.host,
            port: node.port,
            clients,
            script: workloadScript(kind, { list: bids[i]! }),
          })),
      });
    }
    if (routers.length === maxRouters) {
      for (const k of opts.routers) {
        const use = routers.slice(0, k);
        drivers.push({
          name: `router x${k}`,
          pids: use.map((r) => r.pid!),
          legs: (kind) =>
            split(n * clients, k).map((c, i) => ({
              host: use[i]!.host,
              port: use[i]!.port,
              clients: c,
              script: workloadScript(kind, { list: allBids }),
            })),
        });
      }
      if (n === opts.nodes[0]) infos.push({ name: 'router', detail: routers[0]!.detail });
    }
    if (n === opts.nodes[0] && drivers.some((d) => d.name === 'direct')) {
      infos.push({
        name: 'direct',
        detail: 'one pgbench per node, on the branches it owns, all at once (TPS summed)',
      });
    }
    if (opts.warmupS > 0) {
      for (const d of drivers) {
        await measure({
          legs: d.legs('tpcb-branch'),
          pids: d.pids,
          durationS: opts.warmupS,
          threads: opts.threads,
          statementsPerTxn: 7,
        });
      }
    }
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(drivers, round - 1);
      ctx.log(`  round ${round}/${opts.rounds}: ${order.map((d) => d.name).join(', ')}`);
      for (const kind of KINDS) {
        const group = `${kind}, ${n} node${n === 1 ? '' : 's'}`;
        for (const d of order) {
          const r = await measure({
            legs: d.legs(kind),
            pids: d.pids,
            durationS: opts.durationS,
            threads: opts.threads,
            statementsPerTxn: WORKLOADS[kind].statementsPerTxn,
          });
          measurements.push({ round, group, target: d.name, values: r.values, error: r.error });
          ctx.log(progressLine(group, d.name, r.values, r.error));
        }
      }
    }
    return await postgresSettings(data[0]!);
  } finally {
    for (const r of routers) await r.stop().catch(() => undefined);
    await catalog?.stop().catch(() => undefined);
    await Promise.all(servers.map((s) => s.dispose()));
  }
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const measurements: Measurement[] = [];
  const infos: TargetInfo[] = [];
  let pgSettings: Record<string, string> = {};
  for (const n of opts.nodes) pgSettings = await runNodes(ctx, n, measurements, infos);
  addRatios(measurements, 'direct', 'vsDirect');
  const clients = opts.clients?.[0] ?? DEFAULT_CLIENTS_PER_NODE;
  return {
    suite: 'scaleout',
    title: 'Tessera scale-out: N nodes, with and without the router',
    ...runStamp(ctx, startedAt),
    settings: {
      rounds: opts.rounds,
      durationS: opts.durationS,
      warmupS: opts.warmupS,
      nodes: opts.nodes,
      routers: opts.routers,
      clientsPerNode: clients,
      branchesPerNode: opts.scale ?? DEFAULT_BRANCHES_PER_NODE,
      pgbenchThreads: opts.threads,
      routerPoolMode: opts.routerPoolMode,
      routerPoolSize: opts.routerPoolSize ?? ROUTER_POOL_SIZE,
      ...(opts.routerPipelineDepth !== undefined
        ? { routerPipelineDepth: opts.routerPipelineDepth }
        : {}),
      postgres: pgSettings,
    },
    targets: infos,
    groups: opts.nodes.flatMap((n) =>
      KINDS.map((k) => ({
        name: `${k}, ${n} node${n === 1 ? '' : 's'}`,
        description: `${WORKLOADS[k].description}; ${clients} clients per node in total`,
      })),
    ),
    metrics: METRICS,
    chartMetric: 'tps',
    measurements,
    summary: summarize(measurements, METRICS),
    notes: [
      'Every server, router and pgbench shares this one machine: on a small machine more nodes compete for the same cores, so this shows the router cost at each size rather than real scale-out.',
      'router xK: K router processes, the clients split evenly across them; CPU is the sum over the K processes.',
    ],
  };
}

export const scaleout: Suite = {
  name: 'scaleout',
  summary: 'N nodes (--nodes), pgbench straight at each node vs through K routers (--routers)',
  run,
};
