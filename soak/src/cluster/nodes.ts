// A Postgres node of the soak cluster: a real server from the test kit (in its own network
// namespace when there is one), optionally behind the harness's link proxy, with the signals
// the faults send it: SIGKILL and restart, SIGSTOP/SIGCONT of the whole process tree, a clean
// restart.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { isAlive, readPostmasterPid } from '@tessera/pgctl';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { soakProgram } from '../entry.js';
import type { LinkRule } from '../net/tcp-proxy.js';
import { ManagedProcess } from './process.js';

export type NodeRole = 'home' | 'data';

export interface Address {
  host: string;
  port: number;
}

export interface NodeOptions {
  name: string;
  role: NodeRole;
  /** Its own address (netns) or undefined for loopback. */
  address: string | undefined;
  ns: string | undefined;
  linkProxy: boolean;
  settings: Record<string, string>;
  runDir: string;
}

/** Ports inside a node's own namespace. */
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

/** How long a node's server may take to start. */
const START_TIMEOUT_MS = 180_000;

export class NodeMember {
  #paused: number[] = [];

  private constructor(
    readonly name: string,
    readonly role: NodeRole,
    readonly pg: PgServer,
    readonly proxy: ManagedProcess | undefined,
    /** What the catalog says: the link proxy's address when there is one. */
    readonly catalogAddress: Address,
  ) {}

  static async start(o: NodeOptions): Promise<NodeMember> {
    const inNs = o.address !== undefined;
    const settings: Record<string, string> = {
      ...SOAK_NODE_SETTINGS,
      // In its namespace the proxy reaches the server on that namespace's loopback.
      ...(inNs ? { listen_addresses: `'${o.address},127.0.0.1'` } : {}),
      ...o.settings,
    };
    // On a machine loaded far beyond its cores a server may take longer than pgctl's default 30 s
    // to accept connections (here and at every restart of a fault): wait for readiness longer.
    process.env.TESSERA_PG_START_TIMEOUT_MS ??= String(START_TIMEOUT_MS);
    const pg = await startPostgres({
      name: `soak-${o.name}`,
      settings,
      // The soak network: every member's address, and the harness's.
      ...(inNs
        ? { host: o.address, port: PG_PORT, netns: o.ns, hba: ['host all all 10.213.0.0/16 trust'] }
        : {}),
    });
    let proxy: ManagedProcess | undefined;
    let catalogAddress: Address = { host: pg.host, port: pg.port };
    if (o.linkProxy) {
      const listenHost = inNs ? o.address! : '127.0.0.1';
      const listenPort = inNs ? PROXY_PORT : 0;
      const target = inNs ? `127.0.0.1:${PG_PORT}` : `${pg.host}:${pg.port}`;
      proxy = new ManagedProcess({
        name: `${o.name}-proxy`,
        command: process.execPath,
        args: [
          ...soakProgram('net/proxy-main'),
          '--listen',
          `${listenHost}:${listenPort}`,
          '--target',
          target,
        ],
        ns: o.ns,
        logFile: join(o.runDir, 'logs', `${o.name}-proxy.log`),
      });
      proxy.start();
      const listening = await proxy.waitForLog('proxy listening', 90_000);
      const port = Number(String(listening.listen).split(':').pop());
      catalogAddress = { host: listenHost, port };
    }
    return new NodeMember(o.name, o.role, pg, proxy, catalogAddress);
  }

  /** Where the harness itself connects: the server, never through the proxy. */
  get direct(): Address {
    return { host: this.pg.host, port: this.pg.port };
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

  async start(): Promise<void> {
    await this.pg.start();
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
      throw new Error(`node ${this.name} has no link proxy (cluster.linkProxy is off)`);
    this.proxy.send(JSON.stringify({ rules }));
  }

  async stop(): Promise<void> {
    await this.resume();
    await this.proxy?.stop(2_000);
    this.proxy?.close();
    await this.pg.dispose();
  }
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
