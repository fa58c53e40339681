// The catalog's domain types (DESIGN.md section 2) as plain data, independent of any wire format:
// @tessera/proto's mapper (catalog-mapper.ts) turns the coordinator's messages into these, and
// buildSnapshot indexes them for one epoch.
import type { KeyTypeName } from './key-type.js';

export type NodeRole = 'home' | 'data';
export type NodeState = 'joining' | 'active' | 'draining' | 'removed';

export interface Node {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly role: NodeRole;
  readonly state: NodeState;
  /** The node's streaming replica, if it has one. */
  readonly replica?: { readonly host: string; readonly port: number } | undefined;
  /**
   * Set while the node's primary is being replaced (failover): routers hold its new statements
   * until a later epoch clears it (with the new primary's address in host and port).
   */
  readonly failingOver?: boolean | undefined;
}

export interface Keyspace {
  readonly name: string;
  readonly keyType: KeyTypeName;
  readonly seed: bigint;
}

/** `frozen` during a move's cutover: writes to the range wait, reads go on on its owner. */
export type RangeState = 'active' | 'frozen';

/** `[lo, hi]` (inclusive, signed 64-bit hash values) of one keyspace, and who owns it. */
export interface Range {
  readonly keyspace: string;
  readonly lo: bigint;
  readonly hi: bigint;
  readonly owner: string;
  readonly state: RangeState;
}

export type Table =
  | {
      readonly kind: 'sharded';
      readonly schema: string;
      readonly name: string;
      readonly keyspace: string;
      readonly keyColumn: string;
    }
  /** A full copy on every node. */
  | { readonly kind: 'reference'; readonly schema: string; readonly name: string }
  /** The home node only (also what a table the catalog does not name is). */
  | { readonly kind: 'global'; readonly schema: string; readonly name: string };

/** A move of `[lo, hi]` of a keyspace in progress (a mover job): DDL on its tables waits. */
export interface RangeMove {
  readonly keyspace: string;
  readonly lo: bigint;
  readonly hi: bigint;
  readonly jobId: bigint;
  readonly source: string;
  readonly target: string;
}

/** One epoch of the catalog, whole. */
export interface Catalog {
  readonly epoch: bigint;
  /** The cluster's uid: it goes into every 2PC gid, so recovery finds only this cluster's. */
  readonly clusterUid: string;
  readonly nodes: readonly Node[];
  readonly keyspaces: readonly Keyspace[];
  readonly ranges: readonly Range[];
  readonly tables: readonly Table[];
  /** Moves in progress (absent: none). */
  readonly moves?: readonly RangeMove[] | undefined;
}
