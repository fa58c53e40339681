// EXPLAIN of a read across nodes: the plan tree of primitives and the SQL each node runs, as the
// rows of one text column named QUERY PLAN, like Postgres; ANALYZE adds what each node sent and
// how long the whole took.
import type { FieldDescription } from '@tessera/merge';
import { explainPlan, type ReadPlan } from '@tessera/sql';

/** Postgres's EXPLAIN column: `QUERY PLAN`, type text. */
export const QUERY_PLAN_FIELD: FieldDescription = {
  name: 'QUERY PLAN',
  tableOid: 0,
  columnAttr: 0,
  typeOid: 25,
  typeSize: -1,
  typeModifier: -1,
  format: 0,
};

export function explainLines(plan: ReadPlan, nodes: readonly string[]): string[] {
  const lines = explainPlan(plan).trimEnd().split('\n');
  lines.push(`Nodes: ${nodes.join(', ')} (each runs the Scatter's sql)`);
  return lines;
}

export interface LeafStats {
  readonly rows: number;
  readonly elapsedMs: number | undefined;
}

export function explainAnalyzeLines(
  plan: ReadPlan,
  nodes: readonly string[],
  leaves: readonly LeafStats[],
  resultRows: number,
  totalMs: number,
): string[] {
  const lines = explainLines(plan, nodes);
  leaves.forEach((l, i) => {
    const time = l.elapsedMs === undefined ? 'stopped early' : `time=${l.elapsedMs.toFixed(3)} ms`;
    lines.push(`Node ${nodes[i] ?? i}: rows=${l.rows} ${time}`);
  });
  lines.push(`Rows merged: ${leaves.reduce((n, l) => n + l.rows, 0)}`);
  lines.push(`Result rows: ${resultRows}`);
  lines.push(`Execution Time: ${totalMs.toFixed(3)} ms`);
  return lines;
}
