// What the memory samples (rss.ts) say about growth, by the rule in docs/soak.md ("Memory"):
// the growth of a service is the least-squares slope, per hour relative to its mean, of its
// anonymous memory (a Postgres node: per process, since the number of backends follows the
// connections, not a leak) over the longest lifetime of its main process, leaving out the first
// `warmupS`, and only when at least `minSpanS` remain: a rate over a shorter span says more about
// where the garbage collector happened to be than about a trend. A lifetime too short to judge
// still shows its slope, marked as not judged, so nothing is hidden.
import type { RssSample } from './rss.js';

export interface GrowthRule {
  /** Left out at the start of every lifetime (JIT tiers, heap sizing, pools and caches filling). */
  warmupS: number;
  /** The least span after warm-up a growth rate is judged over. */
  minSpanS: number;
}

export const GROWTH_RULE: GrowthRule = { warmupS: 600, minSpanS: 1200 };

export interface RssSummary {
  name: string;
  kind: string;
  samples: number;
  /** Of the whole RSS (Node.js) or Pss (Postgres): first and last sample of the run, its max. */
  firstMb: number;
  lastMb: number;
  maxMb: number;
  /** What the growth is of. */
  measure: string;
  /** Over the longest lifetime after warm-up; undefined when not judged (see `note`). */
  growthPctPerHour: number | undefined;
  /** The same over the later half of that span: near the whole's for a leak, lower for a warm-up tail. */
  lateHalfPctPerHour: number | undefined;
  /** The slope over what the longest lifetime has after warm-up when that is too short to judge. */
  notJudgedPctPerHour: number | undefined;
  lifetimes: number;
  /** A Postgres node's memory split over its longest lifetime (first and last sample of it). */
  parts?: {
    processes: [number, number];
    anonMb: [number, number];
    shmemMb: [number, number];
  };
  note: string;
}

/** The measure of one sample the growth is judged on. */
export function measureKb(x: RssSample): number {
  return x.kind === 'postgres' ? x.anonKb / Math.max(1, x.processes) : x.anonKb;
}

const measureName = (kind: string): string =>
  kind === 'postgres' ? 'anonymous Pss per process' : 'anonymous RSS';

export function summarize(
  samples: readonly RssSample[],
  rule: GrowthRule = GROWTH_RULE,
): RssSummary[] {
  const byName = new Map<string, RssSample[]>();
  for (const x of samples) byName.set(x.name, [...(byName.get(x.name) ?? []), x]);
  const out: RssSummary[] = [];
  for (const [name, list] of byName) {
    const lifetimes = new Map<number, RssSample[]>();
    for (const x of list) lifetimes.set(x.pid, [...(lifetimes.get(x.pid) ?? []), x]);
    const longest = [...lifetimes.values()].reduce((a, b) => (span(b) > span(a) ? b : a));
    const t0 = longest[0]!.s;
    const steady = longest.filter((x) => x.s - t0 >= rule.warmupS);
    const steadyS = span(steady);
    const whole = growthPctPerHour(steady);
    const judged = steadyS >= rule.minSpanS && whole !== undefined;
    const half = (steady[0]?.s ?? 0) + steadyS / 2;
    const late = judged ? growthPctPerHour(steady.filter((x) => x.s >= half)) : undefined;
    const lived = `longest lifetime ${Math.round(span(longest))} s`;
    const note = judged
      ? `${steady.length} samples over ${Math.round(steadyS)} s after warm-up (${lived})`
      : `not judged: ${lived}, ${Math.round(steadyS)} s after warm-up, under ${rule.minSpanS} s`;
    const kind = list[0]!.kind;
    const first = longest[0]!;
    const last = longest[longest.length - 1]!;
    out.push({
      name,
      kind,
      samples: list.length,
      firstMb: mb(list[0]!.kb),
      lastMb: mb(list[list.length - 1]!.kb),
      maxMb: mb(Math.max(...list.map((x) => x.kb))),
      measure: measureName(kind),
      growthPctPerHour: judged ? whole : undefined,
      lateHalfPctPerHour: late,
      notJudgedPctPerHour: judged ? undefined : whole,
      lifetimes: lifetimes.size,
      ...(kind === 'postgres'
        ? {
            parts: {
              processes: [first.processes, last.processes] as [number, number],
              anonMb: [mb(first.anonKb), mb(last.anonKb)] as [number, number],
              shmemMb: [mb(first.shmemKb), mb(last.shmemKb)] as [number, number],
            },
          }
        : {}),
      note,
    });
  }
  return out;
}

/** Least-squares slope of the measure per hour, relative to its mean; undefined under 6 samples. */
function growthPctPerHour(points: readonly RssSample[]): number | undefined {
  if (points.length < 6) return undefined;
  const ys = points.map(measureKb);
  const mean = ys.reduce((a, y) => a + y, 0) / ys.length;
  if (mean === 0) return undefined;
  const slope = slopePerS(points.map((x, i) => [x.s, ys[i]!]));
  return Math.round(((slope * 3600) / mean) * 100 * 100) / 100;
}

const span = (xs: readonly RssSample[]): number =>
  xs.length === 0 ? 0 : xs[xs.length - 1]!.s - xs[0]!.s;

const mb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;

function slopePerS(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) * (x - mx);
  }
  return den === 0 ? 0 : num / den;
}
