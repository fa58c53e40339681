// Extended-protocol batches across nodes, differential: the same batch (one write of Parse/Bind/
// Describe/Execute per statement, one Sync) sent to the router (three data nodes) and to one plain
// Postgres with the same rows must get the same answer frame by frame, leave the same rows, and
// on the router side each row on the node its key hashes to. Outside a transaction the batch is
// one implicit transaction (two-phase commit at its Sync when it wrote on several nodes; an error
// rolls back what it wrote on every node and skips the rest); inside BEGIN it joins the client's.
// Also parameters on writes across nodes (split multi-row INSERT, UPDATE/DELETE with RETURNING,
// reference tables) through node-postgres, and the Describe of such statements.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { KeyType } from '@tessera/proto';
import type { PgServer } from '@tessera/testkit';
import {
  BackendCode,
  Writer,
  writeBind,
  writeExecute,
  writeParse,
  writeQuery,
  writeSync,
} from '@tessera/pg-wire';
import type { TestCluster } from './testing/cluster.js';
import { startDifferentialPair, type DifferentialPair } from './testing/differential.js';
import { keysByNode, metricSum } from './testing/keys.js';
import { RawClient } from './testing/raw-client.js';
import {
  frameLines,
  pipelineMessages,
  rowsSorted,
  runPipeline,
  type PipeStatement,
} from './testing/pipeline.js';

let pair: DifferentialPair;
let c: TestCluster;
let plain: PgServer;
let viaRouter: pg.Client;
let direct: pg.Client;
/** A key owned by each data node. */
let k: [number, number, number];
let k2: [number, number, number];

const DDL = [
  `create table orders (tenant_id bigint not null, id int not null, total int not null check (total >= 0),
     note text, primary key (tenant_id, id))`,
  'create table countries (code text primary key, name text not null)',
];

before(async () => {
  pair = await startDifferentialPair(
    {
      dataNodes: 3,
      keyspaces: [{ name: 'tenants', keyType: KeyType.BIGINT, ranges: 6, seed: 0n }],
      tables: [
        { name: 'orders', kind: 'sharded', keyspace: 'tenants', keyColumn: 'tenant_id' },
        { name: 'countries', kind: 'reference' },
      ],
    },
    'pipelines-plain',
    DDL,
  );
  ({ cluster: c, plain, viaRouter, direct } = pair);
  const keys = keysByNode(c.router, 'orders');
  assert.deepEqual([...keys.keys()].sort(), ['data1', 'data2', 'data3']);
  const at = (node: string, i: number): number => keys.get(node)![i]!;
  k = [at('data1', 0), at('data2', 0), at('data3', 0)];
  k2 = [at('data1', 1), at('data2', 1), at('data3', 1)];
});
after(async () => {
  await pair?.dispose();
});

/** Both sides back to the same rows: one order per node, two countries. */
beforeEach(async () => {
  for (const client of [viaRouter, direct]) {
    await client.query('delete from orders');
    await client.query('delete from countries');
    await client.query(
      `insert into orders (tenant_id, id, total, note) values (${k[0]}, 1, 10, 'a'), (${k[1]}, 1, 20, 'b'), (${k[2]}, 1, 30, 'c')`,
    );
    await client.query("insert into countries values ('fr', 'France'), ('de', 'Germany')");
  }
});

const ORDERS = 'select tenant_id, id, total, note from orders order by tenant_id, id';

/** The rows of both sides, equal; on the router's side each order on the node owning its key. */
async function sameRows(): Promise<void> {
  for (const sql of [ORDERS, 'select code, name from countries order by code'])
    assert.deepEqual((await viaRouter.query(sql)).rows, (await direct.query(sql)).rows, sql);
  const keys = keysByNode(c.router, 'orders');
  for (const [node, server] of c.byName) {
    const rows = await server.query<{ tenant_id: string }>('select tenant_id from orders');
    for (const r of rows)
      assert.ok(keys.get(node)?.includes(Number(r.tenant_id)), `${r.tenant_id} on ${node}`);
    const copies = await server.query<{ n: string }>('select count(*) n from countries');
    assert.equal(
      Number(copies[0]!.n),
      Number((await direct.query('select count(*) n from countries')).rows[0].n),
    );
  }
  const prepared = await Promise.all(
    [...c.byName.values()].map((s) => s.query('select gid from pg_prepared_xacts')),
  );
  assert.deepEqual(prepared.flat(), [], 'no prepared transaction left');
}

/** Opens a raw connection to each side. */
async function rawPair(): Promise<[RawClient, RawClient]> {
  return Promise.all([RawClient.login(c.router.port), RawClient.login(plain.port)]);
}

/** The batch on both sides: the same answer, frame by frame. */
async function samePipeline(
  raws: [RawClient, RawClient],
  statements: readonly PipeStatement[],
  sortRows = false,
): Promise<string[]> {
  const [r, p] = await Promise.all(raws.map((raw) => runPipeline(raw, statements)));
  const norm = (l: string[]): string[] => (sortRows ? rowsSorted(l) : l);
  assert.deepEqual(norm(r!), norm(p!));
  return r!;
}

/** A simple Query on both sides: the same answer. */
async function simple(raws: [RawClient, RawClient], sql: string): Promise<void> {
  const [r, p] = await Promise.all(
    raws.map(async (raw) => {
      raw.send(writeQuery(new Writer(), sql).flush());
      return frameLines(await raw.until((f) => f.code === BackendCode.ReadyForQuery));
    }),
  );
  assert.deepEqual(r, p, sql);
}

const twoPhase = (): Promise<number> =>
  metricSum(c.router.metricsPort, /^tessera_router_2pc_total\{outcome="committed"/);

const insert = (tenant: number, id: number, total: number, extra: Partial<PipeStatement> = {}) => ({
  sql: 'insert into orders (tenant_id, id, total, note) values ($1, $2, $3, $4)',
  params: [String(tenant), String(id), String(total), `n${id}`],
  ...extra,
});

describe('pipelines across nodes: router vs plain Postgres', () => {
  test('inserts to three nodes in one batch commit together at its Sync (two-phase)', async () => {
    const raws = await rawPair();
    const before2pc = await twoPhase();
    const lines = await samePipeline(raws, [
      insert(k[0], 2, 1),
      insert(k[1], 2, 2, { describe: true }),
      { ...insert(k[2], 2, 3), sql: `${insert(k[2], 2, 3).sql} returning tenant_id, id` },
      { sql: 'select count(*) from orders where tenant_id = $1', params: [String(k[1])] },
      { sql: 'update countries set name = upper(name) where code = $1', params: ['fr'] },
    ]);
    assert.equal(lines.at(-1), 'ReadyForQuery I');
    assert.equal(await twoPhase(), before2pc + 1);
    await sameRows();
    for (const raw of raws) raw.socket.destroy();
  });

  test('an error in the middle rolls back the batch on every node; the rest is skipped', async () => {
    const raws = await rawPair();
    // A check violation on the second node, after writes on the first; the third never runs.
    await samePipeline(raws, [insert(k[0], 5, 1), insert(k[1], 5, -1), insert(k[2], 5, 1)]);
    // A unique violation on the second node, after a reference write.
    await samePipeline(raws, [
      { sql: 'insert into countries values ($1, $2)', params: ['it', 'Italy'] },
      insert(k[0], 6, 1),
      insert(k[1], 1, 1),
      insert(k[2], 6, 1),
    ]);
    // The session goes on: the next batch works.
    await samePipeline(raws, [insert(k[2], 7, 1), insert(k[0], 7, 1)]);
    await sameRows();
    for (const raw of raws) raw.socket.destroy();
  });

  test('inside BEGIN the batch joins the transaction: ROLLBACK undoes it, COMMIT is two-phase', async () => {
    const raws = await rawPair();
    const batch = [insert(k[0], 8, 1), insert(k[1], 8, 2), insert(k[2], 8, 3)];
    await simple(raws, 'begin');
    assert.equal((await samePipeline(raws, batch)).at(-1), 'ReadyForQuery T');
    await simple(raws, 'rollback');
    await sameRows();
    const before2pc = await twoPhase();
    await simple(raws, 'begin');
    await samePipeline(raws, batch);
    await samePipeline(raws, [
      { sql: 'select count(*) from orders where tenant_id = $1', params: [String(k[2])] },
      { sql: 'select total from orders where tenant_id = $1 and id = 8', params: [String(k[0])] },
    ]);
    await simple(raws, 'commit');
    assert.equal(await twoPhase(), before2pc + 1);
    // An error in a batch inside BEGIN fails the transaction; COMMIT answers ROLLBACK.
    await simple(raws, 'begin');
    await samePipeline(raws, [insert(k[0], 9, 1), insert(k[1], 9, -1), insert(k[2], 9, 1)]);
    await simple(raws, 'commit');
    await sameRows();
    for (const raw of raws) raw.socket.destroy();
  });

  test('a Flush does not end the batch: its transaction commits (or rolls back) at the Sync', async () => {
    const raws = await rawPair();
    const flushed = async (statements: PipeStatement[]): Promise<void> => {
      for (const raw of raws) raw.send(pipelineMessages(statements, 'flush'));
      // What the Flush made each side send so far: let it arrive, then compare nothing yet.
      await new Promise((r) => setTimeout(r, 300));
    };
    await flushed([insert(k[0], 10, 1)]);
    await samePipeline(raws, [insert(k[1], 10, 1), insert(k[2], 10, 1)]);
    await flushed([insert(k[0], 11, 1), insert(k[1], 11, 1)]);
    await samePipeline(raws, [insert(k[2], 1, 1)]);
    await sameRows();
    for (const raw of raws) raw.socket.destroy();
  });

  test('Describe of writes across nodes answers what Postgres answers', async () => {
    const raws = await rawPair();
    await samePipeline(
      raws,
      [
        {
          sql: 'update orders set total = total + $1 where total < $2 returning tenant_id, total',
          params: ['1', '25'],
          describeStatement: true,
          describe: true,
        },
        {
          sql: 'delete from orders where note = $1',
          params: ['zzz'],
          describeStatement: true,
          describe: true,
        },
        {
          sql: 'insert into orders (tenant_id, id, total) values ($1, 3, $2), ($3, 3, $4)',
          params: [String(k[0]), '1', String(k[1]), '2'],
          describeStatement: true,
          describe: true,
        },
        {
          sql: 'update countries set name = $1 where code = $2',
          params: ['Deutschland', 'de'],
          describeStatement: true,
          describe: true,
        },
      ],
      true,
    );
    await sameRows();
    for (const raw of raws) raw.socket.destroy();
  });
});

describe('extended messages, then a simple Query before any Sync: router vs plain Postgres', () => {
  /** `parts` sent in one write to both sides: the same frames through `readies` ReadyForQuery. */
  async function sameAnswer(parts: (w: Writer) => void, readies = 1): Promise<string[]> {
    const raws = await rawPair();
    try {
      const [r, p] = await Promise.all(
        raws.map(async (raw) => {
          const w = new Writer(256);
          parts(w);
          raw.send(w.flush());
          return frameLines(await raw.throughReady(readies));
        }),
      );
      assert.deepEqual(r, p);
      await simple(raws, 'select 3 as after');
      return r!;
    } finally {
      for (const raw of raws) raw.end();
    }
  }

  test('a Parse, Bind and Execute are answered before the Query that follows them', async () => {
    const lines = await sameAnswer((w) => {
      writeParse(w, '', 'select 1 as a');
      writeBind(w, {});
      writeExecute(w);
      writeQuery(w, 'select 2 as b');
    });
    assert.equal(lines[0], 'ParseComplete');
  });

  test('a write before the Query commits with it, in one transaction', async () => {
    await sameAnswer((w) => {
      writeParse(w, '', `insert into orders values (${k[1]}, 2, 5, 'x')`);
      writeBind(w, {});
      writeExecute(w);
      writeQuery(w, `select count(*) as n from orders where tenant_id = ${k[1]}`);
    });
    await sameRows();
  });

  test('a write on one node, then a Query writing on another: both commit', async () => {
    await sameAnswer((w) => {
      writeParse(w, '', `insert into orders values (${k[0]}, 2, 5, 'x')`);
      writeBind(w, {});
      writeExecute(w);
      writeQuery(w, `insert into orders values (${k[2]}, 2, 6, 'y')`);
    });
    await sameRows();
  });

  test('an error before the Query: the Query is skipped until the Sync, as Postgres skips it', async () => {
    await sameAnswer((w) => {
      writeParse(w, '', 'selec 1');
      writeQuery(w, 'select 2 as b');
      writeSync(w);
    });
  });
});

describe('parameters on writes across nodes (node-postgres): router vs plain Postgres', () => {
  async function same(sql: string, params: unknown[], sortRows = false): Promise<void> {
    const run = async (client: pg.Client) => {
      try {
        const r = await client.query(sql, params);
        const rows = r.rows.map((x) => JSON.stringify(x));
        return { command: r.command, rowCount: r.rowCount, rows: sortRows ? rows.sort() : rows };
      } catch (e) {
        return { error: (e as { code?: string }).code };
      }
    };
    assert.deepEqual(await run(viaRouter), await run(direct), sql);
  }

  test('a multi-row INSERT over three nodes, RETURNING in VALUES order', async () => {
    const rows = [k[2], k[0], k2[1], k[1], k2[0], k2[2]];
    const values = rows.flatMap((t, i) => [t, 100 + i, i]);
    const tuples = rows.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`).join(', ');
    await same(`insert into orders (tenant_id, id, total) values ${tuples}`, values);
    await same(
      `insert into orders (tenant_id, id, total) values ${tuples} returning id, tenant_id`,
      values.map((v, i) => (i % 3 === 1 ? Number(v) + 10 : v)),
    );
    // A duplicate on one node: nothing of it anywhere.
    await same(`insert into orders (tenant_id, id, total) values ${tuples}`, values);
    // Binary and text the same way: a parameter used twice, one of another row's node.
    await same('insert into orders (tenant_id, id, total) values ($1, $2, $2), ($3, $2, $2)', [
      k[0],
      42,
      k[2],
    ]);
    await sameRows();
  });

  test('UPDATE and DELETE across nodes with parameters and RETURNING, reference writes', async () => {
    await same('update orders set total = total + $1 where total >= $2', [5, 15]);
    await same(
      'update orders set note = $1 where id = $2 returning tenant_id, note',
      ['u', 1],
      true,
    );
    await same('update countries set name = $1 where code = $2', ['République', 'fr']);
    await same('insert into countries (code, name) values ($1, $2) returning *', ['es', 'Spain']);
    await same('delete from orders where total > $1 returning tenant_id, total', [20], true);
    await same('delete from countries where code = $1', ['de']);
    await same('update orders set total = $1 where id = $2', [-5, 1]);
    await sameRows();
  });
});
