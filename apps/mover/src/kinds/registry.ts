// Every job kind this mover runs, by the name the CLI submits it with.
import type { JobKind } from '../job/kind.js';
import { moveKind } from '../move/move-kind.js';

export const JOB_KINDS: readonly JobKind[] = [moveKind];
