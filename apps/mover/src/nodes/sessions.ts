// Connections from the mover to the nodes: one role for every node (--node-user, a superuser:
// CREATE SUBSCRIPTION needs it on Postgres 15), sessions with no timeouts that could kill a long
// copy, snapshot or lock wait (research/moves.md 1.5), and the conninfo a subscription on one
// node uses to reach another.
import pg from 'pg';

export interface NodeAddr {
  name: string;
  host: string;
  port: number;
}

export interface NodeAuth {
  user: string;
  password?: string | undefined;
}

/** A conninfo value, quoted as libpq wants it. */
function conninfoValue(v: string): string {
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export class NodeSessions {
  constructor(
    readonly auth: NodeAuth,
    private readonly appName = 'tessera-mover',
  ) {}

  /** How every session of the mover reaches `database` of `node`. */
  private config(node: NodeAddr, database: string, purpose: string): pg.ClientConfig {
    return {
      host: node.host,
      port: node.port,
      database,
      user: this.auth.user,
      password: this.auth.password,
      connectionTimeoutMillis: 10_000,
      application_name: purpose ? `${this.appName} ${purpose}`.slice(0, 63) : this.appName,
      keepAlive: true,
    };
  }

  /** Connects; a node dying mid-call surfaces as the query's rejection, never unhandled. */
  private async open(config: pg.ClientConfig): Promise<pg.Client> {
    const client = new pg.Client(config);
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** A new session on `database` of `node`; the caller ends it. */
  async connect(node: NodeAddr, database: string, purpose = ''): Promise<pg.Client> {
    const client = await this.open(this.config(node, database, purpose));
    try {
      await client.query(
        // synchronous_commit on: a marker's commit must reach the WAL (and so the walsender) at
        // once, whatever the node's default.
        `set statement_timeout = 0; set idle_in_transaction_session_timeout = 0; set lock_timeout = 0; set synchronous_commit = on`,
      );
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    return client;
  }

  /**
   * A replication connection (walsender, `replication=database`) to `database` of `node`: for
   * CREATE_REPLICATION_SLOT with an exported snapshot, which only this protocol offers. It
   * accepts no settings; the caller ends it.
   */
  connectReplication(node: NodeAddr, database: string, purpose = ''): Promise<pg.Client> {
    // @types/pg does not list `replication`; pg passes it on as a startup parameter.
    const config: pg.ClientConfig & { replication: 'database' } = {
      ...this.config(node, database, purpose),
      replication: 'database',
    };
    return this.open(config);
  }

  /** Runs `fn` on a new session and ends it. */
  async with<T>(
    node: NodeAddr,
    database: string,
    fn: (c: pg.Client) => Promise<T>,
    purpose = '',
  ): Promise<T> {
    const c = await this.connect(node, database, purpose);
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /** What a subscription on another node uses to reach `node` (stored in pg_subscription). */
  conninfo(node: NodeAddr, database: string, appName: string): string {
    const parts = [
      `host=${conninfoValue(node.host)}`,
      `port=${node.port}`,
      `dbname=${conninfoValue(database)}`,
      `user=${conninfoValue(this.auth.user)}`,
      `application_name=${conninfoValue(appName)}`,
    ];
    if (this.auth.password !== undefined)
      parts.push(`password=${conninfoValue(this.auth.password)}`);
    return parts.join(' ');
  }
}

/** A SQL string literal. */
export function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** A quoted identifier. */
export function ident(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

export function qualified(schema: string, name: string): string {
  return `${ident(schema)}.${ident(name)}`;
}
