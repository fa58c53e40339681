// The overhead suite's workloads: which pgbench scripts run, in which protocol, at how many
// clients, and the names they go by in tables (groups) and on the command line (--workloads).
import { UsageError } from '../options.js';
import type { PgbenchProtocol } from '../pgbench/run.js';
import { WORKLOADS, type WorkloadKind } from '../pgbench/scripts.js';
import type { TargetInfo } from '../report/model.js';

/**
 * The issues' workloads: -S at 16 and 64 clients, writes and TPC-B-within-branch at 16, all
 * -M prepared; and -S -M simple at 16 and 64, the literal-text path (a parse per new text), whose
 * 64 clients meet PgBouncer in transaction mode and the router's own -S at 64 (issue 15).
 */
const PLAN: readonly { kind: WorkloadKind; protocol: PgbenchProtocol; clients: number[] }[] = [
  { kind: 'select', protocol: 'prepared', clients: [16, 64] },
  { kind: 'select', protocol: 'simple', clients: [16, 64] },
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

/**
 * Each workload not in the prepared protocol, mapped to the prepared workload of the same kind
 * and clients in this run (when there is one): what its CPU per statement is compared with.
 */
export function preparedCounterparts(workloads: readonly Workload[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of workloads) {
    if (w.protocol === 'prepared') continue;
    const p = workloads.find(
      (x) => x.protocol === 'prepared' && x.kind === w.kind && x.clients === w.clients,
    );
    if (p) out.set(w.group, p.group);
  }
  return out;
}

/**
 * PgBouncer in transaction mode gives a client whichever server connection is free at each
 * transaction, and Debian's PgBouncer 1.18 does not follow prepared statements from one to the
 * next (max_prepared_statements came in 1.21): pgbench -M prepared would fail there, so it runs
 * the -M simple workloads only.
 */
const ONLY_SIMPLE =
  "pool_mode = transaction: Debian's PgBouncer 1.18 keeps no prepared statements in that mode, so it runs only -M simple workloads";

/** Why `target` does not run workload `w`; undefined when it does. */
export function reasonToSitOut(target: string, w: Pick<Workload, 'protocol'>): string | undefined {
  return target === 'pgbouncer-txn' && w.protocol !== 'simple' ? ONLY_SIMPLE : undefined;
}

/** The workloads of a run that a target does not run, and why; undefined when it runs them all. */
export function sitOut(
  target: string,
  workloads: readonly Workload[],
): { groups: string[]; reason: string } | undefined {
  const out = workloads.filter((w) => reasonToSitOut(target, w) !== undefined);
  if (out.length === 0) return undefined;
  return { groups: out.map((w) => w.group), reason: reasonToSitOut(target, out[0]!)! };
}

/**
 * The targets as the result records them: a target that ran only some workloads says which it
 * sat out and why, and one that would have sat out all of them (not started) says so.
 */
export function withSitOuts(
  infos: readonly TargetInfo[],
  notStarted: readonly string[],
  workloads: readonly Workload[],
): TargetInfo[] {
  return [
    ...infos.map((i) => {
      const out = i.skipped === undefined ? sitOut(i.name, workloads) : undefined;
      return out ? { ...i, sitsOut: out } : i;
    }),
    ...notStarted.map((name) => ({
      name,
      skipped: `${sitOut(name, workloads)!.reason}, and this run has none`,
    })),
  ];
}
