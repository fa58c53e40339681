# Describe of statements the router runs on several nodes, through asyncpg (run by
# describe.test.ts against the router and a plain Postgres; the outputs are compared).
import asyncio
import json
import sys

import asyncpg

STATEMENTS = [
    ("by key", "select v from d where id = $1", [3]),
    ("scatter read", "select id, v from d where v > $1 order by id", [150]),
    ("scatter aggregate", "select count(*), sum(v) from d where v <> $1", [0]),
    ("update across nodes", "update d set v = v + $1 where v < $2", [1, 1000]),
    ("delete across nodes", "delete from d where v = $1", [-1]),
    ("split insert", "insert into d (id, v) values ($1, $2), ($3, $4)", [101, 1, 102, 2]),
    ("reference write", "update r set v = $1 where id = $2", ["x", 1]),
]


async def main(url):
    conn = await asyncpg.connect(url)
    try:
        for op, sql, args in STATEMENTS:
            try:
                stmt = await conn.prepare(sql)
                params = [t.name for t in stmt.get_parameters()]
                cols = [(a.name, a.type.name) for a in stmt.get_attributes()]
                print(json.dumps({"op": op, "params": params, "columns": cols}))
                rows = await stmt.fetch(*args)
                print(json.dumps({"op": op, "rows": [list(r) for r in rows]}))
            except asyncpg.PostgresError as e:
                print(json.dumps({"op": op, "error": e.sqlstate}))
            except Exception as e:  # the driver's own refusal (e.g. wrong argument count)
                print(json.dumps({"op": op, "client_error": type(e).__name__}))
    finally:
        await conn.close()


asyncio.run(main(sys.argv[1]))
