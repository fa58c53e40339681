// The one place the coordinator's catalog messages meet @tessera/keyspace's domain types: enum
// values become names, empty strings absent fields, and a message the domain cannot represent
// (a node with no role, a range with no state, a reference table with a key column) is refused
// with CatalogInvalidError, as buildSnapshot refuses what breaks an invariant.
import {
  CatalogInvalidError,
  SUPPORTED_KEY_TYPES,
  parseKeyTypeName,
  type Catalog,
  type KeyTypeName,
  type Node,
  type NodeRole as DomainNodeRole,
  type NodeState as DomainNodeState,
  type Range,
  type RangeState as DomainRangeState,
  type Table,
} from '@tessera/keyspace';
import {
  KeyType,
  NodeRole,
  NodeState,
  RangeState,
  TableKind,
  type Catalog as CatalogMessage,
  type Node as NodeMessage,
  type Range as RangeMessage,
  type Table as TableMessage,
} from './gen/tessera/v1/catalog_pb.js';

/** The SQL name of a catalog key type; CatalogInvalidError for UNSPECIFIED or an unknown value. */
export function keyTypeName(keyType: KeyType): KeyTypeName {
  switch (keyType) {
    case KeyType.BIGINT:
      return 'bigint';
    case KeyType.INT:
      return 'int';
    case KeyType.SMALLINT:
      return 'smallint';
    case KeyType.TEXT:
      return 'text';
    case KeyType.UUID:
      return 'uuid';
    case KeyType.UNSPECIFIED:
      throw new CatalogInvalidError(
        `key type is unspecified; supported key types are ${SUPPORTED_KEY_TYPES}`,
      );
    default:
      throw new CatalogInvalidError(
        `key type ${String(keyType)} is unknown; supported key types are ${SUPPORTED_KEY_TYPES}`,
      );
  }
}

const KEY_TYPES: Readonly<Record<KeyTypeName, KeyType>> = {
  bigint: KeyType.BIGINT,
  int: KeyType.INT,
  smallint: KeyType.SMALLINT,
  text: KeyType.TEXT,
  uuid: KeyType.UUID,
};

/** The catalog enum of a key type name. */
export function keyTypeOf(name: KeyTypeName): KeyType {
  return KEY_TYPES[name];
}

/**
 * The catalog key type for a SQL type name as an operator or a column definition spells it
 * (aliases, any case); CatalogInvalidError for a type keys cannot have.
 */
export function parseKeyType(name: string): KeyType {
  return keyTypeOf(parseKeyTypeName(name));
}

function nodeRole(n: NodeMessage): DomainNodeRole {
  switch (n.role) {
    case NodeRole.HOME:
      return 'home';
    case NodeRole.DATA:
      return 'data';
    default:
      throw new CatalogInvalidError(`node "${n.name}" has no role (home or data)`);
  }
}

function nodeState(n: NodeMessage): DomainNodeState {
  switch (n.state) {
    case NodeState.JOINING:
      return 'joining';
    case NodeState.ACTIVE:
      return 'active';
    case NodeState.DRAINING:
      return 'draining';
    case NodeState.REMOVED:
      return 'removed';
    default:
      throw new CatalogInvalidError(`node "${n.name}" has no state`);
  }
}

function rangeState(r: RangeMessage): DomainRangeState {
  switch (r.state) {
    case RangeState.ACTIVE:
      return 'active';
    case RangeState.FROZEN:
      return 'frozen';
    default:
      throw new CatalogInvalidError(
        `range [${r.lo}, ${r.hi}] of keyspace "${r.keyspace}" has no state (active or frozen)`,
      );
  }
}

function node(n: NodeMessage): Node {
  const replica = n.replicaHost !== '' ? { host: n.replicaHost, port: n.replicaPort } : undefined;
  return {
    name: n.name,
    host: n.host,
    port: n.port,
    role: nodeRole(n),
    state: nodeState(n),
    replica,
    failingOver: n.failingOver,
  };
}

function table(t: TableMessage): Table {
  const { schema, name } = t;
  switch (t.kind) {
    case TableKind.SHARDED:
      return { kind: 'sharded', schema, name, keyspace: t.keyspace, keyColumn: t.keyColumn };
    case TableKind.REFERENCE:
    case TableKind.GLOBAL: {
      const kind = t.kind === TableKind.REFERENCE ? 'reference' : 'global';
      if (t.keyspace !== '' || t.keyColumn !== '')
        throw new CatalogInvalidError(
          `${kind} table "${schema}.${name}" has a keyspace or key column, which only sharded tables have`,
        );
      return { kind, schema, name };
    }
    default:
      throw new CatalogInvalidError(
        `table "${schema}.${name}" has no kind (sharded, reference or global)`,
      );
  }
}

/** The domain catalog of a coordinator Catalog message; CatalogInvalidError for what it cannot be. */
export function catalogFromMessage(c: CatalogMessage): Catalog {
  return {
    epoch: c.epoch,
    clusterUid: c.clusterUid,
    nodes: c.nodes.map(node),
    keyspaces: c.keyspaces.map((k) => {
      let keyType: KeyTypeName;
      try {
        keyType = keyTypeName(k.keyType);
      } catch (e) {
        throw new CatalogInvalidError(`keyspace "${k.name}": ${(e as Error).message}`);
      }
      return { name: k.name, keyType, seed: k.seed };
    }),
    ranges: c.ranges.map((r): Range => ({
      keyspace: r.keyspace,
      lo: r.lo,
      hi: r.hi,
      owner: r.owner,
      state: rangeState(r),
    })),
    tables: c.tables.map(table),
    moves: c.moves.map((m) => ({
      keyspace: m.keyspace,
      lo: m.lo,
      hi: m.hi,
      jobId: m.jobId,
      source: m.source,
      target: m.target,
    })),
  };
}
