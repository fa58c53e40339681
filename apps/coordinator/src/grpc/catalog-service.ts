// CatalogService: the current catalog, and a stream of every snapshot from an epoch on.
import type { CatalogService, ServiceImpl } from '@tessera/proto';
import { unavailable } from '../errors.js';
import type { ServiceDeps } from './deps.js';

export function catalogService(deps: ServiceDeps): ServiceImpl<typeof CatalogService> {
  return {
    // Served from the last published snapshot: changes publish before they answer, so a client
    // reads its own writes, and the database is not hit by every poll.
    async getCatalog() {
      deps.term();
      const current = deps.hub.current;
      if (!current)
        throw unavailable('the coordinator is still loading the catalog; retry shortly');
      return current;
    },
    async *watchCatalog(req, ctx) {
      deps.term();
      yield* deps.hub.watch(req.afterEpoch, ctx.signal);
    },
  };
}
