// Checks of the counters (docs/soak.md, "Counters"): each add of d also inserts a ledger row
// (op id, key, d) in the same transaction, on the same node. The ledger settles every unknown
// outcome exactly: an `info` add committed if and only if its ledger row exists. Reads are held
// to Jepsen's counter bounds, with the settled outcomes.
import type { FinalState } from './final-state.js';
import type { Findings } from './findings.js';
import type { Op } from './history.js';
import { F, TABLES, counterMicros } from './values.js';

interface Add {
  k: number;
  d: number;
  id: number;
  op: Op;
  siblings: Add[];
}

interface CounterRead {
  k: number;
  n: number;
  op: Op;
}

export interface CounterStats {
  keys: number;
  adds: number;
  reads: number;
  /** info adds the ledger settled: committed / not committed. */
  settledCommitted: number;
  settledAbsent: number;
}

export function checkCounters(
  ops: readonly Op[],
  final: FinalState | undefined,
  out: Findings,
): CounterStats {
  const byId = new Map<number, Add>();
  const addsOf = new Map<number, Add[]>();
  const reads: CounterRead[] = [];
  for (const op of ops) {
    if (op.f !== F.counter) continue;
    const micros = counterMicros(op.invoke);
    if (!micros) {
      out.add('history-malformed', `counter operation at event ${op.invokeIndex} has no valid ops`);
      continue;
    }
    const siblings: Add[] = [];
    for (const m of micros) {
      if (m[0] !== 'add') continue;
      const a: Add = { k: m[1], d: m[2], id: m[3], op, siblings };
      if (byId.has(a.id)) {
        out.add('history-malformed', `ledger id ${a.id} is used twice (ids must be unique)`);
        continue;
      }
      siblings.push(a);
      byId.set(a.id, a);
      push(addsOf, a.k, a);
    }
    if (op.status !== 'ok') continue;
    for (const m of counterMicros(op.value) ?? []) {
      if (m[0] === 'r') reads.push({ k: m[1], n: m[2] ?? 0, op });
    }
  }

  const stats: CounterStats = {
    keys: addsOf.size,
    adds: byId.size,
    reads: reads.length,
    settledCommitted: 0,
    settledAbsent: 0,
  };

  // Without a final state, Jepsen's bounds: ok and info adds may all have committed.
  let committed: (a: Add) => boolean = (a) => a.op.status !== 'fail';
  if (final) {
    const ledger = new Map<number, { k: number; d: number }[]>();
    const sumOf = new Map<number, number>();
    for (const row of final.ownedRowsOf(TABLES.ledger.name, TABLES.ledger.keyspace)) {
      const id = Number(row.get('op_id'));
      const k = Number(row.get('k'));
      const d = Number(row.get('d'));
      push(ledger, id, { k, d });
      sumOf.set(k, (sumOf.get(k) ?? 0) + d);
    }
    for (const [id, rows] of ledger) {
      const a = byId.get(id);
      if (rows.length > 1) out.add('counter-duplicated', `ledger id ${id} has ${rows.length} rows`);
      const row = rows[0]!;
      if (!a)
        out.add(
          'counter-invented',
          `ledger row ${id} (key ${row.k}, +${row.d}) was never attempted`,
        );
      else if (a.k !== row.k || a.d !== row.d)
        out.add(
          'counter-invented',
          `ledger row ${id} says key ${row.k} +${row.d}; the add was key ${a.k} +${a.d}`,
        );
      else if (a.op.status === 'fail')
        out.add(
          'counter-aborted',
          `ledger row ${id} exists, but its add failed (process ${a.op.process}, event ${a.op.invokeIndex})`,
        );
    }
    for (const a of byId.values()) {
      const has = ledger.has(a.id);
      if (a.op.status === 'ok' && !has)
        out.add(
          'counter-lost',
          `ok add ${a.id} (key ${a.k}, +${a.d}, process ${a.op.process}) has no ledger row`,
        );
      if (a.op.status === 'info') {
        if (has) stats.settledCommitted++;
        else stats.settledAbsent++;
      }
    }
    const done = new Set<Add[]>();
    for (const a of byId.values()) {
      if (a.siblings.length < 2 || done.has(a.siblings)) continue;
      done.add(a.siblings);
      const present = a.siblings.filter((s) => ledger.has(s.id)).length;
      if (present > 0 && present < a.siblings.length)
        out.add(
          'counter-partial-txn',
          `${a.op.status} transaction of process ${a.op.process} (event ${a.op.invokeIndex}): ${present} of ${a.siblings.length} adds committed`,
        );
    }
    const finalN = new Map<number, number>();
    for (const row of final.ownedRowsOf(TABLES.counters.name, TABLES.counters.keyspace))
      finalN.set(Number(row.get('k')), Number(row.get('n')));
    for (const k of new Set([...finalN.keys(), ...sumOf.keys()])) {
      const n = finalN.get(k) ?? 0;
      const sum = sumOf.get(k) ?? 0;
      if (n !== sum)
        out.add('counter-ledger-mismatch', `key ${k}: counter is ${n}, its ledger sums to ${sum}`);
    }
    // Settled: an info add committed exactly when its ledger row exists. An acknowledged add
    // that lost its row still counts for the bounds (the loss is reported once, as counter-lost).
    committed = (a) => a.op.status === 'ok' || (a.op.status === 'info' && ledger.has(a.id));
  }

  // Read bounds, per key.
  const readsOf = new Map<number, CounterRead[]>();
  for (const r of reads) push(readsOf, r.k, r);
  for (const [k, rs] of readsOf) {
    const adds = addsOf.get(k) ?? [];
    const ok = adds
      .filter((a) => a.op.status === 'ok')
      .sort((a, b) => a.op.completeNs! - b.op.completeNs!);
    const okTimes = ok.map((a) => a.op.completeNs!);
    const okSums = prefixSums(ok.map((a) => a.d));
    const maybe = adds.filter(committed).sort((a, b) => a.op.invokeNs - b.op.invokeNs);
    const maybeTimes = maybe.map((a) => a.op.invokeNs);
    const maybeSums = prefixSums(maybe.map((a) => a.d));
    for (const r of rs) {
      const lower = okSums[countBelow(okTimes, r.op.invokeNs)]!;
      const upper = maybeSums[countBelow(maybeTimes, r.op.completeNs!)]!;
      if (r.n < lower || r.n > upper)
        out.add(
          'counter-read-bounds',
          `key ${k}: read ${r.n} by process ${r.op.process} (event ${r.op.invokeIndex}) outside [${lower}, ${upper}]`,
        );
    }
  }
  return stats;
}

function prefixSums(xs: readonly number[]): number[] {
  const out = [0];
  for (const x of xs) out.push(out[out.length - 1]! + x);
  return out;
}

/** How many of the sorted `times` are strictly below `t`. */
function countBelow(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
