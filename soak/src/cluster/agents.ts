// The tessera-agent of each Postgres instance of a replicated soak cluster, deployed as an
// operator would (docs/operations.md, "Failover"; the command line is apps/agent's agentArgv):
// in the instance's own network namespace, reaching its server on that namespace's loopback and
// the coordinators through the VIP (the load balancer in front of them, as for the routers and
// the mover), named in the catalog by the instance's catalog address (its link proxy's), and
// given its data directory so that it can fence, start and rejoin the server.
import { join } from 'node:path';
import { agentArgv } from '@tessera/agent';
import { serviceArgs } from '../entry.js';
import type { Address, PgInstance } from './instance.js';
import { PG_PORT } from './instance.js';
import { ManagedProcess } from './process.js';

export interface AgentPlacement {
  vip: Address;
  token: string;
  runDir: string;
  /** The instance's namespace, when there are namespaces. */
  ns: string | undefined;
}

/** What an agent logs once it runs. */
export const AGENT_READY = 'agent started';

export function agentProcess(i: PgInstance, p: AgentPlacement): ManagedProcess {
  // Inside its namespace the server also listens on 127.0.0.1; on loopback it is where it is.
  const local = p.ns !== undefined ? { host: '127.0.0.1', port: PG_PORT } : i.direct;
  return new ManagedProcess({
    name: `agent-${i.member}`,
    command: process.execPath,
    args: [
      ...serviceArgs('agent', 'tessera-agent'),
      ...agentArgv({
        coordinators: [`${p.vip.host}:${p.vip.port}`],
        node: i.node,
        pgUrl: `postgresql://postgres@${local.host}:${local.port}/postgres`,
        address: i.catalogKey,
        dataDir: i.pg.dataDir,
        instanceName: i.applicationName,
        pgLog: join(i.pg.dataDir, '..', 'postgres.log'),
      }),
    ],
    env: { TESSERA_ADMIN_TOKEN: p.token, TESSERA_LOG_LEVEL: 'info' },
    ns: p.ns,
    logFile: join(p.runDir, 'logs', `agent-${i.member}.log`),
  });
}
