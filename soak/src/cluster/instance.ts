// One Postgres instance of the soak cluster, a node's primary or its streaming replica: a real
// server from the test kit (in its own network namespace when there is one), optionally behind
// the harness's link proxy, with the signals the faults send it (SIGKILL and start, SIGSTOP and
// SIGCONT of the whole process tree, a clean restart), and the agent that watches it, if any.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { baseBackup, isAlive, readPostmasterPid, standbyName } from '@tessera/pgctl';
import { REPLICATION_SETTINGS, startPostgres, type PgServer } from '@tessera/testkit';
import { soakProgram } from '../entry.js';
import type { LinkRule } from '../net/tcp-proxy.js';
import { ManagedProcess } from './process.js';

export interface Address {
  host: string;
  port: number;
}

export interface InstanceOptions {
  /** The catalog node it belongs to. */
  node: string;
  /** Its member name (namespace, logs): the node's name for its first primary. */
  member: string;
  /** Its own address (netns) or undefined for loopback. */
  address: string | undefined;
  ns: string | undefined;
  linkProxy: boolean;
  /** With replicas the primary also gets what streaming, pg_rewind and sync commits need. */
  replicated: boolean;
  settings: Record<string, string>;
  runDir: string;
}

/** Ports inside an instance's own namespace. */
export const PG_PORT = 5432;
export const PROXY_PORT = 5433;

/**
 * Settings every soak node gets (before the plan's own): acknowledged commits must survive a
 * SIGKILL of the server (the test kit's template turns synchronous_commit off for speed), and
 * connections to peers that vanish behind a partition are given up in seconds, not in the
 * kernel's 15 minutes, so their locks are released.
 */
export const SOAK_NODE_SETTINGS: Readonly<Record<string, string>> = {
  synchronous_commit: 'on',
  tcp_keepalives_idle: '5',
  tcp_keepalives_interval: '2',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '10000',
  max_connections: '400',
  max_prepared_transactions: '200',
};

/** How long a server may take to start. */
const START_TIMEOUT_MS = 180_000;

/** The soak network (every member's address and the harness's); replicas stream over it too. */
const SOAK_HBA = ['host all all 10.213.0.0/16 trust', 'host replication all 10.213.0.0/16 trust'];

export class PgInstance {
  #paused: number[] = [];
  /** Its tessera-agent (replicated clusters only). */
  agent: ManagedProcess | undefined;

  private constructor(
    readonly node: string,
    readonly member: string,
    readonly pg: PgServer,
    readonly proxy: ManagedProcess | undefined,
    /** What the catalog says: the link proxy's address when there is one. */
    readonly catalogAddress: Address,
    /** The application_name it streams under as a standby (also a former primary's). */
    readonly applicationName: string,
  ) {}

  /** A node's first primary: a fresh server. */
  static async startPrimary(o: InstanceOptions): Promise<PgInstance> {
    const pg = await startPostgres(serverOptions(o));
    return PgInstance.#withProxy(o, pg);
  }

  /**
   * A streaming replica of `primary`: a server made by the test kit (so it is placed, logged and
   * removed like every other), stopped, its data replaced by `pg_basebackup -R` of the primary
   * through the primary's catalog address, and started again as a standby.
   */
  static async startReplica(o: InstanceOptions, primary: PgInstance): Promise<PgInstance> {
    const pg = await startPostgres(serverOptions(o));
    await pg.stop('fast');
    const proxied = await PgInstance.#withProxy(o, pg);
    await baseBackup(
      { ...primary.catalogAddress, applicationName: proxied.applicationName },
      pg.dataDir,
    );
    await pg.start();
    return proxied;
  }

  static async #withProxy(o: InstanceOptions, pg: PgServer): Promise<PgInstance> {
    const inNs = o.address !== undefined;
    let proxy: ManagedProcess | undefined;
    let catalogAddress: Address = { host: pg.host, port: pg.port };
    if (o.linkProxy) {
      const listenHost = inNs ? o.address! : '127.0.0.1';
      const listenPort = inNs ? PROXY_PORT : 0;
      // In its namespace the proxy reaches the server on that namespace's loopback.
      const target = inNs ? `127.0.0.1:${PG_PORT}` : `${pg.host}:${pg.port}`;
      proxy = new ManagedProcess({
        name: `${o.member}-proxy`,
        command: process.execPath,
        args: [
          ...soakProgram('net/proxy-main'),
          '--listen',
          `${listenHost}:${listenPort}`,
          '--target',
          target,
        ],
        ns: o.ns,
        logFile: join(o.runDir, 'logs', `${o.member}-proxy.log`),
      });
      proxy.start();
      const listening = await proxy.waitForLog('proxy listening', 90_000);
      const port = Number(String(listening.listen).split(':').pop());
      catalogAddress = { host: listenHost, port };
    }
    const name = standbyName(o.node, catalogAddress.host, catalogAddress.port);
    return new PgInstance(o.node, o.member, pg, proxy, catalogAddress, name);
  }

  /** Where the harness itself connects: the server, never through the proxy. */
  get direct(): Address {
    return { host: this.pg.host, port: this.pg.port };
  }

  get catalogKey(): string {
    return `${this.catalogAddress.host}:${this.catalogAddress.port}`;
  }

  get postmasterPid(): number | undefined {
    const pm = readPostmasterPid(this.pg.dataDir);
    return pm && isAlive(pm.pid) ? pm.pid : undefined;
  }

  /** The postmaster and its children (for RSS and SIGSTOP). */
  pids(): number[] {
    const pm = this.postmasterPid;
    if (pm === undefined) return [];
    return [pm, ...childPids(pm)];
  }

  async kill(): Promise<void> {
    await this.resume();
    await this.pg.stop('kill');
  }

  /** Starts the server unless it runs (its agent may have started it meanwhile). */
  async start(): Promise<void> {
    if (this.postmasterPid !== undefined) return;
    try {
      await this.pg.start();
    } catch (e) {
      if (this.postmasterPid === undefined) throw e;
    }
  }

  async cleanRestart(): Promise<void> {
    await this.resume();
    await this.pg.stop('fast');
    await this.pg.start();
  }

  /** SIGSTOP the postmaster first (it forks no more), then every child. */
  pause(): void {
    const pm = this.postmasterPid;
    if (pm === undefined) return;
    signal(pm, 'SIGSTOP');
    const children = childPids(pm);
    for (const pid of children) signal(pid, 'SIGSTOP');
    this.#paused = [pm, ...children];
  }

  async resume(): Promise<void> {
    for (const pid of [...this.#paused].reverse()) signal(pid, 'SIGCONT');
    this.#paused = [];
  }

  get paused(): boolean {
    return this.#paused.length > 0;
  }

  /** Delay/loss rules on the link proxy (an empty list clears them). */
  async setLinkRules(rules: LinkRule[]): Promise<void> {
    if (!this.proxy)
      throw new Error(`instance ${this.member} has no link proxy (cluster.linkProxy is off)`);
    this.proxy.send(JSON.stringify({ rules }));
  }

  async stop(): Promise<void> {
    await this.resume();
    await this.agent?.signal('SIGCONT');
    await this.agent?.stop(5_000);
    this.agent?.close();
    await this.proxy?.stop(2_000);
    this.proxy?.close();
    await this.pg.dispose();
  }
}

/**
 * In its namespace a server listens on every address there is (its own and loopback): a base
 * backup and pg_rewind copy the source's postgresql.conf, so a setting naming the instance's own
 * address would follow a copy to another namespace, where it cannot bind.
 */
function listenAddresses(o: InstanceOptions): string {
  return o.address !== undefined ? `'*'` : `'127.0.0.1'`;
}

function serverOptions(o: InstanceOptions): Parameters<typeof startPostgres>[0] {
  const inNs = o.address !== undefined;
  // On a machine loaded far beyond its cores a server may take longer than pgctl's default 30 s
  // to accept connections (here and at every restart of a fault): wait for readiness longer.
  process.env.TESSERA_PG_START_TIMEOUT_MS ??= String(START_TIMEOUT_MS);
  return {
    name: `soak-${o.member}`,
    settings: {
      ...(o.replicated ? REPLICATION_SETTINGS : {}),
      ...SOAK_NODE_SETTINGS,
      ...(inNs ? { listen_addresses: listenAddresses(o) } : {}),
      ...o.settings,
    },
    ...(inNs ? { host: o.address, port: PG_PORT, netns: o.ns, hba: SOAK_HBA } : {}),
  };
}

function childPids(parent: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(parent)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}
