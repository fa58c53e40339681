# Reads across nodes through drivers that ask for binary results (run by binary.test.ts against
# the router and a plain Postgres holding the same rows; the outputs are compared line by line):
# asyncpg (binary for every type it has a codec for, parameters in binary) and psycopg 3 with a
# binary cursor. One line per statement: the rows as the driver decoded them, or the SQLSTATE.
import asyncio
import sys

# Rows whose dates Python cannot hold (BC, infinite, 24:00:00) are left out.
SAFE = "id not in (20, 21, 25, 30, 35, 36, 40, 50)"

QUERIES = [
    ("all columns", f"select * from wide where {SAFE} order by id", [], True),
    (
        "aggregates",
        "select g, count(*), sum(i8), avg(n), sum(nm), avg(i4), min(ts), max(tz), min(iv), "
        f"bool_or(b) from wide where {SAFE} group by g order by g",
        [],
        True,
    ),
    (
        "expressions",
        "select g, count(*)::int, coalesce(sum(i2), 0), round(avg(nm), 2) from wide group by g order by g",
        [],
        True,
    ),
    ("distinct jsonb", "select distinct jb from wide", [], False),
    ("group interval", "select iv, count(*) from wide group by iv order by iv", [], True),
    ("order by uuid", "select u, id from wide order by u limit 9", [], True),
    ("order by float", "select f8, f4, id from wide order by f8 desc, id", [], True),
    (
        "parameters",
        f"select id, t, d from wide where i4 > $1 and {SAFE} order by id limit $2 offset $3",
        [0, 7, 2],
        True,
    ),
    ("key list", "select id, nm from wide where id = any($1) order by id", [[3, 14, 15, 92]], True),
    ("union", "select t from wide union select vc from wide", [], False),
]


def line(op, rows, ordered):
    shown = [repr(tuple(r)) for r in rows]
    if not ordered:
        shown.sort()
    return f"{op}\t{len(shown)}\t{' | '.join(shown)}"


async def with_asyncpg(url):
    import asyncpg

    conn = await asyncpg.connect(url)
    await conn.execute("set timezone = 'Europe/Berlin'")
    try:
        for op, sql, args, ordered in QUERIES:
            try:
                print(line(op, await conn.fetch(sql, *args), ordered))
            except asyncpg.PostgresError as e:
                print(f"{op}\tERROR {e.sqlstate}")
    finally:
        await conn.close()


def with_psycopg(url):
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("set timezone = 'Europe/Berlin'")
        for op, sql, args, ordered in QUERIES:
            # psycopg's placeholders; values sent in binary where psycopg can (%b).
            text = sql
            for i in range(len(args), 0, -1):
                text = text.replace(f"${i}", "%b")
            try:
                with conn.cursor(binary=True) as cur:
                    cur.execute(text, args or None)
                    print(line(op, cur.fetchall(), ordered))
            except psycopg.Error as e:
                print(f"{op}\tERROR {e.sqlstate}")


if sys.argv[2] == "asyncpg":
    asyncio.run(with_asyncpg(sys.argv[1]))
else:
    with_psycopg(sys.argv[1])
