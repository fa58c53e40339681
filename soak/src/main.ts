// `npm run soak -- <plan> [--seconds N] [--seed S]` runs a plan (soak/plans/<plan>.json) and
// writes soak/results/<date>-<plan>.{json,md,svg}; `npm run soak -- check HISTORY` re-checks a
// history alone. Both exit 1 on any anomaly (fractured reads are reported, not failures) and
// print a last line with the counts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { checkEvents, describeResult } from './checker/check.js';
import { SOAK_ROOT } from './entry.js';
import { readHistoryFile } from './history/read.js';
import { PlanError, parsePlan, withOverrides } from './plan/plan.js';
import { runPlan } from './run.js';

const PLANS = join(SOAK_ROOT, 'plans');

function usage(): string {
  const plans = existsSync(PLANS)
    ? readdirSync(PLANS)
        .filter((f) => f.endsWith('.json'))
        .map((f) => {
          const p = JSON.parse(readFileSync(join(PLANS, f), 'utf8')) as { description?: string };
          return `  ${basename(f, '.json').padEnd(8)} ${p.description ?? ''}`;
        })
        .join('\n')
    : '';
  return `Usage: npm run soak -- <plan> [--seconds N] [--seed S] [--out DIR]
       npm run soak -- check HISTORY

Runs a whole Tessera cluster (Postgres nodes, coordinators, routers; each in its own network
namespace when run as root) under load and a seeded fault schedule, records every operation in
a history, checks it, and writes soak/results/<date>-<plan>.{json,md,svg}. Exits 1 on any
anomaly. \`check\` re-checks a history file alone. See docs/soak.md.

Plans (soak/plans/):
${plans}
`;
}

class UsageError extends Error {}

function number(v: string | undefined, flag: string): number {
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${flag} needs a non-negative number`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const [first, ...rest] = argv;
  if (first === 'check') {
    if (rest.length !== 1) throw new UsageError('check takes one history file');
    const { events, malformed } = await readHistoryFile(rest[0]!);
    const r = checkEvents(events, malformed);
    for (const line of describeResult(r)) process.stdout.write(`${line}\n`);
    return r.anomalyTotal === 0 ? 0 : 1;
  }
  let seconds: number | undefined;
  let seed: number | undefined;
  let out = join(SOAK_ROOT, 'results');
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--seconds') seconds = number(rest[++i], '--seconds');
    else if (a === '--seed') seed = Math.floor(number(rest[++i], '--seed'));
    else if (a === '--out') out = rest[++i] ?? out;
    else throw new UsageError(`unknown argument ${a}`);
  }
  const file = first!.endsWith('.json') ? first! : join(PLANS, `${first}.json`);
  if (!existsSync(file)) throw new UsageError(`no plan ${first} (looked for ${file})`);
  const plan = withOverrides(
    parsePlan(JSON.parse(readFileSync(file, 'utf8')), basename(file, '.json')),
    { seconds, seed },
  );
  const log = (line: string): void => {
    process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  };
  const result = await runPlan({
    plan,
    command: `npm run soak -- ${argv.join(' ')}`,
    resultsDir: out,
    runsDir: join(SOAK_ROOT, 'runs'),
    log,
  });
  log(`wrote ${result.files.md}, .json, .svg`);
  for (const line of describeResult(result.report.check).slice(0, -1)) log(line);
  process.stdout.write(`${result.report.lastLine}\n`);
  return result.report.check.anomalyTotal === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError || e instanceof PlanError) {
      process.stderr.write(`soak: ${e.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
