// Running real PostgreSQL servers: shared by the test kit and `tessera up`.
export { findPgBinDir, serverOsUser, PgBinariesNotFound, type OsUser } from './binaries.js';
export {
  NODE_SETTINGS,
  TEST_SETTINGS,
  STREAMING_SETTINGS,
  initDataDir,
  cloneDataDir,
  writeSettings,
  startServer,
  stopServer,
  readPostmasterPid,
  isAlive,
  PostgresStartError,
  type InitOptions,
  type StartOptions,
  type StopMode,
} from './server.js';
export { freePort } from './ports.js';
export {
  baseBackup,
  rewind,
  conninfo,
  standbyName,
  emptyDir,
  serverProcesses,
  signalServer,
  ReplicationToolError,
  type PrimaryConn,
  type BaseBackupOptions,
} from './replication.js';
