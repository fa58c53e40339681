// Runs one planned operation on a client connection to a router and classifies what came back
// (outcome.ts): reads fill the completion value; a statement that outlives its timeout has its
// connection dropped (it may still run: at the commit point that is an unknown outcome).
import type pg from 'pg';
import type { Socket } from 'node:net';
import {
  isSyncRepWarning,
  isUnknownOutcome,
  outcomeOfError,
  type Outcome,
  type Phase,
} from './outcome.js';
import type { Fill, PlannedOp } from './generate.js';

export interface ExecResult {
  outcome: Outcome;
  /** The completion's value: the invoke's with reads filled in (ok), or with the error. */
  value: Record<string, unknown>;
  /** The connection should not be used again. */
  broken: boolean;
}

class ClientTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms; connection dropped`);
  }
}

export async function execute(
  client: pg.Client,
  op: PlannedOp,
  timeoutMs: number,
): Promise<ExecResult> {
  const value = copyValue(op.value);
  const notices: { code?: string; message?: string }[] = [];
  const onNotice = (n: { code?: string; message?: string }): void => {
    notices.push(n);
  };
  client.on('notice', onNotice);
  let phase: Phase = op.txn ? 'before-commit' : 'commit';
  const q = (sql: string, params: unknown[] = []): Promise<pg.QueryResult> =>
    withTimeout(client, sql, params, timeoutMs);
  try {
    if (op.txn) await q(`begin isolation level ${op.txn}`);
    for (const s of op.statements) {
      const r = await q(s.sql, s.params);
      if (s.reads) fill(value, s.reads, r.rows as Record<string, unknown>[]);
    }
    if (op.txn) {
      phase = 'commit';
      const r = await q('commit');
      // A transaction that failed without our hearing of it answers COMMIT with ROLLBACK.
      if (r.command === 'ROLLBACK')
        return {
          outcome: 'fail',
          value: withError(op.value, 'ROLLBACK', 'COMMIT answered ROLLBACK'),
          broken: false,
        };
    }
    const warning = notices.find(isSyncRepWarning);
    if (warning)
      return {
        outcome: 'info',
        value: withError(op.value, warning.code, warning.message),
        broken: false,
      };
    return { outcome: 'ok', value, broken: false };
  } catch (e) {
    const timedOut = e instanceof ClientTimeout;
    const raw = (e as { code?: unknown }).code;
    const code = typeof raw === 'string' && /^[0-9A-Z]{5}$/.test(raw) ? raw : undefined;
    const outcome = outcomeOfError({ code, timedOut }, phase);
    let broken = timedOut || code === undefined || isUnknownOutcome(code);
    if (!broken && op.txn) {
      try {
        await q('rollback');
      } catch {
        broken = true;
      }
    }
    return {
      outcome,
      value: withError(
        op.value,
        code ?? (timedOut ? 'timeout' : 'connection'),
        (e as Error).message,
      ),
      broken,
    };
  } finally {
    client.off('notice', onNotice);
  }
}

function withTimeout(
  client: pg.Client,
  sql: string,
  params: unknown[],
  ms: number,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ClientTimeout(ms));
      (client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy();
    }, ms);
    client.query(sql, params).then(
      (r) => {
        clearTimeout(timer);
        resolve(r);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

function copyValue(v: PlannedOp['value']): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v };
  if (v.ops) out.ops = v.ops.map((m) => [...m]);
  return out;
}

function withError(
  v: PlannedOp['value'],
  code: string | undefined,
  message: string | undefined,
): Record<string, unknown> {
  return { ...copyValue(v), error: { code: code ?? null, message: message ?? '' } };
}

const num = (x: unknown): number => Number(x);

function fill(value: Record<string, unknown>, f: Fill, rows: Record<string, unknown>[]): void {
  const ops = value.ops as unknown[][] | undefined;
  switch (f.kind) {
    case 'list':
      ops![f.micro]![2] = Array.isArray(rows[0]?.vals) ? (rows[0].vals as unknown[]).map(num) : [];
      return;
    case 'lists': {
      for (const i of f.micros.values()) ops![i]![2] = [];
      for (const row of rows) {
        const i = f.micros.get(num(row.k));
        if (i !== undefined) ops![i]![2] = Array.isArray(row.vals) ? row.vals.map(num) : [];
        // A row for a key the query did not ask about: record it, the checker judges it.
        else ops!.push(['r', num(row.k), Array.isArray(row.vals) ? row.vals.map(num) : []]);
      }
      return;
    }
    case 'counter':
      ops![f.micro]![2] = rows[0] ? num(rows[0].n) : 0;
      return;
    case 'balances':
      value.balances = rows.map((r) => [num(r.id), num(r.balance)]);
      return;
    default:
      return assertNever(f);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected fill ${JSON.stringify(x)}`);
}
