// Capacity lines from measured CPU per statement (docs/capacity.md explains the method): one Node
// event loop runs on one core, so a router process saturates near 1e6 / (µs per statement)
// statements per second, and a deployment is sized to run its cores at `headroom` of that.
import { formatValue, type SummaryRow } from './model.js';

export const DEFAULT_HEADROOM = 0.6;

export function capacityLines(
  summary: readonly SummaryRow[],
  headroom = DEFAULT_HEADROOM,
): string[] {
  const lines: string[] = [];
  for (const row of summary) {
    const us = row.values['cpuUsPerStmt'];
    if (typeof us !== 'number' || !(us > 0)) continue;
    const perCore = 1e6 / us;
    lines.push(
      `${row.target.padEnd(13)} ${row.group.padEnd(28)} ${formatValue(us, 1).padStart(7)} µs/stmt -> ` +
        `${formatValue(perCore, 0).padStart(9)} stmt/s per core at 100%, ` +
        `${formatValue(perCore * headroom, 0).padStart(9)} at ${Math.round(headroom * 100)}% (per process: one core)`,
    );
  }
  return lines;
}
