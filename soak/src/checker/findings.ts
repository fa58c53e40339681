// The anomaly classes the checker counts, and a small accumulator of counts plus a few examples
// per class. Every class is always present in a result (0 when clean), so a report and the last
// line of a run can show each one.

export const ANOMALY_CLASSES = [
  // the history itself
  'history-malformed',
  'final-state-missing',
  // per-key append-only lists
  'list-duplicated',
  'list-invented',
  'list-aborted-read',
  'list-lost',
  'list-lost-after-seen',
  'list-out-of-order',
  'list-not-prefix',
  'list-stale-read',
  'list-nonmonotonic-read',
  'list-partial-txn',
  'list-internal',
  'list-g1c',
  // counters with a ledger
  'counter-read-bounds',
  'counter-lost',
  'counter-aborted',
  'counter-invented',
  'counter-duplicated',
  'counter-ledger-mismatch',
  'counter-partial-txn',
  // bank transfers
  'bank-total',
  'bank-negative',
  'bank-legs',
  'bank-invented',
  'bank-balance-ledger',
  'bank-read-shape',
  // placement and leftovers
  'placement-misplaced',
  'placement-leftover',
  'prepared-left',
] as const;

export type AnomalyClass = (typeof ANOMALY_CLASSES)[number];

/** Not failures (Tessera does not promise snapshot-consistent reads across nodes yet): counted. */
export const FRACTURED_KINDS = ['bank', 'lists'] as const;
export type FracturedKind = (typeof FRACTURED_KINDS)[number];

const EXAMPLES_PER_CLASS = 5;

export class Findings {
  readonly counts = new Map<AnomalyClass, number>(ANOMALY_CLASSES.map((c) => [c, 0]));
  readonly examples = new Map<AnomalyClass, string[]>();
  readonly fractured = new Map<FracturedKind, number>(FRACTURED_KINDS.map((k) => [k, 0]));
  readonly fracturedExamples = new Map<FracturedKind, string[]>();

  add(cls: AnomalyClass, example: string, n = 1): void {
    this.counts.set(cls, (this.counts.get(cls) ?? 0) + n);
    const ex = this.examples.get(cls) ?? [];
    if (ex.length < EXAMPLES_PER_CLASS) ex.push(example);
    this.examples.set(cls, ex);
  }

  addFractured(kind: FracturedKind, example: string): void {
    this.fractured.set(kind, (this.fractured.get(kind) ?? 0) + 1);
    const ex = this.fracturedExamples.get(kind) ?? [];
    if (ex.length < EXAMPLES_PER_CLASS) ex.push(example);
    this.fracturedExamples.set(kind, ex);
  }

  count(cls: AnomalyClass): number {
    return this.counts.get(cls) ?? 0;
  }

  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }
}
