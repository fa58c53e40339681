// The CLI's connection to the coordinator: which address to use, typed clients for the services
// the commands call, and turning a failed call into the one sentence a person should read.
import {
  AdminService,
  AgentService,
  CatalogService,
  Code,
  JobService,
  RouterService,
  RpcError,
  createClient,
  type Client,
} from '@tessera/proto';
import { layout, readClusterFile, resolveDir } from './local/layout.js';
import type { Io } from './io.js';

export const DEFAULT_COORDINATOR = '127.0.0.1:7400';

/** Unary calls give up after this long; a healthy coordinator answers in milliseconds. */
const CALL_DEADLINE_MS = 15_000;

export interface Coordinator {
  address: string;
  catalog: Client<typeof CatalogService>;
  admin: Client<typeof AdminService>;
  routers: Client<typeof RouterService>;
  jobs: Client<typeof JobService>;
  agents: Client<typeof AgentService>;
  close(): void;
}

/**
 * --coordinator, else TESSERA_COORDINATOR, else the coordinators of the local cluster in
 * TESSERA_HOME or ./.tessera (their ports may not be the default ones), else 127.0.0.1:7400. Any
 * of them may be a comma-separated list: calls go to whichever coordinator is active.
 */
export function coordinatorAddress(flag: string | undefined, io: Pick<Io, 'env' | 'cwd'>): string {
  if (flag) return flag;
  if (io.env.TESSERA_COORDINATOR) return io.env.TESSERA_COORDINATOR;
  const local = readClusterFile(layout(resolveDir(undefined, io.env, io.cwd)));
  if (local)
    return [
      local.coordinatorPort,
      ...(local.standbyCoordinatorPort ? [local.standbyCoordinatorPort] : []),
    ]
      .map((p) => `127.0.0.1:${p}`)
      .join(',');
  return DEFAULT_COORDINATOR;
}

export function connectCoordinator(address: string, token: string | undefined): Coordinator {
  const catalog = createClient(CatalogService, address, { token, deadlineMs: CALL_DEADLINE_MS });
  // One HTTP/2 connection for all the services.
  const shared = { token, deadlineMs: CALL_DEADLINE_MS, channel: catalog.grpcClient };
  const admin = createClient(AdminService, address, shared);
  const routers = createClient(RouterService, address, shared);
  const jobs = createClient(JobService, address, shared);
  const agents = createClient(AgentService, address, shared);
  return {
    address,
    catalog,
    admin,
    routers,
    jobs,
    agents,
    close: () => {
      admin.close();
      routers.close();
      jobs.close();
      agents.close();
      catalog.close();
    },
  };
}

export function isRpcError(e: unknown): e is RpcError {
  return e instanceof RpcError;
}

/**
 * The sentence shown for a failed call: the server's own message for what it refused, a hint
 * when nothing answers or the token is missing. Nothing technical in front of it.
 */
export function describeRpcError(e: RpcError, address: string): string {
  switch (e.code) {
    case Code.UNAVAILABLE:
      // A coordinator that answers but is a standby also says UNAVAILABLE, with its own reason.
      if (
        /no connection|connect|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|Name resolution|DNS/i.test(
          e.details,
        ) ||
        e.details === ''
      ) {
        return unreachable(address);
      }
      return e.details;
    case Code.DEADLINE_EXCEEDED:
      return `the coordinator at ${address} did not answer in time (is it overloaded, or is the address right?)`;
    case Code.UNAUTHENTICATED:
    case Code.PERMISSION_DENIED:
      return `${e.details || 'the coordinator refused the call'} (pass the admin token with --token or TESSERA_ADMIN_TOKEN)`;
    case Code.UNIMPLEMENTED:
      return `the service at ${address} does not implement this call (is it a Tessera coordinator of the same version?)`;
    default:
      return e.details || e.message;
  }
}

export function unreachable(address: string): string {
  return `cannot reach the coordinator at ${address} (is the cluster up? try \`tessera up\`)`;
}
