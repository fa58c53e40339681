// Whether a statement must wait for a later epoch (pure): it writes rows of a range whose state
// is frozen (a move's cutover: writes wait, reads go on on the old owner), or it runs on a node
// that is failing over. A transaction that already wrote on the range's owner under an older
// epoch is not held: it must be able to finish, or the drain the mover waits for never ends.
import type { Range, ShardedTableView, Snapshot } from '@tessera/keyspace';
import type { Analysis, KeyPin, RowValue, WhereFacts } from '@tessera/sql';
import { hashPinValues, type ParamSource } from '../routing/key-hash.js';
import type { Route } from '../routing/route-types.js';
import { lookupTable } from '../routing/tables.js';
import type { HoldReason } from './decision.js';

/** What admit needs to know of the transaction for the Held rules. */
export interface HoldTxn {
  /** The epoch the part on `node` first wrote under, if it wrote. */
  firstWriteEpoch(node: string): bigint | undefined;
}

/** The reason `a` (routed as `r`) waits, or undefined when it runs now. */
export function holdReason(
  a: Analysis,
  r: Route,
  snapshot: Snapshot,
  params: ParamSource | undefined,
  txn: HoldTxn,
): HoldReason | undefined {
  if (snapshot.failingOver.size > 0) {
    for (const node of nodesOf(r))
      if (snapshot.failingOver.has(node)) return { kind: 'node', node };
  }
  if (!snapshot.hasFrozen || !writesRows(a)) return undefined;
  const range = frozenRangeWritten(a, r, snapshot, params);
  if (range === undefined) return undefined;
  const since = txn.firstWriteEpoch(range.owner);
  if (since !== undefined && since < snapshot.epoch) return undefined;
  return { kind: 'range', keyspace: range.keyspace, lo: range.lo };
}

/** Statements that change rows (a SELECT only with a data-modifying CTE or a locking clause). */
function writesRows(a: Analysis): boolean {
  switch (a.kind) {
    case 'insert':
    case 'update':
    case 'delete':
    case 'copy_from':
      return true;
    case 'select':
      return a.hasDataModifyingCtes || a.shape.hasLocking;
    default:
      return false;
  }
}

export function nodesOf(r: Route): readonly string[] {
  switch (r.kind) {
    case 'node':
      return [r.node];
    case 'all':
    case 'scatter':
    case 'multi_write':
    case 'insert_select':
      return r.nodes;
    case 'split':
      return r.parts.map((p) => p.node);
    case 'copy':
      return r.mode === 'node' ? [r.node] : r.nodes;
    case 'refuse':
    case 'params':
      return [];
  }
}

/** A frozen range the statement may write rows of, if any. */
function frozenRangeWritten(
  a: Analysis,
  r: Route,
  snapshot: Snapshot,
  params: ParamSource | undefined,
): Range | undefined {
  const nodes = nodesOf(r);
  // The written tables; a locking SELECT locks every table it reads.
  const targets = a.tables.some((t) => t.role === 'target')
    ? a.tables.flatMap((t, i) => (t.role === 'target' ? [i] : []))
    : a.tables.map((_, i) => i);
  for (const i of targets) {
    const ref = a.tables[i]!;
    const view = lookupTable(snapshot, ref.schema, ref.name);
    if (view.kind !== 'sharded' || !view.keyspace.hasFrozen) continue;
    const hashes = writtenHashes(a, i, view, params);
    const frozen =
      hashes === undefined
        ? view.keyspace.ranges.ranges.find((x) => x.state === 'frozen' && nodes.includes(x.owner))
        : hashes.map((h) => view.keyspace.rangeOf(h)).find((x) => x.state === 'frozen');
    if (frozen !== undefined) return frozen;
  }
  return undefined;
}

/** The key hashes of the rows table `i` may have written, or undefined when they are unknown. */
function writtenHashes(
  a: Analysis,
  i: number,
  view: ShardedTableView,
  params: ParamSource | undefined,
): bigint[] | undefined {
  const ks = view.keyspace;
  if (a.kind === 'insert' && i === a.targetIndex) {
    const at = a.columns?.indexOf(view.keyColumn) ?? -1;
    if (a.rows === undefined || at < 0) return undefined;
    const keys: RowValue[] = a.rows.map((row) => row[at] ?? { kind: 'expr' });
    return known(hashPinValues(keys, ks.keyType, ks.seed, params, 'assign'));
  }
  const where = whereOf(a);
  if (where === undefined) return undefined;
  const pin = where.pins.find(
    (p: KeyPin) => p.tableIndex === i && p.column === view.keyColumn && !p.ambiguous,
  );
  if (pin === undefined) return undefined;
  return known(hashPinValues(pin.values, ks.keyType, ks.seed, params));
}

function whereOf(a: Analysis): WhereFacts | undefined {
  return a.kind === 'select' || a.kind === 'update' || a.kind === 'delete' ? a.where : undefined;
}

function known(h: ReturnType<typeof hashPinValues>): bigint[] | undefined {
  if (h === 'params' || h === 'unpinnable') return undefined;
  // A NULL key matches no row (or fails NOT NULL): it writes nothing.
  return h.filter((x): x is bigint => x !== null);
}
