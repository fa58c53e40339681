// Reading the transactions a cluster left prepared: every catalog node's pg_prepared_xacts, by the
// gid prefix `tessera:<cluster-uid>:`. The age of each comes from the node's own clock, so the
// grace period does not depend on the coordinator's clock agreeing with the nodes'.
import type { Node } from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import { errorText, withNode, type NodeAuth } from './node-sessions.js';

export interface PreparedTxn {
  gid: string;
  txid: string;
  /** The catalog node it was found on. */
  node: string;
  host: string;
  port: number;
  /** pg_prepared_xacts.database: COMMIT/ROLLBACK PREPARED must run connected to it. */
  database: string;
  /** When it was prepared, by the node's clock (ms since the epoch). */
  preparedMs: number;
  /** now() - prepared, on the node. */
  ageMs: number;
}

export interface Scan {
  txns: PreparedTxn[];
  /** Nodes whose pg_prepared_xacts was read: a txid absent from `txns` has no gid on them. */
  reached: Set<string>;
  unreachable: { node: string; err: string }[];
}

export interface ScanDeps {
  auth: NodeAuth;
  connectTimeoutMs: number;
  log: Logger;
}

export async function scanPrepared(
  clusterUid: string,
  nodes: readonly Node[],
  deps: ScanDeps,
): Promise<Scan> {
  const prefix = `tessera:${clusterUid}:`;
  const scan: Scan = { txns: [], reached: new Set(), unreachable: [] };
  await Promise.all(
    nodes.map(async (node) => {
      try {
        const txns = await preparedOn(node, prefix, deps);
        scan.txns.push(...txns);
        scan.reached.add(node.name);
      } catch (e) {
        scan.unreachable.push({ node: node.name, err: errorText(e) });
        deps.log.warn(
          { node: node.name, err: errorText(e) },
          'cannot list prepared transactions on a node; skipping it this time',
        );
      }
    }),
  );
  return scan;
}

async function preparedOn(node: Node, prefix: string, deps: ScanDeps): Promise<PreparedTxn[]> {
  // pg_prepared_xacts shows every database's prepared transactions, so `postgres` will do here.
  const rows = await withNode(node, 'postgres', deps.auth, deps.connectTimeoutMs, async (c) => {
    const { rows } = await c.query<{ gid: string; database: string; ms: string; age: string }>(
      `select gid, database,
              (extract(epoch from prepared) * 1000)::int8::text as ms,
              (extract(epoch from now() - prepared) * 1000)::int8::text as age
         from pg_prepared_xacts where left(gid, length($1)) = $1`,
      [prefix],
    );
    return rows;
  });
  return rows.flatMap((r) => {
    // gid = tessera:<cluster-uid>:<txid>:<node>; a txid never contains ':' (a node name may).
    const rest = r.gid.slice(prefix.length);
    const cut = rest.indexOf(':');
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
        ageMs: Number(r.age),
      },
    ];
  });
}
