// Public surface of @tessera/merge: executing a multi-node read plan (from @tessera/sql's
// planRead) over per-node result streams, with Postgres's exact comparison and aggregate semantics.
export { executeReadPlan } from './execute.js';
export { leafResultFormats, formatOf, ClientFormats } from './formats.js';
export { mergeReturning } from './returning.js';
export type { ReturningPart } from './returning.js';
export {
  MergeError,
  SQLSTATE_FEATURE_NOT_SUPPORTED,
  SQLSTATE_NUMERIC_VALUE_OUT_OF_RANGE,
} from './errors.js';
export { parseDecimal, formatDecimal, divideDecimal, selectDivScale } from './decimal.js';
export type { Decimal } from './decimal.js';
export type {
  ExecuteOptions,
  FieldDescription,
  LeafMessage,
  LeafStream,
  LeafStreams,
  ResultMessage,
  ResultStream,
  Row,
} from './types.js';
