# Batches whose statements go to different nodes, through psycopg 3 (executemany, pipeline mode)
# and asyncpg (executemany), run by batches.test.ts against the router and a plain Postgres; the
# outputs are compared line by line.
import asyncio
import json
import sys

import asyncpg
import psycopg


def out(op, value):
    print(json.dumps({"op": op, "value": value}, default=str))


def psycopg3(url, keys):
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.cursor()
        rows = [(k, 100 + i, i) for i, k in enumerate(keys)]
        cur.executemany("insert into b (id, n, v) values (%s, %s, %s)", rows)
        out("psycopg3.executemany", cur.rowcount)
        try:
            cur.executemany("insert into b (id, n, v) values (%s, %s, %s)", rows[1:2] + [(keys[0], 999, -1)])
        except psycopg.Error as e:
            out("psycopg3.executemany.error", e.sqlstate)
        with conn.pipeline():
            for i, k in enumerate(keys):
                cur.execute("update b set v = v + %s where id = %s", (10, k))
            cur.execute("update b set v = v * %s where v >= %s", (2, 0))
        out("psycopg3.pipeline", "ok")
        cur.executemany(
            "update b set v = v + 1 where id = %s returning id, v", [(k,) for k in keys], returning=True
        )
        got = []
        while True:
            got.extend(cur.fetchall())
            if not cur.nextset():
                break
        out("psycopg3.executemany.returning", sorted(got))
        with conn.transaction():
            cur.executemany("insert into b (id, n, v) values (%s, %s, %s)", [(k, 200, 2) for k in keys])
        out("psycopg3.transaction", "ok")
        cur.execute("select id, n, v from b order by id, n")
        out("psycopg3.rows", cur.fetchall())


async def asyncpg_app(url, keys):
    conn = await asyncpg.connect(url)
    try:
        await conn.executemany("insert into b (id, n, v) values ($1, $2, $3)", [(k, 300, 3) for k in keys])
        out("asyncpg.executemany", "ok")
        try:
            await conn.executemany(
                "insert into b (id, n, v) values ($1, $2, $3)", [(keys[1], 301, 3), (keys[0], 300, 3)]
            )
        except asyncpg.PostgresError as e:
            out("asyncpg.executemany.error", e.sqlstate)
        await conn.executemany("update b set v = v + $1 where id = $2", [(5, k) for k in keys])
        out("asyncpg.update", "ok")
        st = await conn.prepare("update b set v = v - $1 where n = $2 returning id")
        out("asyncpg.prepare", [t.name for t in st.get_parameters()])
        out("asyncpg.returning", sorted(r[0] for r in await st.fetch(1, 300)))
    finally:
        await conn.close()


url = sys.argv[1]
keys = [int(k) for k in sys.argv[2].split(",")]
psycopg3(url, keys)
asyncio.run(asyncpg_app(url, keys))
