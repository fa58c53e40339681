// The driver programs of conformance/sequences.test.ts: node-postgres (simple, unnamed and named
// extended), postgres.js and psycopg 3 (Debian's /usr/bin/python3) insert into tables with
// serial, identity and uuid-default keys, RETURNING the key, and read each row back by it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import { PYTHON } from '../testing/python.js';

const run = promisify(execFile);

/** Each driver: the same statements through the router and against plain Postgres. */
export interface Seen {
  /** Per statement: rows without the generated values, and the generated values apart. */
  readonly rows: unknown[][];
  readonly keys: string[];
  readonly found: unknown[];
}

const PY_PROGRAM = String.raw`
import json, sys, psycopg
out = {"rows": [], "keys": [], "found": []}
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    for table in ("items", "idents", "uuids"):
        for i in range(3):
            row = conn.execute(f"insert into {table} (v) values (%s) returning id, v", (f"py-{table}-{i}",)).fetchone()
            out["rows"].append([row[1]])
            out["keys"].append(f"{table}:{row[0]}")
            got = conn.execute(f"select v from {table} where id = %s", (row[0],)).fetchall()
            out["found"].append([r[0] for r in got])
    row = conn.execute("insert into accts (acct_id, v) values (%s, %s) returning id, acct_id, v", (7, "py-acct")).fetchone()
    out["rows"].append([row[1], row[2]])
    out["keys"].append(str(row[0]))
print(json.dumps(out))
`;

export async function viaPsycopg(url: string): Promise<Seen> {
  const { stdout } = await run(PYTHON, ['-c', PY_PROGRAM, url], { timeout: 60_000 });
  return JSON.parse(stdout) as Seen;
}

export async function viaNodePg(url: string, tag: string): Promise<Seen> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const seen: Seen = { rows: [], keys: [], found: [] };
    for (const table of ['items', 'idents', 'uuids']) {
      for (let i = 0; i < 3; i++) {
        const v = `${tag}-${table}-${i}`;
        // Simple protocol, extended unnamed, extended named.
        const r =
          i === 0
            ? await client.query(`insert into ${table} (v) values ('${v}') returning id, v`)
            : await client.query({
                text: `insert into ${table} (v) values ($1) returning id, v`,
                values: [v],
                ...(i === 2 ? { name: `ins-${table}` } : {}),
              });
        const row = r.rows[0] as { id: unknown; v: string };
        seen.rows.push([row.v]);
        seen.keys.push(`${table}:${String(row.id)}`);
        const got = await client.query(`select v from ${table} where id = $1`, [row.id]);
        seen.found.push(got.rows.map((x: { v: string }) => x.v));
      }
    }
    const r = await client.query(
      `insert into accts (acct_id, v) values ($1, $2) returning id, acct_id, v`,
      [7, `${tag}-acct`],
    );
    const row = r.rows[0] as { id: string; acct_id: string; v: string };
    seen.rows.push([row.acct_id, row.v]);
    seen.keys.push(row.id);
    return seen;
  } finally {
    await client.end();
  }
}

export async function viaPostgresJs(url: string): Promise<Seen> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const seen: Seen = { rows: [], keys: [], found: [] };
    for (const table of ['items', 'idents', 'uuids']) {
      for (let i = 0; i < 3; i++) {
        const v = `pj-${table}-${i}`;
        const [row] = await sql.unsafe<{ id: unknown; v: string }[]>(
          `insert into ${table} (v) values ($1) returning id, v`,
          [v],
        );
        seen.rows.push([row!.v]);
        seen.keys.push(`${table}:${String(row!.id)}`);
        const got = await sql.unsafe<{ v: string }[]>(`select v from ${table} where id = $1`, [
          String(row!.id),
        ]);
        seen.found.push(got.map((x) => x.v));
      }
    }
    const [row] = await sql.unsafe<{ id: string; acct_id: string; v: string }[]>(
      `insert into accts (acct_id, v) values ($1, $2) returning id, acct_id, v`,
      [7, 'pj-acct'],
    );
    seen.rows.push([row!.acct_id, row!.v]);
    seen.keys.push(row!.id);
    return seen;
  } finally {
    await sql.end();
  }
}
