// A soak plan (soak/plans/<name>.json; docs/soak.md, "Writing a plan"): the cluster's shape, the
// workload's mix and rate, the duration, and the fault schedule. Pure: JSON in, a validated plan
// with every default filled in out, or a PlanError with one sentence.

export class PlanError extends Error {
  readonly code = 'SOAK_PLAN';
}

export type NetworkMode = 'auto' | 'netns' | 'loopback';

export const OP_KINDS = [
  'list-append',
  'list-txn',
  'list-read',
  'list-read-multi',
  'list-read-txn',
  'counter-add',
  'counter-add-multi',
  'counter-read',
  'counter-read-txn',
  'transfer',
  'balances',
] as const;
export type OpKind = (typeof OP_KINDS)[number];

export interface ClusterPlan {
  /** Data nodes, besides the home node (which holds the catalog and owns no ranges). */
  dataNodes: number;
  coordinators: number;
  routers: number;
  /** netns: each instance in its own network namespace (root); loopback: 127.0.0.1; auto: netns when root. */
  network: NetworkMode;
  /** Put the harness's TCP proxy in front of every node (needed by link-delay and link-loss). */
  linkProxy: boolean;
  /** Ranges each keyspace starts with (owned round-robin by the data nodes). */
  rangesPerKeyspace: number;
  postgresSettings: Record<string, string>;
  /** Extra flags for every coordinator / router / mover. */
  coordinatorArgs: string[];
  routerArgs: string[];
  /**
   * Movers (apps/mover) running the jobs of the move, split-merge and kill-mover faults; when the
   * plan does not say, 1 if it names one of those kinds, else 0.
   */
  movers: number;
  moverArgs: string[];
  /**
   * Streaming replicas per node, the home node's included (0 or 1). With 1, every Postgres
   * instance (primary and replica) also gets a tessera-agent, and the coordinators fail nodes over.
   */
  replicas: number;
}

/** Fault kinds that submit jobs a mover must run. */
export const MOVER_FAULT_KINDS: readonly string[] = ['move', 'split-merge', 'kill-mover'];

/** Fault kinds that need nodes with replicas (and agents). */
export const REPLICA_FAULT_KINDS: readonly string[] = [
  'failover-node',
  'kill-replica',
  'home-failover',
];

export interface WorkloadPlan {
  /** Operations per second offered, over all clients. */
  rate: number;
  /** Concurrent client connections (processes of the history). */
  clients: number;
  /** A statement without an answer after this long is abandoned: its connection is dropped. */
  opTimeoutMs: number;
  /** Relative weights of the operation kinds. */
  mix: Record<OpKind, number>;
  lists: { activeKeys: number; maxAppendsPerKey: number };
  counters: { keys: number };
  bank: { accounts: number; balance: number };
}

/** One kind of fault the scheduler may draw, with its parameters (see faults/registry.ts). */
export interface FaultEntry {
  kind: string;
  weight: number;
  /** Fault duration bounds in seconds (how long a process stays down, a partition lasts, ...). */
  seconds: [number, number];
  /**
   * At most this many faults of the kind in a run (unbounded when absent): the `long` plan kills
   * the coordinator leader and the mover once each, early, so that a coordinator and a mover live
   * the whole run and their memory growth can be judged (docs/soak.md, "Memory").
   */
  atMost: number | undefined;
  params: Record<string, unknown>;
}

export interface FaultsPlan {
  /** Quiet seconds before the first fault. */
  firstAfterS: number;
  /** Quiet seconds between a fault's heal and the next fault, drawn in this range. */
  gapS: [number, number];
  /** No fault starts in the last seconds of the run. */
  quietEndS: number;
  /** Draw every kind once (in a seeded order) before drawing any kind again. */
  everyKind: boolean;
  /**
   * Kinds that open the schedule, once each in this order, before the seeded draw: a plan that
   * must see some kinds (the ci plan's cutovers and failover) gets them however long the others
   * take.
   */
  first: string[];
  kinds: FaultEntry[];
}

export interface Plan {
  name: string;
  description: string;
  /** Seconds of load. */
  seconds: number;
  seed: number;
  cluster: ClusterPlan;
  workload: WorkloadPlan;
  faults: FaultsPlan;
  /** How long to wait, after the load and the last heal, for the cluster to settle. */
  settleTimeoutS: number;
}

const DEFAULT_MIX: Record<OpKind, number> = {
  'list-append': 20,
  'list-txn': 10,
  'list-read': 10,
  'list-read-multi': 5,
  'list-read-txn': 5,
  'counter-add': 12,
  'counter-add-multi': 4,
  'counter-read': 8,
  'counter-read-txn': 3,
  transfer: 15,
  balances: 5,
};

type Json = Record<string, unknown>;

/** A plan from its parsed JSON; `name` is the file's name when the JSON has none. */
export function parsePlan(raw: unknown, name: string): Plan {
  const o = object(raw, 'the plan');
  known(o, 'the plan', [
    'name',
    'description',
    'seconds',
    'seed',
    'cluster',
    'workload',
    'faults',
    'settleTimeoutS',
  ]);
  const c = object(o.cluster ?? {}, 'cluster');
  known(c, 'cluster', [
    'dataNodes',
    'coordinators',
    'routers',
    'network',
    'linkProxy',
    'rangesPerKeyspace',
    'postgresSettings',
    'coordinatorArgs',
    'routerArgs',
    'movers',
    'moverArgs',
    'replicas',
  ]);
  const w = object(o.workload ?? {}, 'workload');
  known(w, 'workload', ['rate', 'clients', 'opTimeoutMs', 'mix', 'lists', 'counters', 'bank']);
  const f = object(o.faults ?? {}, 'faults');
  known(f, 'faults', ['firstAfterS', 'gapS', 'quietEndS', 'everyKind', 'first', 'kinds']);
  const network = str(c.network ?? 'auto', 'cluster.network');
  if (network !== 'auto' && network !== 'netns' && network !== 'loopback')
    throw new PlanError(`cluster.network must be auto, netns or loopback, not "${network}"`);

  const mixRaw = object(w.mix ?? DEFAULT_MIX, 'workload.mix');
  const mix = { ...Object.fromEntries(OP_KINDS.map((k) => [k, 0])) } as Record<OpKind, number>;
  for (const [k, v] of Object.entries(mixRaw)) {
    if (!(OP_KINDS as readonly string[]).includes(k))
      throw new PlanError(
        `workload.mix has an unknown operation "${k}"; the operations are ${OP_KINDS.join(', ')}`,
      );
    mix[k as OpKind] = num(v, `workload.mix.${k}`, 0);
  }
  if (Object.values(mix).every((x) => x === 0))
    throw new PlanError('workload.mix gives every operation weight 0');
  const lists = object(w.lists ?? {}, 'workload.lists');
  const counters = object(w.counters ?? {}, 'workload.counters');
  const bank = object(w.bank ?? {}, 'workload.bank');

  const kinds = array(f.kinds ?? [], 'faults.kinds').map((k, i) =>
    faultEntry(k, `faults.kinds[${i}]`),
  );
  const first = strings(f.first ?? [], 'faults.first');
  for (const k of first)
    if (!kinds.some((e) => e.kind === k))
      throw new PlanError(`faults.first names "${k}", which faults.kinds does not list`);
  const seconds = num(o.seconds ?? 60, 'seconds', 1);
  const needsMover = kinds.some((k) => MOVER_FAULT_KINDS.includes(k.kind) && k.weight > 0);
  const movers = int(c.movers ?? (needsMover ? 1 : 0), 'cluster.movers', 0);
  if (needsMover && movers === 0)
    throw new PlanError(
      `faults.kinds names ${MOVER_FAULT_KINDS.join(' / ')}, which need a mover: cluster.movers must be at least 1`,
    );
  const replicas = int(c.replicas ?? 0, 'cluster.replicas', 0);
  if (replicas > 1)
    throw new PlanError(
      `cluster.replicas must be 0 or 1 (one synchronous streaming replica per node, the home node's included), not ${replicas}`,
    );
  const needsReplica = kinds.find((k) => REPLICA_FAULT_KINDS.includes(k.kind) && k.weight > 0);
  if (needsReplica && replicas === 0)
    throw new PlanError(
      `faults.kinds names ${needsReplica.kind}, which needs nodes with a replica: set cluster.replicas to 1`,
    );
  return {
    name: str(o.name ?? name, 'name'),
    description: str(o.description ?? '', 'description'),
    seconds,
    seed: int(o.seed ?? 1, 'seed', 0),
    cluster: {
      dataNodes: int(c.dataNodes ?? 2, 'cluster.dataNodes', 1),
      coordinators: int(c.coordinators ?? 2, 'cluster.coordinators', 1),
      routers: int(c.routers ?? 2, 'cluster.routers', 1),
      network,
      linkProxy: bool(c.linkProxy ?? true, 'cluster.linkProxy'),
      rangesPerKeyspace: int(c.rangesPerKeyspace ?? 4, 'cluster.rangesPerKeyspace', 1),
      postgresSettings: stringMap(c.postgresSettings ?? {}, 'cluster.postgresSettings'),
      coordinatorArgs: strings(c.coordinatorArgs ?? [], 'cluster.coordinatorArgs'),
      routerArgs: strings(c.routerArgs ?? [], 'cluster.routerArgs'),
      movers,
      moverArgs: strings(c.moverArgs ?? [], 'cluster.moverArgs'),
      replicas,
    },
    workload: {
      rate: num(w.rate ?? 200, 'workload.rate', 1),
      clients: int(w.clients ?? 32, 'workload.clients', 1),
      opTimeoutMs: int(w.opTimeoutMs ?? 10_000, 'workload.opTimeoutMs', 100),
      mix,
      lists: {
        activeKeys: int(lists.activeKeys ?? 16, 'workload.lists.activeKeys', 2),
        maxAppendsPerKey: int(lists.maxAppendsPerKey ?? 200, 'workload.lists.maxAppendsPerKey', 1),
      },
      counters: { keys: int(counters.keys ?? 16, 'workload.counters.keys', 2) },
      bank: {
        accounts: int(bank.accounts ?? 16, 'workload.bank.accounts', 2),
        balance: int(bank.balance ?? 1000, 'workload.bank.balance', 1),
      },
    },
    faults: {
      firstAfterS: num(f.firstAfterS ?? 15, 'faults.firstAfterS', 0),
      gapS: pair(f.gapS ?? [10, 20], 'faults.gapS'),
      quietEndS: num(f.quietEndS ?? 20, 'faults.quietEndS', 0),
      everyKind: bool(f.everyKind ?? true, 'faults.everyKind'),
      first,
      kinds,
    },
    settleTimeoutS: num(o.settleTimeoutS ?? 90, 'settleTimeoutS', 1),
  };
}

/** --seconds and --seed from the command line win over the file. */
export function withOverrides(
  plan: Plan,
  o: { seconds?: number | undefined; seed?: number | undefined },
): Plan {
  return { ...plan, seconds: o.seconds ?? plan.seconds, seed: o.seed ?? plan.seed };
}

function faultEntry(raw: unknown, where: string): FaultEntry {
  const o = object(raw, where);
  const { kind, weight, seconds, atMost, ...params } = o;
  return {
    kind: str(kind, `${where}.kind`),
    weight: num(weight ?? 1, `${where}.weight`, 0),
    seconds: pair(seconds ?? [2, 6], `${where}.seconds`),
    atMost: atMost === undefined ? undefined : int(atMost, `${where}.atMost`, 1),
    params,
  };
}

function object(x: unknown, where: string): Json {
  if (typeof x !== 'object' || x === null || Array.isArray(x))
    throw new PlanError(`${where} must be an object`);
  return x as Json;
}
function known(o: Json, where: string, keys: string[]): void {
  for (const k of Object.keys(o))
    if (!keys.includes(k))
      throw new PlanError(
        `${where} has an unknown field "${k}"; the fields are ${keys.join(', ')}`,
      );
}
function array(x: unknown, where: string): unknown[] {
  if (!Array.isArray(x)) throw new PlanError(`${where} must be an array`);
  return x;
}
function str(x: unknown, where: string): string {
  if (typeof x !== 'string') throw new PlanError(`${where} must be a string`);
  return x;
}
function strings(x: unknown, where: string): string[] {
  return array(x, where).map((s, i) => str(s, `${where}[${i}]`));
}
function stringMap(x: unknown, where: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(object(x, where)).map(([k, v]) => [k, str(v, `${where}.${k}`)]),
  );
}
function bool(x: unknown, where: string): boolean {
  if (typeof x !== 'boolean') throw new PlanError(`${where} must be true or false`);
  return x;
}
function num(x: unknown, where: string, min: number): number {
  if (typeof x !== 'number' || !Number.isFinite(x) || x < min)
    throw new PlanError(`${where} must be a number of at least ${min}`);
  return x;
}
function int(x: unknown, where: string, min: number): number {
  const n = num(x, where, min);
  if (!Number.isInteger(n)) throw new PlanError(`${where} must be a whole number`);
  return n;
}
function pair(x: unknown, where: string): [number, number] {
  const a = array(x, where);
  if (a.length !== 2) throw new PlanError(`${where} must be [low, high]`);
  const lo = num(a[0], `${where}[0]`, 0);
  const hi = num(a[1], `${where}[1]`, 0);
  if (hi < lo) throw new PlanError(`${where} must be [low, high] with low <= high`);
  return [lo, hi];
}
