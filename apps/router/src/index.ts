// Public surface of @tessera/router: start one programmatically, parse its configuration, and the
// pure routing function with its data types (for tools that explain routing).
export { startRouter, type RunningRouter, type StartOptions } from './router.js';
export {
  parseConfig,
  defaultConfig,
  USAGE,
  type RouterConfig,
  type PoolMode,
  type AuthMode,
} from './config.js';
export { route } from './routing/route.js';
export type { Route, RouteLabel } from './routing/route-types.js';
export { snapshotOf } from './catalog/routing-catalog.js';
export { RouterError, ConfigError } from './errors.js';
