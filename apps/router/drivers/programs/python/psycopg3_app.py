"""psycopg 3 as its documentation suggests: autocommit connection with `conn.transaction()`
blocks (savepoints when nested), server-side parameters on the extended protocol, automatic
prepared statements from the 5th execution (prepare_threshold), binary results, executemany and
explicit pipelines, named server-side cursors, COPY (text and binary), psycopg_pool, cancel."""

import concurrent.futures
import datetime
import decimal
import hashlib

import psycopg
import psycopg_pool

from common import (
    DDL, FINAL, SLOW_SCATTER, URL, account, cancel_after, caught, meta, seed_account, seed_entry, settled, show, step,
)

meta(f"version psycopg {psycopg.__version__}, psycopg_pool {psycopg_pool.__version__}")

conn = psycopg.connect(URL, autocommit=True)


def recover():
    global conn
    if conn.closed or conn.broken:
        conn = psycopg.connect(URL, autocommit=True)


def run(op, fn):
    step(op, fn, recover)


def q(sql, params=None, **kw):
    cur = conn.execute(sql, params, **kw)
    return cur.fetchall() if cur.description else cur.rowcount


INSERT_ACCOUNT = "insert into accounts (id, owner, currency, balance, opened) values (%s, %s, %s, %s, %s)"
INSERT_ENTRY = "insert into entries (account_id, id, amount, note) values (%s, %s, %s, %s)"


def schema():
    with conn.transaction():
        for s in DDL:
            conn.execute(s)
    return "ok"


def seed():
    n = [0, 0, 0]
    for i in range(1, 21):
        n[0] += conn.execute(INSERT_ACCOUNT, seed_account(i)).rowcount
    for i in range(1, 21):
        for j in range(1, 4):
            n[1] += conn.execute(INSERT_ENTRY, seed_entry(i, j)).rowcount
    n[2] += conn.execute("insert into audit (id, account_id, action) values (%s, %s, %s)", (1, 1, "opened")).rowcount
    return {"accounts": n[0], "entries": n[1], "audit": n[2]}


run("connect", lambda: q("select current_user, current_database()"))
run("schema", schema)
run("seed", seed)

run("read.key", lambda: q("select id, owner, currency, balance, status, opened from accounts where id = %s", (7,)))
run("read.key.join", lambda: q(
    """select a.id, a.owner, c.name, e.id, e.amount from accounts a
         join entries e on e.account_id = a.id join currencies c on c.code = a.currency
        where a.id = %s order by e.id""", (7,)))
run("read.in", lambda: q("select id, balance from accounts where id in (%s, %s, %s) order by id", (1, 2, 3)))
run("read.any", lambda: q("select id, balance from accounts where id = any(%s) order by id", ([4, 5, 6],)))
run("read.scatter.order", lambda: q("select id, owner, balance from accounts order by balance desc, id limit %s", (5,)))
run("read.scatter.agg", lambda: q(
    """select currency, count(*), sum(balance), min(balance), max(opened) from accounts
        group by currency order by currency"""))
run("read.scatter.aggexpr", lambda: q(
    "select count(*)::int, coalesce(sum(balance), 0), round(avg(balance), 2) from accounts"))
run("read.scatter.join", lambda: q(
    """select a.currency, count(*), sum(e.amount) from accounts a
         join entries e on e.account_id = a.id group by a.currency order by a.currency"""))
run("read.scatter.ref", lambda: q(
    """select c.name, count(*) from accounts a join currencies c on c.code = a.currency
        group by c.name order by c.name"""))
run("read.scatter.param", lambda: q("select count(*) from accounts where balance > %s", (decimal.Decimal(1000),)))
run("read.subquery", lambda: q("select count(*) from (select distinct currency from accounts) s"))
run("read.now", lambda: q("select count(*) from accounts where opened < current_date"))
run("read.ref", lambda: q("select code, name, rate from currencies order by code"))
run("read.global", lambda: q("select id, account_id, action from audit order by id"))


def in_txn(sql, params=None):
    with conn.transaction():
        return q(sql, params)


run("txn.read.key", lambda: in_txn("select balance from accounts where id = %s", (8,)))
run("txn.read.scatter", lambda: in_txn("select count(*), sum(balance) from accounts"))


def binary(sql, params=None):
    with conn.cursor(binary=True) as cur:
        cur.execute(sql, params)
        return cur.fetchall()


run("binary.key", lambda: binary("select id, balance, opened, owner from accounts where id = %s", (11,)))
run("binary.scatter", lambda: binary(
    "select currency, count(*), sum(balance) from accounts group by currency order by currency"))


def prepared_key():
    # prepare_threshold is 5: the statement is prepared on the server from its 5th execution on.
    return [q("select balance from accounts where id = %s", (i,))[0][0] for i in range(1, 11)]


def prepared_scatter():
    return [q("select count(*) from accounts where balance >= %s", (decimal.Decimal(m),))[0][0]
            for m in (0, 500, 1000, 1500, 1900, 5000, 0, 500, 1000, 1500)]


run("prepared.key", prepared_key)
run("prepared.scatter", prepared_scatter)
run("prepared.explicit", lambda: [q("select owner from accounts where id = %s", (i,), prepare=True)[0][0]
                                  for i in (3, 4, 5)])


def server_cursor():
    batches, ids = [], []
    with conn.transaction():
        with conn.cursor(name="accounts_by_id") as cur:
            cur.itersize = 6
            cur.execute("select id, balance from accounts order by id")
            while True:
                rows = cur.fetchmany(6)
                if not rows:
                    break
                batches.append(len(rows))
                ids.extend(r[0] for r in rows)
    return {"batches": batches, "ids": ids}


def declare_cursor():
    with conn.transaction():
        conn.execute("declare c cursor for select id from accounts order by id")
        a = q("fetch 5 from c")
        b = q("fetch 5 from c")
        conn.execute("close c")
        return [a, b]


run("cursor", server_cursor)
run("cursor.declare", declare_cursor)


def copy_out(sql):
    chunks = []
    with conn.cursor() as cur:
        with cur.copy(sql) as copy:
            for data in copy:
                chunks.append(bytes(data))
    return b"".join(chunks)


def lines(data):
    return [line for line in data.decode().split("\n") if line]


run("copy.out", lambda: "|".join(lines(copy_out("copy (select id, owner, balance from accounts order by id) to stdout"))))


def copy_out_table():
    ls = sorted(lines(copy_out("copy entries to stdout")))
    return f"lines={len(ls)} md5={hashlib.md5(chr(10).join(ls).encode()).hexdigest()}"


run("copy.out.table", copy_out_table)
run("copy.out.csv", lambda: "|".join(lines(copy_out(
    "copy (select code, name from currencies order by code) to stdout with (format csv, header)"))))
run("copy.out.binary", lambda: hashlib.md5(copy_out(
    "copy (select id, balance, opened from accounts order by id) to stdout with (format binary)")).hexdigest())


def pool():
    with psycopg_pool.ConnectionPool(URL, min_size=2, max_size=4, kwargs={"autocommit": True}) as p:
        def update(i):
            with p.connection() as c:
                return c.execute(
                    "update accounts set balance = balance + 1 where id = %s returning id, balance", (i,)).fetchone()

        def read(i):
            with p.connection() as c:
                return c.execute("select count(*) from entries where account_id = %s", (i,)).fetchone()[0]

        with concurrent.futures.ThreadPoolExecutor(max_workers=6) as ex:
            updated = list(ex.map(settled(lambda i: update(i)[1]), range(1, 21)))
            reads = list(ex.map(settled(read), range(1, 21)))
        return {"updated": updated, "reads": reads}


run("pool", pool)


def cancel(sql, params=None):
    return cancel_after(0.5, conn.cancel, lambda: q(sql, params))


run("cancel", lambda: cancel("select pg_sleep(5)"))
run("cancel.key", lambda: cancel("select pg_sleep(3), id from accounts where id = %s", (1,)))
run("cancel.scatter", lambda: cancel(SLOW_SCATTER))

run("insert.multirow", lambda: q(
    "insert into accounts (id, owner, currency, balance, opened) values "
    + ", ".join(["(%s, %s, %s, %s, %s)"] * 4),
    [v for id_ in (101, 102, 103, 104) for v in account(id_, f"multi-{id_}", "EUR", "50.00", "2024-02-01")]))


def executemany():
    with conn.cursor() as cur:
        cur.executemany(INSERT_ACCOUNT, [account(201 + k, f"batch-{201 + k}", "USD", "75.00", "2024-02-02")
                                         for k in range(10)])
        return cur.rowcount


def pipeline():
    with conn.pipeline():
        curs = [conn.execute(INSERT_ACCOUNT, account(211 + k, f"pipe-{211 + k}", "GBP", "80.00", "2024-02-02"))
                for k in range(6)]
    return [c.rowcount for c in curs]


run("insert.batch", executemany)
run("insert.pipeline", pipeline)
run("insert.returning", lambda: q(INSERT_ACCOUNT + " returning id, owner, balance, status",
                                  account(301, "returning", "GBP", "10.00", "2024-02-03")))
run("insert.ref", lambda: q("insert into currencies (code, name, rate) values (%s, %s, %s)",
                            ("CHF", "Swiss franc", decimal.Decimal("0.9500"))))
run("insert.global", lambda: q("insert into audit (id, account_id, action) values (%s, %s, %s)", (2, 2, "closed")))
run("update.key", lambda: q("update accounts set balance = balance + %s where id = %s", (decimal.Decimal("5.00"), 9)))
run("update.scatter", lambda: q("update accounts set status = %s where balance >= %s and id <= 20",
                                ("large", decimal.Decimal(1500))))
run("update.scatter.literal", lambda: q("update accounts set status = 'small' where balance < 300 and id <= 20"))
run("update.ref", lambda: q("update currencies set rate = %s where code = %s", (decimal.Decimal("1.0900"), "USD")))
run("delete.key", lambda: q("delete from entries where account_id = %s and id = %s", (10, 3)))
run("delete.scatter", lambda: q("delete from entries where note = %s and amount > %s", ("e3", decimal.Decimal(180))))


def two_node():
    with conn.transaction():
        conn.execute("update accounts set balance = balance - %s where id = %s", (decimal.Decimal("50.00"), 1))
        conn.execute("update accounts set balance = balance + %s where id = %s", (decimal.Decimal("50.00"), 2))
        conn.execute(INSERT_ENTRY, (1, 10, decimal.Decimal("-50.00"), "transfer"))
        conn.execute(INSERT_ENTRY, (2, 10, decimal.Decimal("50.00"), "transfer"))
    return q("select id, balance from accounts where id in (1, 2) order by id")


def rollback():
    def txn():
        with conn.transaction():
            conn.execute("update accounts set balance = 0 where id = %s", (3,))
            conn.execute(INSERT_ACCOUNT, account(4, "dup", "EUR", "1.00", "2024-01-01"))
    err = caught(txn)
    return f"{err} {show(q('select balance from accounts where id = %s', (3,)))}"


def savepoint():
    with conn.transaction():
        conn.execute("update accounts set balance = balance + 1 where id = %s", (5,))

        def dup():
            with conn.transaction():  # nested: a savepoint
                conn.execute(INSERT_ACCOUNT, account(6, "dup", "EUR", "1.00", "2024-01-01"))
        err = caught(dup)
        conn.execute("update accounts set balance = balance + 1 where id = %s", (6,))
    return f"{err} {show(q('select id, balance from accounts where id in (5, 6) order by id'))}"


run("txn.two_node", two_node)
run("txn.rollback", rollback)
run("txn.savepoint", savepoint)


def copy_in():
    with conn.cursor() as cur:
        with cur.copy("copy accounts (id, owner, currency, balance, opened) from stdin") as copy:
            for k in range(10):
                copy.write_row(account(401 + k, f"copy-{401 + k}", "EUR", "20.00", "2024-02-04"))
        return cur.rowcount


def copy_in_binary():
    with conn.cursor() as cur:
        with cur.copy("copy accounts (id, owner, currency, balance, opened) from stdin (format binary)") as copy:
            copy.set_types(["int8", "text", "text", "numeric", "date"])
            for k in range(5):
                copy.write_row((411 + k, f"bin-{411 + k}", "USD", decimal.Decimal("30.00"), datetime.date(2024, 2, 5)))
        return cur.rowcount


run("copy.in", copy_in)
run("copy.in.binary", copy_in_binary)
for op, sql in FINAL.items():
    run(op, lambda sql=sql: q(sql))
conn.close()
