// Checks of the per-key append-only lists (docs/soak.md, "Lists"; Elle's list-append): every
// appended value is unique, so each read names the writes it saw and their order. The final list
// of a key is what its owner node holds at the final-state probe.
import type { FinalState } from './final-state.js';
import type { Findings } from './findings.js';
import type { Op } from './history.js';
import { checkG1c, checkInternal, type TxnReads } from './list-cycles.js';
import { F, TABLES, listMicros } from './values.js';

interface Append {
  k: number;
  v: number;
  op: Op;
  /** Appends of the same operation (a multi-key transaction has several). */
  siblings: Append[];
}

interface Read {
  k: number;
  values: number[];
  op: Op;
}

export interface ListStats {
  keys: number;
  appends: number;
  reads: number;
}

export function checkLists(
  ops: readonly Op[],
  final: FinalState | undefined,
  out: Findings,
): ListStats {
  const byValue = new Map<number, Append>();
  const appendsOf = new Map<number, Append[]>();
  const readsOf = new Map<number, Read[]>();
  const readOps: { op: Op; reads: Read[] }[] = [];
  const txns: TxnReads[] = [];
  for (const op of ops) {
    if (op.f !== F.list) continue;
    const micros = listMicros(op.invoke);
    if (!micros) {
      out.add('history-malformed', `list operation at event ${op.invokeIndex} has no valid ops`);
      continue;
    }
    const siblings: Append[] = [];
    for (const m of micros) {
      if (m[0] !== 'append') continue;
      const a: Append = { k: m[1], v: m[2], op, siblings };
      if (byValue.has(a.v)) {
        out.add('history-malformed', `value ${a.v} is appended twice (values must be unique)`);
        continue;
      }
      siblings.push(a);
      byValue.set(a.v, a);
      push(appendsOf, a.k, a);
    }
    if (op.status !== 'ok') continue;
    const done = listMicros(op.value);
    if (!done) {
      out.add('history-malformed', `ok list operation at event ${op.invokeIndex} has no valid ops`);
      continue;
    }
    if (done.length > 1) txns.push({ op, micros: done });
    const reads: Read[] = [];
    for (const m of done) {
      if (m[0] !== 'r' || m[2] === null) continue;
      const r: Read = { k: m[1], values: m[2], op };
      reads.push(r);
      push(readsOf, r.k, r);
    }
    if (reads.length > 1) readOps.push({ op, reads });
  }

  const finalOf = new Map<number, number[]>();
  if (final) {
    for (const row of final.ownedRowsOf(TABLES.lists.name, TABLES.lists.keyspace)) {
      const k = Number(row.get(TABLES.lists.key));
      const vals = row.get('vals');
      finalOf.set(k, Array.isArray(vals) ? vals.map(Number) : []);
    }
  }

  const keys = new Set<number>([...appendsOf.keys(), ...readsOf.keys(), ...finalOf.keys()]);
  for (const k of keys) {
    checkKey(
      k,
      appendsOf.get(k) ?? [],
      readsOf.get(k) ?? [],
      final ? (finalOf.get(k) ?? []) : undefined,
      byValue,
      out,
    );
  }
  checkInternal(txns, out);
  if (final) {
    checkAtomicity(byValue, finalOf, out);
    const writerOf = new Map<number, Op>();
    for (const [v, a] of byValue) writerOf.set(v, a.op);
    checkG1c(writerOf, finalOf, txns, out);
  }
  for (const { op, reads } of readOps) checkFractured(op, reads, byValue, out);

  let nReads = 0;
  for (const rs of readsOf.values()) nReads += rs.length;
  return { keys: keys.size, appends: byValue.size, reads: nReads };
}

function checkKey(
  k: number,
  appends: readonly Append[],
  reads: readonly Read[],
  fin: readonly number[] | undefined,
  byValue: ReadonlyMap<number, Append>,
  out: Findings,
): void {
  const reported = new Set<string>();
  const once = (cls: Parameters<Findings['add']>[0], v: number, text: string): void => {
    const id = `${cls}:${v}`;
    if (reported.has(id)) return;
    reported.add(id);
    out.add(cls, `key ${k}: ${text}`);
  };

  // Values in any read or in the final list: duplicated, invented, aborted.
  const lists: { what: string; values: readonly number[] }[] = reads.map((r) => ({
    what: `read by process ${r.op.process} (event ${r.op.invokeIndex})`,
    values: r.values,
  }));
  if (fin) lists.push({ what: 'the final list', values: fin });
  for (const { what, values } of lists) {
    const seen = new Set<number>();
    for (const v of values) {
      if (seen.has(v)) once('list-duplicated', v, `value ${v} twice in ${what}`);
      seen.add(v);
      const a = byValue.get(v);
      if (!a || a.k !== k)
        once('list-invented', v, `value ${v} in ${what} was never appended to it`);
      else if (a.op.status === 'fail')
        once(
          'list-aborted-read',
          v,
          `value ${v} in ${what} comes from a failed append (process ${a.op.process})`,
        );
    }
  }
  if (!fin) return;

  const pos = new Map<number, number>();
  fin.forEach((v, i) => {
    if (!pos.has(v)) pos.set(v, i);
  });
  const seenInReads = new Set<number>();
  for (const r of reads) for (const v of r.values) seenInReads.add(v);

  // Lost: acknowledged (or once seen) but not in the final list.
  for (const a of appends) {
    if (pos.has(a.v) || a.op.status === 'fail') continue;
    if (seenInReads.has(a.v))
      once(
        'list-lost-after-seen',
        a.v,
        `value ${a.v} (${a.op.status} append) was read, then is gone from the final list`,
      );
    else if (a.op.status === 'ok')
      once(
        'list-lost',
        a.v,
        `value ${a.v} (ok append by process ${a.op.process}) is missing from the final list`,
      );
  }

  // Every read is a prefix of the final list; remember how long a prefix each one is.
  const prefixLen = new Map<Read, number>();
  for (const r of reads) {
    let i = 0;
    while (i < r.values.length && i < fin.length && r.values[i] === fin[i]) i++;
    prefixLen.set(r, i);
    if (i < r.values.length && i < fin.length)
      out.add(
        'list-not-prefix',
        `key ${k}: read by process ${r.op.process} (event ${r.op.invokeIndex}) has ${r.values[i]} where the final list has ${fin[i]} (position ${i})`,
      );
  }

  // Stale: an ok append that completed before a read began must be in it.
  const okDone = appends
    .filter((a) => a.op.status === 'ok' && pos.has(a.v))
    .sort((a, b) => a.op.completeNs! - b.op.completeNs!);
  for (const r of reads) {
    const got = new Set(r.values);
    for (const a of okDone) {
      if (a.op.completeNs! >= r.op.invokeNs) break;
      if (got.has(a.v)) continue;
      out.add(
        'list-stale-read',
        `key ${k}: read by process ${r.op.process} (event ${r.op.invokeIndex}) misses ${a.v}, acknowledged before it began`,
      );
      break;
    }
  }

  // Monotonic: a read must not be older than a read that completed before it began.
  const byComplete = [...reads].sort((a, b) => a.op.completeNs! - b.op.completeNs!);
  const byInvoke = [...reads].sort((a, b) => a.op.invokeNs - b.op.invokeNs);
  let j = 0;
  let best: Read | undefined;
  for (const r of byInvoke) {
    while (j < byComplete.length && byComplete[j]!.op.completeNs! < r.op.invokeNs) {
      const c = byComplete[j++]!;
      if (!best || prefixLen.get(c)! > prefixLen.get(best)!) best = c;
    }
    if (!best) continue;
    const need = prefixLen.get(best)!;
    if (prefixLen.get(r)! >= need) continue;
    const got = new Set(r.values);
    for (let i = 0; i < need; i++) {
      if (got.has(fin[i]!)) continue;
      out.add(
        'list-nonmonotonic-read',
        `key ${k}: read by process ${r.op.process} (event ${r.op.invokeIndex}) misses ${fin[i]}, which a read by process ${best.op.process} that completed before it began had seen`,
      );
      break;
    }
  }

  // Out of order: an append acknowledged before another was invoked must come first.
  const inFinal = appends.filter((a) => pos.has(a.v));
  const okByComplete = inFinal
    .filter((a) => a.op.status === 'ok')
    .sort((a, b) => a.op.completeNs! - b.op.completeNs!);
  const allByInvoke = [...inFinal].sort((a, b) => a.op.invokeNs - b.op.invokeNs);
  let c = 0;
  let maxAt = -1;
  let maxApp: Append | undefined;
  for (const b of allByInvoke) {
    while (c < okByComplete.length && okByComplete[c]!.op.completeNs! < b.op.invokeNs) {
      const a = okByComplete[c++]!;
      if (pos.get(a.v)! > maxAt) {
        maxAt = pos.get(a.v)!;
        maxApp = a;
      }
    }
    if (maxAt > pos.get(b.v)!)
      out.add(
        'list-out-of-order',
        `key ${k}: ${b.v} (invoked after ${maxApp!.v} was acknowledged) comes before it in the final list`,
      );
  }
}

/** A multi-key append transaction is in every final list it wrote, or in none. */
function checkAtomicity(
  byValue: ReadonlyMap<number, Append>,
  finalOf: ReadonlyMap<number, readonly number[]>,
  out: Findings,
): void {
  const done = new Set<Append[]>();
  const sets = new Map<number, Set<number>>();
  const has = (k: number, v: number): boolean => {
    let s = sets.get(k);
    if (!s) sets.set(k, (s = new Set(finalOf.get(k) ?? [])));
    return s.has(v);
  };
  for (const a of byValue.values()) {
    if (a.siblings.length < 2 || done.has(a.siblings)) continue;
    done.add(a.siblings);
    const present = a.siblings.filter((s) => has(s.k, s.v));
    if (present.length > 0 && present.length < a.siblings.length) {
      const missing = a.siblings.filter((s) => !present.includes(s));
      out.add(
        'list-partial-txn',
        `${a.op.status} transaction of process ${a.op.process} (event ${a.op.invokeIndex}): ${present.map((s) => `${s.v} on key ${s.k}`).join(', ')} committed, ${missing.map((s) => `${s.v} on key ${s.k}`).join(', ')} not`,
      );
    }
  }
}

/** A read of several keys that sees a multi-key transaction on one key but not another. */
function checkFractured(
  op: Op,
  reads: readonly Read[],
  byValue: ReadonlyMap<number, Append>,
  out: Findings,
): void {
  const readOf = new Map<number, Set<number>>();
  for (const r of reads) readOf.set(r.k, new Set(r.values));
  const txns = new Set<Append[]>();
  for (const r of reads) {
    for (const v of r.values) {
      const a = byValue.get(v);
      if (a && a.k === r.k && a.siblings.length > 1 && a.op !== op) txns.add(a.siblings);
    }
  }
  for (const t of txns) {
    for (const s of t) {
      const got = readOf.get(s.k);
      if (got && !got.has(s.v)) {
        out.addFractured(
          'lists',
          `read by process ${op.process} (event ${op.invokeIndex}) sees the transaction of process ${t[0]!.op.process} on some keys but misses ${s.v} on key ${s.k}`,
        );
        return;
      }
    }
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}
