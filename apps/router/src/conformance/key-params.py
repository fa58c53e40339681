# Key parameters of other types for an int8 shard key, through psycopg 3 (run by
# key-params.test.ts against the router and a plain Postgres; the outputs are compared).
# One JSON line per operation: its rows, or the SQLSTATE it failed with.
import json
import sys
from decimal import Decimal

import psycopg
from psycopg.types.numeric import (
    Float4BinaryDumper,
    Float4Dumper,
    FloatBinaryDumper,
    FloatDumper,
)

url = sys.argv[1]


def run(conn, op, sql, params, binary=False):
    try:
        with conn.cursor(binary=binary) as cur:
            cur.execute(sql, params)
            rows = cur.fetchall() if cur.description else cur.rowcount
        conn.commit()
        print(json.dumps({"op": op, "rows": rows}, default=str))
    except psycopg.Error as e:
        conn.rollback()
        print(json.dumps({"op": op, "error": e.sqlstate}))


with psycopg.connect(url, autocommit=True) as conn:
    for i in range(1, 21):
        run(conn, f"float text {i}", "select id, v from k where id = %s", (float(i),))
        run(conn, f"float binary {i}", "select id, v from k where id = %s", (float(i),), True)
    run(conn, "float update", "update k set v = v + 1 where id = %s", (7.0,))
    for i in range(1, 21):
        run(conn, f"float update all {i}", "update k set v = v + 10 where id = %s", (float(i),), i % 2 == 0)
    run(conn, "after updates", "select id, v from k order by id", ())
    run(conn, "fraction compares equal to nothing", "select id from k where id = %s", (3.5,))
    run(conn, "fraction binary", "select id from k where id = %s", (3.5,), True)
    run(conn, "nan", "select id from k where id = %s", (float("nan"),))
    run(conn, "inf", "select id from k where id = %s", (float("inf"),), True)
    run(conn, "numeric text", "select id from k where id = %s", (Decimal("3.000"),))
    run(conn, "numeric binary", "select id from k where id = %s", (Decimal("4"),), True)
    run(conn, "numeric binary big", "select id from k where id = %s", (Decimal("12345678901234567890"),), True)
    run(conn, "numeric fraction", "select id from k where id = %s", (Decimal("5.5"),), True)
    run(conn, "numeric negative", "select id from k where id = %s", (Decimal("-6"),), True)
    run(conn, "int2/int4/int8 by size", "select id from k where id = %s", (5,), True)
    run(conn, "int text", "select id from k where id = %s", (6,))
    run(conn, "text param for int8", "select id from k where id = %s::text::int8", ("8",))
    run(conn, "str param", "select id from k where id = %s", ("9",))
    run(conn, "str fraction is 22P02", "select id from k where id = %s", ("3.5",))
    run(conn, "in list of floats", "select id from k where id in (%s, %s) order by id", (2.0, 13.0))
    # Stored: float8 -> int8 rounds half to even, numeric -> int8 half away from zero.
    run(conn, "insert float 21.5", "insert into k (id, v) values (%s, 0)", (21.5,))
    run(conn, "insert float 23.5", "insert into k (id, v) values (%s, 0)", (23.5,), True)
    run(conn, "insert numeric 24.5", "insert into k (id, v) values (%s, 0)", (Decimal("24.5"),), True)
    run(conn, "insert numeric 25.5 text", "insert into k (id, v) values (%s, 0)", (Decimal("25.5"),))
    run(conn, "insert float out of range", "insert into k (id, v) values (%s, 0)", (1e300,))
    run(conn, "rows stored", "select id from k where id > 20 order by id", ())
    for i in (22, 24, 25, 26):
        run(conn, f"stored {i} found by key", "select id from k where id = %s", (i,))

    # float4 parameters.
    conn.adapters.register_dumper(float, Float4Dumper)
    conn.adapters.register_dumper(float, Float4BinaryDumper)
    run(conn, "float4 text", "select id from k where id = %s", (11.0,))
    run(conn, "float4 binary", "select id from k where id = %s", (12.0,), True)
    run(conn, "float4 fraction", "select id from k where id = %s", (12.5,), True)
    conn.adapters.register_dumper(float, FloatDumper)
    conn.adapters.register_dumper(float, FloatBinaryDumper)
