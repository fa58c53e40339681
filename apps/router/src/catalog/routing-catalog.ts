// The router's snapshot of one coordinator Catalog: mapped to the domain types by
// @tessera/proto, then validated whole and indexed by @tessera/keyspace (a catalog that breaks
// an invariant throws CatalogInvalidError and is never used). One snapshot per epoch.
import { buildSnapshot, type Snapshot } from '@tessera/keyspace';
import { catalogFromMessage, type Catalog } from '@tessera/proto';

export function snapshotOf(catalog: Catalog): Snapshot {
  return buildSnapshot(catalogFromMessage(catalog));
}
