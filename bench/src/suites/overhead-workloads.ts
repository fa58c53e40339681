// The overhead suite's workloads: which pgbench scripts run, in which protocol, at how many
// clients, and the names they go by in tables (groups) and on the command line (--workloads).
import { UsageError } from '../options.js';
import type { PgbenchProtocol } from '../pgbench/run.js';
import { WORKLOADS, type WorkloadKind } from '../pgbench/scripts.js';

/**
 * The issue's workloads: -S at 16 and 64 clients, writes and TPC-B-within-branch at 16, all
 * -M prepared; and -S -M simple at 16, the literal-text path (a parse per new text).
 */
const PLAN: readonly { kind: WorkloadKind; protocol: PgbenchProtocol; clients: number[] }[] = [
  { kind: 'select', protocol: 'prepared', clients: [16, 64] },
  { kind: 'select', protocol: 'simple', clients: [16] },
  { kind: 'write', protocol: 'prepared', clients: [16] },
  { kind: 'tpcb-branch', protocol: 'prepared', clients: [16] },
];

export interface Workload {
  kind: WorkloadKind;
  protocol: PgbenchProtocol;
  clients: number;
  group: string;
}

/** A workload's name for --workloads: its kind, with `-simple` when not prepared. */
const workloadName = (p: { kind: WorkloadKind; protocol: PgbenchProtocol }): string =>
  p.protocol === 'prepared' ? p.kind : `${p.kind}-${p.protocol}`;

export function overheadWorkloads(clients?: number[], only?: readonly string[]): Workload[] {
  const unknown = only?.filter((n) => !PLAN.some((p) => workloadName(p) === n)) ?? [];
  if (unknown.length > 0)
    throw new UsageError(
      `--workloads: no workload ${unknown.join(', ')} (there are ${PLAN.map(workloadName).join(', ')})`,
    );
  const out: Workload[] = [];
  for (const p of PLAN) {
    if (only !== undefined && !only.includes(workloadName(p))) continue;
    for (const c of clients ?? p.clients) {
      // The prepared workloads keep their names (the checks and earlier results use them).
      const group = `${p.kind}${p.protocol === 'prepared' ? '' : ` -M ${p.protocol}`}, ${c} clients`;
      if (!out.some((w) => w.group === group)) {
        out.push({ kind: p.kind, protocol: p.protocol, clients: c, group });
      }
    }
  }
  return out;
}

export function describeWorkload(w: Workload): string {
  const spec = WORKLOADS[w.kind];
  const text = spec.description.replace('-M prepared', `-M ${w.protocol}`);
  return `${text}; ${spec.statementsPerTxn} statement(s) per transaction`;
}
