// Test helpers (not exported): data node d1 under real Patroni (two members, synchronous_mode)
// with a single-member etcd, all real processes on 127.0.0.1, Postgres run by Patroni as the
// postgres OS user; a plain Postgres holds the catalog (the home node); a real coordinator and an
// agent per member in patroni mode. Tessera follows Patroni; it never promotes.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startCoordinator, type RunningCoordinator } from '@tessera/coordinator';
import { findPgBinDir, freePort, isAlive, serverOsUser, serverProcesses } from '@tessera/pgctl';
import {
  AdminService,
  CatalogService,
  HaMode,
  NodeRole,
  createClient,
  type Client,
  type Node,
} from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startAgent, type RunningAgent } from '../agent.js';
import { parseConfig } from '../config.js';
import { quiet } from './ha-cluster.js';

export interface Member {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  child: ChildProcess;
  address: string;
  url(db?: string): string;
}

export interface PatroniCluster {
  catalogServer: PgServer;
  coordinator: RunningCoordinator;
  members: Member[];
  agents: RunningAgent[];
  admin: Client<typeof AdminService>;
  catalog: Client<typeof CatalogService>;
  node(): Promise<Node>;
  primary(): Promise<{ url(): string; host: string; port: number; query: PgServer['query'] }>;
  /** Kills a member's Patroni and its Postgres, as a machine's death would. */
  kill(member: Member): void;
  dispose(): Promise<void>;
}

async function waitHttp(
  url: string,
  pred: (body: unknown) => boolean,
  timeoutMs: number,
  what: string,
) {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      last = res.ok ? await res.json() : res.status;
      if (res.ok && pred(last)) return last;
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (performance.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    await sleep(250);
  }
}

function memberConfig(
  dir: string,
  m: { name: string; pgPort: number; restPort: number },
  etcdPort: number,
): string {
  // JSON is YAML; Patroni reads it as its configuration file.
  return JSON.stringify({
    scope: 'tessera-d1',
    name: m.name,
    restapi: { listen: `127.0.0.1:${m.restPort}`, connect_address: `127.0.0.1:${m.restPort}` },
    etcd3: { hosts: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ttl: 20,
        loop_wait: 2,
        retry_timeout: 5,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          parameters: {
            wal_level: 'logical',
            max_prepared_transactions: 64,
            wal_log_hints: 'on',
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_receiver_status_interval: '1s',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
      pg_hba: ['host replication all 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 trust'],
    },
    postgresql: {
      listen: `127.0.0.1:${m.pgPort}`,
      connect_address: `127.0.0.1:${m.pgPort}`,
      data_dir: join(dir, m.name),
      bin_dir: findPgBinDir(),
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'postgres' },
      },
      parameters: { unix_socket_directories: dir },
    },
  });
}

export async function startPatroniCluster(): Promise<PatroniCluster> {
  const user = serverOsUser();
  const dir = mkdtempSync(join(tmpdir(), 'tessera-patroni-'));
  chmodSync(dir, 0o755);
  if (user) chownSync(dir, user.uid, user.gid);
  const children: ChildProcess[] = [];
  const etcdPort = await freePort();
  const peerPort = await freePort();
  const etcd = spawn(
    'etcd',
    [
      '--name',
      'e1',
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      `http://127.0.0.1:${etcdPort}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${etcdPort}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `e1=http://127.0.0.1:${peerPort}`,
    ],
    { stdio: 'ignore' },
  );
  children.push(etcd);
  await waitHttp(`http://127.0.0.1:${etcdPort}/health`, () => true, 30_000, 'etcd');

  const members: Member[] = [];
  const startMember = async (name: string): Promise<Member> => {
    const m = { name, pgPort: await freePort(), restPort: await freePort() };
    const file = join(dir, `${name}.yml`);
    writeFileSync(file, memberConfig(dir, m, etcdPort));
    if (user) chownSync(file, user.uid, user.gid);
    const child = spawn('patroni', [file], {
      stdio: ['ignore', 'ignore', 'ignore'],
      ...(user ?? {}),
      env: { PATH: process.env['PATH'], HOME: dir },
    });
    children.push(child);
    const member: Member = {
      ...m,
      dataDir: join(dir, name),
      child,
      address: `127.0.0.1:${m.pgPort}`,
      url: (db = 'postgres') => `postgresql://postgres@127.0.0.1:${m.pgPort}/${db}`,
    };
    members.push(member);
    return member;
  };
  const cluster = (port: number) => `http://127.0.0.1:${port}/cluster`;
  type Doc = { members?: { name: string; role: string; state: string }[] };
  const pg1 = await startMember('pg1');
  await waitHttp(
    cluster(pg1.restPort),
    (d) =>
      ((d as Doc).members ?? []).some(
        (x) => x.name === 'pg1' && x.role === 'leader' && x.state === 'running',
      ),
    90_000,
    'pg1 to lead',
  );
  const pg2 = await startMember('pg2');
  await waitHttp(
    cluster(pg1.restPort),
    (d) =>
      ((d as Doc).members ?? []).some(
        (x) => x.name === 'pg2' && x.role === 'sync_standby' && x.state === 'running',
      ),
    120_000,
    'pg2 to be the sync standby',
  );

  const catalogServer = await startPostgres({ name: 'catalog' });
  await catalogServer.query('create database tessera');
  const coordinator = await startCoordinator(
    {
      catalogUrl: catalogServer.url('tessera'),
      listen: '127.0.0.1:0',
      metricsPort: 0,
      standbyPollMs: 200,
      recoveryGraceMs: 5_000,
    },
    { log: quiet() },
  );
  await coordinator.whenActive;
  const admin = createClient(AdminService, coordinator.address, { deadlineMs: 30_000 });
  const catalog = createClient(CatalogService, coordinator.address, { deadlineMs: 10_000 });
  await admin.addNode({
    name: 'home',
    host: catalogServer.host,
    port: catalogServer.port,
    role: NodeRole.HOME,
  });
  await admin.addNode({
    name: 'd1',
    host: '127.0.0.1',
    port: pg1.pgPort,
    role: NodeRole.DATA,
    haMode: HaMode.PATRONI,
    replicaHost: '127.0.0.1',
    replicaPort: pg2.pgPort,
    replicaName: 'pg2',
  });
  const agents: RunningAgent[] = [];
  for (const m of members) {
    const parsed = parseConfig(
      [
        '--coordinator',
        coordinator.address,
        '--node',
        'd1',
        '--pg-url',
        m.url(),
        '--mode',
        'patroni',
        '--patroni-url',
        `http://127.0.0.1:${m.restPort}`,
        '--name',
        m.name,
        '--probe-interval-ms',
        '300',
        '--report-interval-ms',
        '500',
        '--metrics-port',
        '0',
      ],
      {},
    );
    if (parsed.help) throw new Error('unreachable');
    agents.push(await startAgent(parsed.config, { log: quiet() }));
  }
  const node = async (): Promise<Node> => {
    const n = (await catalog.getCatalog({})).nodes.find((x) => x.name === 'd1');
    if (!n) throw new Error('no node d1');
    return n;
  };
  const query: PgServer['query'] = async (sql, params, database) => {
    const n = await node();
    const c = new pg.Client({
      connectionString: `postgresql://postgres@${n.host}:${n.port}/${database ?? 'postgres'}`,
    });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows;
    } finally {
      await c.end();
    }
  };
  return {
    catalogServer,
    coordinator,
    members,
    agents,
    admin,
    catalog,
    node,
    primary: async () => {
      const n = await node();
      return {
        host: n.host,
        port: n.port,
        url: () => `postgresql://postgres@${n.host}:${n.port}/postgres`,
        query,
      };
    },
    kill: (m) => {
      m.child.kill('SIGKILL');
      for (const pid of serverProcesses(m.dataDir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    },
    dispose: async () => {
      admin.close();
      catalog.close();
      for (const a of agents) await a.stop().catch(() => undefined);
      await coordinator.stop().catch(() => undefined);
      for (const c of children.slice(1)) if (c.exitCode === null) c.kill('SIGTERM');
      await sleep(3_000);
      for (const m of members) {
        if (m.child.exitCode === null) m.child.kill('SIGKILL');
        for (const pid of serverProcesses(m.dataDir))
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      }
      etcd.kill('SIGKILL');
      await catalogServer.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
