// The final-state probe of a run (docs/soak.md, "Final-state probe"): the reads through every
// router, the catalog, and every node's rows and leftovers read from the instance the catalog
// names as its primary (after a failover, the promoted one), each part retried, all of it into
// the history.
import type { Cluster } from '../cluster/cluster.js';
import { retryEveryError, retrySetup } from '../cluster/setup-retry.js';
import type { HistoryWriter } from '../history/writer.js';
import {
  noteCatalog,
  noteNodeProbe,
  probeNode,
  probeOps,
  probeThroughRouter,
  type ProbeKeys,
} from './probe.js';

/** How long each part of the final probe is retried before it counts as missing. */
const PROBE_RETRY_MS = 120_000;

/**
 * A complete final-state probe under number `probe`, written into the history. Faults leave
 * transient errors behind them (a router still re-reading its catalog, a coordinator stepping
 * down, a node finishing recovery), so every part is retried for up to `PROBE_RETRY_MS`; only a
 * part that never succeeds is a `probe-error` (which the checker counts as final-state-missing).
 */
export async function finalProbe(
  cluster: Cluster,
  history: HistoryWriter,
  probe: number,
  keys: ProbeKeys,
  newProcess: () => number,
  timeoutMs: number,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  history.note('probe', 'probe-start', { probe });
  const retry = <T>(what: string, step: () => Promise<T>, beforeRetry?: () => Promise<unknown>) =>
    retrySetup(step, {
      what: `probe ${probe}: ${what}`,
      timeoutMs: PROBE_RETRY_MS,
      log,
      classify: retryEveryError,
      beforeRetry,
    });
  const failed = (what: string, e: unknown): undefined => {
    history.note('probe', 'probe-error', { probe, message: `${what}: ${(e as Error).message}` });
    return undefined;
  };
  const ops = probeOps(keys);
  for (const r of cluster.routers) {
    await retry(
      `reads through ${r.name}`,
      () => probeThroughRouter(cluster, r, history, newProcess, ops, timeoutMs),
      () => cluster.waitForRouter(r, 30_000),
    ).catch((e: unknown) => failed(r.name, e));
  }
  const catalog = await retry(
    'GetCatalog',
    () => cluster.getCatalog(),
    () => cluster.vip.waitForLeader(30_000),
  ).catch((e: unknown) => failed('GetCatalog', e));
  if (catalog) {
    noteCatalog(history, probe, catalog);
    // Each node's rows from the instance this catalog names as its primary.
    cluster.followCatalog(catalog);
    for (const n of cluster.nodes) {
      const got = await retry(`rows of ${n.name}`, () => probeNode(cluster, n, catalog)).catch(
        (e: unknown) => failed(n.name, e),
      );
      if (got) noteNodeProbe(history, probe, n.name, got);
    }
  }
  history.note('probe', 'probe-end', { probe });
}
