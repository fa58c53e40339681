// Real Postgres servers (and, later, Tessera services) for tests, benches and soak runs.
export {
  startPostgres,
  startPostgresCluster,
  type PgServer,
  type PostgresOptions,
} from './postgres.js';
export {
  startReplica,
  startReplicatedPostgres,
  setSynchronousStandbys,
  waitForStreaming,
  pauseServer,
  resumeServer,
  REPLICATION_SETTINGS,
  type ReplicaOptions,
  type ReplicatedOptions,
  type ReplicatedPostgres,
  type StandbyServer,
} from './replicas.js';
