// What a suite needs from a target (direct, router, pgbouncer, passthrough): where pgbench
// connects, which process to measure, and how to stop it. Starting may fail for reasons outside
// the harness (no pgbouncer, a router not yet buildable): that is a skip with a reason, not a crash.
import pg from 'pg';
import { waitFor } from '../harness/processes.js';

export interface Target {
  /** Name in tables and charts: direct, router, pgbouncer, passthrough, router x2 ... */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** The proxy process whose CPU and memory are measured (its descendants included); none for direct. */
  readonly pid?: number | undefined;
  /** One line on how it runs (entry point, pool mode), printed and recorded with the results. */
  readonly detail: string;
  stop(): Promise<void>;
}

export type TargetStart =
  { ok: true; target: Target } | { ok: false; name: string; reason: string };

export const skipped = (name: string, reason: string): TargetStart => ({ ok: false, name, reason });

/**
 * True once `select 1` answers through host:port (a proxy is ready only when it can reach
 * Postgres); false after `timeoutMs`, or as soon as `alive()` says the process has died.
 */
export async function answersQueries(
  host: string,
  port: number,
  timeoutMs: number,
  alive: () => boolean = () => true,
): Promise<boolean> {
  let died = false;
  const ok = await waitFor(
    async () => {
      if (!alive()) return (died = true);
      const c = new pg.Client({
        host,
        port,
        user: 'postgres',
        database: 'postgres',
        connectionTimeoutMillis: 2_000,
      });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('select 1');
        return true;
      } catch {
        return false;
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    timeoutMs,
    200,
  );
  return ok && !died;
}
