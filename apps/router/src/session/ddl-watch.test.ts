// The DDL watches of several routers on one real home (ddl-watch.ts): an announcement is answered
// only once every watch listening when it was sent has heard it, however late one hears it; a
// watch that never acknowledges delays the answer to the deadline, never past it; a payload no
// router made makes sessions stale but is not repeated into SQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import type { Snapshot } from '@tessera/keyspace';
import { createLogger } from '@tessera/telemetry';
import { startPostgres, type PgServer } from '@tessera/testkit';
import {
  ANNOUNCE_SQL,
  DdlWatch,
  NAMES_CHANNEL,
  WATCH_APPLICATION_NAME,
  announceParams,
} from './ddl-watch.js';

const silent = createLogger('test', { level: 'silent' });
let home: PgServer;
let slow: { server: Server; port: number; sockets: Set<Socket> };
const DELAY_MS = 400;

/** A TCP proxy to home that hands what home sends on to its client DELAY_MS late. */
async function delayingProxy(target: number): Promise<typeof slow> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => setTimeout(() => client.write(d), DELAY_MS));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  return { server, port: typeof a === 'object' && a ? a.port : 0, sockets };
}

/** The part of a catalog snapshot a watch reads: where home is. */
const homeAt = (port: number): Snapshot =>
  ({ home: 'home', address: () => ({ host: '127.0.0.1', port }) }) as unknown as Snapshot;

function watchOf(port: number, events: string[], name: string): DdlWatch {
  return new DdlWatch({
    user: 'postgres',
    password: undefined,
    connectTimeoutMs: 10_000,
    catalog: () => homeAt(port),
    changed: () => events.push(`${name} stale`),
    log: silent,
  });
}

async function client(applicationName = 'test'): Promise<pg.Client> {
  const c = new pg.Client({
    host: '127.0.0.1',
    port: home.port,
    user: 'postgres',
    database: 'postgres',
    application_name: applicationName,
  });
  await c.connect();
  return c;
}

/** What announceDdl does, through `c`: notify, then wait for the watches counted. */
async function announce(
  c: pg.Client,
  watch: DdlWatch,
  token: string,
  timeoutMs: number,
): Promise<{ expected: number; acknowledged: number }> {
  const echo = watch.echo('postgres', token, timeoutMs);
  assert.ok(echo, 'the announcing router listens');
  const r = await c.query<unknown[]>({
    text: ANNOUNCE_SQL,
    values: announceParams(token, 'postgres'),
    rowMode: 'array',
  });
  const expected = Number(r.rows[0]?.[0]);
  await echo.heard(expected);
  return { expected, acknowledged: echo.count };
}

before(async () => {
  home = await startPostgres({ name: 'ddl-watch' });
  slow = await delayingProxy(home.port);
});
after(async () => {
  for (const s of slow?.sockets ?? []) s.destroy();
  slow?.server.close();
  await home?.dispose();
});

test('the answer waits until a router whose watch hears late has made its sessions stale', async () => {
  const events: string[] = [];
  const here = watchOf(home.port, events, 'here');
  const late = watchOf(slow.port, events, 'late');
  const c = await client();
  try {
    await Promise.all([here.watch('postgres'), late.watch('postgres')]);
    assert.equal(here.listening() + late.listening(), 2);
    const started = Date.now();
    const r = await announce(c, here, '1:2:3', 5000);
    events.push('answered');
    assert.deepEqual(r, { expected: 2, acknowledged: 2 });
    assert.deepEqual(events, ['here stale', 'late stale', 'answered']);
    assert.ok(Date.now() - started >= DELAY_MS, 'the late watch was waited for');
  } finally {
    here.close();
    late.close();
    await c.end();
  }
});

test('a watch that never acknowledges delays the answer to the deadline, not past it', async () => {
  const events: string[] = [];
  const here = watchOf(home.port, events, 'here');
  // Listens like a watch and never acknowledges (a router stopped while it holds its watch).
  const mute = await client(WATCH_APPLICATION_NAME);
  await mute.query(`LISTEN ${NAMES_CHANNEL}`);
  const c = await client();
  try {
    await here.watch('postgres');
    const started = Date.now();
    const r = await announce(c, here, '4:5:6', 600);
    assert.deepEqual(r, { expected: 2, acknowledged: 1 });
    const waited = Date.now() - started;
    assert.ok(waited >= 500 && waited < 10_000, `waited ${waited} ms`);
  } finally {
    here.close();
    await mute.end();
    await c.end();
  }
});

test('a payload no router made makes sessions stale, is not acknowledged, and the watch goes on', async () => {
  const events: string[] = [];
  const here = watchOf(home.port, events, 'here');
  const c = await client();
  try {
    await here.watch('postgres');
    await c.query(`select pg_notify($1, $2)`, [NAMES_CHANNEL, "x'); drop table t; --"]);
    const r = await announce(c, here, '7:8:9', 5000);
    assert.deepEqual(r, { expected: 1, acknowledged: 1 });
    assert.deepEqual(events, ['here stale', 'here stale']);
    assert.equal(here.listening(), 1, 'the watch is still connected');
  } finally {
    here.close();
    await c.end();
  }
});
