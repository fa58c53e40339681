// The command line of a `tessera-agent` for one Postgres instance, as an operator deploys it
// (docs/operations.md, "Failover"): which node it belongs to, how it reaches its server, the
// address the catalog names it by, and its data directory (to fence, start and rejoin it). The
// HA test cluster and the soak harness both start agents from it.

export interface AgentLaunch {
  /** Coordinator addresses (or one load balancer in front of them). */
  coordinators: readonly string[];
  node: string;
  /** Superuser URL of the instance itself (its port is the one the agent starts it on). */
  pgUrl: string;
  /** host:port in the catalog (a proxy's, when one is in front of the server). */
  address: string;
  dataDir: string;
  /** The application_name it streams under as a standby. */
  instanceName?: string | undefined;
  /** The server's log when the agent starts it. */
  pgLog?: string | undefined;
  probeIntervalMs?: number | undefined;
  reportIntervalMs?: number | undefined;
  /** Default 0: a random port (many agents on one machine). */
  metricsPort?: number | undefined;
  /** More flags, last (so they win). */
  extra?: readonly string[] | undefined;
}

/** The flags (without node and the bin) of an agent for `o`. */
export function agentArgv(o: AgentLaunch): string[] {
  const opt = (flag: string, v: string | number | undefined): string[] =>
    v === undefined ? [] : [flag, String(v)];
  return [
    ...['--coordinator', o.coordinators.join(',')],
    ...['--node', o.node],
    ...['--pg-url', o.pgUrl],
    ...['--address', o.address],
    ...['--data-dir', o.dataDir],
    ...opt('--name', o.instanceName),
    ...opt('--pg-log', o.pgLog),
    ...opt('--probe-interval-ms', o.probeIntervalMs),
    ...opt('--report-interval-ms', o.reportIntervalMs),
    ...['--metrics-port', String(o.metricsPort ?? 0)],
    ...(o.extra ?? []),
  ];
}
