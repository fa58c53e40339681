// Keeps docs/benchmarks.md showing the latest results: each suite's table and chart live between
// `<!-- bench:<suite>:start -->` and `<!-- bench:<suite>:end -->`, replaced after a full run that
// wrote to bench/results (never after --quick or --out elsewhere).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkLine, comparisonTable, markdownTable, skipLines } from './markdown.js';
import type { SuiteResult } from './model.js';

export async function updateBenchmarksDoc(repoRoot: string, r: SuiteResult): Promise<boolean> {
  const file = join(repoRoot, 'docs', 'benchmarks.md');
  if (!existsSync(file)) return false;
  const text = readFileSync(file, 'utf8');
  const start = `<!-- bench:${r.suite}:start -->`;
  const end = `<!-- bench:${r.suite}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) return false;
  const base = `${r.date}-${r.suite}`;
  const block = [
    start,
    `Latest run: ${r.startedAt.slice(0, 10)}, ${r.machine.cpuModel} (${r.machine.cores} cores), ` +
      `commit ${r.machine.gitCommit.slice(0, 12)}${r.machine.gitDirty ? ' (uncommitted changes)' : ''}, ` +
      `medians of ${String(r.settings['rounds'])} rounds${r.settings['durationS'] !== undefined ? ` of ${String(r.settings['durationS'])} s runs` : ''}. ` +
      `Full report: [${base}.md](../bench/results/${base}.md), raw numbers: [${base}.json](../bench/results/${base}.json).`,
    '',
    markdownTable(r),
    '',
    ...(r.comparison ? [comparisonTable(r.comparison), ''] : []),
    ...skipLines(r.targets).map((line) => `Skipped ${line}\n`),
    ...(r.checks ?? []).map((c) => `Check ${checkLine(c)}\n`),
    `![${r.title}](../bench/results/${base}.svg)`,
    end,
  ].join('\n');
  const updated = text.slice(0, i) + block + text.slice(j + end.length);
  writeFileSync(file, await formatted(file, updated));
  return true;
}

/** The repository's prettier style, so `npm run lint` stays green after a run; as-is without it. */
async function formatted(file: string, text: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    const config = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...config, filepath: file });
  } catch {
    return text;
  }
}
