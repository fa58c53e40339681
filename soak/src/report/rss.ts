// Memory of every service, sampled every 10 s: RSS of each Node.js service process, and for a
// Postgres node the proportional set size (Pss) summed over its postmaster and backends (RSS
// would count the shared buffers once per backend). Growth per hour is the slope of a least-
// squares line over one process lifetime after warm-up, relative to its mean.
import { readFileSync } from 'node:fs';

export interface RssSample {
  s: number;
  name: string;
  kind: string;
  /** The service's main pid: a new pid is a new lifetime (restarted by a fault). */
  pid: number;
  kb: number;
}

export interface RssSummary {
  name: string;
  kind: string;
  samples: number;
  firstMb: number;
  lastMb: number;
  maxMb: number;
  /** Over the longest lifetime, after warm-up; undefined when too short to say. */
  growthPctPerHour: number | undefined;
  lifetimes: number;
  note: string;
}

export function readKb(pid: number, field: 'VmRSS' | 'Pss'): number {
  try {
    const file = field === 'Pss' ? `/proc/${pid}/smaps_rollup` : `/proc/${pid}/status`;
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

export function sampleOnce(
  s: number,
  services: readonly { name: string; kind: string; pids: number[] }[],
): RssSample[] {
  const out: RssSample[] = [];
  for (const svc of services) {
    const main = svc.pids[0];
    if (main === undefined) continue;
    const kb =
      svc.kind === 'postgres'
        ? svc.pids.reduce((sum, pid) => sum + readKb(pid, 'Pss'), 0)
        : readKb(main, 'VmRSS');
    if (kb > 0) out.push({ s, name: svc.name, kind: svc.kind, pid: main, kb });
  }
  return out;
}

/** Summaries per service; `warmupS` of each lifetime are left out of the growth line. */
export function summarize(samples: readonly RssSample[], warmupS: number): RssSummary[] {
  const byName = new Map<string, RssSample[]>();
  for (const x of samples) byName.set(x.name, [...(byName.get(x.name) ?? []), x]);
  const out: RssSummary[] = [];
  for (const [name, list] of byName) {
    const lifetimes = new Map<number, RssSample[]>();
    for (const x of list) lifetimes.set(x.pid, [...(lifetimes.get(x.pid) ?? []), x]);
    const longest = [...lifetimes.values()].reduce((a, b) => (b.length > a.length ? b : a));
    const t0 = longest[0]!.s;
    const steady = longest.filter((x) => x.s - t0 >= warmupS);
    let growth: number | undefined;
    let note = '';
    if (steady.length >= 6) {
      const slope = slopePerS(steady.map((x) => [x.s, x.kb]));
      const mean = steady.reduce((a, x) => a + x.kb, 0) / steady.length;
      growth = Math.round(((slope * 3600) / mean) * 100 * 100) / 100;
      note = `${steady.length} samples over ${Math.round(steady[steady.length - 1]!.s - steady[0]!.s)} s of the longest lifetime`;
    } else {
      note = `too few samples after warm-up in its longest lifetime (${steady.length})`;
    }
    const mb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;
    out.push({
      name,
      kind: list[0]!.kind,
      samples: list.length,
      firstMb: mb(list[0]!.kb),
      lastMb: mb(list[list.length - 1]!.kb),
      maxMb: mb(Math.max(...list.map((x) => x.kb))),
      growthPctPerHour: growth,
      lifetimes: lifetimes.size,
      note,
    });
  }
  return out;
}

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
