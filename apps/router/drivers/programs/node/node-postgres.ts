// node-postgres (pg, pg-cursor, pg-copy-streams) as an application uses it: a Client for the
// request path, a Pool for concurrent work, parameters on every statement (the extended
// protocol), named prepared statements, a cursor, COPY both ways, a pipelined client, cancel.
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import {
  DDL,
  FINAL,
  URL_,
  caught,
  meta,
  packageVersion,
  seedAccount,
  seedEntry,
  settle,
  sleep,
  step,
} from './common.js';

meta(
  `version pg ${packageVersion('pg')}, pg-cursor ${packageVersion('pg-cursor')}, pg-copy-streams ${packageVersion('pg-copy-streams')}`,
);

let client = new pg.Client({ connectionString: URL_ });
await client.connect();

/** After a failed operation: end any transaction, or reconnect if the connection is gone. */
async function recover(): Promise<void> {
  try {
    await client.query('rollback');
  } catch {
    await client.end().catch(() => undefined);
    client = new pg.Client({ connectionString: URL_ });
    await client.connect();
  }
}
const q = async (text: string, values?: unknown[]) => (await client.query(text, values)).rows;
const rowsOf = async (text: string, values?: unknown[]) =>
  (await client.query({ text, values, rowMode: 'array' })).rows;
const count = async (text: string, values?: unknown[]) =>
  (await client.query(text, values)).rowCount;
const run = (op: string, fn: () => Promise<unknown>) => step(op, fn, recover);

const INSERT_ACCOUNT =
  'insert into accounts (id, owner, currency, balance, opened) values ($1, $2, $3, $4, $5)';
const INSERT_ENTRY = 'insert into entries (account_id, id, amount, note) values ($1, $2, $3, $4)';
const INSERT_AUDIT = 'insert into audit (id, account_id, action) values ($1, $2, $3)';

await run('connect', () => rowsOf('select current_user, current_database()'));
await run('schema', async () => {
  for (const s of DDL) await q(s);
  return 'ok';
});
await run('seed', async () => {
  let accounts = 0;
  let entries = 0;
  for (let i = 1; i <= 20; i++) accounts += (await count(INSERT_ACCOUNT, seedAccount(i))) ?? 0;
  for (let i = 1; i <= 20; i++)
    for (let j = 1; j <= 3; j++) entries += (await count(INSERT_ENTRY, seedEntry(i, j))) ?? 0;
  const audit = await count(INSERT_AUDIT, [1, 1, 'opened']);
  return { accounts, entries, audit };
});
await run('read.key', () =>
  rowsOf('select id, owner, currency, balance, status, opened from accounts where id = $1', [7]),
);
await run('read.key.join', () =>
  rowsOf(
    `select a.id, a.owner, c.name, e.id, e.amount from accounts a
       join entries e on e.account_id = a.id join currencies c on c.code = a.currency
      where a.id = $1 order by e.id`,
    [7],
  ),
);
await run('read.in', () =>
  rowsOf('select id, balance from accounts where id in ($1, $2, $3) order by id', [1, 2, 3]),
);
await run('read.any', () =>
  rowsOf('select id, balance from accounts where id = any($1) order by id', [[4, 5, 6]]),
);
await run('read.scatter.order', () =>
  rowsOf('select id, owner, balance from accounts order by balance desc, id limit 5'),
);
await run('read.scatter.agg', () =>
  rowsOf(
    `select currency, count(*), sum(balance), min(balance), max(opened) from accounts
      group by currency order by currency`,
  ),
);
await run('read.scatter.aggexpr', () =>
  rowsOf('select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts'),
);
await run('read.scatter.join', () =>
  rowsOf(
    `select a.currency, count(*), sum(e.amount) from accounts a
       join entries e on e.account_id = a.id group by a.currency order by a.currency`,
  ),
);
await run('read.scatter.ref', () =>
  rowsOf(
    `select c.name, count(*) from accounts a join currencies c on c.code = a.currency
      group by c.name order by c.name`,
  ),
);
await run('read.scatter.param', () =>
  rowsOf('select count(*) from accounts where balance > $1', ['1000']),
);
await run('read.subquery', () =>
  rowsOf('select count(*) from (select distinct currency from accounts) s'),
);
await run('read.now', () => rowsOf('select count(*) from accounts where opened < current_date'));
await run('read.ref', () => rowsOf('select code, name, rate from currencies order by code'));
await run('read.global', () => rowsOf('select id, account_id, action from audit order by id'));

await run('txn.read.key', async () => {
  await q('begin');
  const r = await rowsOf('select balance from accounts where id = $1', [8]);
  await q('commit');
  return r;
});
await run('txn.read.scatter', async () => {
  await q('begin');
  const r = await rowsOf('select count(*), sum(balance) from accounts where id <= 20');
  await q('commit');
  return r;
});

await run('binary.key', async () => {
  // Without parameters: node-postgres cannot send parameters with binary on (its own bug).
  const r = await client.query({
    text: 'select id, balance, opened, owner from accounts where id = 11',
    binary: true,
    rowMode: 'array',
  } as pg.QueryConfig);
  return r.rows;
});
await run('binary.scatter', async () => {
  const r = await client.query({
    text: 'select currency, count(*), sum(balance) from accounts group by currency order by currency',
    binary: true,
    rowMode: 'array',
  } as pg.QueryConfig);
  return r.rows;
});

await run('prepared.key', async () => {
  const out: unknown[] = [];
  for (let id = 1; id <= 10; id++) {
    const r = await client.query({
      name: 'balance-by-id',
      text: 'select balance from accounts where id = $1',
      values: [id],
    });
    out.push(r.rows[0]?.balance);
  }
  return out;
});
await run('prepared.scatter', async () => {
  const out: unknown[] = [];
  for (const min of [0, 500, 1000, 1500, 1900, 5000]) {
    const r = await client.query({
      name: 'count-above',
      text: 'select count(*) from accounts where balance >= $1 and id <= 20',
      values: [min],
    });
    out.push(r.rows[0]?.count);
  }
  return out;
});

await run('cursor', async () => {
  const cursor = client.query(
    new Cursor('select id, balance from accounts where id <= $1 order by id', [20]),
  );
  const batches: number[] = [];
  const ids: unknown[] = [];
  for (;;) {
    const rows = await cursor.read(6);
    if (rows.length === 0) break;
    batches.push(rows.length);
    ids.push(...rows.map((r) => (r as { id: unknown }).id));
  }
  await cursor.close();
  return { batches, ids };
});
await run('cursor.declare', async () => {
  await q('begin');
  await q('declare c cursor for select id from accounts where id <= 20 order by id');
  const a = await rowsOf('fetch 5 from c');
  const b = await rowsOf('fetch 5 from c');
  await q('close c');
  await q('commit');
  return [a, b];
});

const copyOut = async (sql: string): Promise<string[]> => {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  await pipeline(client.query(copyTo(sql)), sink);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
};
await run('copy.out', async () =>
  (
    await copyOut(
      'copy (select id, owner, balance from accounts where id <= 20 order by id) to stdout',
    )
  ).join('|'),
);
await run('copy.out.table', async () => {
  const lines = (await copyOut('copy entries to stdout')).sort();
  return `lines=${lines.length} md5=${createHash('md5').update(lines.join('\n')).digest('hex')}`;
});
await run('copy.out.csv', async () =>
  (
    await copyOut(
      'copy (select code, name from currencies order by code) to stdout with (format csv, header)',
    )
  ).join('|'),
);

await run('pool', async () => {
  const pool = new pg.Pool({ connectionString: URL_, max: 4 });
  try {
    const updated = await settle(
      Array.from({ length: 20 }, (_, k) =>
        pool
          .query('update accounts set balance = balance + 1 where id = $1 returning balance', [
            k + 1,
          ])
          .then((r) => r.rows[0]?.balance as string),
      ),
    );
    const reads = await settle(
      Array.from({ length: 20 }, (_, k) =>
        pool
          .query('select count(*) from entries where account_id = $1', [k + 1])
          .then((r) => r.rows[0]?.count),
      ),
    );
    return { updated, reads };
  } finally {
    await pool.end();
  }
});

/** Starts `sql`, cancels it after `afterMs` the way node-postgres does (a CancelRequest). */
async function cancelAfter(sql: string, values: unknown[], afterMs: number): Promise<string> {
  const query = new pg.Query(sql, values);
  const outcome = caught(
    () =>
      new Promise<unknown>((resolve, reject) => {
        query.on('end', (r: pg.QueryResult) => resolve(r.rows));
        query.on('error', reject);
      }),
  );
  client.query(query);
  await sleep(afterMs);
  // Client#cancel (not in @types/pg): connects anew and sends the CancelRequest for `query`.
  const canceller = new pg.Client({ connectionString: URL_ }) as unknown as {
    cancel(c: pg.Client, q: pg.Query): void;
  };
  canceller.cancel(client, query);
  return outcome;
}
await run('cancel', () => cancelAfter('select pg_sleep(5)', [], 500));
await run('cancel.key', () =>
  cancelAfter('select pg_sleep(3), id from accounts where id = $1', [1], 500),
);
await run('cancel.scatter', () =>
  cancelAfter(
    "select count(*) from accounts where length(regexp_replace(repeat(owner, $1), '[0-9]', 'x', 'g')) > 0",
    [200000],
    500,
  ),
);

await run('insert.multirow', async () => {
  const ids = [101, 102, 103, 104];
  const values = ids.flatMap((id) => [id, `multi-${id}`, 'EUR', '50.00', '2024-02-01']);
  const tuples = ids.map(
    (_, r) => `($${r * 5 + 1}, $${r * 5 + 2}, $${r * 5 + 3}, $${r * 5 + 4}, $${r * 5 + 5})`,
  );
  return count(
    `insert into accounts (id, owner, currency, balance, opened) values ${tuples.join(', ')}`,
    values,
  );
});
await run('insert.batch', async () => {
  // The node-postgres idiom for a batch: one statement over arrays.
  const ids = Array.from({ length: 10 }, (_, k) => 201 + k);
  return count(
    `insert into accounts (id, owner, currency, balance, opened)
     select * from unnest($1::bigint[], $2::text[], $3::text[], $4::numeric[], $5::date[])`,
    [
      ids,
      ids.map((id) => `batch-${id}`),
      ids.map(() => 'USD'),
      ids.map(() => '75.00'),
      ids.map(() => '2024-02-02'),
    ],
  );
});
await run('insert.pipeline', async () => {
  // pg's pipeline mode: every statement sent before the first answer, each with its own Sync.
  const p = new pg.Client({ connectionString: URL_, pipeline: true } as pg.ClientConfig);
  await p.connect();
  try {
    const rs = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        p.query(INSERT_ACCOUNT, [211 + k, `pipe-${211 + k}`, 'GBP', '80.00', '2024-02-02']),
      ),
    );
    return rs.map((r) => r.rowCount);
  } finally {
    await p.end();
  }
});
await run('insert.returning', () =>
  rowsOf(`${INSERT_ACCOUNT} returning id, owner, balance, status`, [
    301,
    'returning',
    'GBP',
    '10.00',
    '2024-02-03',
  ]),
);
await run('insert.ref', () =>
  count('insert into currencies (code, name, rate) values ($1, $2, $3)', [
    'CHF',
    'Swiss franc',
    '0.9500',
  ]),
);
await run('insert.global', () => count(INSERT_AUDIT, [2, 2, 'closed']));

await run('update.key', () =>
  count('update accounts set balance = balance + $1 where id = $2', ['5.00', 9]),
);
await run('update.scatter', () =>
  count('update accounts set status = $1 where balance >= $2 and id <= 20', ['large', '1500']),
);
await run('update.scatter.literal', () =>
  count("update accounts set status = 'small' where balance < 300 and id <= 20"),
);
await run('update.ref', () =>
  count('update currencies set rate = $1 where code = $2', ['1.0900', 'USD']),
);
await run('delete.key', () =>
  count('delete from entries where account_id = $1 and id = $2', [10, 3]),
);
await run('delete.scatter', () =>
  count('delete from entries where note = $1 and amount > $2', ['e3', '180']),
);

await run('txn.two_node', async () => {
  await q('begin');
  await q('update accounts set balance = balance - $1 where id = $2', ['50.00', 1]);
  await q('update accounts set balance = balance + $1 where id = $2', ['50.00', 2]);
  await q(INSERT_ENTRY, [1, 10, '-50.00', 'transfer']);
  await q(INSERT_ENTRY, [2, 10, '50.00', 'transfer']);
  await q('commit');
  return rowsOf('select id, balance from accounts where id in (1, 2) order by id');
});
await run('txn.rollback', async () => {
  await q('begin');
  await q('update accounts set balance = 0 where id = $1', [3]);
  const err = await caught(() => q(INSERT_ACCOUNT, [4, 'dup', 'EUR', '1.00', '2024-01-01']));
  await q('rollback');
  return `${err} ${JSON.stringify(await rowsOf('select balance from accounts where id = $1', [3]))}`;
});
await run('txn.savepoint', async () => {
  await q('begin');
  await q('update accounts set balance = balance + 1 where id = $1', [5]);
  await q('savepoint s1');
  const err = await caught(() => q(INSERT_ACCOUNT, [6, 'dup', 'EUR', '1.00', '2024-01-01']));
  await q('rollback to savepoint s1');
  await q('update accounts set balance = balance + 1 where id = $1', [6]);
  await q('commit');
  return `${err} ${JSON.stringify(await rowsOf('select id, balance from accounts where id in (5, 6) order by id'))}`;
});

await run('copy.in', async () => {
  const rows = Array.from(
    { length: 10 },
    (_, k) => `${401 + k}\tcopy-${401 + k}\tEUR\t20.00\t2024-02-04\n`,
  );
  const stream = client.query(
    copyFrom('copy accounts (id, owner, currency, balance, opened) from stdin'),
  );
  await pipeline(Readable.from(rows), stream);
  return stream.rowCount;
});
for (const [op, sql] of Object.entries(FINAL)) await run(op, () => rowsOf(sql));
await client.end();
