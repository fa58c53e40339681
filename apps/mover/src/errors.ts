// How a job's work can go wrong, as the runner (job/runner.ts) tells the cases apart: a refusal
// or failure is one sentence and ends the job (after undoing what it did); a lost lease or a
// cancel stops the work at once; anything transient (a node or the coordinator unreachable for a
// moment) is retried from the job's durable record.
import { Code, RpcError } from '@tessera/proto';

/** A plan check refused the job, or a step failed for good: the message is one sentence. */
export class JobFailed extends Error {
  override readonly name = 'JobFailed';
}

/** Another mover holds the job now (our lease lapsed): stop touching anything. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}

/** The job was cancelled: stop and undo. */
export class CancelRequested extends Error {
  override readonly name = 'CancelRequested';
}

/** A cutover attempt gave up before its flip; the cutover step undoes it and tries again. */
export class CutoverAborted extends Error {
  override readonly name = 'CutoverAborted';
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** Worth retrying from the job's record: connections lost, servers restarting, lock conflicts. */
export function isTransient(e: unknown): boolean {
  if (e instanceof RpcError)
    return (
      e.code === Code.UNAVAILABLE ||
      e.code === Code.DEADLINE_EXCEEDED ||
      e.code === Code.INTERNAL ||
      e.code === Code.CANCELLED
    );
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code)) return true;
    if (code.startsWith('08') || code.startsWith('57P')) return true;
    // serialization failure, deadlock, lock not available, too many connections
    if (code === '40001' || code === '40P01' || code === '55P03' || code === '53300') return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    e.message,
  );
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message || e.name : String(e);
}
