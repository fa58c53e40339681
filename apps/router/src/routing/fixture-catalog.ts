// A small catalog for routing tests: home + two data nodes, keyspace "tenants" (bigint, two
// ranges split at 0), keyspace "users" (uuid, one range per data node), and tables of each kind.
import {
  CatalogSchema,
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  TableKind,
  create,
} from '@tessera/proto';
import { buildRoutingCatalog } from '../catalog/routing-catalog.js';
import type { RoutingCatalog } from './catalog-view.js';

const MIN = -(2n ** 63n);
const MAX = 2n ** 63n - 1n;

export function fixtureCatalog(): RoutingCatalog {
  return buildRoutingCatalog(
    create(CatalogSchema, {
      epoch: 7n,
      clusterUid: 'test',
      nodes: [
        { name: 'home', host: '127.0.0.1', port: 1, role: NodeRole.HOME, state: NodeState.ACTIVE },
        { name: 'n1', host: '127.0.0.1', port: 2, role: NodeRole.DATA, state: NodeState.ACTIVE },
        { name: 'n2', host: '127.0.0.1', port: 3, role: NodeRole.DATA, state: NodeState.ACTIVE },
      ],
      keyspaces: [
        { name: 'tenants', keyType: KeyType.BIGINT, seed: 0n },
        { name: 'users', keyType: KeyType.UUID, seed: 42n },
        { name: 'solo', keyType: KeyType.BIGINT, seed: 0n },
      ],
      ranges: [
        { keyspace: 'tenants', lo: MIN, hi: -1n, owner: 'n1', state: RangeState.ACTIVE },
        { keyspace: 'tenants', lo: 0n, hi: MAX, owner: 'n2', state: RangeState.ACTIVE },
        { keyspace: 'users', lo: MIN, hi: -1n, owner: 'n1', state: RangeState.ACTIVE },
        { keyspace: 'users', lo: 0n, hi: MAX, owner: 'n2', state: RangeState.ACTIVE },
        { keyspace: 'solo', lo: MIN, hi: MAX, owner: 'n1', state: RangeState.ACTIVE },
      ],
      tables: [
        {
          schema: 'public',
          name: 'orders',
          kind: TableKind.SHARDED,
          keyspace: 'tenants',
          keyColumn: 'tenant_id',
        },
        {
          schema: 'public',
          name: 'items',
          kind: TableKind.SHARDED,
          keyspace: 'tenants',
          keyColumn: 'tenant_id',
        },
        {
          schema: 'public',
          name: 'profiles',
          kind: TableKind.SHARDED,
          keyspace: 'users',
          keyColumn: 'id',
        },
        {
          schema: 'public',
          name: 'logs',
          kind: TableKind.SHARDED,
          keyspace: 'solo',
          keyColumn: 'id',
        },
        { schema: 'public', name: 'countries', kind: TableKind.REFERENCE },
        { schema: 'public', name: 'settings', kind: TableKind.GLOBAL },
      ],
    }),
  );
}
