// A small catalog for routing tests: home + two data nodes, keyspace "tenants" (bigint, two
// ranges split at 0), keyspace "users" (uuid, one range per data node), and tables of each kind.
// `frozen`: the tenants range [0, MAX] (owned by n2) is frozen; `failingOver`: that node is;
// `moves`: moves in progress.
import { buildSnapshot, type RangeMove, type Snapshot } from '@tessera/keyspace';

const MIN = -(2n ** 63n);
const MAX = 2n ** 63n - 1n;

export interface FixtureOptions {
  epoch?: bigint;
  frozen?: boolean;
  failingOver?: string;
  /** Moves in progress (Catalog.moves). */
  moves?: readonly RangeMove[];
}

export function fixtureCatalog(opts: FixtureOptions = {}): Snapshot {
  const failing = (name: string) => (opts.failingOver === name ? { failingOver: true } : {});
  return buildSnapshot({
    epoch: opts.epoch ?? 7n,
    clusterUid: 'test',
    nodes: [
      { name: 'home', host: '127.0.0.1', port: 1, role: 'home', state: 'active' },
      { name: 'n1', host: '127.0.0.1', port: 2, role: 'data', state: 'active', ...failing('n1') },
      { name: 'n2', host: '127.0.0.1', port: 3, role: 'data', state: 'active', ...failing('n2') },
    ],
    keyspaces: [
      { name: 'tenants', keyType: 'bigint', seed: 0n },
      { name: 'users', keyType: 'uuid', seed: 42n },
      { name: 'solo', keyType: 'bigint', seed: 0n },
    ],
    ranges: [
      { keyspace: 'tenants', lo: MIN, hi: -1n, owner: 'n1', state: 'active' },
      {
        keyspace: 'tenants',
        lo: 0n,
        hi: MAX,
        owner: 'n2',
        state: opts.frozen === true ? 'frozen' : 'active',
      },
      { keyspace: 'users', lo: MIN, hi: -1n, owner: 'n1', state: 'active' },
      { keyspace: 'users', lo: 0n, hi: MAX, owner: 'n2', state: 'active' },
      { keyspace: 'solo', lo: MIN, hi: MAX, owner: 'n1', state: 'active' },
    ],
    tables: [
      {
        schema: 'public',
        name: 'orders',
        kind: 'sharded',
        keyspace: 'tenants',
        keyColumn: 'tenant_id',
      },
      {
        schema: 'public',
        name: 'items',
        kind: 'sharded',
        keyspace: 'tenants',
        keyColumn: 'tenant_id',
      },
      {
        schema: 'public',
        name: 'profiles',
        kind: 'sharded',
        keyspace: 'users',
        keyColumn: 'id',
      },
      {
        schema: 'public',
        name: 'logs',
        kind: 'sharded',
        keyspace: 'solo',
        keyColumn: 'id',
      },
      { schema: 'public', name: 'countries', kind: 'reference' },
      { schema: 'public', name: 'settings', kind: 'global' },
    ],
    moves: opts.moves,
  });
}
