// Drives the workloads through the routers: many client connections from this one process, at a
// paced total rate, every operation written to the history as it is invoked and as it completes.
// After an unknown outcome (info) a client retires its process id and reconnects as a new one.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Snapshot } from '@tessera/keyspace';
import { TABLES } from '../checker/values.js';
import type { Cluster, ServiceMember } from '../cluster/cluster.js';
import type { HistoryWriter } from '../history/writer.js';
import { OP_KINDS, type OpKind, type WorkloadPlan } from '../plan/plan.js';
import type { Rng } from '../rng.js';
import { execute } from './execute.js';
import { OpGenerator, type PlannedOp } from './generate.js';
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
    let at = first;
    let pid = this.newProcessId();
    let client: pg.Client | undefined;
    // After a drop a client goes back to its own router (a killed one comes back); only while
    // that one refuses does it try the next.
    const drop = (): void => {
      const c = client;
      client = undefined;
      at = first;
      c?.end().catch(() => undefined);
    };
    while (!this.#stopped) {
      const router: ServiceMember = routers[at]!;
      if (!client) {
        try {
          client = await this.cluster.routerClient(router, 5_000);
        } catch {
          at = (at + 1) % routers.length; // that router is down: try the next, as a load balancer would
          await sleep(200);
          continue;
        }
      }
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
        drop();
      } else if (res.broken) {
        drop();
      }
    }
    drop();
  }
}
