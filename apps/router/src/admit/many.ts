// admitMany: a simple Query holding several statements runs as one text on one node, or not at
// all: each statement is routed against the same snapshot and they must agree on the node.
import type { Analysis } from '@tessera/sql';
import { inFailedTransaction } from '../commands/plan.js';
import { unsupported } from '../errors.js';
import { namedSnapshot } from '../routing/names.js';
import { route } from '../routing/route.js';
import { home, single, type Route } from '../routing/route-types.js';
import { NO_BIND } from '../statement/statement.js';
import type { AdmitTxn } from './admit.js';
import type { Admission, Decision } from './decision.js';
import { holdReason } from './hold.js';

const refused = <E extends Admission>(message: string): Decision<E> => ({
  kind: 'refused',
  error: unsupported(message),
});

export function admitMany<E extends Admission>(
  analyses: readonly Analysis[],
  epoch: E,
  txn: AdmitTxn,
): Decision<E> {
  const snapshot = namedSnapshot(epoch.snapshot, txn.names);
  if (txn.phase === 'cross') {
    // One node runs the whole text: statements every node of the transaction must see cannot
    // be in it, and a failed transaction fails it whatever node it goes to.
    if (analyses.some((a) => a.kind === 'transaction' || a.kind === 'set'))
      return refused(
        'transaction control and SET in a multi-statement query are not supported in a transaction across nodes; send them on their own',
      );
    if (txn.status === 'E') return { kind: 'refused', error: inFailedTransaction() };
  }
  let node: string | undefined;
  const routed: { a: Analysis; r: Route }[] = [];
  for (const a of analyses) {
    if (a.kind === 'transaction' || a.kind === 'set' || a.kind === 'show') continue;
    // LISTEN and UNLISTEN run on the home node like the rest of such a text (execute/executor.ts).
    if (
      a.kind === 'discard' ||
      a.kind === 'deallocate' ||
      a.kind === 'prepare' ||
      a.kind === 'execute'
    )
      return refused(
        `${a.kind.toUpperCase()} in a multi-statement query is not supported by the router; send it on its own`,
      );
    const r = route(a, snapshot, NO_BIND);
    if (r.kind === 'refuse') return refused(r.message);
    if (r.kind !== 'node')
      return refused(
        'a multi-statement query with a statement that runs on several nodes is not supported yet; send the statements one by one',
      );
    routed.push({ a, r });
    if (r.flexible) continue;
    if (node !== undefined && node !== r.node)
      return refused(
        `the statements of this query run on different nodes ("${node}" and "${r.node}"); send them one by one`,
      );
    node = r.node;
  }
  for (const { a, r } of routed) {
    const reason = holdReason(a, r, snapshot, NO_BIND, txn);
    if (reason !== undefined) return { kind: 'held', reason, epoch };
  }
  const r = node === undefined ? home(snapshot, true) : single(node);
  return { kind: 'routed', route: r, epoch, effect: undefined };
}
