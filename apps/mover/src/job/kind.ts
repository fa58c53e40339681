// What a job kind implements: running (or resuming) the job to its end from its durable record,
// and undoing what it did when it is cancelled or fails before its point of no return.
import type { JobRuntime } from './runtime.js';

export interface Outcome {
  state: 'done' | 'verify_failed';
  result?: unknown;
  error?: string;
}

export interface JobKind {
  readonly kind: string;
  /** Step names, in order, for a job of this kind submitted with `spec`. */
  steps(spec: unknown): string[];
  /** Runs the job to its end, skipping steps already done; safe to call again after any crash. */
  run(rt: JobRuntime): Promise<Outcome>;
  /** Removes what the job created and restores what it changed; idempotent. */
  undo(rt: JobRuntime, why: 'cancelled' | 'failed'): Promise<void>;
}
