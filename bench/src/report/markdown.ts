// The markdown form of a result: one table of medians, then what was skipped and why, what it was
// measured on, and the capacity lines. docs/benchmarks.md embeds this file's table as it is.
import { formatValue, type CheckResult, type SuiteResult } from './model.js';

export function checkLine(c: CheckResult): string {
  return `${c.ok ? 'OK' : 'FAILED'}: ${c.name}: ${c.detail}`;
}

export function markdownTable(r: SuiteResult): string {
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
  const skipped = r.targets.filter((t) => t.skipped !== undefined);
  if (skipped.length > 0) {
    out.push('Skipped targets:', '');
    for (const t of skipped) out.push(`- **${t.name}**: ${t.skipped}`);
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
