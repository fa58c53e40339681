// Builds the router's RoutingCatalog from one coordinator Catalog: validated whole by the keyspace
// library (a catalog that breaks an invariant throws CatalogInvalidError and is never used), then
// re-indexed into the small view routing reads, frozen.
import { buildSnapshot, fenceCheckSql } from '@tessera/keyspace';
import { NodeState, TableKind, type Catalog } from '@tessera/proto';
import { quoteIdent } from '@tessera/sql';
import type { KeyspaceView, RoutingCatalog, TableView } from '../routing/catalog-view.js';

export function buildRoutingCatalog(catalog: Catalog): RoutingCatalog {
  const snap = buildSnapshot(catalog);
  const live = [...snap.nodes.values()].filter((n) => n.state !== NodeState.REMOVED);
  const nodes = Object.freeze(live.map((n) => n.name).sort());
  const addresses = new Map(
    live.map((n) => [n.name, Object.freeze({ host: n.host, port: n.port })]),
  );

  const keyspaces = new Map<string, KeyspaceView>();
  for (const [name, ks] of snap.keyspaces) {
    const map = ks.ranges;
    keyspaces.set(
      name,
      Object.freeze({
        name,
        keyType: ks.keyType,
        seed: ks.seed,
        owners: Object.freeze([...new Set(map.ranges.map((r) => r.owner))].sort()),
        ownerOf: (hash: bigint) => map.ownerOf(hash).owner,
      }),
    );
  }
  const tables = new Map<string, TableView>();
  for (const [key, t] of snap.tables) {
    if (t.kind === TableKind.SHARDED) {
      tables.set(
        key,
        Object.freeze({
          kind: 'sharded',
          schema: t.schema,
          name: t.name,
          keyspace: keyspaces.get(t.keyspace)!,
          keyColumn: t.keyColumn,
        }),
      );
    } else if (t.kind === TableKind.REFERENCE) {
      tables.set(key, Object.freeze({ kind: 'reference', schema: t.schema, name: t.name }));
    } else {
      tables.set(key, Object.freeze({ kind: 'global', schema: t.schema, name: t.name }));
    }
  }
  return Object.freeze({
    epoch: snap.epoch,
    clusterUid: snap.clusterUid,
    home: snap.home.name,
    nodes,
    table: (schema: string, name: string) => tables.get(`${schema}.${name}`),
    address: (node: string) => addresses.get(node),
    fenceCheck(view: TableView & { kind: 'sharded' }, node: string): string {
      const owned = snap.ownedRanges(node).get(view.keyspace.name) ?? [];
      return fenceCheckSql(
        quoteIdent(view.keyColumn),
        view.keyspace.keyType,
        view.keyspace.seed,
        owned,
      );
    },
  });
}
