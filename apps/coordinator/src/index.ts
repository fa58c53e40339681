// Public surface of @tessera/coordinator: run a coordinator in-process (tests, `tessera up`) and
// parse its configuration the way the binary does.
export { startCoordinator, type RunningCoordinator, type StartOptions } from './coordinator.js';
export { parseConfig, USAGE, type CoordinatorConfig, type ParsedArgs } from './config.js';
export { CatalogError, ConfigError, type CatalogErrorCode } from './errors.js';
export { migrate, LATEST_SCHEMA_VERSION } from './store/migrations.js';
