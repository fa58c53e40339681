// What a program left in its database, read by the harness itself, not through the program's
// driver nor through the router: on the plain side the tables as they are; on the Tessera side
// straight from the nodes (a sharded table is the union of every node's rows, a reference table
// must be the same on every node, any other table lives on the home node). Each table becomes one
// `state.<table>` line, compared like the program's own lines, so a write the router reported
// done but put wrong, or lost, shows even when the program could not read it back.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { OpLine } from './compare.js';
import type { Declarations } from './declarations.js';

export interface Endpoint {
  name: string;
  host: string;
  port: number;
  /** The superuser's password, when the server asks one (a `tessera up` cluster's nodes). */
  password?: string | undefined;
}

async function withClient<T>(
  e: Endpoint,
  database: string,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const c = new pg.Client({
    host: e.host,
    port: e.port,
    user: 'postgres',
    database,
    ...(e.password !== undefined ? { password: e.password } : {}),
  });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function tablesOf(c: pg.Client): Promise<string[]> {
  const r = await c.query<{ t: string }>(
    "select tablename as t from pg_tables where schemaname = 'public' order by 1",
  );
  return r.rows.map((x) => x.t);
}

async function rowsOf(c: pg.Client, table: string): Promise<string[]> {
  const r = await c.query<{ r: string }>(`select t::text as r from public."${table}" t`);
  return r.rows.map((x) => x.r);
}

export function digest(rows: readonly string[]): string {
  const sorted = [...rows].sort();
  return `rows=${sorted.length} md5=${createHash('md5').update(sorted.join('\n')).digest('hex').slice(0, 12)}`;
}

/** The plain side: one server, one database. */
export async function plainState(server: Endpoint, database: string): Promise<OpLine[]> {
  return withClient(server, database, async (c) => {
    const tables = await tablesOf(c);
    const out: OpLine[] = [{ op: 'state.tables', value: tables.join(',') }];
    for (const t of tables) out.push({ op: `state.${t}`, value: digest(await rowsOf(c, t)) });
    return out;
  });
}

/** The Tessera side: every node of the cluster, each table read where its kind says it lives. */
export async function nodesState(
  nodes: readonly (Endpoint & { role: string })[],
  database: string,
  declarations: Declarations,
): Promise<OpLine[]> {
  const perNode = new Map<string, Map<string, string[]>>();
  for (const n of nodes) {
    perNode.set(
      n.name,
      await withClient(n, database, async (c) => {
        const m = new Map<string, string[]>();
        for (const t of await tablesOf(c)) m.set(t, await rowsOf(c, t));
        return m;
      }),
    );
  }
  const home = nodes.find((n) => n.role === 'home');
  const homeTables = home ? [...(perNode.get(home.name)?.keys() ?? [])] : [];
  const out: OpLine[] = [{ op: 'state.tables', value: homeTables.join(',') }];
  for (const t of homeTables) {
    const decl = declarations.tables.find((d) => d.name === `public.${t}`);
    const copies = nodes
      .map((n) => ({ node: n.name, rows: perNode.get(n.name)?.get(t) }))
      .filter((x): x is { node: string; rows: string[] } => x.rows !== undefined);
    if (decl?.kind === 'sharded') {
      out.push({ op: `state.${t}`, value: digest(copies.flatMap((x) => x.rows)) });
    } else if (decl?.kind === 'reference') {
      const digests = copies.map((x) => ({ node: x.node, d: digest(x.rows) }));
      const same = digests.every((x) => x.d === digests[0]?.d) && copies.length === nodes.length;
      out.push({
        op: `state.${t}`,
        value: same
          ? (digests[0]?.d ?? 'absent')
          : `copies differ: ${digests.map((x) => `${x.node} ${x.d}`).join('; ')}`,
      });
    } else {
      const elsewhere = copies.filter((x) => x.node !== home?.name && x.rows.length > 0);
      const homeRows = copies.find((x) => x.node === home?.name)?.rows ?? [];
      out.push({
        op: `state.${t}`,
        value:
          digest(homeRows) +
          (elsewhere.length > 0 ? ` (and rows on ${elsewhere.map((x) => x.node).join(', ')})` : ''),
      });
    }
  }
  return out;
}
