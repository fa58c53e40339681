// Suite `scatter`: reads whose rows live on every node, through the router over 3 data nodes, vs
// the same queries on one plain Postgres holding all the rows (issue 4's last check). Besides TPS
// and latency it samples the router's RSS every 100 ms during each run: a router that streams
// keeps its peak flat however many rows the nodes hold; one that collects rows grows with them.
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { postgresSettings } from '../harness/machine.js';
import { tempDir } from '../harness/processes.js';
import { psqlCommand } from '../harness/psql.js';
import { sampleRss } from '../harness/rss-sampler.js';
import { roundOrder } from '../harness/stats.js';
import { rssBytes } from '../harness/proc-stats.js';
import { measure } from '../pgbench/measure.js';
import { wants } from '../options.js';
import {
  summarize,
  type CheckResult,
  type Measurement,
  type Metric,
  type SuiteResult,
} from '../report/model.js';
import { addRatios } from '../report/ratios.js';
import { KeyType } from '@tessera/proto';
import type { PgServer } from '@tessera/testkit';
import type { Target } from '../targets/target.js';
import { directTarget } from '../targets/direct.js';
import { progressLine } from './overhead.js';
import {
  DATA_NODES,
  FEATURE_NOT_SUPPORTED,
  connectTo,
  describeError,
  startShardedCluster,
  type ShardedCluster,
} from './sharded-cluster.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const DEFAULT_ROWS = 1_000_000;
const DEFAULT_CLIENTS = 4;
const GROUPS = 1_000;
const MB = 1024 * 1024;

const METRICS: Metric[] = [
  { key: 'tps', label: 'TPS', digits: 1 },
  { key: 'p50Ms', label: 'p50 ms', digits: 2 },
  { key: 'p99Ms', label: 'p99 ms', digits: 2 },
  { key: 'vsSingle', label: 'x single', digits: 2 },
  { key: 'rssIdleMB', label: 'router RSS idle MB', digits: 1 },
  { key: 'rssPeakMB', label: 'router RSS peak MB', digits: 1 },
  { key: 'rssEndMB', label: 'router RSS end MB', digits: 1 },
  { key: 'cpuUsPerStmt', label: 'router CPU µs/query', digits: 0 },
];

const TABLE_DDL =
  'create table items (id bigint primary key, grp int not null, v numeric(12,2) not null, label text not null)';

interface Query {
  name: string;
  description: string;
  /** The pgbench script (one statement, maybe after a \set). */
  script: string;
  /** The same statement with literals, for the one-off answer check. */
  probe: string;
}

function queries(rows: number): Query[] {
  const offset = Math.floor(rows / 10);
  const plain = (name: string, sql: string, description: string): Query => ({
    name,
    description,
    script: `${sql};\n`,
    probe: sql,
  });
  return [
    plain(
      'order-limit',
      'select id, v from items order by v desc, id limit 10',
      "issue 4's query: the 10 largest v of every row; each node sorts its share and sends 10, the router merges",
    ),
    plain(
      'order-offset',
      `select id, v from items order by v desc, id limit 10 offset ${offset}`,
      `the same with OFFSET ${offset}: every node sends up to ${offset + 10} sorted rows and the router merges and skips them, so it must stream`,
    ),
    plain(
      'count-sum',
      'select count(*), sum(v) from items',
      'count and sum over every row: partial aggregates on the nodes, final at the router',
    ),
    plain(
      'group-avg',
      'select grp, count(*), avg(v) from items group by grp order by grp limit 20',
      `${GROUPS} groups, avg as sum and count per node, merged at the router, first 20 by grp`,
    ),
    {
      name: 'point',
      description:
        'one row by its key (\\set id random(1, rows)): a one-node read, for contrast with the scatters',
      script: `\\set id random(1, ${rows})\nselect * from items where id = :id;\n`,
      probe: 'select * from items where id = 1',
    },
  ];
}

/**
 * Writes rows 1..n as CSV: grp cycles over GROUPS, v is a fixed scramble of id (so the top of
 * ORDER BY v is spread over every node), all deterministic so every run loads the same data.
 */
function writeItemsCsv(file: string, n: number): number {
  const fd = openSync(file, 'w');
  try {
    const chunk: string[] = [];
    for (let id = 1; id <= n; id++) {
      const cents = (id * 2_654_435_761) % 100_000_000; // < 2^53 for id below 3 million
      const v = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
      chunk.push(`${id},${id % GROUPS},${v},item ${id}\n`);
      if (chunk.length === 10_000) writeSync(fd, chunk.splice(0).join(''));
    }
    if (chunk.length > 0) writeSync(fd, chunk.join(''));
  } finally {
    closeSync(fd);
  }
  return statSync(file).size;
}

/** Loads the CSV into `single` and, through the router, into the data nodes; then ANALYZE. */
async function load(
  ctx: SuiteContext,
  c: ShardedCluster,
  file: string,
): Promise<{ routerLoad?: string }> {
  const copy = `\\copy items from '${file}' csv`;
  const routerLoad = c.router
    ? psqlCommand(c.router, copy).then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      )
    : Promise.resolve(undefined);
  await psqlCommand(c.single, copy);
  await c.single.query('analyze items');
  const failed = await routerLoad;
  if (failed !== undefined) return { routerLoad: failed };
  if (c.router) {
    const client = await connectTo(c.router);
    try {
      await client.query('analyze items');
    } catch (e) {
      // Statistics matter to the nodes' plans, not to the router: gather them directly instead.
      ctx.log(
        `  ANALYZE through the router failed (${describeError(e).text}); ran it on each node`,
      );
      await Promise.all(c.data.map((d) => d.query('analyze items')));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return {};
}

/** Each query once through the router and once on single: refused, failed, or same answer. */
async function probe(
  routerAt: Target,
  single: PgServer,
  qs: readonly Query[],
): Promise<{ refused: Map<string, string>; check: CheckResult }> {
  const refused = new Map<string, string>();
  const same: string[] = [];
  const differ: string[] = [];
  const router = await connectTo(routerAt);
  try {
    for (const q of qs) {
      const expected = JSON.stringify((await single.query(q.probe)).map((r) => Object.values(r)));
      try {
        const got = await router.query(q.probe);
        if (
          JSON.stringify(got.rows.map((r: Record<string, unknown>) => Object.values(r))) ===
          expected
        )
          same.push(q.name);
        else differ.push(q.name);
      } catch (e) {
        const err = describeError(e);
        refused.set(
          q.name,
          err.code === FEATURE_NOT_SUPPORTED
            ? `refused by the router (${err.text})`
            : `failed: ${err.text}`,
        );
      }
    }
  } finally {
    await router.end().catch(() => undefined);
  }
  const parts = [
    same.length > 0 ? `same answer as single: ${same.join(', ')}` : '',
    differ.length > 0 ? `DIFFERENT answer: ${differ.join(', ')}` : '',
    refused.size > 0 ? `not answered: ${[...refused.keys()].join(', ')}` : '',
  ].filter(Boolean);
  return {
    refused,
    check: {
      name: 'router answers as single does',
      ok: differ.length === 0,
      detail: parts.join('; '),
    },
  };
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const rows = opts.rows ?? DEFAULT_ROWS;
  const clientCounts = opts.clients ?? [DEFAULT_CLIENTS];
  const maxClients = Math.max(...clientCounts);
  const qs = queries(rows);
  const c = await startShardedCluster({
    name: 'bench-scatter',
    opts,
    keyspace: {
      name: 'items',
      keyType: KeyType.BIGINT,
      tables: [{ name: 'items', keyColumn: 'id' }],
    },
    tableDdl: [TABLE_DDL],
    maxClients,
    withRouter: wants(opts, 'router'),
    poolSize: maxClients + 2,
    log: ctx.log,
  });
  const tmp = tempDir('scatter');
  try {
    const infos = c.infos;
    const notes: string[] = [];
    const checks: CheckResult[] = [];
    const file = join(tmp.path, 'items.csv');
    const csvBytes = writeItemsCsv(file, rows);
    const rssAtStart = c.router?.pid !== undefined ? rssBytes(c.router.pid) : undefined;
    ctx.log(
      `loading ${rows.toLocaleString('en-US')} rows (${(csvBytes / MB).toFixed(1)} MB of CSV) with \\copy into single${c.router ? ' and through the router' : ''}`,
    );
    const loaded = await load(ctx, c, file);
    let router = c.router;
    const skipRouter = (reason: string) => {
      ctx.log(`  router SKIPPED: ${reason}`);
      const info = infos.find((t) => t.name === 'router');
      if (info) info.skipped = reason;
      router = undefined;
    };
    if (loaded.routerLoad !== undefined)
      skipRouter(`COPY through the router failed: ${loaded.routerLoad}`);
    const targets: Target[] = [];
    let refused = new Map<string, string>();
    if (router) {
      const rssAfterLoad = rssBytes(router.pid!);
      const line = `router RSS ${(rssAtStart! / MB).toFixed(1)} MB at start, ${(rssAfterLoad / MB).toFixed(1)} MB after loading ${rows.toLocaleString('en-US')} rows through it`;
      ctx.log(`  ${line}`);
      notes.push(`${line}.`);
      try {
        const p = await probe(router, c.single, qs);
        refused = p.refused;
        checks.push(p.check);
        ctx.log(`  check: ${p.check.detail}`);
        for (const [q, why] of refused) ctx.log(`  ${q}: ${why}`);
        targets.push(router);
      } catch (e) {
        skipRouter(`the router did not take queries: ${describeError(e).text}`);
      }
    }
    if (wants(opts, 'single')) targets.push(directTarget(c.single.host, c.single.port, 'single'));

    const spec = (t: Target, q: Query, clients: number, durationS: number) => ({
      legs: [{ host: t.host, port: t.port, script: q.script, clients }],
      pids: t.pid === undefined ? [] : [t.pid],
      durationS,
      threads: opts.threads,
      statementsPerTxn: 1,
      protocol: 'extended' as const,
    });
    if (opts.warmupS > 0) {
      ctx.log(`warm-up: ${opts.warmupS} s per target`);
      for (const t of targets) {
        if (!refused.has('count-sum')) await measure(spec(t, qs[2]!, maxClients, opts.warmupS));
      }
    }
    const measurements: Measurement[] = [];
    const groupName = (q: Query, clients: number) =>
      clientCounts.length > 1 ? `${q.name}, ${clients} clients` : q.name;
    for (let round = 1; round <= opts.rounds; round++) {
      const order = roundOrder(targets, round - 1);
      ctx.log(`round ${round}/${opts.rounds}: ${order.map((t) => t.name).join(', ')}`);
      for (const clients of clientCounts) {
        for (const q of qs) {
          const group = groupName(q, clients);
          for (const t of order) {
            const why = t === router ? refused.get(q.name) : undefined;
            if (why !== undefined) {
              if (round === 1) {
                measurements.push({ round, group, target: t.name, values: {}, error: why });
                ctx.log(progressLine(group, t.name, {}, why));
              }
              continue;
            }
            const sampler = t.pid === undefined ? undefined : sampleRss(t.pid);
            const r = await measure(spec(t, q, clients, opts.durationS));
            const rss = sampler?.stop();
            const values = { ...r.values };
            if (rss) {
              values['rssIdleMB'] = rss.idleBytes / MB;
              values['rssPeakMB'] = rss.peakBytes / MB;
              values['rssEndMB'] = rss.endBytes / MB;
            }
            measurements.push({ round, group, target: t.name, values, error: r.error });
            const mem = rss
              ? `  RSS idle ${(rss.idleBytes / MB).toFixed(1)} MB, peak ${(rss.peakBytes / MB).toFixed(1)} MB`
              : '';
            ctx.log(`${progressLine(group, t.name, r.values, r.error)}${mem}`);
          }
        }
      }
    }
    addRatios(measurements, 'single', 'vsSingle');
    const summary = summarize(measurements, METRICS);
    for (const row of summary) {
      if (row.target !== 'router' || !row.group.startsWith('order-limit')) continue;
      const idle = row.values['rssIdleMB'];
      const peak = row.values['rssPeakMB'];
      if (typeof idle !== 'number' || typeof peak !== 'number') continue;
      const line = `${row.group}: router RSS ${idle.toFixed(1)} MB idle, ${peak.toFixed(1)} MB at its peak (${peak - idle >= 0 ? '+' : ''}${(peak - idle).toFixed(1)} MB) while the nodes hold ${rows.toLocaleString('en-US')} rows (${(csvBytes / MB).toFixed(1)} MB as CSV)`;
      ctx.log(line);
      notes.unshift(`${line}.`);
    }
    notes.push(
      `Data: items(id bigint primary key, grp int, v numeric(12,2), label text), ${rows.toLocaleString('en-US')} rows, sharded by id (bigint hash) over ${DATA_NODES} data nodes with one range each; loaded with psql \\copy (CSV) through the router, which splits COPY by row owner, and into single; then ANALYZE.`,
      'Router RSS is VmRSS of its process tree from /proc/<pid>/status: idle just before each run, peak over samples every 100 ms during it, end just after; medians over rounds.',
      'pgbench -M extended: every execution is planned afresh by the router and by Postgres, as a client without prepared statements would have it.',
      'Every server, the router and pgbench share this machine: the 3 nodes compete with each other for its cores, so this shows what a scatter costs, not how it scales.',
    );
    return {
      suite: 'scatter',
      title: `Tessera scatter reads: router over ${DATA_NODES} nodes vs one Postgres, ${rows.toLocaleString('en-US')} rows`,
      ...runStamp(ctx, startedAt),
      settings: {
        rounds: opts.rounds,
        durationS: opts.durationS,
        warmupS: opts.warmupS,
        rows,
        csvBytes,
        dataNodes: DATA_NODES,
        clients: clientCounts,
        pgbenchProtocol: 'extended',
        pgbenchThreads: opts.threads,
        routerPoolMode: opts.routerPoolMode,
        postgres: await postgresSettings(c.single),
      },
      targets: infos,
      groups: clientCounts.flatMap((n) =>
        qs.map((q) => ({
          name: groupName(q, n),
          description: `\`${q.probe}\`: ${q.description}; ${n} clients`,
        })),
      ),
      metrics: METRICS,
      chartMetric: 'tps',
      measurements,
      summary,
      notes,
      baseline: 'single',
      checks,
    };
  } finally {
    tmp.dispose();
    await c.stop();
  }
}

export const scatter: Suite = {
  name: 'scatter',
  summary:
    'reads over every node (ORDER BY/LIMIT, aggregates, GROUP BY) through the router vs one Postgres; router RSS',
  run,
};
