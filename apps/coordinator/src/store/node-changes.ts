// Catalog changes to the node list: AddNode and RemoveNode (DESIGN.md section 2, "node").
import { NodeRole, type AddNodeRequest, type RemoveNodeRequest } from '@tessera/proto';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from '../errors.js';
import type { ChangeTx } from './catalog-store.js';
import { haModeToText } from './enums.js';
import { checkName, checkPort } from './names.js';
import { checkAddressFree, insertReplica, replicaName } from './replica-changes.js';

export async function addNode({ client }: ChangeTx, req: AddNodeRequest): Promise<void> {
  const name = checkName('node name', req.name);
  if (req.host === '') throw invalidArgument(`node ${name} needs a host`);
  const port = checkPort('port', req.port);
  let role: 'home' | 'data';
  switch (req.role) {
    case NodeRole.UNSPECIFIED:
    case NodeRole.DATA:
      role = 'data';
      break;
    case NodeRole.HOME:
      role = 'home';
      break;
    default:
      throw invalidArgument(`node role ${req.role} is not one of NODE_ROLE_HOME, NODE_ROLE_DATA`);
  }
  const haMode = haModeToText(req.haMode);
  if (haMode === undefined)
    throw invalidArgument(
      `HA mode ${req.haMode} is not one of HA_MODE_NATIVE, HA_MODE_PATRONI, HA_MODE_CNPG`,
    );
  const hasReplica = req.replicaHost !== '' || req.replicaPort !== 0;
  if (hasReplica) {
    if (req.replicaHost === '')
      throw invalidArgument(`node ${name} has a replica port but no replica host`);
    checkPort('replica port', req.replicaPort);
  }

  const same = await client.query<{ name: string; host: string; port: number; role: string }>(
    `select name, host, port, role from tessera.node
      where name = $1 or (host = $2 and port = $3) or ($4 and role = 'home')`,
    [name, req.host, port, role === 'home'],
  );
  for (const n of same.rows) {
    if (n.name === name) throw alreadyExists(`node ${name} already exists`);
    if (n.host === req.host && n.port === port) {
      throw alreadyExists(`node ${n.name} already has the address ${req.host}:${port}`);
    }
    throw failedPrecondition(
      `node ${n.name} is already the home node, and a cluster has exactly one`,
    );
  }
  await checkAddressFree(client, req.host, port);
  await client.query(
    `insert into tessera.node (name, host, port, role, state, ha_mode)
     values ($1, $2, $3, $4, 'active', $5)`,
    [name, req.host, port, role, haMode],
  );
  if (hasReplica) {
    if (req.replicaHost === req.host && req.replicaPort === port)
      throw invalidArgument(`node ${name}'s replica cannot have the primary's own address`);
    await insertReplica(client, {
      node: name,
      host: req.replicaHost,
      port: req.replicaPort,
      name: replicaName(name, req.replicaHost, req.replicaPort, req.replicaName),
    });
  }
}

export async function removeNode({ client }: ChangeTx, req: RemoveNodeRequest): Promise<void> {
  const name = checkName('node name', req.name);
  const node = await client.query<{ role: string; owned: string }>(
    `select role, (select count(*) from tessera.range r where r.owner = n.name)::text as owned
       from tessera.node n where name = $1`,
    [name],
  );
  const row = node.rows[0];
  if (!row) throw notFound(`no node named ${name}`);
  if (row.role === 'home')
    throw failedPrecondition(`node ${name} is the home node and cannot be removed`);
  if (row.owned !== '0') {
    throw failedPrecondition(
      `node ${name} still owns ${row.owned} range(s); move them to other nodes first`,
    );
  }
  await client.query('delete from tessera.node where name = $1', [name]);
}
