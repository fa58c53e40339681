// RouterLeaseService: routers renew their lease and deregister when they stop cleanly
// (store/router-leases.ts has the rules).
import type { RouterLeaseService, ServiceImpl } from '@tessera/proto';
import type { ServiceDeps } from './deps.js';

export function routerLeaseService(deps: ServiceDeps): ServiceImpl<typeof RouterLeaseService> {
  return {
    async renewRouterLease(req) {
      const granted = await deps.term().leases.renew(req.routerId, req.epoch);
      return { leaseMs: BigInt(granted.leaseMs), epoch: granted.epoch };
    },
    async deregisterRouter(req) {
      await deps.term().leases.deregister(req.routerId);
      deps.log.info({ router: req.routerId }, 'router deregistered');
      return {};
    },
  };
}
