// CreateKeyspace: a new keyspace and its first ranges, split evenly and owned round-robin by the
// active data nodes in name order (the home node when there is none).
import { evenRanges, type KeyTypeName } from '@tessera/keyspace';
import { keyTypeName, type CreateKeyspaceRequest } from '@tessera/proto';
import { alreadyExists, failedPrecondition, invalidArgument } from '../errors.js';
import type { ChangeTx } from './catalog-store.js';
import { checkName } from './names.js';

export const MAX_INITIAL_RANGES = 4096;

export async function createKeyspace(tx: ChangeTx, req: CreateKeyspaceRequest): Promise<void> {
  const { client } = tx;
  const name = checkName('keyspace name', req.name);
  let keyType: KeyTypeName;
  try {
    keyType = keyTypeName(req.keyType);
  } catch (e) {
    // keyspace's sentence names the supported types.
    throw invalidArgument(e instanceof Error ? e.message : String(e));
  }
  const count = req.ranges === 0 ? 1 : req.ranges;
  if (count < 1 || count > MAX_INITIAL_RANGES) {
    throw invalidArgument(`a keyspace starts with 1 to ${MAX_INITIAL_RANGES} ranges, not ${count}`);
  }
  const exists = await client.query('select 1 from tessera.keyspace where name = $1', [name]);
  if (exists.rowCount !== 0) throw alreadyExists(`keyspace ${name} already exists`);

  const owners = await pickOwners(tx);
  await client.query('insert into tessera.keyspace (name, key_type, seed) values ($1, $2, $3)', [
    name,
    keyType,
    req.seed.toString(),
  ]);
  const slices = evenRanges(count);
  // One statement for all ranges: arrays of bounds and owners, unnested side by side.
  await client.query(
    `insert into tessera.range (keyspace, lo, hi, owner, state)
     select $1, lo, hi, owner, 'active' from unnest($2::int8[], $3::int8[], $4::text[]) as r(lo, hi, owner)`,
    [
      name,
      slices.map((s) => s.lo.toString()),
      slices.map((s) => s.hi.toString()),
      slices.map((_, i) => owners[i % owners.length]!),
    ],
  );
  tx.touch(name);
}

async function pickOwners({ client }: ChangeTx): Promise<string[]> {
  const data = await client.query<{ name: string }>(
    `select name from tessera.node where role = 'data' and state = 'active' order by name collate "C"`,
  );
  if (data.rows.length > 0) return data.rows.map((r) => r.name);
  const home = await client.query<{ name: string }>(
    `select name from tessera.node where role = 'home'`,
  );
  if (home.rows.length > 0) return home.rows.map((r) => r.name);
  throw failedPrecondition('there are no nodes to own the ranges; add a node first');
}
