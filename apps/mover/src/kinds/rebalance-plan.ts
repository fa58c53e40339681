// Deciding a rebalance (or a drain) from the rows each range holds: moves, and splits of ranges
// too big to place evenly, until every node of `nodes` holds within `tolerance` of the mean rows
// of each keyspace. Ranges on nodes outside `nodes` (draining) are moved off first. Pure, so the
// decisions are tested on numbers (rebalance-plan.test.ts).

export interface RangeLoad {
  keyspace: string;
  lo: bigint;
  hi: bigint;
  owner: string;
  rows: number;
  /** Rows in each of the range's equal hash sub-ranges (a histogram; a split happens at their edges). */
  buckets: number[];
}

export type Action =
  | { kind: 'split'; keyspace: string; lo: bigint; at: bigint; upperRows: number }
  | { kind: 'move'; keyspace: string; lo: bigint; from: string; to: string; rows: number };

export interface RebalanceOptions {
  tolerance: number;
  /** Only move ranges off nodes outside `nodes`; do not even out the rest. */
  drainOnly?: boolean;
  maxActions?: number;
}

export interface RebalancePlan {
  actions: Action[];
  before: Record<string, Record<string, number>>;
  after: Record<string, Record<string, number>>;
  /** Keyspaces still out of tolerance when the plan stops (ranges that cannot be cut finer). */
  unbalanced: string[];
}

function loads(ranges: readonly RangeLoad[], nodes: readonly string[]): Map<string, number> {
  const out = new Map(nodes.map((n) => [n, 0]));
  for (const r of ranges) if (out.has(r.owner)) out.set(r.owner, out.get(r.owner)! + r.rows);
  return out;
}

function extreme(l: Map<string, number>, pick: 'max' | 'min'): string {
  let best: string | undefined;
  for (const [n, v] of l)
    if (best === undefined || (pick === 'max' ? v > l.get(best)! : v < l.get(best)!)) best = n;
  return best!;
}

function balanced(l: Map<string, number>, tolerance: number): boolean {
  const values = [...l.values()];
  const total = values.reduce((a, b) => a + b, 0);
  if (total === 0 || values.length < 2) return true;
  const mean = total / values.length;
  return values.every((v) => Math.abs(v - mean) <= tolerance * mean);
}

/** Splits `r` at a bucket edge so the upper part holds about `want` rows, or undefined if it cannot. */
function splitFor(
  r: RangeLoad,
  want: number,
): { lower: RangeLoad; upper: RangeLoad; at: bigint } | undefined {
  const n = r.buckets.length;
  const width = r.hi - r.lo + 1n;
  if (n < 2 || width < 2n) return undefined;
  let best: { k: number; diff: number } | undefined;
  let upper = 0;
  for (let k = n - 1; k >= 1; k--) {
    upper += r.buckets[k]!;
    const diff = Math.abs(upper - want);
    if (upper > 0 && upper < r.rows && (!best || diff < best.diff)) best = { k, diff };
  }
  if (!best) return undefined;
  const at = r.lo + (width * BigInt(best.k)) / BigInt(n);
  if (at <= r.lo || at > r.hi) return undefined;
  // The halves' own histograms: each old bucket's rows spread evenly over the new buckets it covers.
  const spread = (from: number, to: number): number[] => {
    const m = to - from;
    const source = Array.from({ length: n }, (_, i) => from + Math.floor((i * m) / n));
    const shares = new Map<number, number>();
    for (const j of source) shares.set(j, (shares.get(j) ?? 0) + 1);
    return source.map((j) => r.buckets[j]! / shares.get(j)!);
  };
  const lowerRows = r.buckets.slice(0, best.k).reduce((a, b) => a + b, 0);
  return {
    at,
    lower: { ...r, hi: at - 1n, rows: lowerRows, buckets: spread(0, best.k) },
    upper: { ...r, lo: at, rows: r.rows - lowerRows, buckets: spread(best.k, n) },
  };
}

function planKeyspace(
  keyspace: string,
  input: readonly RangeLoad[],
  nodes: readonly string[],
  opts: RebalanceOptions,
  actions: Action[],
): { after: Map<string, number>; ok: boolean } {
  const ranges = input.map((r) => ({ ...r, buckets: [...r.buckets] }));
  const max = opts.maxActions ?? 64;
  // Off the nodes that are leaving, onto the lightest each time.
  for (const r of ranges) {
    if (nodes.includes(r.owner)) continue;
    const l = loads(ranges, nodes);
    const to = extreme(l, 'min');
    actions.push({ kind: 'move', keyspace, lo: r.lo, from: r.owner, to, rows: r.rows });
    r.owner = to;
  }
  if (opts.drainOnly) return { after: loads(ranges, nodes), ok: true };
  for (let i = 0; i < 4 * max && actions.length < max; i++) {
    const l = loads(ranges, nodes);
    if (balanced(l, opts.tolerance)) return { after: l, ok: true };
    const total = [...l.values()].reduce((a, b) => a + b, 0);
    const mean = total / nodes.length;
    const heavy = extreme(l, 'max');
    const light = extreme(l, 'min');
    const spread = l.get(heavy)! - l.get(light)!;
    const want = Math.min(l.get(heavy)! - mean, mean - l.get(light)!);
    const candidates = ranges.filter((r) => r.owner === heavy && r.rows > 0 && r.rows < spread);
    candidates.sort((a, b) => Math.abs(a.rows - want) - Math.abs(b.rows - want));
    const best = candidates[0];
    if (best && Math.abs(best.rows - want) <= opts.tolerance * mean) {
      actions.push({
        kind: 'move',
        keyspace,
        lo: best.lo,
        from: heavy,
        to: light,
        rows: best.rows,
      });
      best.owner = light;
      continue;
    }
    // Nothing fits: cut the biggest range of the heavy node so its upper part is about `want`.
    const big = ranges.filter((r) => r.owner === heavy).sort((a, b) => b.rows - a.rows)[0];
    const cut = big && big.rows > want ? splitFor(big, want) : undefined;
    if (cut) {
      actions.push({ kind: 'split', keyspace, lo: big!.lo, at: cut.at, upperRows: cut.upper.rows });
      ranges.splice(ranges.indexOf(big!), 1, cut.lower, cut.upper);
      continue;
    }
    if (best) {
      // Cannot cut finer: the closest range still narrows the spread.
      actions.push({
        kind: 'move',
        keyspace,
        lo: best.lo,
        from: heavy,
        to: light,
        rows: best.rows,
      });
      best.owner = light;
      continue;
    }
    return { after: l, ok: false };
  }
  const l = loads(ranges, nodes);
  return { after: l, ok: balanced(l, opts.tolerance) };
}

export function planRebalance(
  ranges: readonly RangeLoad[],
  nodes: readonly string[],
  opts: RebalanceOptions,
): RebalancePlan {
  const actions: Action[] = [];
  const before: RebalancePlan['before'] = {};
  const after: RebalancePlan['after'] = {};
  const unbalanced: string[] = [];
  for (const ks of [...new Set(ranges.map((r) => r.keyspace))].sort()) {
    const mine = ranges.filter((r) => r.keyspace === ks).sort((a, b) => (a.lo < b.lo ? -1 : 1));
    before[ks] = Object.fromEntries(loads(mine, [...nodes, ...new Set(mine.map((r) => r.owner))]));
    if (nodes.length === 0) continue;
    const r = planKeyspace(ks, mine, nodes, opts, actions);
    after[ks] = Object.fromEntries(r.after);
    if (!r.ok) unbalanced.push(ks);
  }
  return { actions, before, after, unbalanced };
}
