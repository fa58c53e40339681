// Test helpers (not exported from index.ts): a real Postgres per test file with a fresh catalog
// database per test, and in-process coordinators with clients for every service.
import {
  createClient,
  AdminService,
  CatalogService,
  JobService,
  RouterLeaseService,
  RouterService,
  TxnService,
  AgentService,
  CoordinatorService,
  type Client,
} from '@tessera/proto';
import { createLogger, type Logger } from '@tessera/telemetry';
import { startPostgres, type PgServer } from '@tessera/testkit';
import type { CoordinatorConfig } from './config.js';
import { startCoordinator, type RunningCoordinator } from './coordinator.js';

let counter = 0;

/** A new empty database on `pg`; returns its URL. */
export async function freshDatabase(pg: PgServer): Promise<string> {
  const name = `catalog_${process.pid}_${counter++}`;
  await pg.query(`create database ${name}`);
  return pg.url(name);
}

export function quietLogger(): Logger {
  return createLogger('coordinator', { level: process.env['TESSERA_TEST_LOG_LEVEL'] ?? 'silent' });
}

export interface Clients {
  catalog: Client<typeof CatalogService>;
  router: Client<typeof RouterService>;
  admin: Client<typeof AdminService>;
  jobs: Client<typeof JobService>;
  txn: Client<typeof TxnService>;
  agent: Client<typeof AgentService>;
  routerLease: Client<typeof RouterLeaseService>;
  coordinator: Client<typeof CoordinatorService>;
  close(): void;
}

export function clientsFor(address: string, token?: string): Clients {
  const opts = token === undefined ? {} : { token };
  const catalog = createClient(CatalogService, address, opts);
  const shared = { ...opts, channel: catalog.grpcClient };
  const clients = {
    catalog,
    router: createClient(RouterService, address, shared),
    admin: createClient(AdminService, address, shared),
    jobs: createClient(JobService, address, shared),
    txn: createClient(TxnService, address, shared),
    agent: createClient(AgentService, address, shared),
    routerLease: createClient(RouterLeaseService, address, shared),
    coordinator: createClient(CoordinatorService, address, shared),
  };
  return { ...clients, close: () => catalog.close() };
}

export interface TestCoordinator extends Omit<Clients, 'coordinator'> {
  coordinator: RunningCoordinator;
  coordinatorService: Client<typeof CoordinatorService>;
  stop(): Promise<void>;
}

/** An active coordinator on 127.0.0.1:0 over `catalogUrl`, with clients. */
export async function startTestCoordinator(
  catalogUrl: string,
  overrides: Partial<CoordinatorConfig> = {},
): Promise<TestCoordinator> {
  const coordinator = await startCoordinator(
    {
      catalogUrl,
      listen: '127.0.0.1:0',
      metricsPort: 0,
      standbyPollMs: 100,
      recoveryGraceMs: 10_000,
      ...overrides,
    },
    { log: quietLogger() },
  );
  await coordinator.whenActive;
  const clients = clientsFor(coordinator.address, overrides.adminToken);
  return {
    ...clients,
    coordinatorService: clients.coordinator,
    coordinator,
    stop: async () => {
      clients.close();
      await coordinator.stop();
    },
  };
}

export { startPostgres, type PgServer };
