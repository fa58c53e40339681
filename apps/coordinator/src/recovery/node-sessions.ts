// Short-lived connections from the coordinator to the nodes, for recovery. The coordinator logs in
// with the catalog URL's user and password (per-node credentials are out of scope): that user must
// exist on every node and may finish any prepared transaction (superuser, or the owner).
import pg from 'pg';

export interface NodeAuth {
  user: string;
  password?: string | undefined;
}

export function nodeAuthFromUrl(url: string): NodeAuth {
  const u = new URL(url);
  return {
    user: decodeURIComponent(u.username) || 'postgres',
    password: u.password === '' ? undefined : decodeURIComponent(u.password),
  };
}

export interface NodeAddress {
  host: string;
  port: number;
}

/**
 * Runs `fn` on a new connection to `database` on the node and closes it. A node that is down, or
 * dies mid-call, rejects (after at most `connectTimeoutMs` to connect) rather than hanging.
 */
export async function withNode<T>(
  at: NodeAddress,
  database: string,
  auth: NodeAuth,
  connectTimeoutMs: number,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    host: at.host,
    port: at.port,
    database,
    user: auth.user,
    password: auth.password,
    connectionTimeoutMillis: connectTimeoutMs,
    // A node that stops answering mid-pass must not stall recovery of the others forever.
    query_timeout: Math.max(10_000, connectTimeoutMs * 4),
    application_name: 'tessera-coordinator-recovery',
  });
  client.on('error', () => undefined); // a node dying mid-call surfaces as the query's rejection
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message || e.name : String(e);
}
