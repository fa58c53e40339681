// The soak cluster's services as processes: coordinators (behind the harness's VIP, which they
// advertise), routers and movers, each its published bin with its flags, in a network namespace
// of its own when there are namespaces. Built here, started and supervised by the Cluster.
import { join } from 'node:path';
import { serviceArgs } from '../entry.js';
import type { ClusterPlan } from '../plan/plan.js';
import type { Address } from './instance.js';
import { ManagedProcess } from './process.js';

export const COORDINATOR_PORT = 7400;
export const ROUTER_PORT = 6432;
/** What a mover logs once it claims jobs. */
export const MOVER_READY = 'mover started';

export interface ServiceMember {
  name: string;
  kind: 'coordinator' | 'router' | 'mover';
  address: Address;
  process: ManagedProcess;
}

/** Where a service runs and what every service is given. */
export interface ServicePlacement {
  name: string;
  /** Its address: in its namespace, or 127.0.0.1 with a free port. */
  address: Address;
  ns: string | undefined;
  vip: Address;
  token: string;
  runDir: string;
  plan: ClusterPlan;
}

const env = (token: string) => ({ TESSERA_ADMIN_TOKEN: token, TESSERA_LOG_LEVEL: 'info' });
const logFile = (p: ServicePlacement) => join(p.runDir, 'logs', `${p.name}.log`);

/**
 * A coordinator. It advertises the VIP: a standby names the active coordinator's advertised
 * address to a client that reached it, and routers can reach only the VIP (they have no link to
 * a coordinator's own address).
 */
export function coordinatorService(p: ServicePlacement, catalogUrl: string): ServiceMember {
  const proc = new ManagedProcess({
    name: p.name,
    command: process.execPath,
    args: [
      ...serviceArgs('coordinator', 'tessera-coordinator'),
      ...['--catalog-url', catalogUrl, '--listen', `${p.address.host}:${p.address.port}`],
      ...['--metrics-port', '0', '--standby-poll-ms', '200'],
      ...['--advertise', `${p.vip.host}:${p.vip.port}`],
      ...p.plan.coordinatorArgs,
    ],
    env: env(p.token),
    ns: p.ns,
    logFile: logFile(p),
  });
  return { name: p.name, kind: 'coordinator', address: p.address, process: proc };
}

export function routerService(p: ServicePlacement): ServiceMember {
  const proc = new ManagedProcess({
    name: p.name,
    command: process.execPath,
    args: [
      ...serviceArgs('router', 'tessera-router'),
      ...['--listen', `${p.address.host}:${p.address.port}`],
      ...['--coordinator', `${p.vip.host}:${p.vip.port}`],
      ...['--metrics-port', '0', '--router-id', p.name],
      ...p.plan.routerArgs,
    ],
    env: env(p.token),
    ns: p.ns,
    logFile: logFile(p),
  });
  return { name: p.name, kind: 'router', address: p.address, process: proc };
}

/**
 * A mover: it claims the jobs the move faults submit, and reaches the nodes at their catalog
 * addresses (each node links to every member) and the coordinators through the VIP. The mover
 * id is fixed, so a mover restarted after a kill resumes its jobs at once.
 */
export function moverService(p: ServicePlacement): ServiceMember {
  const proc = new ManagedProcess({
    name: p.name,
    command: process.execPath,
    args: [
      ...serviceArgs('mover', 'tessera-mover'),
      ...['--coordinator', `${p.vip.host}:${p.vip.port}`, '--metrics-port', '0'],
      ...['--mover-id', `soak-${p.name}`],
      // Marker round trips of 20 ms three times in a row are rare on a loaded 2-core machine.
      ...['--catchup-budget-ms', '100'],
      ...p.plan.moverArgs,
    ],
    env: env(p.token),
    ns: p.ns,
    logFile: logFile(p),
  });
  return { name: p.name, kind: 'mover', address: { ...p.address, port: 0 }, process: proc };
}
