// The history checker: pure, a history in and counts per anomaly class out (docs/soak.md).
export {
  checkEvents,
  checkHistoryText,
  anomalyLine,
  describeResult,
  type CheckResult,
} from './check.js';
export {
  ANOMALY_CLASSES,
  FRACTURED_KINDS,
  type AnomalyClass,
  type FracturedKind,
} from './findings.js';
export {
  pairOperations,
  parseHistoryText,
  type HistoryEvent,
  type EventType,
  type Op,
  type ProcessId,
} from './history.js';
export {
  lastFinalState,
  type CatalogRecord,
  type FinalState,
  type NodeRows,
  type NodeState,
} from './final-state.js';
export { BANK_INIT } from './bank.js';
export * from './values.js';
