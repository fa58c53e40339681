"""asyncpg as an asyncio application uses it: every statement a named prepared statement with
binary results, explicit prepare, executemany, transactions with savepoints, cursors (inside a
transaction, as asyncpg requires), COPY both ways (copy_records_to_table is binary), a pool
(whose release resets the connection), and a query timeout that cancels."""

import asyncio
import datetime
import decimal
import hashlib
import io

import asyncpg

from common import DDL, FINAL, SLOW_SCATTER, URL, account, acaught, astep, meta, seed_account, seed_entry, show, sqlstate

meta(f"version asyncpg {asyncpg.__version__}")

INSERT_ACCOUNT = "insert into accounts (id, owner, currency, balance, opened) values ($1, $2, $3, $4, $5)"
INSERT_ENTRY = "insert into entries (account_id, id, amount, note) values ($1, $2, $3, $4)"
D = decimal.Decimal


def rows(records):
    return [list(r.values()) for r in records]


def count(status):
    """The row count of a command tag such as 'UPDATE 3' or 'INSERT 0 1'."""
    return int(status.split()[-1])


async def main():
    conn = await asyncpg.connect(URL)
    state = {"conn": conn}

    async def recover():
        c = state["conn"]
        if c.is_closed():
            state["conn"] = await asyncpg.connect(URL)
        elif c.is_in_transaction():
            await c.execute("rollback")

    async def run(op, fn):
        await astep(op, fn, recover)

    def c():
        return state["conn"]

    async def fetch(sql, *args):
        return rows(await c().fetch(sql, *args))

    async def schema():
        async with c().transaction():
            for s in DDL:
                await c().execute(s)
        return "ok"

    async def seed():
        n = [0, 0, 0]
        for i in range(1, 21):
            n[0] += count(await c().execute(INSERT_ACCOUNT, *seed_account(i)))
        for i in range(1, 21):
            for j in range(1, 4):
                n[1] += count(await c().execute(INSERT_ENTRY, *seed_entry(i, j)))
        n[2] += count(await c().execute("insert into audit (id, account_id, action) values ($1, $2, $3)", 1, 1, "opened"))
        return {"accounts": n[0], "entries": n[1], "audit": n[2]}

    await run("connect", lambda: fetch("select current_user, current_database()"))
    await run("schema", schema)
    await run("seed", seed)

    await run("read.key", lambda: fetch("select id, owner, currency, balance, status, opened from accounts where id = $1", 7))
    await run("read.key.join", lambda: fetch(
        """select a.id, a.owner, c.name, e.id, e.amount from accounts a
             join entries e on e.account_id = a.id join currencies c on c.code = a.currency
            where a.id = $1 order by e.id""", 7))
    await run("read.in", lambda: fetch("select id, balance from accounts where id in ($1, $2, $3) order by id", 1, 2, 3))
    await run("read.any", lambda: fetch("select id, balance from accounts where id = any($1) order by id", [4, 5, 6]))
    await run("read.scatter.order", lambda: fetch("select id, owner, balance from accounts order by balance desc, id limit $1", 5))
    await run("read.scatter.agg", lambda: fetch(
        """select currency, count(*), sum(balance), min(balance), max(opened) from accounts
            group by currency order by currency"""))
    await run("read.scatter.aggexpr", lambda: fetch(
        "select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts"))
    await run("read.scatter.join", lambda: fetch(
        """select a.currency, count(*), sum(e.amount) from accounts a
             join entries e on e.account_id = a.id group by a.currency order by a.currency"""))
    await run("read.scatter.ref", lambda: fetch(
        """select c.name, count(*) from accounts a join currencies c on c.code = a.currency
            group by c.name order by c.name"""))
    await run("read.scatter.param", lambda: fetch("select count(*) from accounts where balance > $1", D(1000)))
    await run("read.subquery", lambda: fetch("select count(*) from (select distinct currency from accounts) s"))
    await run("read.now", lambda: fetch("select count(*) from accounts where opened < current_date"))
    await run("read.ref", lambda: fetch("select code, name, rate from currencies order by code"))
    await run("read.global", lambda: fetch("select id, account_id, action from audit order by id"))

    async def in_txn(sql, *args):
        async with c().transaction():
            return await fetch(sql, *args)

    await run("txn.read.key", lambda: in_txn("select balance from accounts where id = $1", 8))
    await run("txn.read.scatter", lambda: in_txn("select count(*), sum(balance) from accounts"))

    async def prepared_key():
        stmt = await c().prepare("select balance from accounts where id = $1")
        return [await stmt.fetchval(i) for i in range(1, 11)]

    async def prepared_scatter():
        stmt = await c().prepare("select count(*) from accounts where balance >= $1")
        return [await stmt.fetchval(D(m)) for m in (0, 500, 1000, 1500, 1900, 5000)]

    await run("prepared.key", prepared_key)
    await run("prepared.scatter", prepared_scatter)

    async def cursor():
        batches, ids = [], []
        async with c().transaction():
            cur = await c().cursor("select id, balance from accounts order by id")
            while True:
                got = await cur.fetch(6)
                if not got:
                    break
                batches.append(len(got))
                ids.extend(r["id"] for r in got)
        return {"batches": batches, "ids": ids}

    async def cursor_iter():
        ids = []
        async with c().transaction():
            async for r in c().cursor("select id from accounts order by id", prefetch=6):
                ids.append(r["id"])
        return ids

    await run("cursor", cursor)
    await run("cursor.iterate", cursor_iter)

    async def copy_out_query(sql):
        buf = io.BytesIO()
        await c().copy_from_query(sql, output=buf)
        return [line for line in buf.getvalue().decode().split("\n") if line]

    await run("copy.out", lambda: _join(copy_out_query("select id, owner, balance from accounts order by id")))

    async def copy_out_table():
        buf = io.BytesIO()
        await c().copy_from_table("entries", output=buf)
        ls = sorted(line for line in buf.getvalue().decode().split("\n") if line)
        return f"lines={len(ls)} md5={hashlib.md5(chr(10).join(ls).encode()).hexdigest()}"

    await run("copy.out.table", copy_out_table)

    async def pool():
        # Every task runs to its end (return_exceptions), each reporting its value or SQLSTATE.
        def each(results):
            return [f"ERROR {sqlstate(r)}" if isinstance(r, Exception) else r for r in results]

        async with asyncpg.create_pool(URL, min_size=2, max_size=4) as p:
            updated = await asyncio.gather(*[
                p.fetchval("update accounts set balance = balance + 1 where id = $1 returning balance", i)
                for i in range(1, 21)], return_exceptions=True)
            reads = await asyncio.gather(*[
                p.fetchval("select count(*) from entries where account_id = $1", i) for i in range(1, 21)],
                return_exceptions=True)
            return {"updated": each(updated), "reads": each(reads)}

    await run("pool", pool)

    async def cancel(sql, *args):
        # asyncpg cancels a statement that outlives its timeout with a CancelRequest.
        async def attempt():
            try:
                return await c().fetch(sql, *args, timeout=0.5)
            except asyncio.TimeoutError:
                return f"timeout, then {await c().fetchval('select 1')}"
        return await attempt()

    await run("cancel", lambda: cancel("select pg_sleep(5)"))
    await run("cancel.key", lambda: cancel("select pg_sleep(3), id from accounts where id = $1", 1))
    await run("cancel.scatter", lambda: cancel(SLOW_SCATTER))

    async def multirow():
        ids = (101, 102, 103, 104)
        args = [v for id_ in ids for v in account(id_, f"multi-{id_}", "EUR", "50.00", "2024-02-01")]
        tuples = ", ".join(f"(${r * 5 + 1}, ${r * 5 + 2}, ${r * 5 + 3}, ${r * 5 + 4}, ${r * 5 + 5})" for r in range(4))
        return count(await c().execute(f"insert into accounts (id, owner, currency, balance, opened) values {tuples}", *args))

    async def executemany():
        await c().executemany(INSERT_ACCOUNT, [account(201 + k, f"batch-{201 + k}", "USD", "75.00", "2024-02-02")
                                               for k in range(10)])
        return "ok"

    await run("insert.multirow", multirow)
    await run("insert.batch", executemany)
    await run("insert.returning", lambda: fetch(INSERT_ACCOUNT + " returning id, owner, balance, status",
                                                *account(301, "returning", "GBP", "10.00", "2024-02-03")))

    async def ex(sql, *args):
        return count(await c().execute(sql, *args))

    await run("insert.ref", lambda: ex("insert into currencies (code, name, rate) values ($1, $2, $3)",
                                       "CHF", "Swiss franc", D("0.9500")))
    await run("insert.global", lambda: ex("insert into audit (id, account_id, action) values ($1, $2, $3)", 2, 2, "closed"))
    await run("update.key", lambda: ex("update accounts set balance = balance + $1 where id = $2", D("5.00"), 9))
    await run("update.scatter", lambda: ex("update accounts set status = $1 where balance >= $2 and id <= 20",
                                           "large", D(1500)))
    await run("update.scatter.literal", lambda: ex(
        "update accounts set status = 'small' where balance < 300 and id <= 20"))
    await run("update.ref", lambda: ex("update currencies set rate = $1 where code = $2", D("1.0900"), "USD"))
    await run("delete.key", lambda: ex("delete from entries where account_id = $1 and id = $2", 10, 3))
    await run("delete.scatter", lambda: ex("delete from entries where note = $1 and amount > $2", "e3", D(180)))

    async def two_node():
        async with c().transaction():
            await c().execute("update accounts set balance = balance - $1 where id = $2", D("50.00"), 1)
            await c().execute("update accounts set balance = balance + $1 where id = $2", D("50.00"), 2)
            await c().execute(INSERT_ENTRY, 1, 10, D("-50.00"), "transfer")
            await c().execute(INSERT_ENTRY, 2, 10, D("50.00"), "transfer")
        return await fetch("select id, balance from accounts where id in (1, 2) order by id")

    async def rollback():
        async def txn():
            async with c().transaction():
                await c().execute("update accounts set balance = 0 where id = $1", 3)
                await c().execute(INSERT_ACCOUNT, *account(4, "dup", "EUR", "1.00", "2024-01-01"))
        err = await acaught(txn)
        return f"{err} {show(await fetch('select balance from accounts where id = $1', 3))}"

    async def savepoint():
        async with c().transaction():
            await c().execute("update accounts set balance = balance + 1 where id = $1", 5)

            async def dup():
                async with c().transaction():  # nested: a savepoint
                    await c().execute(INSERT_ACCOUNT, *account(6, "dup", "EUR", "1.00", "2024-01-01"))
            err = await acaught(dup)
            await c().execute("update accounts set balance = balance + 1 where id = $1", 6)
        return f"{err} {show(await fetch('select id, balance from accounts where id in (5, 6) order by id'))}"

    await run("txn.two_node", two_node)
    await run("txn.rollback", rollback)
    await run("txn.savepoint", savepoint)

    async def copy_in():
        data = "".join(f"{401 + k}\tcopy-{401 + k}\tEUR\t20.00\t2024-02-04\n" for k in range(10)).encode()
        return await c().copy_to_table("accounts", source=io.BytesIO(data),
                                       columns=["id", "owner", "currency", "balance", "opened"])

    async def copy_records():
        return await c().copy_records_to_table(
            "accounts", columns=["id", "owner", "currency", "balance", "opened"],
            records=[(411 + k, f"bin-{411 + k}", "USD", D("30.00"), datetime.date(2024, 2, 5)) for k in range(5)])

    await run("copy.in", copy_in)
    await run("copy.in.binary", copy_records)
    for op, sql in FINAL.items():
        await run(op, lambda sql=sql: fetch(sql))
    await c().close()


async def _join(coro):
    return "|".join(await coro)


asyncio.run(main())
