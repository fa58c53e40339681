// The failover suite's table below the kills and its checks, from the per-kill measurements and
// the final readback: p50 and max per target over the data1 kills, the home kills and all kills,
// and whether the issue's targets held (no acknowledged write lost; writes flow again within
// 5 s p50, 10 s at most). Pure, so it is tested without a cluster.
import { median } from '../harness/stats.js';
import type { CheckResult, Measurement, Metric, SummaryRow } from '../report/model.js';
import type { NodeName } from './failover-cluster.js';

/** Acknowledged ids missing at the end, per target and node; undefined: could not be read back. */
export type Lost = ReadonlyMap<string, ReadonlyMap<NodeName, number | undefined>>;

const SCOPES = ['data1', 'home', 'all'] as const;

export function summarize(
  measurements: readonly Measurement[],
  metrics: readonly Metric[],
  targets: readonly string[],
  lost: Lost,
): SummaryRow[] {
  const summary: SummaryRow[] = measurements.map((m) => ({
    group: m.group,
    target: m.target,
    values: m.values,
    okRounds: m.error === undefined ? 1 : 0,
    errors: m.error === undefined ? [] : [m.error],
  }));
  for (const scope of SCOPES)
    for (const stat of ['p50', 'max'] as const)
      for (const target of targets) {
        const rows = measurements.filter(
          (m) => m.target === target && (scope === 'all' || m.group.endsWith(scope)),
        );
        if (rows.length === 0) continue;
        const values: Record<string, number | null> = {};
        for (const metric of metrics) {
          const xs = rows
            .map((r) => r.values[metric.key])
            .filter((x): x is number => typeof x === 'number');
          values[metric.key] =
            xs.length === 0 ? null : stat === 'p50' ? median(xs) : Math.max(...xs);
        }
        values['lostWrites'] = lostIn(lost.get(target), scope);
        summary.push({
          group: `${stat} of ${rows.length} ${scope === 'all' ? 'kills' : `${scope} kills`}`,
          target,
          values,
          okRounds: rows.length,
          errors: [],
        });
      }
  return summary;
}

function lostIn(
  byNode: ReadonlyMap<NodeName, number | undefined> | undefined,
  scope: (typeof SCOPES)[number],
): number | null {
  if (byNode === undefined) return null;
  const xs = scope === 'all' ? [...byNode.values()] : [byNode.get(scope)];
  if (xs.length === 0 || xs.some((x) => x === undefined)) return null;
  return xs.reduce<number>((a, b) => a + b!, 0);
}

export function failoverChecks(
  measurements: readonly Measurement[],
  targets: readonly string[],
  kills: number,
  lost: Lost,
): CheckResult[] {
  const unreadable: string[] = [];
  let totalLost = 0;
  for (const target of targets)
    for (const [node, n] of lost.get(target) ?? new Map<NodeName, number | undefined>()) {
      if (n === undefined) unreadable.push(`${node} (${target})`);
      else totalLost += n;
    }
  const readAll = targets.every((t) => lost.has(t)) && unreadable.length === 0;
  const checks: CheckResult[] = [
    {
      name: 'no acknowledged write lost',
      ok: totalLost === 0 && readAll && measurements.length === kills * targets.length,
      detail: `${totalLost} acknowledged write(s) missing after ${kills} kill(s), ${targets.join(' and ')}${unreadable.length > 0 ? `; unreadable: ${unreadable.join(', ')}` : ''}${readAll || unreadable.length > 0 ? '' : '; not read back'}`,
    },
  ];
  for (const target of targets) {
    const rows = measurements.filter((m) => m.target === target);
    const writes = rows
      .map((m) => m.values['firstWriteMs'])
      .filter((x): x is number => typeof x === 'number');
    const p50 = writes.length > 0 ? median(writes) : null;
    const max = writes.length > 0 ? Math.max(...writes) : null;
    checks.push({
      name: `writes flow again within 5 s (p50), 10 s at most: ${target}`,
      ok:
        p50 !== null &&
        max !== null &&
        p50 <= 5_000 &&
        max <= 10_000 &&
        rows.length === kills &&
        writes.length === rows.length &&
        rows.every((m) => m.error === undefined),
      detail: `first acknowledged write after the kill: p50 ${p50 ?? '-'} ms, max ${max ?? '-'} ms over ${writes.length} of ${kills} kill(s)`,
    });
  }
  return checks;
}
