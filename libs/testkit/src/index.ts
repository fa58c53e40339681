// Real Postgres servers (and, later, Tessera services) for tests, benches and soak runs.
export {
  startPostgres,
  startPostgresCluster,
  type PgServer,
  type PostgresOptions,
} from './postgres.js';
