// One-node transactions run as drivers run prepared statements (Bind, Describe, Execute, Sync
// each time; the held policy of execute/acquire.ts): BEGIN answered by the router and sent
// ahead of the first statement, that statement and later ones on the held backend, COMMIT and
// ROLLBACK there too; a statement for another node, an error, or a pool with no idle backend on
// the general path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestCluster, type TestCluster } from './testing/cluster.js';
import { keysByNode, metricSum } from './testing/keys.js';

let c: TestCluster;
let keys = new Map<string, number[]>();
let client: pg.Client;

before(async () => {
  c = await startTestCluster();
  keys = keysByNode(c.router, 'orders');
  client = new pg.Client({ connectionString: c.url() });
  await client.connect();
  await client.query(
    'create table orders (tenant_id bigint not null, id int not null, total int not null)',
  );
});
after(async () => {
  await client?.end();
  await c?.dispose();
});

const key = (node: string, i: number): number => keys.get(node)![i]!;

const totalOf = async (tenant: number): Promise<number> =>
  (
    await client.query<{ total: number }>(
      'select total from orders where tenant_id = $1 and id = 77',
      [tenant],
    )
  ).rows[0]!.total;

/** A named statement: parsed on its first use, then Bind/Describe/Execute/Sync only (pg). */
const named =
  (on: pg.Client, name: string, text: string) =>
  (...values: unknown[]): Promise<pg.QueryResult> =>
    on.query({ name, text, values });

/** Named BEGIN, COMMIT, ROLLBACK and a bump of order 77 of a tenant, each used once already. */
async function statementsOf(on: pg.Client): Promise<{
  begin: () => Promise<pg.QueryResult>;
  commit: () => Promise<pg.QueryResult>;
  rollback: () => Promise<pg.QueryResult>;
  bump: (tenant: number) => Promise<pg.QueryResult>;
}> {
  const begin = named(on, 'tx_begin', 'begin');
  const commit = named(on, 'tx_commit', 'commit');
  const rollback = named(on, 'tx_rollback', 'rollback');
  const bump = named(
    on,
    'tx_bump',
    'update orders set total = total + 1 where tenant_id = $1 and id = 77',
  );
  await begin();
  await rollback();
  await begin();
  await commit();
  await bump(0);
  return { begin, commit, rollback, bump };
}

describe('prepared statements in a one-node transaction (the held policy, execute/acquire.ts)', () => {
  test('a prepared BEGIN reaches the node ahead of the first statement; COMMIT and ROLLBACK end it there', async () => {
    const a = key('data1', 30);
    await client.query('insert into orders (tenant_id, id, total) values ($1, 77, 5)', [a]);
    const { begin, commit, rollback, bump } = await statementsOf(client);
    const onNode = async (): Promise<number> =>
      (
        await c.byName
          .get('data1')!
          .query<{ total: number }>(`select total from orders where tenant_id = ${a} and id = 77`)
      )[0]!.total;

    await begin();
    assert.equal((await bump(a)).rowCount, 1);
    assert.equal((await bump(a)).rowCount, 1);
    // Inside a transaction on the node: nobody else sees the two updates yet.
    assert.equal(await onNode(), 5);
    await rollback();
    assert.equal(await totalOf(a), 5);

    await begin();
    await bump(a);
    assert.equal(await onNode(), 5);
    await commit();
    assert.equal(await onNode(), 6);
    // A BEGIN inside the transaction warns as Postgres does and changes nothing.
    await begin();
    await bump(a);
    await begin();
    await rollback();
    assert.equal(await totalOf(a), 6);
  });

  test('BEGIN options reach the node the transaction starts on', async () => {
    const begin = named(client, 'tx_begin_rr', 'begin isolation level repeatable read');
    const isolation = named(
      client,
      'tx_isolation',
      "select current_setting('transaction_isolation') as level",
    );
    const commit = named(client, 'tx_commit', 'commit');
    await begin();
    await commit();
    await isolation();
    await begin();
    assert.equal((await isolation()).rows[0].level, 'repeatable read');
    await commit();
    assert.equal((await isolation()).rows[0].level, 'read committed');
  });

  test('a named statement stays on the transaction’s node; for another node it joins that node', async () => {
    const a = key('data1', 20);
    const b = key('data2', 20);
    await client.query('insert into orders (tenant_id, id, total) values ($1, 77, 10)', [a]);
    await client.query('insert into orders (tenant_id, id, total) values ($1, 77, 10)', [b]);
    const bump = named(
      client,
      'held_bump',
      'update orders set total = total + 1 where tenant_id = $1 and id = 77',
    );
    await bump(a); // parsed here, outside the transaction: later runs are Bind/Execute/Sync only
    const twoPhase = (): Promise<number> =>
      metricSum(c.router.metricsPort, /^tessera_router_2pc_total\{/);
    const twoPhaseBefore = await twoPhase();
    await client.query('begin');
    await bump(a);
    await bump(a);
    // The same statement for a key on data2: the transaction now spans both nodes.
    assert.equal((await bump(b)).rowCount, 1);
    await client.query('commit');
    assert.equal(await twoPhase(), twoPhaseBefore + 1);
    assert.equal(await totalOf(a), 13);
    assert.equal(await totalOf(b), 11);
  });

  test('an error in such a statement fails the transaction, as in Postgres', async () => {
    const a = key('data1', 21);
    await client.query('insert into orders (tenant_id, id, total) values ($1, 77, 30)', [a]);
    const divide = named(
      client,
      'held_divide',
      'update orders set total = total / $2 where tenant_id = $1 and id = 77',
    );
    await divide(a, 1);
    await client.query('begin');
    await divide(a, 3);
    await assert.rejects(divide(a, 0), { code: '22012' });
    await assert.rejects(divide(a, 1), { code: '25P02' });
    await client.query('rollback');
    assert.equal(await totalOf(a), 30);
    // The connection goes on: the next transaction commits.
    await client.query('begin');
    await divide(a, 2);
    await client.query('commit');
    assert.equal(await totalOf(a), 15);
  });

  test('a first statement that finds no idle backend waits for one (pool of 1)', async () => {
    await client.end();
    await c.restartRouter({ poolSize: 1 });
    client = new pg.Client({ connectionString: c.url() });
    await client.connect();
    const other = new pg.Client({ connectionString: c.url() });
    await other.connect();
    try {
      const a = key('data1', 40);
      const b = key('data1', 41);
      await client.query(
        'insert into orders (tenant_id, id, total) values ($1, 77, 0), ($2, 77, 0)',
        [a, b],
      );
      const mine = await statementsOf(client);
      const theirs = await statementsOf(other);
      await mine.begin();
      await mine.bump(a); // holds data1's only backend until COMMIT
      await theirs.begin();
      let done = false;
      const waiting = theirs.bump(b).then((r) => {
        done = true;
        return r;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(done, false, 'the second transaction waits for the backend');
      await mine.commit();
      assert.equal((await waiting).rowCount, 1);
      await theirs.commit();
      assert.equal(await totalOf(a), 1);
      assert.equal(await totalOf(b), 1);
    } finally {
      await other.end();
    }
  });
});
