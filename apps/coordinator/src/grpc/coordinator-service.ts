// CoordinatorService: which coordinator is active. Answered by every coordinator, the standby
// included (the authorizer lets it through), so a client with a list of addresses finds it.
import type { CoordinatorService, ServiceImpl } from '@tessera/proto';
import type { ServiceDeps } from './deps.js';

export function coordinatorService(deps: ServiceDeps): ServiceImpl<typeof CoordinatorService> {
  return {
    async getActiveCoordinator() {
      const self = deps.self();
      const active = deps.isActive();
      return { address: active ? self : (deps.activeAddress() ?? ''), active, self };
    },
  };
}
