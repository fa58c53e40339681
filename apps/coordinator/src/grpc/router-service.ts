// RouterService: routers register, heartbeat with the epoch they route by, and are listed.
import type { RouterService, ServiceImpl } from '@tessera/proto';
import { unavailable } from '../errors.js';
import type { ServiceDeps } from './deps.js';

export function routerService(deps: ServiceDeps): ServiceImpl<typeof RouterService> {
  return {
    async registerRouter(req) {
      await deps.term().routers.register(req.id, req.address);
      const current = deps.hub.current;
      if (!current)
        throw unavailable('the coordinator is still loading the catalog; retry shortly');
      deps.log.info({ router: req.id, address: req.address }, 'router registered');
      return { epoch: current.epoch };
    },
    async ackEpoch(req) {
      const term = deps.term();
      await term.routers.ack(req.routerId, req.epoch);
      term.leases.acked();
      return {};
    },
    async listRouters() {
      return { routers: await deps.term().routers.list() };
    },
  };
}
