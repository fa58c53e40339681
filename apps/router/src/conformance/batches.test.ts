// Driver batches across nodes, differential: psycopg 3 executemany and pipeline mode, asyncpg
// executemany and a prepared UPDATE ... RETURNING across nodes, run by batches.py against the
// router (keys on both data nodes) and one plain Postgres; the outputs must be equal line by
// line, and on the router's side every row on the node owning its key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { KeyType } from '@tessera/proto';
import { startPostgres, type PgServer } from '@tessera/testkit';
import { startTestCluster, type TestCluster } from '../testing/cluster.js';
import { setUpBoth } from '../testing/drivers.js';
import { keysByNode } from '../testing/keys.js';
import { PYTHON, skipWithoutPython } from '../testing/python.js';

const run = promisify(execFile);
const PROGRAM = fileURLToPath(new URL('./batches.py', import.meta.url));

let c: TestCluster;
let plain: PgServer;

before(async () => {
  [c, plain] = await Promise.all([
    startTestCluster({
      keyspaces: [{ name: 'b', keyType: KeyType.BIGINT, ranges: 4 }],
      tables: [{ name: 'b', kind: 'sharded', keyspace: 'b', keyColumn: 'id' }],
    }),
    startPostgres({ name: 'batches-plain' }),
  ]);
  await setUpBoth(c.url(), plain, [
    'create table b (id bigint not null, n int not null, v int not null, primary key (id, n))',
  ]);
});
after(async () => {
  await c?.dispose();
  await plain?.dispose();
});

describe('driver batches across nodes', () => {
  test(
    'psycopg 3 and asyncpg batches answer as plain Postgres does',
    {
      skip:
        skipWithoutPython('psycopg', 'python3-psycopg') ||
        skipWithoutPython('asyncpg', 'python3-asyncpg'),
    },
    async () => {
      const byNode = keysByNode(c.router, 'b');
      const keys = [...byNode.values()].flatMap((ks) => ks.slice(0, 3));
      const out = async (url: string): Promise<string[]> =>
        (await run(PYTHON, [PROGRAM, url, keys.join(',')], { timeout: 120_000 })).stdout
          .trim()
          .split('\n');
      const want = await out(`postgres://postgres@127.0.0.1:${plain.port}/postgres`);
      const got = await out(c.url());
      assert.deepEqual(got, want);
      const rows = async (url: string): Promise<unknown[]> => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query('select id, n, v from b order by id, n')).rows;
        } finally {
          await client.end();
        }
      };
      assert.deepEqual(
        await rows(c.url()),
        await rows(`postgres://postgres@127.0.0.1:${plain.port}/postgres`),
      );
      for (const [node, server] of c.byName)
        for (const row of await server.query<{ id: string }>('select id from b'))
          assert.ok(byNode.get(node)?.includes(Number(row.id)), `${row.id} on ${node}`);
    },
  );
});
