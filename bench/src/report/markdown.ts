// The markdown form of a result: one table of medians, then what was skipped and why, what it was
// measured on, and the capacity lines. docs/benchmarks.md embeds this file's table as it is.
import { median } from '../harness/stats.js';
import {
  formatValue,
  type CheckResult,
  type PairedComparison,
  type SuiteResult,
  type TargetInfo,
} from './model.js';

export function checkLine(c: CheckResult): string {
  return `${c.ok ? 'OK' : 'FAILED'}: ${c.name}: ${c.detail}`;
}

/**
 * One line per target that did not run, or ran only some workloads, with the reason: a target
 * left out on purpose reads differently from one that failed.
 */
export function skipLines(targets: readonly TargetInfo[]): string[] {
  return targets.flatMap((t) => {
    if (t.skipped !== undefined) return [`**${t.name}**: ${t.skipped}`];
    if (t.sitsOut !== undefined)
      return [`**${t.name}** in ${t.sitsOut.groups.join('; ')}: ${t.sitsOut.reason}`];
    return [];
  });
}

export function markdownTable(r: Pick<SuiteResult, 'metrics' | 'summary'>): string {
  const head = ['workload', 'target', ...r.metrics.map((m) => m.label)];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
  ];
  for (const row of r.summary) {
    const cells = r.metrics.map((m) => formatValue(row.values[m.key], m.digits));
    const failed = row.okRounds === 0 ? ' (failed)' : '';
    lines.push(`| ${row.group} | ${row.target}${failed} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** (max - min) / median of the rounds' values, as a percentage; – with fewer than two. */
function spread(values: readonly (number | null)[]): string {
  const ok = values.filter((v): v is number => v !== null);
  const mid = median(ok);
  if (ok.length < 2 || mid === null || mid === 0) return '–';
  return `${(((Math.max(...ok) - Math.min(...ok)) / mid) * 100).toFixed(1)}%`;
}

/** The paired comparison: each round's numbers of both targets, the ratios and their spread. */
export function comparisonTable(c: PairedComparison): string {
  const { target: t, reference: ref } = c;
  const each = (vs: readonly (number | null)[], digits: number) =>
    vs.map((v) => formatValue(v, digits)).join(' / ');
  const head = [
    'workload',
    `${t} TPS by round`,
    `${ref} TPS by round`,
    `${t} / ${ref} by round`,
    'median ratio',
    'ratio min–max',
    `TPS spread ${t} / ${ref}`,
  ];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 1 ? '---' : '---:')).join('|')}|`,
  ];
  for (const row of c.rows) {
    const ratios = row.ratios.filter((v): v is number => v !== null);
    const range =
      ratios.length > 0
        ? `${formatValue(Math.min(...ratios), 3)}–${formatValue(Math.max(...ratios), 3)}`
        : '–';
    const cells = [
      row.group,
      each(row.values, 0),
      each(row.referenceValues, 0),
      each(row.ratios, 3),
      formatValue(row.median, 3),
      range,
      `${spread(row.values)} / ${spread(row.referenceValues)}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function markdownReport(r: SuiteResult, svgFile: string): string {
  const m = r.machine;
  const out: string[] = [
    `# ${r.title}`,
    '',
    `Run ${r.startedAt} with \`${r.command}\`; medians of ${String(r.settings['rounds'])} interleaved rounds.`,
    '',
    markdownTable(r),
    '',
    `![${r.title}](${svgFile})`,
    '',
  ];
  if (r.comparison) {
    const c = r.comparison;
    out.push(
      `${c.target} against ${c.reference}, the same workloads in the same rounds (TPS spread: (max - min) / median over rounds):`,
      '',
      comparisonTable(c),
      '',
    );
  }
  const skipped = skipLines(r.targets);
  if (skipped.length > 0) {
    out.push('Skipped targets:', '');
    for (const line of skipped) out.push(`- ${line}`);
    out.push('');
  }
  if (r.checks && r.checks.length > 0) {
    out.push('Checks:', '');
    for (const c of r.checks) out.push(`- ${checkLine(c)}`);
    out.push('');
  }
  const failures = r.summary.filter((s) => s.errors.length > 0);
  if (failures.length > 0) {
    out.push('Failed runs:', '');
    for (const f of failures)
      for (const e of f.errors) out.push(`- ${f.group} / ${f.target}, ${e}`);
    out.push('');
  }
  out.push('Workloads:', '');
  for (const g of r.groups) out.push(`- **${g.name}**: ${g.description}`);
  out.push('', 'Targets:', '');
  for (const t of r.targets)
    if (t.skipped === undefined) out.push(`- **${t.name}**: ${t.detail ?? ''}`);
  out.push(
    '',
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}; ${m.postgres}; ${m.pgbench}; ` +
      `${m.pgbouncer ? `${m.pgbouncer}; ` : ''}Node ${m.node}; commit ${m.gitCommit.slice(0, 12)}${m.gitDirty ? ' (with uncommitted changes)' : ''}.`,
    '',
  );
  if (r.notes.length > 0) {
    out.push('Notes:', '');
    for (const n of r.notes) out.push(`- ${n}`);
    out.push('');
  }
  if (r.capacity && r.capacity.length > 0) {
    out.push('Capacity (see docs/capacity.md):', '', '```', ...r.capacity, '```', '');
  }
  return out.join('\n');
}
