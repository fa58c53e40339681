// postgres.js as an application uses it: tagged templates (every statement a named prepared
// statement, parameters always), sql(rows) for bulk inserts, sql.begin with savepoints,
// concurrent queries pipelined on one connection, cursors, COPY streams, cancel, a pool.
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
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

meta(`version postgres.js ${packageVersion('postgres')}`);

const sql = postgres(URL_, { max: 1, onnotice: () => undefined });
const run = (op: string, fn: () => Promise<unknown>) => step(op, fn, async () => undefined);
type Row = Record<string, unknown>;
const vals = (rows: readonly Row[]) => rows.map((r) => Object.values(r));

await run('connect', async () => vals(await sql`select current_user, current_database()`));
await run('schema', async () => {
  for (const s of DDL) await sql.unsafe(s);
  return 'ok';
});
await run('seed', async () => {
  let accounts = 0;
  let entries = 0;
  for (let i = 1; i <= 20; i++) {
    const [id, owner, currency, balance, opened] = seedAccount(i);
    const r = await sql`insert into accounts (id, owner, currency, balance, opened)
      values (${id}, ${owner}, ${currency}, ${balance}, ${opened})`;
    accounts += r.count;
  }
  for (let i = 1; i <= 20; i++)
    for (let j = 1; j <= 3; j++) {
      const [a, id, amount, note] = seedEntry(i, j);
      entries += (
        await sql`insert into entries (account_id, id, amount, note) values (${a}, ${id}, ${amount}, ${note})`
      ).count;
    }
  const audit = (
    await sql`insert into audit (id, account_id, action) values (${1}, ${1}, ${'opened'})`
  ).count;
  return { accounts, entries, audit };
});

await run('read.key', async () =>
  vals(
    await sql`select id, owner, currency, balance, status, opened from accounts where id = ${7}`,
  ),
);
await run('read.key.join', async () =>
  vals(
    await sql`select a.id, a.owner, c.name, e.id as entry, e.amount from accounts a
      join entries e on e.account_id = a.id join currencies c on c.code = a.currency
      where a.id = ${7} order by e.id`,
  ),
);
await run('read.in', async () =>
  vals(await sql`select id, balance from accounts where id in ${sql([1, 2, 3])} order by id`),
);
await run('read.any', async () =>
  vals(
    await sql`select id, balance from accounts where id = any(${[4, 5, 6]}::bigint[]) order by id`,
  ),
);
await run('read.scatter.order', async () =>
  vals(await sql`select id, owner, balance from accounts order by balance desc, id limit ${5}`),
);
await run('read.scatter.agg', async () =>
  vals(
    await sql`select currency, count(*), sum(balance), min(balance), max(opened) from accounts
      group by currency order by currency`,
  ),
);
await run('read.scatter.aggexpr', async () =>
  vals(
    await sql`select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts`,
  ),
);
await run('read.scatter.join', async () =>
  vals(
    await sql`select a.currency, count(*), sum(e.amount) from accounts a
      join entries e on e.account_id = a.id group by a.currency order by a.currency`,
  ),
);
await run('read.scatter.ref', async () =>
  vals(
    await sql`select c.name, count(*) from accounts a join currencies c on c.code = a.currency
      group by c.name order by c.name`,
  ),
);
await run('read.scatter.param', async () =>
  vals(await sql`select count(*) from accounts where balance > ${'1000'}`),
);
await run('read.subquery', async () =>
  vals(await sql`select count(*) from (select distinct currency from accounts) s`),
);
await run('read.now', async () =>
  vals(await sql`select count(*) from accounts where opened < current_date`),
);
await run('read.ref', async () =>
  vals(await sql`select code, name, rate from currencies order by code`),
);
await run('read.global', async () =>
  vals(await sql`select id, account_id, action from audit order by id`),
);
await run('txn.read.key', () =>
  sql.begin(async (tx) => vals(await tx`select balance from accounts where id = ${8}`)),
);
await run('txn.read.scatter', () =>
  sql.begin(async (tx) => vals(await tx`select count(*), sum(balance) from accounts`)),
);

await run('prepared.key', async () => {
  const out: unknown[] = [];
  for (let id = 1; id <= 10; id++)
    out.push((await sql`select balance from accounts where id = ${id}`)[0]?.balance);
  return out;
});
await run('prepared.scatter', async () => {
  const out: unknown[] = [];
  for (const min of [0, 500, 1000, 1500, 1900, 5000])
    out.push((await sql`select count(*) from accounts where balance >= ${min}`)[0]?.count);
  return out;
});
await run('cursor', async () => {
  const batches: number[] = [];
  const ids: unknown[] = [];
  for await (const rows of sql`select id, balance from accounts order by id`.cursor(6)) {
    batches.push(rows.length);
    ids.push(...rows.map((r) => r.id));
  }
  return { batches, ids };
});
await run('cursor.declare', () =>
  sql.begin(async (tx) => {
    await tx`declare c cursor for select id from accounts order by id`;
    const a = vals(await tx`fetch 5 from c`);
    const b = vals(await tx`fetch 5 from c`);
    await tx`close c`;
    return [a, b];
  }),
);

const copyOut = async (query: ReturnType<typeof sql.unsafe>): Promise<string[]> => {
  const chunks: Buffer[] = [];
  await pipeline(
    await query.readable(),
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
};
await run('copy.out', async () =>
  (await copyOut(sql`copy (select id, owner, balance from accounts order by id) to stdout`)).join(
    '|',
  ),
);
await run('copy.out.table', async () => {
  const lines = (await copyOut(sql`copy entries to stdout`)).sort();
  return `lines=${lines.length} md5=${createHash('md5').update(lines.join('\n')).digest('hex')}`;
});
await run('copy.out.csv', async () =>
  (
    await copyOut(
      sql`copy (select code, name from currencies order by code) to stdout with (format csv, header)`,
    )
  ).join('|'),
);

await run('pool', async () => {
  const pool = postgres(URL_, { max: 4, onnotice: () => undefined });
  try {
    const updated = await settle(
      Array.from({ length: 20 }, (_, k) =>
        pool`update accounts set balance = balance + 1 where id = ${k + 1} returning balance`.then(
          (r) => r[0]?.balance,
        ),
      ),
    );
    const reads = await settle(
      Array.from({ length: 20 }, (_, k) =>
        pool`select count(*) from entries where account_id = ${k + 1}`.then((r) => r[0]?.count),
      ),
    );
    return { updated, reads };
  } finally {
    await pool.end();
  }
});

async function cancelAfter(query: ReturnType<typeof sql.unsafe>, afterMs: number): Promise<string> {
  const outcome = caught(async () => vals(await query));
  await sleep(afterMs);
  query.cancel();
  return outcome;
}
await run('cancel', () => cancelAfter(sql`select pg_sleep(5)`, 500));
await run('cancel.key', () =>
  cancelAfter(sql`select pg_sleep(3), id from accounts where id = ${1}`, 500),
);
await run('cancel.scatter', () =>
  cancelAfter(
    sql`select count(*) from accounts where length(regexp_replace(repeat(owner, ${200000}), '[0-9]', 'x', 'g')) > 0`,
    500,
  ),
);

const account = (id: number, owner: string, currency: string, balance: string, opened: string) => ({
  id,
  owner,
  currency,
  balance,
  opened,
});
await run('insert.multirow', async () => {
  const ids = [101, 102, 103, 104];
  const params = ids.flatMap((id) => [id, `multi-${id}`, 'EUR', '50.00', '2024-02-01']);
  const tuples = ids.map(
    (_, r) => `($${r * 5 + 1}, $${r * 5 + 2}, $${r * 5 + 3}, $${r * 5 + 4}, $${r * 5 + 5})`,
  );
  return (
    await sql.unsafe(
      `insert into accounts (id, owner, currency, balance, opened) values ${tuples.join(', ')}`,
      params,
    )
  ).count;
});
await run('insert.batch', async () => {
  // The postgres.js bulk insert: sql(rows, columns) expands to one multi-row VALUES.
  const rows = Array.from({ length: 10 }, (_, k) =>
    account(201 + k, `batch-${201 + k}`, 'USD', '75.00', '2024-02-02'),
  );
  return (
    await sql`insert into accounts ${sql(rows, 'id', 'owner', 'currency', 'balance', 'opened')}`
  ).count;
});
await run('insert.pipeline', async () => {
  // Queries issued together on one connection are pipelined by postgres.js.
  const rs = await Promise.all(
    Array.from({ length: 6 }, (_, k) => {
      const id = 211 + k;
      return sql`insert into accounts (id, owner, currency, balance, opened)
        values (${id}, ${`pipe-${id}`}, ${'GBP'}, ${'80.00'}, ${'2024-02-02'})`;
    }),
  );
  return rs.map((r) => r.count);
});
await run('insert.returning', async () =>
  vals(
    await sql`insert into accounts (id, owner, currency, balance, opened)
      values (${301}, ${'returning'}, ${'GBP'}, ${'10.00'}, ${'2024-02-03'}) returning id, owner, balance, status`,
  ),
);
await run(
  'insert.ref',
  async () =>
    (
      await sql`insert into currencies (code, name, rate) values (${'CHF'}, ${'Swiss franc'}, ${'0.9500'})`
    ).count,
);
await run(
  'insert.global',
  async () =>
    (await sql`insert into audit (id, account_id, action) values (${2}, ${2}, ${'closed'})`).count,
);

await run(
  'update.key',
  async () => (await sql`update accounts set balance = balance + ${'5.00'} where id = ${9}`).count,
);
await run(
  'update.scatter',
  async () =>
    (await sql`update accounts set status = ${'large'} where balance >= ${'1500'} and id <= ${20}`)
      .count,
);
await run(
  'update.scatter.literal',
  async () =>
    (await sql.unsafe("update accounts set status = 'small' where balance < 300 and id <= 20"))
      .count,
);
await run(
  'update.ref',
  async () => (await sql`update currencies set rate = ${'1.0900'} where code = ${'USD'}`).count,
);
await run(
  'delete.key',
  async () => (await sql`delete from entries where account_id = ${10} and id = ${3}`).count,
);
await run(
  'delete.scatter',
  async () => (await sql`delete from entries where note = ${'e3'} and amount > ${'180'}`).count,
);

await run('txn.two_node', async () => {
  await sql.begin(async (tx) => {
    await tx`update accounts set balance = balance - ${'50.00'} where id = ${1}`;
    await tx`update accounts set balance = balance + ${'50.00'} where id = ${2}`;
    await tx`insert into entries (account_id, id, amount, note) values (${1}, ${10}, ${'-50.00'}, ${'transfer'})`;
    await tx`insert into entries (account_id, id, amount, note) values (${2}, ${10}, ${'50.00'}, ${'transfer'})`;
  });
  return vals(await sql`select id, balance from accounts where id in (1, 2) order by id`);
});
await run('txn.rollback', async () => {
  const err = await caught(() =>
    sql.begin(async (tx) => {
      await tx`update accounts set balance = 0 where id = ${3}`;
      await tx`insert into accounts (id, owner, currency, balance, opened) values (${4}, ${'dup'}, ${'EUR'}, ${'1.00'}, ${'2024-01-01'})`;
    }),
  );
  return `${err} ${JSON.stringify(vals(await sql`select balance from accounts where id = ${3}`))}`;
});
await run('txn.savepoint', async () => {
  let err = '';
  await sql.begin(async (tx) => {
    await tx`update accounts set balance = balance + 1 where id = ${5}`;
    err = await caught(() =>
      tx.savepoint(
        (sp) =>
          sp`insert into accounts (id, owner, currency, balance, opened) values (${6}, ${'dup'}, ${'EUR'}, ${'1.00'}, ${'2024-01-01'})`,
      ),
    );
    await tx`update accounts set balance = balance + 1 where id = ${6}`;
  });
  return `${err} ${JSON.stringify(vals(await sql`select id, balance from accounts where id in (5, 6) order by id`))}`;
});

await run('copy.in', async () => {
  const rows = Array.from(
    { length: 10 },
    (_, k) => `${401 + k}\tcopy-${401 + k}\tEUR\t20.00\t2024-02-04\n`,
  );
  await pipeline(
    Readable.from(rows),
    await sql`copy accounts (id, owner, currency, balance, opened) from stdin`.writable(),
  );
  return vals(await sql`select count(*) from accounts where id between 401 and 410`);
});

for (const [op, text] of Object.entries(FINAL))
  await run(op, async () => vals(await sql.unsafe(text)));
await sql.end();
