// What every client session shares: configuration, the current catalog, pools, the analysis
// cache, metrics, logger and the cancel registry. One object, passed in, no globals.
import type { Logger } from '@tessera/telemetry';
import type { AnalysisCache } from '@tessera/sql';
import type { RouterConfig } from './config.js';
import type { RoutingCatalog } from './routing/catalog-view.js';
import type { Pools } from './pool/pools.js';
import type { RouterMetrics } from './metrics.js';
import type { CancelRegistry } from './cancel.js';

export interface RouterServices {
  readonly config: RouterConfig;
  /** The current snapshot, read once per statement; undefined until a valid catalog arrived. */
  catalog(): RoutingCatalog | undefined;
  readonly pools: Pools;
  readonly cache: AnalysisCache;
  readonly metrics: RouterMetrics;
  readonly log: Logger;
  readonly cancels: CancelRegistry;
}
