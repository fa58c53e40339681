// Suite `idle`: resident memory of each proxy before and while it holds N idle, logged-in client
// connections (the issue's target: 1,000 idle clients, router RSS at most 150 MB). RSS is VmRSS
// from /proc/<pid>/status, summed over the proxy's process tree.
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgres } from '@tessera/testkit';
import { openIdleSessions } from '../harness/idle-clients.js';
import { postgresSettings } from '../harness/machine.js';
import { rssBytes } from '../harness/proc-stats.js';
import { roundOrder } from '../harness/stats.js';
import { summarize, type Measurement, type Metric, type SuiteResult } from '../report/model.js';
import { startOneNodeTargets } from './pgbench-targets.js';
import { runStamp, type Suite, type SuiteContext } from './suite.js';

const TARGETS = ['router', 'pgbouncer', 'passthrough'] as const;
const SETTLE_MS = 1_000;
const MB = 1024 * 1024;

const METRICS: Metric[] = [
  { key: 'rssBeforeMB', label: 'RSS before MB', digits: 1 },
  { key: 'rssAfterMB', label: 'RSS with clients MB', digits: 1 },
  { key: 'kbPerConnection', label: 'KB per connection', digits: 1 },
];

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const { opts } = ctx;
  const startedAt = new Date();
  const n = opts.connections;
  const group = `${n} idle connections`;
  // The pass-through proxy holds one Postgres backend per client.
  const maxConnections = Math.max(300, n + 100);
  ctx.log(`starting Postgres (max_connections=${maxConnections})`);
  const pg = await startPostgres({
    name: 'bench-idle',
    settings: { max_connections: String(maxConnections) },
  });
  try {
    const pgSettings = await postgresSettings(pg);
    const t = await startOneNodeTargets({
      opts,
      pg,
      names: TARGETS,
      maxClients: n,
      poolSize: 20,
      log: ctx.log,
    });
    try {
      const measurements: Measurement[] = [];
      for (let round = 1; round <= opts.rounds; round++) {
        const order = roundOrder(t.running, round - 1);
        ctx.log(`round ${round}/${opts.rounds}: ${order.map((x) => x.name).join(', ')}`);
        for (const target of order) {
          const pid = target.pid!;
          const before = rssBytes(pid);
          let values: Record<string, number | null> = { rssBeforeMB: before / MB };
          let error: string | undefined;
          try {
            const sessions = await openIdleSessions(target.host, target.port, n);
            await sleep(SETTLE_MS);
            const after = rssBytes(pid);
            values = {
              rssBeforeMB: before / MB,
              rssAfterMB: after / MB,
              kbPerConnection: (after - before) / 1024 / n,
            };
            await sessions.close();
            await sleep(SETTLE_MS);
            values['rssAfterCloseMB'] = rssBytes(pid) / MB;
          } catch (e) {
            error = e instanceof Error ? e.message : String(e);
          }
          measurements.push({ round, group, target: target.name, values, error });
          const f = (x: number | null | undefined) => (typeof x === 'number' ? x.toFixed(1) : '-');
          ctx.log(
            `  ${target.name.padEnd(12)} RSS ${f(values['rssBeforeMB'])} MB -> ${f(values['rssAfterMB'])} MB with ${n} clients` +
              ` (${f(values['kbPerConnection'])} KB each)${error ? `  FAILED: ${error}` : ''}`,
          );
        }
      }
      return {
        suite: 'idle',
        title: `Tessera idle connections: proxy memory with ${n} idle clients`,
        ...runStamp(ctx, startedAt, t.pgbouncerBin),
        settings: {
          rounds: opts.rounds,
          connections: n,
          routerPoolMode: opts.routerPoolMode,
          postgres: pgSettings,
        },
        targets: t.infos,
        groups: [
          {
            name: group,
            description: `${n} client connections, each logged in (trust) up to ReadyForQuery and then idle; RSS read ${SETTLE_MS} ms after the last login`,
          },
        ],
        metrics: METRICS,
        chartMetric: 'rssAfterMB',
        measurements,
        summary: summarize(measurements, METRICS),
        notes: [
          'RSS is VmRSS from /proc/<pid>/status summed over the process tree; a garbage-collected runtime may hold memory it no longer uses, so rssAfterCloseMB in the JSON shows what it gives back.',
          'pgbouncer in session mode links a server connection only when a client sends its first query, so idle clients cost it no backend; the pass-through proxy holds one backend per client.',
        ],
      };
    } finally {
      await t.stopAll();
    }
  } finally {
    await pg.dispose();
  }
}

export const idle: Suite = {
  name: 'idle',
  summary: 'memory (RSS) of router, pgbouncer and the Node pipe holding N idle client connections',
  run,
};
