// Command-line options shared by every suite, and `--quick` (the smoke test's tiny settings).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './harness/entry.js';

export interface BenchOptions {
  rounds: number;
  durationS: number;
  warmupS: number;
  /** Replaces every workload's client counts when given. */
  clients?: number[] | undefined;
  /** Only these targets (names as in the output); all of the suite's when absent. */
  targets?: string[] | undefined;
  /** overhead: only these workloads (`select`, `select-simple`, `write`, `tpcb-branch`). */
  workloads?: string[] | undefined;
  quick: boolean;
  /** pgbench branches: on the one node (overhead), or per node (scaleout). */
  scale?: number | undefined;
  nodes: number[];
  routers: number[];
  connections: number;
  /** scatter: rows in the table (the suite's default when absent). */
  rows?: number | undefined;
  /** 2pc: accounts (the suite's default when absent). */
  accounts?: number | undefined;
  threads: number;
  outDir: string;
  installPgbouncer: boolean;
  routerPoolMode: 'transaction' | 'session';
  /** Router --pool-size; the suite's own (its largest client count) when absent. */
  routerPoolSize?: number | undefined;
  /** Router --workers: processes sharing its port (default 1). */
  routerWorkers: number;
  /** Router --pipeline-depth; the router's own default when absent. */
  routerPipelineDepth?: number | undefined;
  /** How long a router may take to answer its first query before it counts as unable to start. */
  routerStartTimeoutMs: number;
  /**
   * overhead: another checkout (absolute path) whose built apps/router/dist/main.js runs as the
   * extra target `router-base`, with the router's flags, in the same rounds.
   */
  routerBaseline?: string | undefined;
}

/**
 * A suite's own defaults for the shared options, used when the flag is not given (--quick still
 * wins): a suite whose point is a long run (steady) would measure nothing in 10 s.
 */
export type OptionDefaults = Partial<Pick<BenchOptions, 'rounds' | 'durationS' | 'warmupS'>>;

export class UsageError extends Error {
  readonly code = 'BENCH_USAGE';
}

export const OPTIONS_HELP = `Options:
  --rounds N            interleaved rounds, each running every target once (default 3;
                        steady: 1)
  --duration S          seconds per pgbench run (default 10; steady: 600)
  --warmup S            seconds of warm-up per target before round 1 (default 5; steady: 60)
  --clients LIST        client counts, replacing every workload's own (e.g. 16,64)
  --targets LIST        only these targets (direct,router,pgbouncer,pgbouncer-txn,
                        passthrough, and router-base with --router-baseline; scatter:
                        router,single; 2pc: transfer-cross,transfer-local,direct-local)
  --workloads LIST      overhead: only these workloads (select, select-simple, write,
                        tpcb-branch; select and select-simple at 16 and 64 clients unless
                        --clients), e.g. to profile one path
  --scale N             pgbench branches (overhead: on the node; scaleout: per node)
  --nodes LIST          scaleout: node counts (default 1,2,3)
  --routers LIST        scaleout: router process counts (default 1,2)
  --connections N       idle: idle client connections (default 1000)
  --rows N              scatter: rows in the table (default 1000000)
  --accounts N          2pc: accounts (default 10000)
  --threads N           pgbench -j (default: cores)
  --router-pool-mode M  transaction (default) or session
  --router-pool-size N  the router's backend connections per node (default: the suite's
                        largest client count, like PgBouncer's pool)
  --router-workers N    router processes sharing one port (its --workers; default 1)
  --router-pipeline-depth N
                        the router's --pipeline-depth (default: the router's own)
  --router-baseline DIR overhead: also run DIR/apps/router/dist/main.js (another checkout,
                        built) as target router-base, with the router's flags, in the same
                        rounds; adds "x router-base" (TPS over router-base's, per round)
  --no-install          never apt-get install pgbouncer; skip it when missing
  --out DIR             where results go (default bench/results)
  --quick               smoke settings: 1 round, 2 s runs, 2 clients, scale 1, no warm-up,
                        scaleout on 1 node, 20 idle connections, scatter over 20000 rows,
                        2pc over 500 accounts, no installs
  --help                this text
`;

function names(flag: string, text: string | undefined): string[] {
  const out = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (out.length === 0) throw new UsageError(`${flag} needs a value`);
  return out;
}

function list(flag: string, text: string | undefined): number[] {
  if (text === undefined) throw new UsageError(`${flag} needs a value`);
  const out = text.split(',').map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new UsageError(`${flag} takes positive whole numbers separated by commas, not "${text}"`);
  }
  return out;
}

function one(flag: string, text: string | undefined): number {
  const [n] = list(flag, text);
  if (text?.includes(',')) throw new UsageError(`${flag} takes one number, not "${text}"`);
  return n!;
}

/** The checkout given to --router-baseline, absolute; it must hold a built router. */
function baselineDir(text: string | undefined): string {
  if (!text) throw new UsageError('--router-baseline needs a directory (another checkout)');
  const dir = resolve(text);
  const main = join(dir, 'apps', 'router', 'dist', 'main.js');
  if (!existsSync(main)) {
    throw new UsageError(
      `--router-baseline ${text}: ${main} does not exist; run npm ci (or npm run build) in that checkout first`,
    );
  }
  return dir;
}

export function parseOptions(
  argv: readonly string[],
  cores: number,
  defaults: OptionDefaults = {},
): BenchOptions {
  const quick = argv.includes('--quick');
  const o: BenchOptions = {
    rounds: quick ? 1 : (defaults.rounds ?? 3),
    durationS: quick ? 2 : (defaults.durationS ?? 10),
    warmupS: quick ? 0 : (defaults.warmupS ?? 5),
    clients: quick ? [2] : undefined,
    targets: undefined,
    quick,
    scale: quick ? 1 : undefined,
    nodes: quick ? [1] : [1, 2, 3],
    routers: quick ? [1] : [1, 2],
    connections: quick ? 20 : 1000,
    rows: quick ? 20_000 : undefined,
    accounts: quick ? 500 : undefined,
    threads: Math.max(1, cores),
    outDir: join(REPO_ROOT, 'bench', 'results'),
    installPgbouncer: !quick,
    routerPoolMode: 'transaction',
    routerWorkers: 1,
    routerStartTimeoutMs: quick ? 20_000 : 60_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = () => argv[++i];
    switch (a) {
      case '--quick':
        break;
      case '--rounds':
        o.rounds = one(a, v());
        break;
      case '--duration':
        o.durationS = one(a, v());
        break;
      case '--warmup': {
        const t = v();
        o.warmupS = t === '0' ? 0 : one(a, t);
        break;
      }
      case '--clients':
        o.clients = list(a, v());
        break;
      case '--targets':
        o.targets = names(a, v());
        break;
      case '--workloads':
        o.workloads = names(a, v());
        break;
      case '--scale':
        o.scale = one(a, v());
        break;
      case '--nodes':
        o.nodes = list(a, v());
        break;
      case '--routers':
        o.routers = list(a, v());
        break;
      case '--connections':
        o.connections = one(a, v());
        break;
      case '--rows':
        o.rows = one(a, v());
        break;
      case '--accounts':
        o.accounts = one(a, v());
        break;
      case '--threads':
        o.threads = one(a, v());
        break;
      case '--out': {
        const t = v();
        if (!t) throw new UsageError('--out needs a directory');
        o.outDir = t;
        break;
      }
      case '--no-install':
        o.installPgbouncer = false;
        break;
      case '--router-pool-mode': {
        const t = v();
        if (t !== 'transaction' && t !== 'session') {
          throw new UsageError(
            `--router-pool-mode must be transaction or session, not "${t ?? ''}"`,
          );
        }
        o.routerPoolMode = t;
        break;
      }
      case '--router-pool-size':
        o.routerPoolSize = one(a, v());
        break;
      case '--router-workers':
        o.routerWorkers = one(a, v());
        break;
      case '--router-pipeline-depth':
        o.routerPipelineDepth = one(a, v());
        break;
      case '--router-baseline':
        o.routerBaseline = baselineDir(v());
        break;
      default:
        throw new UsageError(`unknown option "${a}"; run with --help to see the options`);
    }
  }
  return o;
}

/** Whether a target of this name should run (--targets matches "router" for "router x2" too). */
export function wants(o: BenchOptions, name: string): boolean {
  if (!o.targets) return true;
  return o.targets.some((t) => t === name || name.startsWith(`${t} `));
}
