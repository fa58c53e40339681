// Public surface of @tessera/twopc: the cross-node commit protocol (PREPARE, log the decision,
// COMMIT PREPARED) as a small state machine over seams its caller implements, plus txid/gid names.
export {
  commitAcrossNodes,
  DEFAULT_DECIDE_DEADLINE_MS,
  type CommitOptions,
  type CommitOutcome,
  type PendingCommit,
} from './commit.js';
export {
  CommitAbortedError,
  CommitUnfinishedError,
  InDoubtError,
  TwoPhaseError,
} from './errors.js';
export { finishCommit, type FinishOptions, type Recommit } from './finish.js';
export {
  gidFor,
  gidPrefix,
  isSafeId,
  MAX_GID_BYTES,
  newTxid,
  parseGid,
  type ParsedGid,
} from './gid.js';
export {
  sqlParticipant,
  type DecisionLog,
  type DecisionText,
  type FaultPoint,
  type Participant,
  type RunSql,
} from './participant.js';
