// `npm run bench -- <suite> [options]`: runs one suite, prints its table, and writes
// bench/results/<date>-<suite>.{json,md,svg}.
import { cpus } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './harness/entry.js';
import { OPTIONS_HELP, parseOptions, UsageError } from './options.js';
import { checkLine, comparisonTable, markdownTable } from './report/markdown.js';
import { updateBenchmarksDoc } from './report/docs.js';
import { writeResult } from './report/write.js';
import { findSuite, SUITES } from './suites/registry.js';

function usage(): string {
  const suites = SUITES.map((s) => `  ${s.name.padEnd(10)} ${s.summary}`).join('\n');
  return `Usage: npm run bench -- <suite> [options]

Each suite starts its own Postgres servers (and coordinator, routers, pgbouncer, proxies), runs
every target in interleaved rounds, and writes bench/results/<date>-<suite>.{json,md,svg}.

Suites:
${suites}

${OPTIONS_HELP}`;
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const [name, ...rest] = argv;
  const suite = findSuite(name!);
  if (!suite) {
    process.stderr.write(
      `bench: no suite "${name}"; the suites are ${SUITES.map((s) => s.name).join(', ')}\n`,
    );
    return 2;
  }
  let opts;
  try {
    opts = parseOptions(rest, cpus().length, suite.defaults);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`bench: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(
    `bench ${suite.name}: ${opts.rounds} round(s) of ${opts.durationS} s runs${opts.quick ? ' (quick)' : ''}`,
  );
  const result = await suite.run({ opts, command: `npm run bench -- ${argv.join(' ')}`, log });
  const files = writeResult(opts.outDir, result);
  log('');
  log(markdownTable(result));
  if (result.comparison) log(`\n${comparisonTable(result.comparison)}`);
  for (const t of result.targets) {
    if (t.skipped) log(`\nskipped ${t.name}: ${t.skipped}`);
    else if (t.sitsOut)
      log(`\n${t.name} sat out ${t.sitsOut.groups.join('; ')}: ${t.sitsOut.reason}`);
  }
  for (const c of result.checks ?? []) log(`\ncheck ${checkLine(c)}`);
  if (result.capacity && result.capacity.length > 0) {
    log('\ncapacity (paste into docs/capacity.md):');
    for (const line of result.capacity) log(`  ${line}`);
  }
  const rel = (p: string) => (p.startsWith(REPO_ROOT) ? relative(REPO_ROOT, p) : p);
  log(`\nwrote ${rel(files.json)}, ${rel(files.md)}, ${rel(files.svg)}`);
  // Only a full run into the committed results directory becomes what the docs show.
  if (!opts.quick && resolve(opts.outDir) === join(REPO_ROOT, 'bench', 'results')) {
    if (await updateBenchmarksDoc(REPO_ROOT, result)) log('updated docs/benchmarks.md');
  }
  // A suite whose baseline never produced a number has measured nothing.
  const baseline = result.summary.filter((s) => s.target === (result.baseline ?? 'direct'));
  return baseline.length > 0 && baseline.every((s) => s.okRounds === 0) ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
