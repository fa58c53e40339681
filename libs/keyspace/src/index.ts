// The catalog's domain types and the pure keyspace logic every service shares (DESIGN.md section
// 2): one validated snapshot per epoch, range lookup and validation, key types, fence SQL. No
// wire format and no I/O: @tessera/proto maps the coordinator's messages into these types.
export type {
  Catalog,
  Keyspace,
  Node,
  NodeRole,
  NodeState,
  Range,
  RangeMove,
  RangeState,
  Table,
} from './catalog.js';
export { HASH_MIN, HASH_MAX, evenRanges, midpoint, type HashRange } from './hash-space.js';
export { validateRanges } from './validate-ranges.js';
export { RangeMap } from './range-map.js';
export {
  buildSnapshot,
  type KeyspaceView,
  type ShardedTableView,
  type Snapshot,
  type TableView,
} from './snapshot.js';
export {
  hashFunctionName,
  parseKeyTypeName,
  SUPPORTED_KEY_TYPES,
  type KeyTypeName,
} from './key-type.js';
export {
  fenceCheckSql,
  mergeRanges,
  keyHashSql,
  ownsFunctionName,
  ownsFunctionSql,
  functionFenceCheckSql,
  functionFenceStatementSql,
  isFunctionFence,
  rowFilterSql,
} from './fence.js';
export { CatalogInvalidError, UnknownKeyspaceError } from './errors.js';
export {
  movesByKeyspace,
  ddlRefusalForMove,
  type MoveInProgress,
  type DdlRefusal,
} from './moves.js';
