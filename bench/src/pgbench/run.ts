// One timed pgbench run against one endpoint: a child process with a hard timeout, per-transaction
// logs (-l) from which exact median and p99 latencies are computed, and the TPS pgbench reports
// without the initial connection time.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPgBinDir } from '@tessera/pgctl';
import { runProcess, tempDir } from '../harness/processes.js';
import { quantileSorted } from '../harness/stats.js';

export interface PgbenchRun {
  host: string;
  port: number;
  script: string;
  clients: number;
  threads: number;
  durationS: number;
  database?: string;
  /** pgbench -M (default prepared). */
  protocol?: PgbenchProtocol | undefined;
  /** Return the sorted per-transaction latencies too (to merge several concurrent runs). */
  keepLatencies?: boolean;
  /**
   * The fraction of transactions logged (pgbench --sampling-rate; default 1, every one): a long
   * run's log would otherwise grow by ~35 bytes a transaction, past what one string can hold.
   */
  samplingRate?: number | undefined;
}

export type PgbenchProtocol = 'simple' | 'extended' | 'prepared';

export interface PgbenchResult {
  tps: number;
  transactions: number;
  failed: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
  latencyAvgMs: number;
  /** Ascending, µs; only with keepLatencies. */
  latenciesUs?: Float64Array;
}

export class PgbenchError extends Error {
  readonly code = 'PGBENCH_FAILED';
}

/** Runs pgbench; throws PgbenchError with pgbench's own words when it fails or times out. */
export async function runPgbench(run: PgbenchRun): Promise<PgbenchResult> {
  const tmp = tempDir('pgbench');
  const dir = tmp.path;
  try {
    const scriptFile = join(dir, 'script.sql');
    writeFileSync(scriptFile, run.script);
    const threads = Math.max(1, Math.min(run.threads, run.clients));
    const r = await runProcess(
      join(findPgBinDir(), 'pgbench'),
      [
        '-h',
        run.host,
        '-p',
        String(run.port),
        '-U',
        'postgres',
        '-n', // no vacuum of the tables before the run: not every target passes VACUUM on
        '-M',
        run.protocol ?? 'prepared',
        '-c',
        String(run.clients),
        '-j',
        String(threads),
        '-T',
        String(run.durationS),
        '-f',
        scriptFile,
        '-l',
        '--log-prefix',
        join(dir, 'txn'),
        ...(run.samplingRate !== undefined && run.samplingRate < 1
          ? ['--sampling-rate', String(run.samplingRate)]
          : []),
        run.database ?? 'postgres',
      ],
      {
        timeoutMs: (run.durationS + 60) * 1000,
        env: { ...process.env, PGCONNECT_TIMEOUT: '15' },
      },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    if (r.timedOut) throw new PgbenchError(`pgbench did not finish within ${run.durationS + 60}s`);
    if (r.code !== 0) throw new PgbenchError(`pgbench exited ${r.code}: ${lastLines(out, 4)}`);
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1]);
    const transactions = Number(
      /number of transactions actually processed: (\d+)/.exec(out)?.[1] ?? NaN,
    );
    const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
    if (!Number.isFinite(tps) || !Number.isFinite(transactions)) {
      throw new PgbenchError(`could not read pgbench's summary: ${lastLines(out, 4)}`);
    }
    const lat = readLatencies(dir);
    const sum = lat.reduce((a, b) => a + b, 0);
    return {
      tps,
      transactions,
      failed,
      latencyMedianMs: quantileSorted(lat, 0.5) / 1000,
      latencyP99Ms: quantileSorted(lat, 0.99) / 1000,
      latencyAvgMs: lat.length > 0 ? sum / lat.length / 1000 : NaN,
      ...(run.keepLatencies ? { latenciesUs: lat } : {}),
    };
  } finally {
    tmp.dispose();
  }
}

/**
 * Per-transaction latencies in µs, ascending, from every thread's log file. A line is
 * `client_id transaction_no time script_no time_epoch time_us`; `time` is the latency in µs
 * (or "failed"/"skipped", which are left out).
 */
function readLatencies(dir: string): Float64Array {
  const values: number[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.startsWith('txn.')) continue;
    const text = readFileSync(join(dir, f), 'utf8');
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      // The third space-separated field, without splitting the whole line.
      const s1 = text.indexOf(' ', start);
      const s2 = s1 < 0 ? -1 : text.indexOf(' ', s1 + 1);
      const s3 = s2 < 0 ? -1 : text.indexOf(' ', s2 + 1);
      if (s3 > 0 && s3 < end) {
        const v = Number(text.slice(s2 + 1, s3));
        if (Number.isFinite(v)) values.push(v);
      }
      start = end + 1;
    }
  }
  return Float64Array.from(values).sort();
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join(' | ');
}
