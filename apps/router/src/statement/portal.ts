// Portals the router runs itself (extended protocol): a session command answered by the router,
// or a statement on several nodes run at its Execute under the decision (and so the snapshot) its
// Bind was admitted with. Portals bound on a node are the node's business, not kept here.
import type { Analysis } from '@tessera/sql';
import type { Routed } from '../admit/decision.js';
import type { Epoch } from '../catalog/epochs.js';
import type { SessionCommand } from '../commands/plan.js';
import type { BoundValues } from '../execute/bound.js';

/** The client's Bind of a statement the router runs across nodes. */
export interface BindValues {
  readonly values: readonly (Buffer | null)[];
  /** One format per value: 0 text, 1 binary. */
  readonly formats: readonly number[];
  /** The client's Parse parameter types (0 = left to the server). */
  readonly types: readonly number[];
  /** The statement's highest `$n`. */
  readonly paramCount: number;
  /** The Bind's result format codes (none: all text; one: every column; else one per column). */
  readonly resultFormats: readonly number[];
}

export type RouterPortal =
  | { readonly kind: 'local'; readonly command: SessionCommand }
  | {
      /** A read across nodes, DDL or a write on several nodes (scatter, all, multi_write). */
      readonly kind: 'several';
      readonly decision: Routed<Epoch>;
      readonly analysis: Analysis;
      /** The client's statement text (a Describe of the portal asks a node about it). */
      readonly sql: string;
      readonly bind: BindValues;
      /** A write's Bind, sent to each node as it came (undefined: a read across nodes). */
      readonly bound?: BoundValues | undefined;
      /** A Describe of the portal came just before its Execute: the Execute sends the RowDescription. */
      describe: boolean;
    };

/** The result formats a several-node portal's Bind asked for (a write's as it came). */
export function portalResultFormats(p: RouterPortal & { kind: 'several' }): readonly number[] {
  return p.bound?.resultFormats ?? p.bind.resultFormats;
}
