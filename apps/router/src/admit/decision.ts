// What admit() decides for one statement (plain data): the router answers it, it runs where its
// route says under the snapshot it was routed by (carried to its Execute), it is refused, or it
// is held until a later epoch (its range is frozen, its node is failing over) or until the
// router's lease is renewed.
import type { Snapshot } from '@tessera/keyspace';
import type { Effect, SessionCommand } from '../commands/plan.js';
import type { RouterError } from '../errors.js';
import type { Route, RouteLabel } from '../routing/route-types.js';

/** What a statement is admitted under: at least the snapshot it is routed by. */
export interface Admission {
  readonly snapshot: Snapshot;
}

/** Why a statement waits for a later epoch. */
export type HoldReason =
  /** A write to a range whose state is frozen (a move's cutover). */
  | { readonly kind: 'range'; readonly keyspace: string; readonly lo: bigint }
  /** A statement for a node whose primary is being replaced. */
  | { readonly kind: 'node'; readonly node: string }
  /** Any statement on a node while this router's lease with the coordinator is lapsed. */
  | { readonly kind: 'lease' };

export type Decision<E extends Admission = Admission> =
  | { readonly kind: 'local'; readonly command: SessionCommand }
  | {
      readonly kind: 'routed';
      readonly route: Route;
      readonly epoch: E;
      /** For a session command a node runs: what the router records once it succeeded. */
      readonly effect: Effect | undefined;
    }
  | {
      readonly kind: 'refused';
      readonly error: RouterError;
      /** A refusal by routing: counted under this route label when the statement runs. */
      readonly label?: RouteLabel;
    }
  | { readonly kind: 'held'; readonly reason: HoldReason; readonly epoch: E };

export type Routed<E extends Admission = Admission> = Decision<E> & { kind: 'routed' };

/** The sentence a statement held too long fails with (40001, retryable). */
export function holdTimeoutMessage(reason: HoldReason, waitedMs: number): string {
  switch (reason.kind) {
    case 'range':
      return `the range starting at ${reason.lo} of keyspace "${reason.keyspace}" stayed frozen (a move is cutting it over) for ${waitedMs} ms; retry the transaction`;
    case 'node':
      return `node "${reason.node}" was still failing over after ${waitedMs} ms; retry the transaction`;
    case 'lease':
      return `this router could not renew its lease with the coordinator for ${waitedMs} ms, so it may be routing by an outdated catalog; retry the transaction (through another router if this lasts)`;
  }
}
