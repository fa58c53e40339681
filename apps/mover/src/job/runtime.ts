// What a job's code sees while a mover runs it: the job as durably recorded (steps, progress,
// phase), ways to record more, its cleanup records, the coordinator and the nodes, and a signal
// that fires when the job must stop (cancelled, or another mover holds it now). The lease is
// renewed here every third of its length.
import {
  Code,
  JobState,
  RpcError,
  type Catalog,
  type CleanupRecord,
  type Job,
} from '@tessera/proto';
import type { Logger } from '@tessera/telemetry';
import type { MoverConfig } from '../config.js';
import type { CoordinatorClients } from '../coordinator.js';
import { CancelRequested, LeaseLost, errorText, isTransient } from '../errors.js';
import type { MoverMetrics } from '../metrics.js';
import type { NodeSessions } from '../nodes/sessions.js';
import { faultArmed, faultPoint } from './faults.js';

export interface StepState {
  index: number;
  state: JobState;
  progress: Record<string, unknown>;
}

export interface Report {
  state?: JobState;
  progress?: Record<string, unknown>;
  phase?: string;
  result?: unknown;
  error?: string;
}

export interface CleanupInit {
  node: string;
  database: string;
  kind: string;
  name: string;
  policy: 'always' | 'on_failure' | 'on_success';
  detailJson?: string;
}

/** Test seams: called as a job enters each phase (after it is recorded). */
export interface MoverHooks {
  onPhase?(jobId: bigint, phase: string): Promise<void>;
}

export interface RuntimeDeps {
  hooks?: MoverHooks | undefined;
  config: MoverConfig;
  log: Logger;
  metrics: MoverMetrics;
  nodes: NodeSessions;
  coord: CoordinatorClients;
}

export const json = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

export class JobRuntime {
  private current: Job;
  private stopper = new AbortController();
  private undoing = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private lastRenewMs = Date.now();
  private phaseName = '';
  private phaseStart = Date.now();
  /** In-process state that dies with the process (a cutover's verification snapshots). */
  readonly memory = new Map<string, unknown>();
  readonly log: Logger;

  constructor(
    job: Job,
    readonly deps: RuntimeDeps,
  ) {
    this.current = job;
    this.log = deps.log.child({ job: job.id.toString(), kind: job.kind });
    this.phaseName = job.phase;
  }

  get job(): Job {
    return this.current;
  }
  get id(): bigint {
    return this.current.id;
  }
  get config(): MoverConfig {
    return this.deps.config;
  }
  get metrics(): MoverMetrics {
    return this.deps.metrics;
  }
  get nodes(): NodeSessions {
    return this.deps.nodes;
  }
  get coord(): CoordinatorClients {
    return this.deps.coord;
  }
  get moverId(): string {
    return this.deps.config.moverId;
  }
  get signal(): AbortSignal {
    return this.stopper.signal;
  }
  spec<T>(): T {
    return JSON.parse(this.current.specJson) as T;
  }

  /** Throws the reason the job must stop, if there is one. */
  checkpoint(): void {
    if (this.stopper.signal.aborted) throw this.stopper.signal.reason as Error;
  }
  get cancelRequested(): boolean {
    return this.stopper.signal.reason instanceof CancelRequested;
  }
  get leaseLost(): boolean {
    return this.stopper.signal.reason instanceof LeaseLost;
  }

  /**
   * From here on the job is being undone (cancel or failure): a cancel no longer stops the work
   * (the undo is what the cancel asked for); only a lost lease does.
   */
  enterUndo(): void {
    this.undoing = true;
    if (this.stopper.signal.aborted && this.stopper.signal.reason instanceof CancelRequested)
      this.stopper = new AbortController();
  }

  /** Stops the job's work with `reason` (LeaseLost on shutdown too: a restart resumes it). */
  stop(reason: Error): void {
    if (this.undoing && reason instanceof CancelRequested) return;
    if (!this.stopper.signal.aborted) this.stopper.abort(reason);
  }

  /** Resolves after `ms` unless the job must stop first (then rejects with the reason). */
  sleep(ms: number): Promise<void> {
    this.checkpoint();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(this.signal.reason as Error);
      };
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  startRenewing(): void {
    const every = Math.max(200, Math.floor(this.config.leaseMs / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
  }

  stopRenewing(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  private async renew(): Promise<void> {
    try {
      const job = await this.coord.jobs.renewJobLease({
        jobId: this.id,
        moverId: this.moverId,
        leaseMs: BigInt(this.config.leaseMs),
      });
      this.lastRenewMs = Date.now();
      this.current = job;
      if (job.state === JobState.CANCELLING && !job.committed && !this.undoing)
        this.stop(new CancelRequested(`job ${this.id} was cancelled`));
    } catch (e) {
      if (
        e instanceof RpcError &&
        (e.code === Code.FAILED_PRECONDITION || e.code === Code.NOT_FOUND)
      ) {
        this.stop(new LeaseLost(e.details));
        return;
      }
      // The coordinator is away: keep working while our lease surely holds, then stop, since
      // another mover may take the job over once it lapses.
      if (Date.now() - this.lastRenewMs > this.config.leaseMs * 0.8)
        this.stop(new LeaseLost(`could not renew the lease of job ${this.id}: ${errorText(e)}`));
    }
  }

  /** Reads the job again (after a retry or a takeover elsewhere). */
  async refresh(): Promise<Job> {
    this.current = await this.coord.jobs.getJob({ id: this.id });
    if (this.current.claimedBy !== this.moverId)
      this.stop(new LeaseLost(`job ${this.id} is held by ${this.current.claimedBy} now`));
    if (this.current.state === JobState.CANCELLING && !this.current.committed && !this.undoing)
      this.stop(new CancelRequested(`job ${this.id} was cancelled`));
    return this.current;
  }

  step(name: string): StepState {
    const s = this.current.steps.find((x) => x.name === name);
    if (!s) throw new Error(`job ${this.id} (${this.current.kind}) has no step ${name}`);
    return {
      index: s.index,
      state: s.state,
      progress:
        s.progressJson === '' ? {} : (JSON.parse(s.progressJson) as Record<string, unknown>),
    };
  }

  isDone(name: string): boolean {
    return this.step(name).state === JobState.DONE;
  }

  /** Durably records a step's state and progress, and the job's phase and result. */
  async report(name: string, r: Report): Promise<void> {
    const s = this.step(name);
    const job = await this.call(() =>
      this.coord.jobs.reportStep({
        jobId: this.id,
        moverId: this.moverId,
        stepIndex: s.index,
        state: r.state ?? (s.state === JobState.PENDING ? JobState.RUNNING : s.state),
        progressJson: r.progress === undefined ? '' : json(r.progress),
        phase: r.phase ?? '',
        resultJson: r.result === undefined ? '' : json(r.result),
        error: r.error ?? '',
      }),
    );
    this.current = job;
    if (job.state === JobState.CANCELLING && !job.committed)
      this.stop(new CancelRequested(`job ${this.id} was cancelled`));
  }

  /** Marks a step done with its final progress. */
  async done(name: string, progress?: Record<string, unknown>): Promise<void> {
    await this.report(
      name,
      progress === undefined ? { state: JobState.DONE } : { state: JobState.DONE, progress },
    );
  }

  /** Enters a phase: recorded durably first (then a fault point for the kill matrix). */
  async phase(name: string, step: string): Promise<void> {
    if (this.phaseName !== name) {
      if (this.phaseName !== '')
        this.metrics.phaseSeconds.observe(
          { kind: this.current.kind, phase: this.phaseName },
          (Date.now() - this.phaseStart) / 1000,
        );
      this.phaseName = name;
      this.phaseStart = Date.now();
    }
    await this.report(step, { phase: name });
    this.log.info({ phase: name }, 'job phase');
    await this.deps.hooks?.onPhase?.(this.id, name);
    faultPoint(name);
    this.checkpoint();
  }

  /**
   * Enters a phase inside a cutover, where every millisecond is a held write: the record is sent
   * without waiting for it (a kill point for this phase waits, then kills).
   */
  async phaseSoon(name: string, step: string): Promise<void> {
    if (faultArmed(name) || this.deps.hooks?.onPhase) {
      await this.phase(name, step);
      return;
    }
    this.phaseName = name;
    this.phaseStart = Date.now();
    const s = this.step(step);
    this.coord.jobs
      .reportStep({
        jobId: this.id,
        moverId: this.moverId,
        stepIndex: s.index,
        state: JobState.RUNNING,
        phase: name,
      })
      .then(
        (job) => (this.current = job),
        (e: unknown) => this.log.debug({ err: errorText(e) }, 'phase report failed'),
      );
  }

  async recordCleanup(rec: CleanupInit): Promise<void> {
    await this.call(() =>
      this.coord.jobs.recordCleanup({ moverId: this.moverId, record: { ...rec, jobId: this.id } }),
    );
  }

  async cleanupRecords(): Promise<CleanupRecord[]> {
    return (await this.call(() => this.coord.jobs.listCleanup({ jobId: this.id }))).records;
  }

  async cleanupDone(rec: CleanupRecord): Promise<void> {
    await this.call(() =>
      this.coord.jobs.markCleanupDone({
        moverId: this.moverId,
        jobId: this.id,
        node: rec.node,
        database: rec.database,
        kind: rec.kind,
        name: rec.name,
      }),
    );
  }

  catalog(): Promise<Catalog> {
    return this.call(() => this.coord.catalog.getCatalog({}));
  }

  /**
   * A coordinator call retried while the coordinator is away (a restart, a failover), for as
   * long as the job may still run; a refusal that says the job is not ours stops it.
   */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      this.checkpoint();
      try {
        return await fn();
      } catch (e) {
        if (
          e instanceof RpcError &&
          e.code === Code.FAILED_PRECONDITION &&
          /stop working on it|held by mover/.test(e.details)
        ) {
          const reason = new LeaseLost(e.details);
          this.stop(reason);
          throw reason;
        }
        if (!(e instanceof RpcError) || !isTransient(e) || attempt >= 60) throw e;
        await this.sleep(Math.min(2_000, 50 * 2 ** attempt));
      }
    }
  }
}
