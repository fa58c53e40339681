// The slice of the catalog routing reads, as the router's own small seam (STYLE.md principle 5):
// built once per epoch from the coordinator's Catalog (catalog/routing-catalog.ts), immutable.
import type { KeyType } from '@tessera/pg-hash';

export interface KeyspaceView {
  readonly name: string;
  readonly keyType: KeyType;
  readonly seed: bigint;
  /** Name of the node owning the range that holds `hash`. */
  ownerOf(hash: bigint): string;
  /** Every node owning at least one range, sorted. */
  readonly owners: readonly string[];
}

export type TableView =
  | {
      readonly kind: 'sharded';
      readonly schema: string;
      readonly name: string;
      readonly keyspace: KeyspaceView;
      readonly keyColumn: string;
    }
  | { readonly kind: 'reference'; readonly schema: string; readonly name: string }
  | { readonly kind: 'global'; readonly schema: string; readonly name: string };

export interface RoutingCatalog {
  readonly epoch: bigint;
  /** The cluster's uid: it goes into every 2PC gid, so recovery finds only this cluster's. */
  readonly clusterUid: string;
  /** The home node's name. */
  readonly home: string;
  /** Nodes that hold copies of distributed tables (every active node, home included), sorted. */
  readonly nodes: readonly string[];
  /** The declared table, or undefined (undeclared tables are global). */
  table(schema: string, name: string): TableView | undefined;
  /** Where a node listens (its primary). */
  address(node: string): { readonly host: string; readonly port: number } | undefined;
  /** The body of the `tessera_owns` CHECK for `table` on `node` (`false` when it owns nothing). */
  fenceCheck(table: TableView & { kind: 'sharded' }, node: string): string;
}
