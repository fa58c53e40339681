// The harness's own clients of the cluster: gRPC to the active coordinator through the VIP (one
// channel for all three services, made on first use), and plain Postgres connections to a
// router or straight to a server.
import pg from 'pg';
import {
  AdminService,
  CatalogService,
  JobService,
  createClient,
  type Client,
} from '@tessera/proto';
import type { Address } from './instance.js';

export class CoordinatorClients {
  #admin: Client<typeof AdminService> | undefined;
  #catalog: Client<typeof CatalogService> | undefined;
  #jobs: Client<typeof JobService> | undefined;

  constructor(
    readonly vip: () => Address,
    readonly token: string,
  ) {}

  get #target(): string {
    return `${this.vip().host}:${this.vip().port}`;
  }

  get admin(): Client<typeof AdminService> {
    this.#admin ??= createClient(AdminService, this.#target, {
      token: this.token,
      deadlineMs: 15_000,
    });
    return this.#admin;
  }

  get catalog(): Client<typeof CatalogService> {
    this.#catalog ??= createClient(CatalogService, this.#target, {
      token: this.token,
      deadlineMs: 5_000,
      channel: this.admin.grpcClient,
    });
    return this.#catalog;
  }

  get jobs(): Client<typeof JobService> {
    this.#jobs ??= createClient(JobService, this.#target, {
      token: this.token,
      deadlineMs: 10_000,
      channel: this.admin.grpcClient,
    });
    return this.#jobs;
  }

  close(): void {
    this.#admin?.close();
  }
}

/** A connected client (as postgres) of the server or router at `a`; errors after connect are ignored. */
export async function connectTo(
  a: Address,
  database: string,
  timeoutMs: number,
): Promise<pg.Client> {
  const c = new pg.Client({
    host: a.host,
    port: a.port,
    user: 'postgres',
    database,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs * 3,
  });
  c.on('error', () => {});
  await c.connect();
  return c;
}
