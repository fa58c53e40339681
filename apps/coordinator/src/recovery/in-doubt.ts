// Transactions a crash left prepared on the nodes (DESIGN.md section 5): listed from every node's
// pg_prepared_xacts by this cluster's gid prefix `tessera:<cluster-uid>:`, and resolved by the
// log: logged commit -> COMMIT PREPARED, logged abort -> ROLLBACK PREPARED, nothing logged after
// the grace period -> log abort first, then obey the log. A node that is down is skipped (and
// logged); its transactions are found on a later call.
import { create, Decision, InDoubtTxnSchema, type InDoubtTxn, type Node } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import pg from 'pg';
import type { TxnLog } from '../store/txn-log.js';

/** How the coordinator logs in to nodes: the catalog URL's user and password. */
export interface NodeAuth {
  user: string;
  password?: string | undefined;
}

export interface PreparedTxn {
  gid: string;
  txid: string;
  node: string;
  host: string;
  port: number;
  database: string;
  preparedMs: number;
}

export interface InDoubtDeps {
  nodes: () => Promise<{ clusterUid: string; nodes: readonly Node[] }>;
  txns: TxnLog;
  auth: NodeAuth;
  graceMs: number;
  log: Logger;
  connectTimeoutMs?: number;
}

export function nodeAuthFromUrl(url: string): NodeAuth {
  const u = new URL(url);
  return {
    user: decodeURIComponent(u.username) || 'postgres',
    password: u.password === '' ? undefined : decodeURIComponent(u.password),
  };
}

export class InDoubtResolver {
  constructor(private readonly deps: InDoubtDeps) {}

  async list(): Promise<InDoubtTxn[]> {
    const prepared = await this.prepared();
    const decisions = await this.deps.txns.getMany([...new Set(prepared.map((p) => p.txid))]);
    return prepared.map((p) =>
      create(InDoubtTxnSchema, {
        gid: p.gid,
        node: p.node,
        decision: decisions.get(p.txid)?.decision ?? Decision.UNSPECIFIED,
        preparedMs: BigInt(p.preparedMs),
      }),
    );
  }

  /** Resolves the in-doubt transactions of `txid` (all of them when empty). */
  async resolve(txid: string): Promise<{ committed: number; rolledBack: number }> {
    const prepared = (await this.prepared()).filter((p) => txid === '' || p.txid === txid);
    const decisions = await this.deps.txns.getMany([...new Set(prepared.map((p) => p.txid))]);
    let committed = 0;
    let rolledBack = 0;
    for (const p of prepared) {
      let decision = decisions.get(p.txid)?.decision;
      if (decision === undefined) {
        if (Date.now() - p.preparedMs < this.deps.graceMs) continue; // its router may still decide
        const participants = prepared.filter((q) => q.txid === p.txid).map((q) => q.node);
        const record = await this.deps.txns.decide(p.txid, Decision.ABORT, participants);
        decisions.set(p.txid, record);
        decision = record.decision;
      }
      const commit = decision === Decision.COMMIT;
      if (await this.finish(p, commit)) {
        if (commit) committed++;
        else rolledBack++;
      }
    }
    return { committed, rolledBack };
  }

  private async prepared(): Promise<PreparedTxn[]> {
    const { clusterUid, nodes } = await this.deps.nodes();
    const prefix = `tessera:${clusterUid}:`;
    const perNode = await Promise.all(nodes.map((n) => this.preparedOn(n, prefix)));
    return perNode.flat();
  }

  private async preparedOn(node: Node, prefix: string): Promise<PreparedTxn[]> {
    try {
      return await this.withNode(node.host, node.port, 'postgres', async (c) => {
        const { rows } = await c.query<{ gid: string; database: string; ms: string }>(
          `select gid, database, (extract(epoch from prepared) * 1000)::int8::text as ms
             from pg_prepared_xacts where left(gid, length($1)) = $1`,
          [prefix],
        );
        return rows.flatMap((r) => {
          // gid = tessera:<cluster-uid>:<txid>:<node>; the txid is everything up to the last colon.
          const rest = r.gid.slice(prefix.length);
          const cut = rest.lastIndexOf(':');
          if (cut <= 0) return [];
          return [
            {
              gid: r.gid,
              txid: rest.slice(0, cut),
              node: node.name,
              host: node.host,
              port: node.port,
              database: r.database,
              preparedMs: Number(r.ms),
            },
          ];
        });
      });
    } catch (e) {
      this.deps.log.warn(
        { node: node.name, err: e instanceof Error ? e.message : String(e) },
        'cannot list prepared transactions on a node',
      );
      return [];
    }
  }

  /** Commits or rolls back one prepared transaction; false if it could not (it is retried later). */
  private async finish(p: PreparedTxn, commit: boolean): Promise<boolean> {
    try {
      await this.withNode(p.host, p.port, p.database, (c) =>
        c.query(`${commit ? 'commit' : 'rollback'} prepared ${c.escapeLiteral(p.gid)}`),
      );
      this.deps.log.info({ gid: p.gid, node: p.node, commit }, 'resolved a prepared transaction');
      return true;
    } catch (e) {
      // 42704: already finished by someone else (its router, or another resolve).
      if ((e as { code?: unknown }).code === '42704') return false;
      this.deps.log.warn(
        { gid: p.gid, node: p.node, err: e instanceof Error ? e.message : String(e) },
        'cannot resolve a prepared transaction',
      );
      return false;
    }
  }

  private async withNode<T>(
    host: string,
    port: number,
    database: string,
    fn: (c: pg.Client) => Promise<T>,
  ): Promise<T> {
    const client = new pg.Client({
      host,
      port,
      database,
      user: this.deps.auth.user,
      password: this.deps.auth.password,
      connectionTimeoutMillis: this.deps.connectTimeoutMs ?? 3_000,
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
}
