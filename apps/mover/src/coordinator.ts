// The mover's clients for the coordinator: one HTTP/2 connection for the job queue, the catalog
// and the admin calls (splits and merges are ordinary catalog changes).
import {
  AdminService,
  CatalogService,
  JobService,
  createClient,
  type Client,
} from '@tessera/proto';

export interface CoordinatorClients {
  jobs: Client<typeof JobService>;
  catalog: Client<typeof CatalogService>;
  admin: Client<typeof AdminService>;
  close(): void;
}

export function coordinatorClients(address: string, token?: string): CoordinatorClients {
  const base = token === undefined ? { deadlineMs: 30_000 } : { token, deadlineMs: 30_000 };
  const jobs = createClient(JobService, address, base);
  const shared = { ...base, channel: jobs.grpcClient };
  return {
    jobs,
    catalog: createClient(CatalogService, address, shared),
    admin: createClient(AdminService, address, shared),
    close: () => jobs.close(),
  };
}
