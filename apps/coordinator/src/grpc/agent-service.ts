// AgentService: agents stream a health report every second. The coordinator keeps the latest
// one per node in memory (and as a gauge); failover directives come in a later issue.
import type { AgentService, ServiceImpl } from '@tessera/proto';
import type { ServiceDeps } from './deps.js';

export function agentService(deps: ServiceDeps): ServiceImpl<typeof AgentService> {
  return {
    async *report(reports) {
      for await (const report of reports) deps.agents.record(report);
    },
  };
}
