"""psycopg2 as most Python applications use it: the default mode (every statement inside a
transaction, `with conn:` committing or rolling back), client-side parameter interpolation on the
simple protocol, execute_values/executemany/execute_batch, a named (server-side) cursor,
copy_expert, a threaded pool, cancel from another thread, SQL-level PREPARE/EXECUTE."""

import concurrent.futures
import hashlib
import io

import psycopg2
import psycopg2.extras
import psycopg2.pool

from common import (
    DDL, FINAL, SLOW_SCATTER, URL, account, cancel_after, caught, meta, seed_account, seed_entry, settled, show, step,
)

meta(f"version psycopg2 {psycopg2.__version__.split()[0]}")

conn = psycopg2.connect(URL)


def recover():
    global conn
    if conn.closed:
        conn = psycopg2.connect(URL)
    else:
        conn.rollback()


def run(op, fn):
    step(op, fn, recover)


def q(sql, params=None):
    """One unit of work: `with conn:` commits it, or rolls it back on an error."""
    with conn:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else cur.rowcount


def qa(sql, params=None):
    """A read with autocommit on: how this program checks what its transactions left behind."""
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    finally:
        conn.autocommit = False


INSERT_ACCOUNT = "insert into accounts (id, owner, currency, balance, opened) values (%s, %s, %s, %s, %s)"
INSERT_ENTRY = "insert into entries (account_id, id, amount, note) values (%s, %s, %s, %s)"


def schema():
    with conn:
        with conn.cursor() as cur:
            for s in DDL:
                cur.execute(s)
    return "ok"


def seed():
    with conn:
        with conn.cursor() as cur:
            n = [0, 0, 0]
            for i in range(1, 21):
                cur.execute(INSERT_ACCOUNT, seed_account(i))
                n[0] += cur.rowcount
            for i in range(1, 21):
                for j in range(1, 4):
                    cur.execute(INSERT_ENTRY, seed_entry(i, j))
                    n[1] += cur.rowcount
            cur.execute("insert into audit (id, account_id, action) values (%s, %s, %s)", (1, 1, "opened"))
            n[2] += cur.rowcount
    return {"accounts": n[0], "entries": n[1], "audit": n[2]}


run("connect", lambda: q("select current_user, current_database()"))
run("schema", schema)
run("seed", seed)

run("read.key", lambda: q("select id, owner, currency, balance, status, opened from accounts where id = %s", (7,)))
run("read.key.join", lambda: q(
    """select a.id, a.owner, c.name, e.id, e.amount from accounts a
         join entries e on e.account_id = a.id join currencies c on c.code = a.currency
        where a.id = %s order by e.id""", (7,)))
run("read.in", lambda: q("select id, balance from accounts where id in %s order by id", ((1, 2, 3),)))
run("read.any", lambda: q("select id, balance from accounts where id = any(%s) order by id", ([4, 5, 6],)))
run("read.scatter.order", lambda: q("select id, owner, balance from accounts order by balance desc, id limit 5"))
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
run("read.scatter.param", lambda: q("select count(*) from accounts where balance > %s", (1000,)))
run("read.subquery", lambda: q("select count(*) from (select distinct currency from accounts) s"))
run("read.now", lambda: q("select count(*) from accounts where opened < current_date"))
run("read.ref", lambda: q("select code, name, rate from currencies order by code"))
run("read.global", lambda: q("select id, account_id, action from audit order by id"))


# The same read across nodes with autocommit on, as some applications configure psycopg2.
run("read.scatter.autocommit", lambda: qa("select count(*), sum(balance) from accounts"))
run("txn.read.key", lambda: q("select balance from accounts where id = %s", (8,)))
run("txn.read.scatter", lambda: q("select count(*), sum(balance) from accounts"))


def prepared_sql():
    with conn:
        with conn.cursor() as cur:
            cur.execute("prepare balance_by_id (bigint) as select balance from accounts where id = $1")
            out = []
            for i in range(1, 11):
                cur.execute("execute balance_by_id (%s)", (i,))
                out.append(cur.fetchone()[0])
            cur.execute("deallocate balance_by_id")
            return out


run("prepared.sql", prepared_sql)


def named_cursor():
    batches, ids = [], []
    with conn:
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
    with conn:
        with conn.cursor() as cur:
            cur.execute("declare c cursor for select id from accounts order by id")
            cur.execute("fetch 5 from c")
            a = cur.fetchall()
            cur.execute("fetch 5 from c")
            b = cur.fetchall()
            cur.execute("close c")
            return [a, b]


run("cursor", named_cursor)
run("cursor.declare", declare_cursor)


def copy_out(sql):
    buf = io.StringIO()
    with conn:
        with conn.cursor() as cur:
            cur.copy_expert(sql, buf)
    return [line for line in buf.getvalue().split("\n") if line]


run("copy.out", lambda: "|".join(copy_out("copy (select id, owner, balance from accounts order by id) to stdout")))


def copy_out_table():
    lines = sorted(copy_out("copy entries to stdout"))
    return f"lines={len(lines)} md5={hashlib.md5(chr(10).join(lines).encode()).hexdigest()}"


run("copy.out.table", copy_out_table)
run("copy.out.csv", lambda: "|".join(copy_out(
    "copy (select code, name from currencies order by code) to stdout with (format csv, header)")))


def pool():
    p = psycopg2.pool.ThreadedConnectionPool(1, 4, URL)

    def work(fn):
        c = p.getconn()
        try:
            with c:
                with c.cursor() as cur:
                    return fn(cur)
        finally:
            p.putconn(c)

    def update(i):
        def f(cur):
            cur.execute("update accounts set balance = balance + 1 where id = %s returning id, balance", (i,))
            return cur.fetchone()
        return work(f)

    def read(i):
        def f(cur):
            cur.execute("select count(*) from entries where account_id = %s", (i,))
            return cur.fetchone()[0]
        return work(f)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
            updated = list(ex.map(settled(lambda i: update(i)[1]), range(1, 21)))
            reads = list(ex.map(settled(read), range(1, 21)))
        return {"updated": updated, "reads": reads}
    finally:
        p.closeall()


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


def execute_values():
    with conn:
        with conn.cursor() as cur:
            rows = [account(201 + k, f"batch-{201 + k}", "USD", "75.00", "2024-02-02") for k in range(10)]
            psycopg2.extras.execute_values(
                cur, "insert into accounts (id, owner, currency, balance, opened) values %s", rows)
            return cur.rowcount


def executemany():
    with conn:
        with conn.cursor() as cur:
            cur.executemany(INSERT_ACCOUNT, [account(211 + k, f"many-{211 + k}", "GBP", "80.00", "2024-02-02")
                                             for k in range(3)])
            return cur.rowcount


def execute_batch():
    with conn:
        with conn.cursor() as cur:
            psycopg2.extras.execute_batch(cur, INSERT_ACCOUNT, [
                account(214 + k, f"eb-{214 + k}", "GBP", "80.00", "2024-02-02") for k in range(3)])
            return "ok"


run("insert.batch", execute_values)
run("insert.executemany", executemany)
run("insert.execute_batch", execute_batch)
run("insert.returning", lambda: q(INSERT_ACCOUNT + " returning id, owner, balance, status",
                                  account(301, "returning", "GBP", "10.00", "2024-02-03")))
run("insert.ref", lambda: q("insert into currencies (code, name, rate) values (%s, %s, %s)",
                            ("CHF", "Swiss franc", "0.9500")))
run("insert.global", lambda: q("insert into audit (id, account_id, action) values (%s, %s, %s)", (2, 2, "closed")))
run("update.key", lambda: q("update accounts set balance = balance + %s where id = %s", ("5.00", 9)))
run("update.scatter", lambda: q("update accounts set status = %s where balance >= %s and id <= 20",
                                ("large", 1500)))
run("update.scatter.literal", lambda: q("update accounts set status = 'small' where balance < 300 and id <= 20"))
run("update.ref", lambda: q("update currencies set rate = %s where code = %s", ("1.0900", "USD")))
run("delete.key", lambda: q("delete from entries where account_id = %s and id = %s", (10, 3)))
run("delete.scatter", lambda: q("delete from entries where note = %s and amount > %s", ("e3", 180)))


def two_node():
    with conn:
        with conn.cursor() as cur:
            cur.execute("update accounts set balance = balance - %s where id = %s", ("50.00", 1))
            cur.execute("update accounts set balance = balance + %s where id = %s", ("50.00", 2))
            cur.execute(INSERT_ENTRY, (1, 10, "-50.00", "transfer"))
            cur.execute(INSERT_ENTRY, (2, 10, "50.00", "transfer"))
    return qa("select id, balance from accounts where id in (1, 2) order by id")


def rollback():
    def txn():
        with conn:
            with conn.cursor() as cur:
                cur.execute("update accounts set balance = 0 where id = %s", (3,))
                cur.execute(INSERT_ACCOUNT, account(4, "dup", "EUR", "1.00", "2024-01-01"))
    err = caught(txn)
    return f"{err} {show(qa('select balance from accounts where id = %s', (3,)))}"


def savepoint():
    with conn:
        with conn.cursor() as cur:
            cur.execute("update accounts set balance = balance + 1 where id = %s", (5,))
            cur.execute("savepoint s1")

            def dup():
                cur.execute(INSERT_ACCOUNT, account(6, "dup", "EUR", "1.00", "2024-01-01"))
            err = caught(dup)
            cur.execute("rollback to savepoint s1")
            cur.execute("update accounts set balance = balance + 1 where id = %s", (6,))
    return f"{err} {show(qa('select id, balance from accounts where id in (5, 6) order by id'))}"


run("txn.two_node", two_node)
run("txn.rollback", rollback)
run("txn.savepoint", savepoint)


def copy_in():
    data = "".join(f"{401 + k}\tcopy-{401 + k}\tEUR\t20.00\t2024-02-04\n" for k in range(10))
    with conn:
        with conn.cursor() as cur:
            cur.copy_expert("copy accounts (id, owner, currency, balance, opened) from stdin", io.StringIO(data))
            return cur.rowcount


run("copy.in", copy_in)
for op, sql in FINAL.items():
    run(op, lambda sql=sql: qa(sql))
conn.close()
