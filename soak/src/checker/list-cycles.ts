// Transactions that both append and read: Adya's G1c (a cycle of write-write and write-read
// dependencies, forbidden even at read committed, and by two-phase commit across nodes), and
// internal consistency (a transaction's reads see its own earlier appends, and only those).
import type { Findings } from './findings.js';
import type { Op } from './history.js';
import type { ListMicro } from './values.js';

export interface TxnReads {
  op: Op;
  micros: readonly ListMicro[];
}

/** Reads of a key within one transaction must end with its own appends to that key so far. */
export function checkInternal(txns: readonly TxnReads[], out: Findings): void {
  for (const { op, micros } of txns) {
    const own = new Map<number, number[]>();
    for (const m of micros) {
      if (m[0] === 'append') {
        const list = own.get(m[1]) ?? [];
        list.push(m[2]);
        own.set(m[1], list);
        continue;
      }
      if (m[2] === null) continue;
      const mine = own.get(m[1]) ?? [];
      const tail = m[2].slice(m[2].length - mine.length);
      const later = micros.filter(
        (x) => x[0] === 'append' && x[1] === m[1] && !mine.includes(x[2]),
      );
      if (
        tail.length !== mine.length ||
        tail.some((v, i) => v !== mine[i]) ||
        later.some((x) => m[2]!.includes(x[2] as number))
      ) {
        out.add(
          'list-internal',
          `key ${m[1]}: transaction of process ${op.process} (event ${op.invokeIndex}) read ${JSON.stringify(m[2])} after appending ${JSON.stringify(mine)}`,
        );
        break;
      }
    }
  }
}

/**
 * G1c: nodes are the operations that append; ww edges follow each final list, wr edges go from
 * the writer of the last value a read saw (its own appends aside) to the reading operation.
 */
export function checkG1c(
  writerOf: ReadonlyMap<number, Op>,
  finals: ReadonlyMap<number, readonly number[]>,
  txns: readonly TxnReads[],
  out: Findings,
): void {
  const edges = new Map<Op, Set<Op>>();
  const edge = (a: Op | undefined, b: Op | undefined): void => {
    if (!a || !b || a === b || a.status === 'fail' || b.status === 'fail') return;
    let s = edges.get(a);
    if (!s) edges.set(a, (s = new Set()));
    s.add(b);
  };
  for (const list of finals.values()) {
    // A value twice (reported as duplicated) is a version once: only its first place orders it.
    const seen = new Set<number>();
    let prev: Op | undefined;
    for (const v of list) {
      if (seen.has(v)) continue;
      seen.add(v);
      const w = writerOf.get(v);
      edge(prev, w);
      prev = w;
    }
  }
  for (const { op, micros } of txns) {
    if (!micros.some((m) => m[0] === 'append')) continue; // a read-only operation closes no cycle
    for (const m of micros) {
      if (m[0] !== 'r' || m[2] === null) continue;
      for (let i = m[2].length - 1; i >= 0; i--) {
        const w = writerOf.get(m[2][i]!);
        if (w === op) continue;
        edge(w, op);
        break;
      }
    }
  }
  for (const scc of stronglyConnected(edges)) {
    if (scc.length < 2) continue;
    const shown = scc.slice(0, 4).map((o) => `process ${o.process} (event ${o.invokeIndex})`);
    out.add(
      'list-g1c',
      `a cycle of ${scc.length} transactions through write-write and write-read dependencies: ${shown.join(', ')}${scc.length > 4 ? ', ...' : ''}`,
    );
  }
}

/** Tarjan's algorithm, iterative (histories have tens of thousands of transactions). */
function stronglyConnected(edges: ReadonlyMap<Op, ReadonlySet<Op>>): Op[][] {
  const index = new Map<Op, number>();
  const low = new Map<Op, number>();
  const onStack = new Set<Op>();
  const stack: Op[] = [];
  const out: Op[][] = [];
  let next = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: { v: Op; it: Iterator<Op> }[] = [];
    const open = (v: Op): void => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      work.push({ v, it: (edges.get(v) ?? new Set<Op>()).values() });
    };
    open(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const n = top.it.next();
      if (!n.done) {
        const w = n.value;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(top.v)!));
      if (low.get(top.v) === index.get(top.v)) {
        const scc: Op[] = [];
        let w: Op;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== top.v);
        out.push(scc);
      }
    }
  }
  return out;
}
