// Runs the schedule against the cluster: for each fault, a `start` event in the history, the
// injection, its duration, the heal, and an `end` event; then the gap. No fault starts in the
// plan's quiet end. healAll() puts everything back however a run ended.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from '../cluster/cluster.js';
import { restoreNode } from '../cluster/ha.js';
import type { HistoryWriter } from '../history/writer.js';
import type { Affects, ClusterShape, FaultContext, FaultItem } from './fault.js';
import { faultKind } from './registry.js';

export interface FaultRun {
  item: FaultItem;
  affects: Affects;
  startNs: number;
  injectedNs?: number;
  endNs?: number;
  details: Record<string, unknown>;
  error?: string;
}

export class Nemesis {
  readonly runs: FaultRun[] = [];
  #stopped = false;
  readonly #open = new Set<FaultItem>();

  constructor(
    readonly cluster: Cluster,
    readonly history: HistoryWriter,
    readonly shape: ClusterShape,
    readonly log: (line: string) => void,
    readonly hooks: { start?(run: FaultRun): void; end?(run: FaultRun): void } = {},
  ) {}

  /** Runs faults until `lastStartMs` (wall clock from now) or the schedule ends. */
  async run(items: readonly FaultItem[], firstAfterS: number, lastStartMs: number): Promise<void> {
    const deadline = Date.now() + lastStartMs;
    await this.#wait(firstAfterS * 1000);
    for (const item of items) {
      if (this.#stopped || Date.now() >= deadline) break;
      await this.#one(item);
      await this.#wait(item.gapAfterS * 1000);
    }
  }

  stop(): void {
    this.#stopped = true;
  }

  async #wait(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.#stopped && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }

  async #one(item: FaultItem): Promise<void> {
    const kind = faultKind(item.kind)!;
    const affects = kind.affects(item, this.shape);
    const ctx: FaultContext = {
      cluster: this.cluster,
      log: this.log,
      note: (phase, value) =>
        this.history.note('nemesis', item.kind, {
          id: item.id,
          phase,
          target: item.target,
          ...value,
        }),
    };
    await kind.prepare?.(ctx, item).catch((e: unknown) => {
      this.log(`fault ${item.id} ${item.kind}: ${(e as Error).message}; starting it anyway`);
    });
    const start = this.history.note('nemesis', item.kind, {
      id: item.id,
      phase: 'start',
      target: item.target,
      seconds: item.seconds,
      params: item.params,
      affects,
    });
    const run: FaultRun = { item, affects, startNs: start.time_ns, details: {} };
    this.runs.push(run);
    this.hooks.start?.(run);
    this.#open.add(item);
    this.log(
      `fault ${item.id} ${item.kind} on ${item.target} for ${item.seconds} s ${JSON.stringify(item.params)}`,
    );
    try {
      run.details = await kind.inject(ctx, item);
      run.injectedNs = this.history.note('nemesis', item.kind, {
        id: item.id,
        phase: 'injected',
        target: item.target,
        ...run.details,
      }).time_ns;
      if (!kind.selfTimed) await sleep(item.seconds * 1000);
    } catch (e) {
      run.error = (e as Error).message;
      this.log(`fault ${item.id} ${item.kind} failed to inject: ${run.error}`);
    }
    try {
      const healed = await kind.heal(ctx, item);
      run.details = { ...run.details, ...healed };
      this.#open.delete(item);
    } catch (e) {
      run.error = `${run.error ? `${run.error}; ` : ''}heal: ${(e as Error).message}`;
      this.log(`fault ${item.id} ${item.kind} failed to heal: ${(e as Error).message}`);
    }
    run.endNs = this.history.note('nemesis', item.kind, {
      id: item.id,
      phase: 'end',
      target: item.target,
      ...run.details,
      ...(run.error ? { error: run.error } : {}),
    }).time_ns;
    this.hooks.end?.(run);
  }

  /** Heals whatever is still open, then makes sure every process runs and every link is up. */
  async healAll(): Promise<void> {
    for (const item of this.#open) {
      try {
        await faultKind(item.kind)!.heal(
          { cluster: this.cluster, log: this.log, note: () => undefined },
          item,
        );
      } catch (e) {
        this.log(`heal of fault ${item.id} failed: ${(e as Error).message}`);
      }
    }
    this.#open.clear();
    const c = this.cluster;
    for (const n of c.nodes) {
      await n.resume();
      await n.clearLinkRules();
      // A replicated node: every instance back as it must come back (a fenced one rejoined).
      if (n.replicated)
        await restoreNode(c, n).catch((e: unknown) =>
          this.log(`restoring ${n.name} failed: ${(e as Error).message}`),
        );
      else if (n.postmasterPid === undefined) await n.start();
    }
    const t = c.topology;
    if (t && c.network) {
      for (const m of t.members) {
        const peers = t.links.flatMap((l) =>
          l.a === m.name ? [l.b] : l.b === m.name ? [l.a] : [],
        );
        await c.network.heal(m.name, peers);
      }
    }
    for (const s of [...c.coordinators, ...c.routers, ...c.movers]) {
      await s.process.signal('SIGCONT');
      if (!s.process.running) await c.restartService(s);
    }
    await c.vip.waitForLeader(60_000);
  }
}
