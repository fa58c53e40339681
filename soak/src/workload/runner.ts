// Drives the workloads through the routers: many client connections from this one process, at a
// paced total rate, every operation written to the history as it is invoked and as it completes.
// After an unknown outcome (info) a client retires its process id and reconnects as a new one;
// which router it reconnects to is its RouterLink's choice (router-link.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Snapshot } from '@tessera/keyspace';
import { TABLES } from '../checker/values.js';
import type { Cluster, ServiceMember } from '../cluster/cluster.js';
import type { HistoryWriter } from '../history/writer.js';
import { OP_KINDS, type OpKind, type WorkloadPlan } from '../plan/plan.js';
import type { Rng } from '../rng.js';
import { execute } from './execute.js';
import { OpGenerator, type PlannedOp } from './generate.js';
import { RouterLink } from './router-link.js';
import type { Outcome } from './outcome.js';

export interface OpRecord {
  kind: OpKind;
  outcome: Outcome;
  invokeNs: number;
  completeNs: number;
  writes: boolean;
  nodes: string[];
  via: string;
}

const KEYSPACE_OF = {
  lists: TABLES.lists.keyspace,
  counters: TABLES.counters.keyspace,
  bank: TABLES.accounts.keyspace,
} as const;

/** Hands out start times at most `rate` per second, without bursts after an idle spell. */
export class RateLimiter {
  #next = 0;
  constructor(readonly rate: number) {}
  async take(): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + 1000 / this.rate;
    if (at > now) await sleep(at - now);
  }
}

export class Workload {
  readonly generator: OpGenerator;
  #nextProcess = 0;
  #stopped = false;
  #workers: Promise<void>[] = [];
  readonly #limiter: RateLimiter;
  readonly #kinds: OpKind[];
  readonly #weights: number[];
  /** The catalog the harness routes its bookkeeping by (owner nodes of an op's keys). */
  snapshot: Snapshot;

  constructor(
    readonly cluster: Cluster,
    readonly history: HistoryWriter,
    readonly plan: WorkloadPlan,
    readonly rng: Rng,
    accounts: readonly number[],
    snapshot: Snapshot,
    readonly onOp: (r: OpRecord) => void,
  ) {
    this.generator = new OpGenerator(plan, accounts);
    this.snapshot = snapshot;
    this.#limiter = new RateLimiter(plan.rate);
    this.#kinds = OP_KINDS.filter((k) => plan.mix[k] > 0);
    this.#weights = this.#kinds.map((k) => plan.mix[k]);
  }

  newProcessId(): number {
    return this.#nextProcess++;
  }

  start(): void {
    const routers = this.cluster.routers;
    for (let i = 0; i < this.plan.clients; i++) {
      const rng = this.rng.fork(`client${i}`);
      this.#workers.push(this.#client(i % routers.length, rng));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#workers);
  }

  ownerNodes(op: PlannedOp): string[] {
    const out = new Set<string>();
    for (const { keyspace, key } of op.keys) {
      try {
        out.add(this.snapshot.ownerOfKey(KEYSPACE_OF[keyspace], String(key)));
      } catch {
        // a keyspace the snapshot lacks: no owner to name
      }
    }
    return [...out].sort();
  }

  async #client(first: number, rng: Rng): Promise<void> {
    const routers = this.cluster.routers;
    let pid = this.newProcessId();
    const link = new RouterLink(first, routers.length, (at, timeoutMs) =>
      this.cluster.routerClient(routers[at]!, timeoutMs),
    );
    while (!this.#stopped) {
      const client = await link.connection();
      if (!client) {
        await sleep(200); // that router is down: the next is tried, as a load balancer would
        continue;
      }
      const router: ServiceMember = routers[link.at]!;
      await this.#limiter.take();
      if (this.#stopped) break;
      const kind = this.#kinds[rng.weighted(this.#weights)]!;
      const op = this.generator.next(kind, rng);
      const tags = { via: router.name, nodes: this.ownerNodes(op) };
      const inv = this.history.write(pid, 'invoke', op.f, { ...op.value, ...tags });
      const res = await execute(client, op, this.plan.opTimeoutMs);
      const done = this.history.write(pid, res.outcome, op.f, { ...res.value, ...tags });
      this.onOp({
        kind,
        outcome: res.outcome,
        invokeNs: inv.time_ns,
        completeNs: done.time_ns,
        writes: op.writes,
        nodes: tags.nodes,
        via: router.name,
      });
      if (res.outcome === 'info') {
        pid = this.newProcessId();
        link.drop();
      } else if (res.broken) {
        link.drop();
      }
    }
    await link.close();
  }
}
