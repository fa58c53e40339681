// The commands that move data, each submitting a job the mover runs: `range move`, `range
// merge`, `rebalance`, `verify`, `nodes drain`. `--plan` prints what would happen and changes
// nothing; `--wait` follows the job to its end; without `--yes` a person at a terminal is asked.
import type { Catalog, Job } from '@tessera/proto';
import type { Command, CommandContext } from '../command.js';
import { boolFlag, parseRangeRef, stringFlag } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { JSON_FLAG } from '../flags.js';
import { textTable, toJson } from '../format.js';
import {
  WAIT_FLAG,
  YES_FLAG,
  confirm,
  drainJob,
  mergeJob,
  moveJob,
  rebalanceJob,
  verifyJob,
} from './job-requests.js';
import { follow, untilFinished } from './job-wait.js';
import { jobView } from './job-view.js';

interface PlanCheck {
  name: string;
  ok: boolean;
  sentence: string;
}
interface MovePlanView {
  keyspace: string;
  lo: string;
  hi: string;
  source: string;
  target: string;
  rows: number;
  bytes: number;
  checks: PlanCheck[];
  refusals: string[];
  warnings: string[];
  steps: string[];
  estimate: {
    copySeconds: number;
    verifySeconds: number;
    deleteSeconds: number;
    totalSeconds: number;
  };
}

function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const u = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${u[i]}`;
}

export function planText(p: MovePlanView): string {
  const e = p.estimate;
  return [
    `move ${p.keyspace}:[${p.lo}, ${p.hi}] from ${p.source} to ${p.target}`,
    `${p.rows.toLocaleString('en-US')} rows, ${bytesText(p.bytes)} to copy; about ${e.totalSeconds} s (copy ${e.copySeconds} s, verify ${e.verifySeconds} s, delete ${e.deleteSeconds} s)`,
    '',
    'checks:',
    ...p.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(28)}  ${c.sentence}`),
    ...(p.warnings.length > 0 ? ['', 'warnings:', ...p.warnings.map((w) => `  ${w}`)] : []),
    '',
    'steps:',
    ...p.steps.map((s, i) => `  ${i + 1}. ${s}`),
    '',
  ].join('\n');
}

export function submit(
  ctx: CommandContext,
  request: { kind: string; specJson: string; steps: string[] },
): Promise<Job> {
  return ctx.coordinator().jobs.submitJob(request);
}

/** After submitting: follow it with --wait, else say how to. */
export async function afterSubmit(ctx: CommandContext, job: Job, what: string): Promise<number> {
  const json = boolFlag(ctx.args, 'json');
  if (boolFlag(ctx.args, 'wait')) return follow(ctx, job.id, { json });
  ctx.io.out(
    json
      ? toJson(jobView(job))
      : `${what}: job ${job.id} submitted; follow it with tessera jobs watch ${job.id}\n`,
  );
  return 0;
}

function findRange(catalog: Catalog, keyspace: string, lo: bigint) {
  if (!catalog.keyspaces.some((k) => k.name === keyspace))
    throw new CliError(`no keyspace named "${keyspace}"`);
  const r = catalog.ranges.find((x) => x.keyspace === keyspace && x.lo === lo);
  if (!r)
    throw new CliError(
      `keyspace ${keyspace} has no range starting at ${lo}; see tessera range list ${keyspace}`,
    );
  return r;
}

const PLAN_FLAG = {
  type: 'boolean',
  description: 'print every step, the rows and bytes to copy and an estimate; change nothing',
} as const;

export const rangeMoveCommands: Command[] = [
  {
    path: ['range', 'move'],
    summary: 'move a range to another node online (writes of the range pause for milliseconds)',
    usage: ['range move KEYSPACE:LO --to NODE [--plan] [--yes] [--wait] [--json]'],
    description:
      'The mover copies the range to NODE while it keeps changing, then cuts over: the range is\n' +
      "frozen (routers hold its writes, reads go on), the old owner's fence narrows, the target\n" +
      'catches up, ownership flips, writes are released; the copies are verified and the old\n' +
      'copy deleted. --plan runs the checks (replication settings, replica identity of every\n' +
      'table, no partitioned tables, prepared transactions, disk) and prints every step without\n' +
      'changing anything.',
    examples: [
      'tessera range move tenants:-9223372036854775808 --to data3 --plan',
      'tessera range move tenants:-9223372036854775808 --to data3 --yes --wait',
    ],
    flags: {
      to: { type: 'string', value: 'NODE', description: 'the node that will own the range' },
      plan: PLAN_FLAG,
      yes: YES_FLAG,
      wait: WAIT_FLAG,
      json: JSON_FLAG,
    },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run(ctx) {
      const { keyspace, lo } = parseRangeRef(ctx.args.positionals[0] ?? '');
      const to = stringFlag(ctx.args, 'to');
      if (!to) throw new UsageError('range move needs --to NODE');
      const c = ctx.coordinator();
      const range = findRange(await c.catalog.getCatalog({}), keyspace, lo);
      const json = boolFlag(ctx.args, 'json');
      if (boolFlag(ctx.args, 'plan')) {
        const job = await submit(ctx, moveJob(keyspace, lo, to, true));
        const done = await untilFinished(ctx, job.id);
        if (done.error) throw new CliError(done.error);
        const plan = (JSON.parse(done.resultJson) as { plan: MovePlanView }).plan;
        ctx.io.out(json ? toJson(plan) : planText(plan));
        if (plan.refusals.length > 0) {
          ctx.io.err(`tessera: the move would be refused: ${plan.refusals.join('; ')}\n`);
          return 1;
        }
        return 0;
      }
      await confirm(ctx, `Move range ${keyspace}:${lo} from ${range.owner} to ${to}?`);
      return afterSubmit(
        ctx,
        await submit(ctx, moveJob(keyspace, lo, to, false)),
        `moving ${keyspace}:${lo} to ${to}`,
      );
    },
  },
  {
    path: ['range', 'merge'],
    summary: 'merge two adjacent ranges (moving one first when their owners differ)',
    usage: ['range merge KEYSPACE:LO1 KEYSPACE:LO2 [--yes] [--wait] [--json]'],
    examples: [
      'tessera range merge tenants:-9223372036854775808 tenants:-4611686018427387904 --yes --wait',
    ],
    flags: { yes: YES_FLAG, wait: WAIT_FLAG, json: JSON_FLAG },
    positionals: { min: 2, max: 2 },
    usesCoordinator: true,
    async run(ctx) {
      const a = parseRangeRef(ctx.args.positionals[0] ?? '');
      const b = parseRangeRef(ctx.args.positionals[1] ?? '');
      if (a.keyspace !== b.keyspace)
        throw new UsageError('the two ranges must be of the same keyspace');
      const [first, second] = a.lo < b.lo ? [a, b] : [b, a];
      const catalog = await ctx.coordinator().catalog.getCatalog({});
      const lower = findRange(catalog, first.keyspace, first.lo);
      const upper = findRange(catalog, second.keyspace, second.lo);
      if (lower.hi + 1n !== upper.lo)
        throw new CliError(
          `ranges ${first.keyspace}:${first.lo} and ${first.keyspace}:${second.lo} are not adjacent (the first ends at ${lower.hi})`,
        );
      await confirm(
        ctx,
        `Merge ${first.keyspace}:${first.lo} and ${first.keyspace}:${second.lo}${upper.owner !== lower.owner ? ` (moving the second from ${upper.owner} to ${lower.owner} first)` : ''}?`,
      );
      return afterSubmit(
        ctx,
        await submit(ctx, mergeJob(first.keyspace, first.lo, second.lo)),
        'merging',
      );
    },
  },
];

export const clusterMoveCommands: Command[] = [
  {
    path: ['rebalance'],
    summary: 'move and split ranges until every data node holds about the same rows per keyspace',
    usage: ['rebalance [--plan] [--tolerance PERCENT] [--keyspace NAME] [--yes] [--wait] [--json]'],
    description:
      'Counts the rows of every range and plans moves (and splits of ranges too big to place\n' +
      'evenly) until every active data node is within the tolerance (default 10%) of the mean\n' +
      'rows of each keyspace. The moves run as jobs, a few at a time; the rebalance resumes after\n' +
      'a crash. --plan prints the moves and changes nothing.',
    examples: ['tessera rebalance --plan', 'tessera rebalance --yes --wait'],
    flags: {
      plan: { type: 'boolean', description: 'print the moves and splits; change nothing' },
      tolerance: {
        type: 'string',
        value: 'PERCENT',
        description: 'allowed distance from the mean (default 10)',
      },
      keyspace: { type: 'string', value: 'NAME', description: 'only this keyspace' },
      yes: YES_FLAG,
      wait: WAIT_FLAG,
      json: JSON_FLAG,
    },
    positionals: { min: 0, max: 0 },
    usesCoordinator: true,
    async run(ctx) {
      const tolText = stringFlag(ctx.args, 'tolerance') ?? '10';
      if (!/^\d+(\.\d+)?$/.test(tolText) || Number(tolText) <= 0 || Number(tolText) >= 100)
        throw new UsageError(
          `--tolerance must be a percentage between 0 and 100, not "${tolText}"`,
        );
      const keyspace = stringFlag(ctx.args, 'keyspace');
      const tolerance = Number(tolText) / 100;
      const json = boolFlag(ctx.args, 'json');
      if (boolFlag(ctx.args, 'plan')) {
        const job = await submit(
          ctx,
          rebalanceJob(true, tolerance, keyspace ? [keyspace] : undefined),
        );
        const done = await untilFinished(ctx, job.id);
        if (done.error) throw new CliError(done.error);
        const plan = JSON.parse(done.resultJson) as RebalancePlanView;
        ctx.io.out(json ? toJson(plan) : rebalanceText(plan));
        return 0;
      }
      await confirm(ctx, 'Rebalance the cluster (moving ranges between nodes)?');
      return afterSubmit(
        ctx,
        await submit(ctx, rebalanceJob(false, tolerance, keyspace ? [keyspace] : undefined)),
        'rebalancing',
      );
    },
  },
  {
    path: ['verify'],
    summary: 'check that every row of a keyspace (or one range) is on the node that owns it',
    usage: ['verify KEYSPACE[:LO] [--json]'],
    description:
      'Counts, on every node and in every database, the rows of the keyspace the node does not\n' +
      'own, and the rows of each range on its owner. Exits 1 if any row is misplaced. (Each move\n' +
      'also verifies its two copies against each other before it deletes the old one.)',
    examples: ['tessera verify tenants', 'tessera verify tenants:-9223372036854775808 --json'],
    flags: { json: JSON_FLAG },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run(ctx) {
      const text = ctx.args.positionals[0] ?? '';
      const ref = text.includes(':') ? parseRangeRef(text) : { keyspace: text, lo: undefined };
      const job = await submit(ctx, verifyJob(ref.keyspace, ref.lo));
      const done = await untilFinished(ctx, job.id);
      if (done.error) throw new CliError(done.error);
      const r = JSON.parse(done.resultJson) as VerifyView;
      if (boolFlag(ctx.args, 'json')) ctx.io.out(toJson(r));
      else
        ctx.io.out(
          [
            `${r.ok ? 'ok' : 'MISPLACED ROWS'}: ${r.rowsChecked} rows of ${r.keyspace}${r.lo === null ? '' : `:${r.lo}`} checked`,
            ...(r.misplaced.length > 0
              ? [
                  '',
                  textTable(
                    ['node', 'database', 'table', 'misplaced rows'],
                    r.misplaced.map((m) => [m.node, m.database, m.table, String(m.rows)]),
                  ).trimEnd(),
                ]
              : []),
            '',
            textTable(
              ['range', 'owner', 'database', 'table', 'rows'],
              r.ranges.map((x) => [x.lo, x.owner, x.database, x.table, String(x.rows)]),
            ).trimEnd(),
            '',
          ].join('\n'),
        );
      return r.ok ? 0 : 1;
    },
  },
];

export const nodeMoveCommands: Command[] = [
  {
    path: ['nodes', 'drain'],
    summary: 'move every range off a node (then `tessera nodes remove` can remove it)',
    usage: ['nodes drain NAME [--yes] [--wait] [--json]'],
    examples: ['tessera nodes drain data1 --yes --wait'],
    flags: { yes: YES_FLAG, wait: WAIT_FLAG, json: JSON_FLAG },
    positionals: { min: 1, max: 1 },
    usesCoordinator: true,
    async run(ctx) {
      const name = ctx.args.positionals[0] ?? '';
      const catalog = await ctx.coordinator().catalog.getCatalog({});
      if (!catalog.nodes.some((n) => n.name === name)) throw new CliError(`no node named ${name}`);
      const owned = catalog.ranges.filter((r) => r.owner === name).length;
      await confirm(
        ctx,
        `Drain node ${name} (move its ${owned} range(s) to the other data nodes)?`,
      );
      return afterSubmit(ctx, await submit(ctx, drainJob(name)), `draining ${name}`);
    },
  },
];

interface RebalancePlanView {
  actions: {
    kind: string;
    keyspace: string;
    lo: string;
    at?: string;
    from?: string;
    to?: string;
    rows: number;
  }[];
  before: Record<string, Record<string, number>>;
  after: Record<string, Record<string, number>>;
  unbalanced: string[];
}

function rebalanceText(p: RebalancePlanView): string {
  const lines: string[] = [];
  for (const ks of Object.keys(p.before)) {
    const nodes = Object.keys({ ...p.before[ks], ...p.after[ks] });
    lines.push(
      `keyspace ${ks}:`,
      textTable(
        ['node', 'rows now', 'rows after'],
        nodes.map((n) => [n, String(p.before[ks]?.[n] ?? 0), String(p.after[ks]?.[n] ?? 0)]),
      ).trimEnd(),
      '',
    );
  }
  if (p.actions.length === 0) lines.push('nothing to do: every node is within the tolerance');
  else
    lines.push(
      'actions:',
      ...p.actions.map((a, i) =>
        a.kind === 'split'
          ? `  ${i + 1}. split ${a.keyspace}:${a.lo} at ${a.at} (upper part about ${a.rows} rows)`
          : `  ${i + 1}. move ${a.keyspace}:${a.lo} from ${a.from} to ${a.to} (${a.rows} rows)`,
      ),
    );
  if (p.unbalanced.length > 0)
    lines.push(
      '',
      `still out of tolerance afterwards (ranges that cannot be cut finer): ${p.unbalanced.join(', ')}`,
    );
  return `${lines.join('\n')}\n`;
}

interface VerifyView {
  keyspace: string;
  lo: string | null;
  ok: boolean;
  rowsChecked: number;
  misplaced: { node: string; database: string; table: string; rows: number }[];
  ranges: { lo: string; owner: string; database: string; table: string; rows: number }[];
}
