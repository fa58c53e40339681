// Every job kind this mover runs, by the name the CLI submits it with.
import type { JobKind } from '../job/kind.js';
import { moveKind } from '../move/move-kind.js';
import { mergeKind } from './merge.js';
import { nodeAddKind } from './node-add.js';
import { drainKind, rebalanceKind } from './rebalance.js';
import { splitKind } from './split.js';
import { verifyKind } from './verify.js';

export const JOB_KINDS: readonly JobKind[] = [
  moveKind,
  splitKind,
  mergeKind,
  verifyKind,
  rebalanceKind,
  drainKind,
  nodeAddKind,
];
