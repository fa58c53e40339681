// Starting the one-node targets that the overhead, idle and steady suites share (direct, router,
// router-base, pgbouncer, pgbouncer-txn, passthrough), each one either running or skipped with the
// reason said out loud; and the Postgres with pgbench's tables behind them that overhead and
// steady share.
import { startPostgres, type PgServer } from '@tessera/testkit';
import { postgresSettings } from '../harness/machine.js';
import { wants, type BenchOptions } from '../options.js';
import { loadBranches } from '../pgbench/load.js';
import type { TargetInfo } from '../report/model.js';
import { startBenchCatalog, type BenchCatalog } from '../targets/catalog.js';
import { directTarget } from '../targets/direct.js';
import { startPassthrough } from '../targets/passthrough-target.js';
import { ensurePgbouncer, startPgbouncer } from '../targets/pgbouncer.js';
import { baselineRouterEntry, startRouter } from '../targets/router.js';
import { skipped, type Target, type TargetStart } from '../targets/target.js';

export interface OneNodeTargets {
  running: Target[];
  infos: TargetInfo[];
  pgbouncerBin?: string | undefined;
  stopAll(): Promise<void>;
}

export interface OneNodeOptions {
  opts: BenchOptions;
  pg: PgServer;
  /** Which of direct/router/router-base/pgbouncer/pgbouncer-txn/passthrough this suite runs. */
  names: readonly string[];
  /** Clients that may be connected at once (pool sizes, max_client_conn). */
  maxClients: number;
  /** Backend pool per proxy (pgbouncer's default_pool_size in session mode, router --pool-size). */
  poolSize: number;
  /** The router's own --pool-size when it differs (its transaction pooling multiplexes clients). */
  routerPoolSize?: number | undefined;
  log(line: string): void;
}

/** The router's --pool-size in this run: --router-pool-size, else the suite's own, else poolSize. */
export function routerPoolSizeOf(o: Pick<OneNodeOptions, 'opts' | 'poolSize' | 'routerPoolSize'>) {
  return o.opts.routerPoolSize ?? o.routerPoolSize ?? o.poolSize;
}

/**
 * PgBouncer in transaction mode (pgbouncer-txn) keeps as many server connections as the router
 * keeps backends (its pool in each of its processes): both multiplex the same clients over the
 * same number of Postgres connections, so neither wins by holding more of them.
 */
export function pgbouncerTxnPoolSize(
  o: Pick<OneNodeOptions, 'opts' | 'poolSize' | 'routerPoolSize'>,
): number {
  return routerPoolSizeOf(o) * Math.max(1, o.opts.routerWorkers);
}

export async function startOneNodeTargets(o: OneNodeOptions): Promise<OneNodeTargets> {
  const running: Target[] = [];
  const infos: TargetInfo[] = [];
  let catalog: BenchCatalog | undefined;
  let pgbouncerBin: string | undefined;
  // Both pool modes run the same binary: look for it (and install it) once.
  let pgbouncerFound: Awaited<ReturnType<typeof ensurePgbouncer>> | undefined;
  const stopAll = async () => {
    for (const t of running.splice(0)) await t.stop().catch(() => undefined);
    await catalog?.stop().catch(() => undefined);
  };
  const add = (s: TargetStart) => {
    if (s.ok) {
      running.push(s.target);
      infos.push({ name: s.target.name, detail: s.target.detail });
      o.log(`  ${s.target.name.padEnd(13)} ${s.target.detail}`);
    } else {
      infos.push({ name: s.name, skipped: s.reason });
      o.log(`  ${s.name.padEnd(13)} SKIPPED: ${s.reason}`);
    }
  };
  try {
    for (const name of o.names) {
      if (!wants(o.opts, name)) continue;
      switch (name) {
        case 'direct':
          add({ ok: true, target: directTarget(o.pg.host, o.pg.port) });
          break;
        case 'router':
        case 'router-base': {
          // router-base: the same router flags, another checkout's build (--router-baseline).
          if (name === 'router-base' && o.opts.routerBaseline === undefined) break;
          const entry =
            name === 'router-base' ? baselineRouterEntry(o.opts.routerBaseline!) : undefined;
          if (name === 'router-base' && !entry) {
            add(skipped(name, `${o.opts.routerBaseline!} has no apps/router/dist/main.js`));
            break;
          }
          try {
            catalog ??= await startBenchCatalog({ home: o.pg, data: [] });
          } catch (e) {
            add(
              skipped(name, `no coordinator for it: ${e instanceof Error ? e.message : String(e)}`),
            );
            break;
          }
          add(
            await startRouter({
              name,
              entry,
              coordinator: catalog.address,
              poolSize: routerPoolSizeOf(o),
              poolMode: o.opts.routerPoolMode,
              workers: o.opts.routerWorkers,
              pipelineDepth: o.opts.routerPipelineDepth,
              maxClients: o.maxClients + 20,
              startTimeoutMs: o.opts.routerStartTimeoutMs,
            }),
          );
          break;
        }
        case 'pgbouncer':
        case 'pgbouncer-txn': {
          pgbouncerFound ??= await ensurePgbouncer(o.opts.installPgbouncer);
          if ('reason' in pgbouncerFound) {
            add(skipped(name, pgbouncerFound.reason));
            break;
          }
          pgbouncerBin = pgbouncerFound.bin;
          const txn = name === 'pgbouncer-txn';
          add(
            await startPgbouncer({
              name,
              bin: pgbouncerFound.bin,
              upstreamHost: o.pg.host,
              upstreamPort: o.pg.port,
              maxClients: o.maxClients,
              poolSize: txn ? pgbouncerTxnPoolSize(o) : o.poolSize,
              poolMode: txn ? 'transaction' : 'session',
            }),
          );
          break;
        }
        case 'passthrough':
          add(await startPassthrough(o.pg.host, o.pg.port));
          break;
        default:
          throw new Error(`unknown target ${name}`);
      }
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  return { running, infos, pgbouncerBin, stopAll };
}

export interface PgbenchNode {
  pg: PgServer;
  /** The server settings that move the numbers, for the result. */
  pgSettings: Record<string, string>;
  targets: OneNodeTargets;
  /** Stops the targets, then Postgres. */
  stop(): Promise<void>;
}

/**
 * One Postgres holding pgbench's branches 1..`scale`, and the targets in front of it. Its
 * max_connections leaves room for pgbench straight at it plus the pools the router and pgbouncer
 * keep open meanwhile.
 */
export async function startPgbenchNode(
  o: Omit<OneNodeOptions, 'pg'> & { name: string; scale: number },
): Promise<PgbenchNode> {
  const maxConnections = Math.max(300, 4 * o.maxClients + 50);
  o.log(
    `starting Postgres (max_connections=${maxConnections}) and loading pgbench scale ${o.scale}`,
  );
  const pg = await startPostgres({
    name: o.name,
    settings: { max_connections: String(maxConnections) },
  });
  try {
    await loadBranches(
      pg,
      Array.from({ length: o.scale }, (_, i) => i + 1),
    );
    const pgSettings = await postgresSettings(pg);
    o.log('starting targets');
    const targets = await startOneNodeTargets({ ...o, pg });
    const stop = async () => {
      try {
        await targets.stopAll();
      } finally {
        await pg.dispose();
      }
    };
    return { pg, pgSettings, targets, stop };
  } catch (e) {
    await pg.dispose();
    throw e;
  }
}
