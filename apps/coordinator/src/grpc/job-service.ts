// JobService: the mover's work queue over the job tables (store/jobs.ts), its cleanup records
// (store/job-cleanup.ts), the catalog changes it makes for a job (store/job-changes.ts), and
// waiting until every live router acknowledged an epoch (store/router-leases.ts).
import { create, JobChangeResponseSchema, type JobService, type ServiceImpl } from '@tessera/proto';
import { CleanupStore } from '../store/job-cleanup.js';
import { JobChanges, type Published } from '../store/job-changes.js';
import type { ActiveTerm, ServiceDeps } from './deps.js';

const MAX_AWAIT_MS = 60_000;

export function jobService(deps: ServiceDeps): ServiceImpl<typeof JobService> {
  // Per term (the stores change when a standby takes over).
  const perTerm = new WeakMap<ActiveTerm, { cleanup: CleanupStore; changes: JobChanges }>();
  const of = (term: ActiveTerm) => {
    let v = perTerm.get(term);
    if (!v) {
      v = { cleanup: new CleanupStore(term.store.pool), changes: new JobChanges(term.store) };
      perTerm.set(term, v);
    }
    return v;
  };
  const publish = async (
    what: string,
    fields: Record<string, unknown>,
    p: Published & { catalog?: Parameters<ServiceDeps['hub']['publish']>[0] },
  ) => {
    if (p.changed && p.catalog) {
      deps.hub.publish(p.catalog);
      await deps.hub.published(p.epoch);
      deps.onEpoch(p.epoch);
      deps.log.info({ change: what, epoch: p.epoch.toString(), ...fields }, 'catalog changed');
    }
    return create(JobChangeResponseSchema, { epoch: p.epoch });
  };
  return {
    async submitJob(req) {
      const job = await deps.term().jobs.submit(req);
      deps.log.info(
        { job: job.id.toString(), kind: job.kind, steps: req.steps.length },
        'job submitted',
      );
      return job;
    },
    getJob: (req) => deps.term().jobs.get(req.id),
    async listJobs(req) {
      return { jobs: await deps.term().jobs.list(req.all, req.parentId) };
    },
    async claimJob(req) {
      const job = await deps.term().jobs.claim(req.moverId, req.leaseMs, req.running);
      if (job)
        deps.log.info(
          { job: job.id.toString(), mover: req.moverId, takeovers: job.takeovers },
          'job claimed',
        );
      return job ? { job } : {};
    },
    renewJobLease: (req) => deps.term().jobs.renew(req.jobId, req.moverId, req.leaseMs),
    reportStep: (req) => deps.term().jobs.reportStep(req),
    async cancelJob(req) {
      const job = await deps.term().jobs.cancel(req.id);
      deps.log.info({ job: job.id.toString() }, 'job cancel asked for');
      return job;
    },
    async finishJob(req) {
      const job = await deps.term().jobs.finish(req);
      deps.log.info({ job: job.id.toString(), error: job.error || undefined }, 'job finished');
      return job;
    },
    recordCleanup(req) {
      if (!req.record) throw new TypeError('RecordCleanup needs a record');
      return of(deps.term()).cleanup.record(req.moverId, req.record);
    },
    async listCleanup(req) {
      return { records: await of(deps.term()).cleanup.list(req.jobId) };
    },
    markCleanupDone: (req) => of(deps.term()).cleanup.markDone(req.moverId, req),
    async changeRange(req) {
      const p = await of(deps.term()).changes.changeRange(req);
      return publish(
        'JobChangeRange',
        {
          job: req.jobId.toString(),
          keyspace: req.keyspace,
          lo: req.lo.toString(),
          owner: req.owner,
        },
        p,
      );
    },
    async changeRangeMove(req) {
      const p = await of(deps.term()).changes.changeRangeMove(req);
      return publish(
        req.remove ? 'JobEndRangeMove' : 'JobBeginRangeMove',
        { job: req.jobId.toString(), keyspace: req.keyspace, lo: req.lo.toString() },
        p,
      );
    },
    async changeNode(req) {
      const p = await of(deps.term()).changes.changeNode(req);
      return publish('JobChangeNode', { job: req.jobId.toString(), node: req.name }, p);
    },
    awaitEpoch(req) {
      const timeout = req.timeoutMs === 0n ? 2_000 : Math.min(Number(req.timeoutMs), MAX_AWAIT_MS);
      return deps.term().leases.awaitEpoch(req.epoch, Math.max(0, timeout));
    },
  };
}
