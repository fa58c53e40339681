// One measurement: pgbench (one process, or one per endpoint at once) against a target, with the
// target's CPU time read from /proc before and after, so the proxy's cost per statement comes
// from the kernel's accounting rather than from anything the proxy reports about itself.
import { cpuMicros } from '../harness/proc-stats.js';
import { quantileSorted } from '../harness/stats.js';
import { runPgbench, type PgbenchProtocol } from './run.js';

export interface Leg {
  host: string;
  port: number;
  script: string;
  clients: number;
  /** This leg's statements per transaction, when the legs run different scripts. */
  statementsPerTxn?: number | undefined;
}

export interface MeasureSpec {
  legs: Leg[];
  /** Processes whose CPU counts as the proxy's (their descendants included). */
  pids: number[];
  durationS: number;
  threads: number;
  statementsPerTxn: number;
  /** pgbench -M (default prepared). */
  protocol?: PgbenchProtocol | undefined;
  /** The fraction of transactions whose latency is logged (see PgbenchRun); default 1. */
  samplingRate?: number | undefined;
}

export interface MeasureResult {
  values: Record<string, number | null>;
  error?: string | undefined;
}

/** Runs every leg at once; TPS adds up, latencies are merged before their quantiles are taken. */
export async function measure(spec: MeasureSpec): Promise<MeasureResult> {
  const cpuBefore = spec.pids.map((p) => cpuMicros(p));
  const threadsPerLeg = Math.max(1, Math.floor(spec.threads / spec.legs.length));
  let results;
  try {
    results = await Promise.all(
      spec.legs.map((leg) =>
        runPgbench({
          host: leg.host,
          port: leg.port,
          script: leg.script,
          clients: leg.clients,
          threads: threadsPerLeg,
          durationS: spec.durationS,
          protocol: spec.protocol,
          keepLatencies: spec.legs.length > 1,
          samplingRate: spec.samplingRate,
        }),
      ),
    );
  } catch (e) {
    return { values: {}, error: e instanceof Error ? e.message : String(e) };
  }
  const cpuUs = spec.pids.reduce((sum, p, i) => sum + (cpuMicros(p) - cpuBefore[i]!), 0);
  const tps = results.reduce((s, r) => s + r.tps, 0);
  const transactions = results.reduce((s, r) => s + r.transactions, 0);
  const failed = results.reduce((s, r) => s + r.failed, 0);
  let p50: number;
  let p99: number;
  if (results.length === 1) {
    p50 = results[0]!.latencyMedianMs;
    p99 = results[0]!.latencyP99Ms;
  } else {
    const all = new Float64Array(results.reduce((n, r) => n + (r.latenciesUs?.length ?? 0), 0));
    let at = 0;
    for (const r of results) {
      all.set(r.latenciesUs ?? [], at);
      at += r.latenciesUs?.length ?? 0;
    }
    all.sort();
    p50 = quantileSorted(all, 0.5) / 1000;
    p99 = quantileSorted(all, 0.99) / 1000;
  }
  const statements = results.reduce(
    (s, r, i) => s + r.transactions * (spec.legs[i]!.statementsPerTxn ?? spec.statementsPerTxn),
    0,
  );
  return {
    values: {
      tps,
      p50Ms: p50,
      p99Ms: p99,
      transactions,
      failedTxns: failed,
      cpuUsPerStmt: spec.pids.length > 0 && statements > 0 ? cpuUs / statements : null,
      proxyCpuCores: spec.pids.length > 0 ? cpuUs / 1e6 / spec.durationS : null,
    },
    error: failed > 0 ? `${failed} transactions failed` : undefined,
  };
}
