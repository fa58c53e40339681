// Catalog changes to a node's replicas and failover state (DESIGN.md section 7): registering a
// replica, the durable sync set (a replica's state), degradation, and the two halves of a
// failover. Each runs inside one CatalogStore.change transaction, so each is one epoch.
import { standbyName } from '@tessera/pgctl';
import type { AddReplicaRequest } from '@tessera/proto';
import type pg from 'pg';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from '../errors.js';
import type { ChangeTx } from './catalog-store.js';
import type { ReplicaStateText } from './enums.js';
import { checkName, checkPort } from './names.js';

/** The application_name a replica streams under: given, or derived from node and address. */
export function replicaName(node: string, host: string, port: number, given = ''): string {
  if (given === '') return standbyName(node, host, port);
  if (!/^[a-z0-9_-]{1,63}$/.test(given))
    throw invalidArgument(
      `replica name "${given}" must be 1 to 63 characters of a-z, 0-9, _ and - (it is an application_name in synchronous_standby_names)`,
    );
  return given;
}

/** Refuses an address a node or a replica already has. */
export async function checkAddressFree(
  client: pg.ClientBase,
  host: string,
  port: number,
): Promise<void> {
  const taken = await client.query<{ owner: string }>(
    `select name as owner from tessera.node where host = $1 and port = $2
     union all select node || ' (replica)' from tessera.replica where host = $1 and port = $2`,
    [host, port],
  );
  const row = taken.rows[0];
  if (row) throw alreadyExists(`node ${row.owner} already has the address ${host}:${port}`);
}

export async function insertReplica(
  client: pg.ClientBase,
  r: { node: string; host: string; port: number; name: string },
): Promise<void> {
  await checkAddressFree(client, r.host, r.port);
  const same = await client.query('select 1 from tessera.replica where node = $1 and name = $2', [
    r.node,
    r.name,
  ]);
  if (same.rowCount !== 0)
    throw alreadyExists(`node ${r.node} already has a replica named ${r.name}`);
  await client.query(
    `insert into tessera.replica (node, host, port, name, state) values ($1, $2, $3, $4, 'catching_up')`,
    [r.node, r.host, r.port, r.name],
  );
}

export async function addReplica(
  { client }: Pick<ChangeTx, 'client'>,
  req: AddReplicaRequest,
): Promise<void> {
  const node = checkName('node name', req.name);
  if (req.host === '') throw invalidArgument(`a replica of ${node} needs a host`);
  const port = checkPort('port', req.port);
  const found = await client.query('select 1 from tessera.node where name = $1 for update', [node]);
  if (found.rowCount === 0) throw notFound(`no node named ${node}`);
  await insertReplica(client, {
    node,
    host: req.host,
    port,
    name: replicaName(node, req.host, port, req.replicaName),
  });
}

export interface ReplicaKey {
  node: string;
  host: string;
  port: number;
}

/** Sets replicas' states (the durable sync set is the rows in state sync). */
export async function setReplicaStates(
  { client }: Pick<ChangeTx, 'client'>,
  changes: readonly (ReplicaKey & { state: ReplicaStateText })[],
): Promise<void> {
  for (const c of changes) {
    const res = await client.query(
      'update tessera.replica set state = $4 where node = $1 and host = $2 and port = $3',
      [c.node, c.host, c.port, c.state],
    );
    if (res.rowCount === 0) throw notFound(`node ${c.node} has no replica at ${c.host}:${c.port}`);
  }
}

/** Records (or clears) a node's degradation; an unchanged one keeps its start time. */
export async function setDegraded(
  { client }: Pick<ChangeTx, 'client'>,
  node: string,
  degraded: boolean,
  reason: string,
): Promise<void> {
  await client.query(
    `update tessera.node set degraded = $2, degraded_reason = $3,
            degraded_since = case when not $2 then null else coalesce(degraded_since, clock_timestamp()) end
      where name = $1`,
    [node, degraded, degraded ? reason : ''],
  );
}

/** First half of a failover: routers hold the node's statements; the target is remembered. */
export async function beginFailover(
  { client }: Pick<ChangeTx, 'client'>,
  node: string,
  target: string,
): Promise<void> {
  const res = await client.query(
    `update tessera.node set failing_over = true, failover_target = $2 where name = $1`,
    [node, target],
  );
  if (res.rowCount === 0) throw notFound(`no node named ${node}`);
}

/** A failover that did not happen after all (the primary is back): routers stop holding. */
export async function cancelFailover(
  { client }: Pick<ChangeTx, 'client'>,
  node: string,
): Promise<void> {
  await client.query(
    `update tessera.node set failing_over = false, failover_target = '' where name = $1`,
    [node],
  );
}

export interface Completion {
  node: string;
  /** The promoted replica, now the primary. */
  host: string;
  port: number;
  /** What the former primary becomes: fenced (native) or a replica catching up (an HA engine rejoins it). */
  formerState: ReplicaStateText;
  formerName: string;
  degraded: boolean;
  degradedReason: string;
}

/**
 * Second half: the promoted replica is the primary (new address), the former primary is kept as a
 * fenced replica, the other sync replicas must be added again (they streamed from the old one),
 * routers stop holding.
 */
export async function completeFailover(
  { client }: Pick<ChangeTx, 'client'>,
  c: Completion,
): Promise<void> {
  const { rows } = await client.query<{ host: string; port: number }>(
    'select host, port from tessera.node where name = $1 for update',
    [c.node],
  );
  const old = rows[0];
  if (!old) throw notFound(`no node named ${c.node}`);
  if (old.host === c.host && old.port === c.port) {
    await cancelFailover({ client }, c.node);
    return;
  }
  const promoted = await client.query(
    'delete from tessera.replica where node = $1 and host = $2 and port = $3',
    [c.node, c.host, c.port],
  );
  if (promoted.rowCount === 0)
    throw failedPrecondition(`${c.host}:${c.port} is not a replica of node ${c.node}`);
  await client.query(
    `update tessera.replica set state = 'catching_up' where node = $1 and state = 'sync'`,
    [c.node],
  );
  await client.query(
    `update tessera.node set host = $2, port = $3, failing_over = false, failover_target = ''
      where name = $1`,
    [c.node, c.host, c.port],
  );
  await client.query(
    `insert into tessera.replica (node, host, port, name, state) values ($1, $2, $3, $4, $5)
     on conflict (host, port) do update set state = excluded.state`,
    [c.node, old.host, old.port, c.formerName, c.formerState],
  );
  await setDegraded({ client }, c.node, c.degraded, c.degradedReason);
}
