// Verification snapshots: a REPEATABLE READ transaction on a node, opened inside the cutover
// freeze (both sides quiescent for the range, so comparing them is exact) and kept open until
// verification read it. Its session pins every setting that changes how a row prints as text.
import type pg from 'pg';
import type { NodeAddr, NodeSessions } from '../nodes/sessions.js';

export const PINNED_SETTINGS = [
  `set local datestyle = 'ISO, MDY'`,
  `set local intervalstyle = 'postgres'`,
  `set local timezone = 'UTC'`,
  `set local extra_float_digits = 3`,
  `set local bytea_output = 'hex'`,
];

export interface Snapshot {
  readonly node: string;
  readonly database: string;
  readonly client: pg.Client;
  readonly id: string;
  close(): Promise<void>;
}

/**
 * The snapshot on a session already open (the cutover opens them before its freeze): one round
 * trip. The session is ended by close().
 */
export async function snapshotOn(
  client: pg.Client,
  node: string,
  database: string,
): Promise<Snapshot> {
  const results = (await client.query(
    `begin isolation level repeatable read read only; ${PINNED_SETTINGS.join('; ')}; select pg_export_snapshot() as id`,
  )) as unknown as { rows: { id?: string }[] }[];
  return {
    node,
    database,
    client,
    id: results[results.length - 1]!.rows[0]!.id!,
    close: async () => {
      await client.query('rollback').catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

export async function openSnapshot(
  nodes: NodeSessions,
  node: NodeAddr,
  database: string,
): Promise<Snapshot> {
  const client = await nodes.connect(node, database, 'verify');
  try {
    await client.query('begin isolation level repeatable read read only');
    for (const s of PINNED_SETTINGS) await client.query(s);
    const { rows } = await client.query<{ id: string }>('select pg_export_snapshot() as id');
    return {
      node: node.name,
      database,
      client,
      id: rows[0]!.id,
      close: async () => {
        await client.query('rollback').catch(() => undefined);
        await client.end().catch(() => undefined);
      },
    };
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
}
