// One agent: probes its instance, reports to the coordinator, holds the primary's lease and stops
// the primary when the lease lapses (self-fence), carries out directives one at a time, and
// restarts its server only when it is a standby (a primary is started again only on the
// coordinator's word, which knows whether a replica was promoted meanwhile).
import type { AgentDirective, DirectiveResult } from '@tessera/proto';
import { createLogger, createMetrics, startMetricsServer, type Logger } from '@tessera/telemetry';
import { loginOfUrl, serverPortOf, type AgentConfig } from './config.js';
import { ServerControl } from './control.js';
import { carryOut, parseAction, type Action, type DirectiveContext } from './directives.js';
import { readCnpg } from './cnpg.js';
import { Lease } from './lease.js';
import { CoordinatorLink } from './link.js';
import { agentMetrics, type AgentMetrics } from './metrics.js';
import { readPatroni } from './patroni.js';
import { Prober, type InstanceState } from './probe.js';
import { buildReport } from './report.js';
import { selfFence } from './self-fence.js';
import type { HaView } from '@tessera/proto';

export interface StartOptions {
  log?: Logger;
}

export interface RunningAgent {
  readonly metricsPort: number;
  /** The last probe's view, for tests. */
  state(): { reachable: boolean; last: InstanceState | undefined; fenced: boolean };
  stop(): Promise<void>;
}

const FENCE_CHECK_MS = 100;
const RESTART_BACKOFF_MIN_MS = 1_000;
const RESTART_BACKOFF_MAX_MS = 15_000;

export async function startAgent(
  config: AgentConfig,
  opts: StartOptions = {},
): Promise<RunningAgent> {
  const log =
    opts.log ??
    createLogger('agent', config.logLevel === undefined ? {} : { level: config.logLevel });
  const { registry } = createMetrics('agent');
  const metrics = agentMetrics(registry);
  const metricsServer = await startMetricsServer(registry, {
    host: config.metricsHost,
    port: config.metricsPort,
  });
  const agent = new Agent(config, log, metrics);
  agent.start();
  log.info(
    {
      node: config.node,
      address: config.address,
      mode: config.mode,
      coordinators: config.coordinators,
      dataDir: config.dataDir ?? null,
      metricsPort: metricsServer.port,
    },
    'agent started',
  );
  return {
    metricsPort: metricsServer.port,
    state: () => agent.view(),
    stop: async () => {
      await agent.stop();
      await metricsServer.close().catch(() => undefined);
      log.info('agent stopped');
    },
  };
}

class Agent {
  private readonly prober: Prober;
  private readonly control: ServerControl | undefined;
  private readonly lease = new Lease();
  private readonly link: CoordinatorLink;
  private readonly timers: NodeJS.Timeout[] = [];
  private seq = 0n;
  private last: InstanceState | undefined;
  private lastOkAt = 0;
  private failures = 0;
  private reachable = false;
  private lastError = '';
  private ha: HaView | undefined;
  private stoppedByLease = false;
  private fencing = false;
  private readonly results: DirectiveResult[] = [];
  private queue: Promise<void> = Promise.resolve();
  private readonly pendingIds = new Set<bigint>();
  private restartAt = 0;
  private restartBackoff = RESTART_BACKOFF_MIN_MS;
  private probing = false;
  private stopped = false;

  constructor(
    private readonly config: AgentConfig,
    private readonly log: Logger,
    private readonly metrics: AgentMetrics,
  ) {
    this.prober = new Prober(config.pgUrl, config.probeTimeoutMs, config.dataDir);
    this.control =
      config.dataDir !== undefined
        ? new ServerControl({
            dataDir: config.dataDir,
            port: serverPortOf(config),
            binDir: config.pgBin,
            logFile: config.pgLog,
          })
        : undefined;
    this.link = new CoordinatorLink(
      config.coordinators,
      config.token,
      (d) => this.onDirective(d),
      log,
    );
  }

  view() {
    return { reachable: this.reachable, last: this.last, fenced: this.fenced() };
  }

  start(): void {
    this.link.start();
    const every = (ms: number, fn: () => void): void => {
      const t = setInterval(fn, ms);
      this.timers.push(t);
    };
    every(this.config.probeIntervalMs, () => void this.probeOnce());
    every(this.config.reportIntervalMs, () => this.report());
    every(FENCE_CHECK_MS, () => void this.checkFence());
    void this.probeOnce();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.link.stop();
    await this.queue.catch(() => undefined);
    this.prober.drop();
  }

  private fenced(): boolean {
    return this.control?.isFenced() ?? false;
  }

  private async probeOnce(): Promise<void> {
    if (this.probing || this.stopped) return;
    this.probing = true;
    const before = { reachable: this.reachable, inRecovery: this.last?.inRecovery };
    try {
      const state = await this.prober.probe();
      this.last = state;
      this.lastOkAt = performance.now();
      this.failures = 0;
      this.reachable = true;
      this.lastError = '';
      if (state.inRecovery) this.lease.clear(); // a standby holds no lease
      this.restartBackoff = RESTART_BACKOFF_MIN_MS;
    } catch (e) {
      this.failures++;
      this.lastError = e instanceof Error ? e.message : String(e);
      if (this.failures >= this.config.probeFailures) this.reachable = false;
    } finally {
      this.probing = false;
    }
    if (this.config.mode === 'patroni' && this.config.patroniUrl !== undefined)
      this.ha = await readPatroni(this.config.patroniUrl, this.config.probeTimeoutMs);
    else if (this.config.mode === 'cnpg' && this.config.cnpg !== undefined)
      this.ha = await readCnpg(this.config.cnpg, this.config.probeTimeoutMs);
    this.metrics.reachable.set(this.reachable ? 1 : 0);
    this.metrics.inRecovery.set(this.last?.inRecovery ? 1 : 0);
    const changed =
      before.reachable !== this.reachable || before.inRecovery !== this.last?.inRecovery;
    if (changed) {
      this.log.info(
        {
          reachable: this.reachable,
          inRecovery: this.last?.inRecovery ?? null,
          err: this.lastError || undefined,
        },
        this.reachable ? 'the instance answers' : 'the instance does not answer',
      );
      this.report();
    }
    if (!this.reachable) this.maybeRestartStandby();
  }

  /** A standby that is down comes back by itself: it takes no writes, so no one must decide. */
  private maybeRestartStandby(): void {
    const c = this.control;
    if (!c || this.config.mode !== 'native' || this.fencing || this.pendingIds.size > 0) return;
    if (c.runningPid() !== undefined || c.isFenced() || !c.isStandbyDir()) return;
    const now = performance.now();
    if (now < this.restartAt) return;
    this.restartAt = now + this.restartBackoff;
    this.restartBackoff = Math.min(this.restartBackoff * 2, RESTART_BACKOFF_MAX_MS);
    this.enqueue('start standby', async () => {
      await c.start();
      this.log.info('started the standby again');
    });
  }

  private report(): void {
    if (this.stopped) return;
    this.seq++;
    const remaining = this.lease.remainingMs();
    const sent = this.link.send(
      buildReport({
        config: this.config,
        seq: this.seq,
        reachable: this.reachable,
        last: this.last,
        lastError: this.lastError,
        fenced: this.fenced(),
        leaseRemainingMs: remaining,
        stoppedByLease: this.stoppedByLease,
        results: this.results.splice(0),
        ha: this.ha,
      }),
    );
    if (sent) {
      this.lease.sent(this.seq);
      this.metrics.reports.inc();
    }
    this.metrics.leaseRemaining.set(remaining === undefined ? 0 : Math.max(0, remaining) / 1000);
  }

  private onDirective(d: AgentDirective): void {
    const action = parseAction(d.action);
    if (action === undefined) {
      this.log.warn({ action: d.action }, 'ignoring a directive this agent does not know');
      this.results.push({
        id: d.id,
        ok: false,
        error: `unknown action "${d.action}"`,
      } as DirectiveResult);
      return;
    }
    if (action === 'lease') {
      if (this.config.mode !== 'native' || this.last?.inRecovery !== false) return;
      this.lease.granted(d.reportSeq, Number(d.leaseMs));
      return;
    }
    // A directive the coordinator repeats while the first is still running is not run twice.
    if (this.pendingIds.has(d.id)) return;
    this.pendingIds.add(d.id);
    this.log.info({ action, id: d.id.toString(), reason: d.reason }, 'directive received');
    this.enqueue(action, async () => {
      try {
        await this.run(action, d);
        this.done(d, action, undefined);
      } catch (e) {
        this.done(d, action, e instanceof Error ? e.message : String(e));
      } finally {
        this.pendingIds.delete(d.id);
      }
    });
  }

  private async run(action: Exclude<Action, 'lease'>, d: AgentDirective): Promise<void> {
    if (action === 'fence') this.fencing = true;
    try {
      const ctx: DirectiveContext = {
        prober: this.prober,
        control: this.control,
        binDir: this.config.pgBin,
        log: this.log,
        following: this.config.mode === 'native' ? undefined : this.config.mode,
        primaryLogin: loginOfUrl(this.config.pgUrl),
      };
      await carryOut(action, d, ctx);
      if (action === 'fence' || action === 'start' || action === 'rejoin') {
        this.lease.clear();
        this.stoppedByLease = false;
      }
    } finally {
      this.fencing = false;
    }
  }

  private done(d: AgentDirective, action: string, error: string | undefined): void {
    this.metrics.directives.inc({ action, outcome: error === undefined ? 'ok' : 'failed' });
    if (error !== undefined)
      this.log.error({ action, id: d.id.toString(), err: error }, 'directive failed');
    else this.log.info({ action, id: d.id.toString() }, 'directive done');
    this.results.push({ id: d.id, ok: error === undefined, error: error ?? '' } as DirectiveResult);
    void this.probeOnce().then(() => this.report());
  }

  private enqueue(what: string, fn: () => Promise<void>): void {
    this.queue = this.queue.then(fn).catch((e: unknown) => {
      this.log.error(
        { what, err: e instanceof Error ? e.message : String(e) },
        'agent task failed',
      );
    });
  }

  private async checkFence(): Promise<void> {
    if (this.stopped || this.fencing) return;
    const action = selfFence({
      mode: this.config.mode,
      running: this.control ? this.control.runningPid() !== undefined : undefined,
      last: this.last,
      lastAgeMs: performance.now() - this.lastOkAt,
      reachable: this.reachable,
      fenced: this.fenced(),
      leaseRemainingMs: this.lease.remainingMs(),
      failsafeReplyMs: this.config.failsafeReplyMs,
      freshMs: this.config.probeIntervalMs * 2 + this.config.probeTimeoutMs,
    });
    if (action.kind === 'none') return;
    if (!this.control) {
      this.log.error(
        { because: action.because, detail: action.detail },
        'must stop the primary but cannot: the agent has no --data-dir',
      );
      return;
    }
    this.fencing = true;
    try {
      this.log.error({ because: action.because, detail: action.detail }, 'stopping this primary');
      await this.control.kill();
      this.prober.drop();
      this.metrics.selfFences.inc({ because: action.because });
      if (action.because === 'lease') {
        this.stoppedByLease = true;
        this.lease.clear();
      }
      this.reachable = false;
      this.report();
    } catch (e) {
      this.log.error(
        { err: e instanceof Error ? e.message : String(e) },
        'could not stop the primary',
      );
    } finally {
      this.fencing = false;
    }
  }
}
