// Whole Tessera clusters for tests, benches and soak runs: @tessera/testkit's real Postgres
// servers, a coordinator over a catalog on them, and the cluster's shape declared through it.
// Not part of testkit itself: testkit sits below every library's tests (keyspace and pg-hash test
// against real Postgres with it), and a cluster needs @tessera/proto, which depends on keyspace.
export {
  attachCluster,
  startCluster,
  type Cluster,
  type ClusterOptions,
  type CoordinatorLauncher,
  type LaunchedCoordinator,
  type Tessera,
  type TesseraOptions,
} from './cluster.js';
export {
  coordinatorProcess,
  spawnCoordinatorProcess,
  type CoordinatorProcess,
  type CoordinatorProcessOptions,
} from './coordinator-process.js';
