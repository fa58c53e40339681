// Talking to the catalog database: a pool whose broken connections never crash the process,
// transactions that always end, and Postgres errors translated into the coordinator's own.
import pg from 'pg';
import {
  CatalogError,
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  unavailable,
} from '../errors.js';

// int8 comes back as text by default; the catalog reads it with BigInt() where it matters.

export interface PoolOptions {
  /** Called for errors on idle connections (the pool replaces them). */
  onIdleError?: (e: Error) => void;
  max?: number;
}

export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 1_000,
    application_name: 'tessera-coordinator',
  });
  pool.on('error', (e) => opts.onIdleError?.(e));
  return pool;
}

export type Isolation = 'read committed' | 'repeatable read';

/**
 * Runs `fn` in one transaction on a pooled connection: commit when it returns, rollback when it
 * throws. A connection that broke mid-way is destroyed rather than returned to the pool.
 */
export async function transaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  opts: { isolation?: Isolation; readOnly?: boolean } = {},
): Promise<T> {
  const client = await connect(pool);
  let broken: Error | undefined;
  try {
    const mode = `${opts.isolation ? ` isolation level ${opts.isolation}` : ''}${opts.readOnly ? ' read only' : ''}`;
    await client.query(`begin${mode}`);
    try {
      const result = await fn(client);
      await client.query('commit');
      return result;
    } catch (e) {
      await client.query('rollback').catch((re: unknown) => {
        broken = re instanceof Error ? re : new Error(String(re));
      });
      throw e;
    }
  } catch (e) {
    if (isConnectionError(e)) broken ??= e as Error;
    throw translatePgError(e);
  } finally {
    client.release(broken);
  }
}

/** One statement (or a few) outside an explicit transaction. */
export async function withClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await connect(pool);
  let broken: Error | undefined;
  try {
    return await fn(client);
  } catch (e) {
    if (isConnectionError(e)) broken = e as Error;
    throw translatePgError(e);
  } finally {
    client.release(broken);
  }
}

async function connect(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (e) {
    throw translatePgError(e);
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** True for errors that mean the connection (or the server) is gone rather than a bad statement. */
export function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code)) return true;
    // Class 08 (connection exception), 57P01..57P03 (shutdown, crash, cannot connect now).
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')
      return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    e.message,
  );
}

/**
 * Our own errors pass through; a lost database becomes UNAVAILABLE; constraint violations that a
 * concurrent change slipped past the checks become their natural status. Anything else is left
 * as it is (the edge reports it as INTERNAL).
 */
export function translatePgError(e: unknown): unknown {
  if (e instanceof CatalogError) return e;
  if (isConnectionError(e))
    return unavailable('the catalog database is unreachable; retry shortly');
  const pgErr = e as { code?: unknown; detail?: unknown };
  if (pgErr.code === '23505') {
    return alreadyExists(
      typeof pgErr.detail === 'string' ? `already exists: ${pgErr.detail}` : 'it already exists',
    );
  }
  // Class 22 (data exception): a value Postgres will not store, e.g. a NUL byte in a string.
  if (typeof pgErr.code === 'string' && pgErr.code.startsWith('22')) {
    return invalidArgument(
      `the request holds a value the catalog cannot store: ${(e as Error).message}`,
    );
  }
  if (pgErr.code === '23503') {
    return failedPrecondition(
      typeof pgErr.detail === 'string'
        ? `still referenced: ${pgErr.detail}`
        : 'it is still referenced by the catalog',
    );
  }
  return e;
}
