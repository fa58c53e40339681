// Public surface of @tessera/sql: statement analysis (plain, frozen data per statement), its
// cache, INSERT splitting, quoting helpers, and multi-node read planning (plans are data).
export { initSqlParser, isSqlParserReady } from './parser.js';
export { analyze, analyzeAll } from './analyze.js';
export { AnalysisCache } from './cache.js';
export type { AnalysisCacheOptions } from './cache.js';
export { normalizeLiterals } from './literals.js';
export type { LiteralClass, LiteralSlot, NormalizedText } from './literals.js';
export { rebuildInsert, rebuildInsertRenumbered } from './rebuild.js';
export { restrictTables } from './restrict.js';
export { substituteViews } from './views.js';
export { replaceCalls } from './replace-calls.js';
export { replaceColumn } from './replace-column.js';
export type { ColumnTarget } from './replace-column.js';
export type { CallReplacement } from './replace-calls.js';
export type { ViewQueryOf } from './views.js';
export type { RestrictionOf } from './restrict.js';
export type { RebuiltInsert } from './rebuild.js';
export { quoteIdent, quoteLiteral, quoteQualified } from './quote.js';
export { copyOptionsSql } from './copy.js';
export { SqlError, SQLSTATE_SYNTAX_ERROR, SQLSTATE_FEATURE_NOT_SUPPORTED } from './errors.js';
export { parseArrayLiteral } from './values.js';
export { queryLevels } from './levels.js';
export {
  TABLE_COLUMNS_SQL,
  implicitInsertColumns,
  insertValuesSql,
  planInsertSelect,
} from './insert-split.js';
export type { InsertSelectPlan } from './insert-split.js';
export { NO_SESSION_STATE, makesTemp, sessionStateOf, sessionStateOfAll } from './session-state.js';
export type { SessionStateChange, SessionStateKind } from './session-state.js';
export { insertLayout } from './insert-layout.js';
export type { InsertLayout, ValuesItem } from './insert-layout.js';
export { sequenceCallSelect } from './sequence-calls.js';
export type { SequenceCall } from './sequence-calls.js';
export type {
  Analysis,
  AnalysisBase,
  AnalysisKind,
  ColumnAt,
  ColumnDefinition,
  ColumnEquality,
  ConstValue,
  ConstraintDefinition,
  CopyFromAnalysis,
  CopyOptions,
  CopyToAnalysis,
  CreateTableInfo,
  DdlAnalysis,
  DdlCommand,
  DdlObject,
  DeallocateAnalysis,
  DeleteAnalysis,
  DiscardAnalysis,
  ExecuteAnalysis,
  ExplainAnalysis,
  InsertAnalysis,
  KeyPin,
  ListenAnalysis,
  LiteralKind,
  MaintenanceAnalysis,
  NotifyAnalysis,
  OnConflict,
  ParamSpan,
  ParamValue,
  PinValue,
  PrepareAnalysis,
  RowValue,
  SelectAnalysis,
  SelectShape,
  SetAnalysis,
  ShowAnalysis,
  TableRef,
  TextSpan,
  TransactionAction,
  TransactionAnalysis,
  UnlistenAnalysis,
  UpdateAnalysis,
  UtilityAnalysis,
  CursorInfo,
  CursorFetch,
  WhereFacts,
} from './types.js';
export { planRead, ALL_PLAN_FEATURES } from './plan/plan.js';
export { explainPlan } from './plan/explain.js';
export {
  TRANSACTION_TIME_PLACEHOLDER,
  TRANSACTION_TIME_SQL,
  bindTransactionTime,
  formatTransactionTime,
} from './plan/transaction-time.js';
export type {
  AggregateFn,
  ColumnIndex,
  CompareOp,
  Compute,
  ComputedColumn,
  CountRows,
  Expr,
  PlanOptions,
  ScalarType,
  Distinct,
  Filter,
  FinalAggregate,
  FinalColumn,
  Limit,
  LimitValue,
  MergeSort,
  Operand,
  PlanNode,
  PlannerCatalog,
  PlannerTable,
  Predicate,
  Project,
  ReadPlan,
  ReadPlanResult,
  RefusedPlan,
  Scatter,
  Sort,
  SortKey,
} from './plan/types.js';
