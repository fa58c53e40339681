// Growing and shrinking a running cluster with the CLI, under write load: `tessera nodes add`
// a third data node, `tessera rebalance --yes --wait`, `tessera nodes drain data1 --yes --wait`,
// `tessera nodes remove data1`. Afterwards every acknowledged write is present once on its
// owner, the reference table is complete on the new node, the new node holds its share, and a
// SCRAM login through the router works for a role created before the node joined.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { captureIo, main } from '@tessera/cli';
import { hashKeyText } from '@tessera/pg-hash';
import { NodeState } from '@tessera/proto';
import { startRouter } from '@tessera/router';
import pg from 'pg';
import {
  bulkInsert,
  quiet,
  replicationLeftovers,
  startMoverCluster,
  type MoverCluster,
} from '../testing/cluster.js';

let c: MoverCluster;
const ROWS = 3_000;

before(async () => {
  c = await startMoverCluster({ ranges: 4, spareNodes: 1 });
  const r = await c.viaRouter();
  try {
    await bulkInsert(
      r,
      'accounts',
      ['id', 'balance'],
      Array.from({ length: ROWS }, (_, i) => [i + 1, 0]),
    );
    await r.query(`insert into countries values ('fr', 'France'), ('se', 'Sweden')`);
    await r.query(`create role alice login password 'alice-secret'`);
    await r.query(`grant select on accounts to alice`);
  } finally {
    await r.end();
  }
  await c.startMover();
});
after(async () => {
  await c?.dispose();
});

async function tessera(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo({}, '/tmp');
  const code = await main([...argv, '--coordinator', c.coordinator.address], io);
  return { code, out: io.stdout, err: io.stderr };
}

test('nodes add, rebalance, drain and remove under write load', async () => {
  // Writers: unique accounts (some land on every range), and now and then a reference row.
  let stop = false;
  const acked: number[] = [];
  const refs: string[] = [];
  let errors = 0;
  const writer = async (w: number) => {
    const client = new pg.Client({ connectionString: c.routerUrl() });
    client.on('error', () => undefined);
    await client.connect();
    let i = 0;
    try {
      while (!stop) {
        i++;
        const id = 1_000_000 * w + i;
        try {
          if (w === 1 && i % 20 === 0) {
            await client.query('insert into countries values ($1, $2)', [`c${i}`, `country ${i}`]);
            refs.push(`c${i}`);
          } else {
            await client.query('insert into accounts (id, balance) values ($1, 1)', [id]);
            acked.push(id);
          }
        } catch {
          errors++;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const loops = [1, 2, 3, 4].map(writer);
  const spare = c.byName.get('spare1')!;
  try {
    const add = await tessera(
      'nodes',
      'add',
      'data3',
      `127.0.0.1:${spare.port}`,
      '--yes',
      '--wait',
    );
    assert.equal(add.code, 0, add.err);
    const node = (await c.catalog.getCatalog({})).nodes.find((n) => n.name === 'data3');
    assert.equal(node?.state, NodeState.ACTIVE);

    const rebalance = await tessera('rebalance', '--yes', '--wait');
    assert.equal(rebalance.code, 0, rebalance.err);
    const drain = await tessera('nodes', 'drain', 'data1', '--yes', '--wait');
    assert.equal(drain.code, 0, drain.err);
    assert.equal(
      (await c.catalog.getCatalog({})).ranges.filter((r) => r.owner === 'data1').length,
      0,
    );
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  const remove = await tessera('nodes', 'remove', 'data1');
  assert.equal(remove.code, 0, remove.err);

  // Every acknowledged write once, on its owner.
  const cat = await c.catalog.getCatalog({});
  const ranges = cat.ranges.filter((r) => r.keyspace === 'accounts');
  const owner = (id: number) => {
    const h = hashKeyText('bigint', String(id), 0n);
    return ranges.find((r) => r.lo <= h && h <= r.hi)!.owner;
  };
  const found = new Map<number, string[]>();
  for (const name of ['data1', 'data2']) {
    const server = c.byName.get(name)!;
    for (const r of await server.query<{ id: string }>('select id::text from accounts'))
      found.set(Number(r.id), [...(found.get(Number(r.id)) ?? []), name]);
  }
  for (const r of await spare.query<{ id: string }>('select id::text from accounts'))
    found.set(Number(r.id), [...(found.get(Number(r.id)) ?? []), 'data3']);
  for (const id of [...Array(ROWS).keys()].map((i) => i + 1).concat(acked)) {
    const where = found.get(id) ?? [];
    assert.deepEqual(where, [owner(id)], `account ${id} is on ${where.join(', ') || 'no node'}`);
  }
  assert.equal(found.size, ROWS + acked.length, 'no row that was not written');

  // The new node's share, and its complete reference table.
  const loads = new Map<string, number>();
  for (const [id] of found) loads.set(owner(id), (loads.get(owner(id)) ?? 0) + 1);
  assert.ok((loads.get('data3') ?? 0) > found.size / 4, JSON.stringify([...loads]));
  const homeRefs = (
    await c.home.query<{ code: string }>('select code from countries order by code')
  ).map((r) => r.code);
  const newRefs = (
    await spare.query<{ code: string }>('select code from countries order by code')
  ).map((r) => r.code);
  assert.deepEqual(newRefs, homeRefs);
  assert.ok(homeRefs.length >= 2 + refs.length);
  assert.deepEqual(await replicationLeftovers(c.byName.values()), []);

  // A role created before data3 joined logs in with SCRAM through a router and reads from data3.
  const scram = await startRouter(
    { listen: '127.0.0.1:0', metricsPort: 0, coordinator: c.coordinator.address, auth: 'scram' },
    { logger: quiet('router') },
  );
  try {
    await scram.ready();
    const onData3 = [...found.keys()].find((id) => owner(id) === 'data3')!;
    const alice = new pg.Client({
      connectionString: `postgresql://alice:alice-secret@127.0.0.1:${scram.port}/postgres`,
    });
    await alice.connect();
    try {
      const r = await alice.query<{ id: string }>('select id::text from accounts where id = $1', [
        onData3,
      ]);
      assert.equal(r.rows[0]?.id, String(onData3));
    } finally {
      await alice.end();
    }
  } finally {
    await scram.stop();
  }
  void errors;
});
