// Catalog snapshots, range lookup and validation, and fence SQL: the pure keyspace logic every
// service shares (DESIGN.md section 2).
export { HASH_MIN, HASH_MAX, evenRanges, midpoint, type HashRange } from './hash-space.js';
export { validateRanges } from './validate-ranges.js';
export { RangeMap } from './range-map.js';
export { buildSnapshot, type CatalogSnapshot, type KeyspaceView } from './snapshot.js';
export { keyTypeName, parseKeyType, hashFunctionName, type KeyTypeName } from './key-type.js';
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
