// The Tessera router as its own process, pointed at a coordinator. When apps/router cannot start
// (not built yet, a startup error) the target is skipped with the router's own last words.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@tessera/pgctl';
import { REPO_ROOT, nodeEntry, type NodeEntry } from '../harness/entry.js';
import { startProcess } from '../harness/processes.js';
import { answersQueries, skipped, type TargetStart } from './target.js';

export interface RouterOptions {
  name?: string;
  coordinator: string;
  poolSize: number;
  poolMode: 'transaction' | 'session';
  /** Processes sharing the port (--workers); 1 when absent. */
  workers?: number;
  /** --pipeline-depth; the router's default when absent. */
  pipelineDepth?: number | undefined;
  /** Client connections the router must accept at once (its --max-clients). */
  maxClients: number;
  /** How long it may take to answer its first query (default 60 s). */
  startTimeoutMs?: number;
  /** The program to run; this checkout's apps/router (built, or its sources) when absent. */
  entry?: NodeEntry | undefined;
  /** Its /metrics port; a random one nobody reads when absent. */
  metricsPort?: number | undefined;
}

/**
 * Another checkout's built router (--router-baseline), run as it is: its dist/main.js resolves
 * its own node_modules. Undefined when that checkout has no build.
 */
export function baselineRouterEntry(checkout: string): NodeEntry | undefined {
  const main = join(checkout, 'apps', 'router', 'dist', 'main.js');
  if (!existsSync(main)) return undefined;
  let commit = 'unknown commit';
  try {
    commit = `commit ${execFileSync('git', ['-C', checkout, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim()}`;
  } catch {
    // Not a git checkout: the path alone says what ran.
  }
  return { args: [main], describe: `${main} (baseline, ${commit})` };
}

/**
 * Extra Node.js flags for every router process (TESSERA_BENCH_ROUTER_NODE_FLAGS, split on spaces),
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the router under a suite's load (Node
 * refuses --cpu-prof in NODE_OPTIONS).
 */
function nodeFlags(): string[] {
  return (process.env['TESSERA_BENCH_ROUTER_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
}

export async function startRouter(opts: RouterOptions): Promise<TargetStart> {
  const name = opts.name ?? 'router';
  const entry = opts.entry ?? nodeEntry(join(REPO_ROOT, 'apps', 'router'), 'main');
  if (!entry)
    return skipped(
      name,
      'apps/router has no entry point yet (neither dist/main.js nor src/main.ts)',
    );
  const port = await freePort();
  const args = [
    ...nodeFlags(),
    ...entry.args,
    '--listen',
    `127.0.0.1:${port}`,
    '--coordinator',
    opts.coordinator,
    '--metrics-port',
    String(opts.metricsPort ?? 0),
    '--pool-size',
    String(opts.poolSize),
    '--pool-mode',
    opts.poolMode,
    '--max-clients',
    String(opts.maxClients),
    ...(opts.workers !== undefined && opts.workers > 1 ? ['--workers', String(opts.workers)] : []),
    ...(opts.pipelineDepth !== undefined ? ['--pipeline-depth', String(opts.pipelineDepth)] : []),
  ];
  const proc = startProcess(process.execPath, args, {
    env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' },
  });
  const ready = await answersQueries(
    '127.0.0.1',
    port,
    opts.startTimeoutMs ?? 60_000,
    () => proc.child.exitCode === null && proc.child.signalCode === null,
  );
  if (!ready) {
    const code = proc.child.exitCode;
    const out = proc.output().trim().split('\n').slice(-3).join(' | ').slice(-400);
    await proc.stop();
    return skipped(
      name,
      `the router could not start (${entry.describe}${code !== null ? `, exit ${code}` : `, no answer in ${(opts.startTimeoutMs ?? 60_000) / 1000} s`}): ${out || 'no output'}`,
    );
  }
  return {
    ok: true,
    target: {
      name,
      host: '127.0.0.1',
      port,
      pid: proc.pid,
      detail: `${entry.describe}${entry.args.includes('tsx') ? ' (not built: tsx adds memory; run npm run build for RSS numbers)' : ''}, --pool-mode ${opts.poolMode} --pool-size ${opts.poolSize}${opts.workers !== undefined && opts.workers > 1 ? ` --workers ${opts.workers}` : ''}${opts.pipelineDepth !== undefined ? ` --pipeline-depth ${opts.pipelineDepth}` : ''}`,
      stop: () => proc.stop(),
    },
  };
}
