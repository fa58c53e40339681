// JobService: the mover's work queue over the job tables (store/jobs.ts).
import type { JobService, ServiceImpl } from '@tessera/proto';
import type { ServiceDeps } from './deps.js';

export function jobService(deps: ServiceDeps): ServiceImpl<typeof JobService> {
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
      return { jobs: await deps.term().jobs.list(req.all) };
    },
    async claimJob(req) {
      const job = await deps.term().jobs.claim(req.moverId);
      if (job) deps.log.info({ job: job.id.toString(), mover: req.moverId }, 'job claimed');
      return job ? { job } : {};
    },
    reportStep: (req) => deps.term().jobs.reportStep(req),
    async cancelJob(req) {
      const job = await deps.term().jobs.cancel(req.id);
      deps.log.info({ job: job.id.toString() }, 'job cancelled');
      return job;
    },
  };
}
