// Test helper: one way of sending statements per driver mode, each reporting what a client sees
// of every statement (command tag, rows, SQLSTATE, the codes of its notices), so a test can run
// the same sequence against the router and a plain Postgres and compare the two.
import { createHash } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';

/** What a client saw of one statement. */
export interface Outcome {
  readonly sql: string;
  readonly tag?: string | undefined;
  readonly rows?: unknown[] | undefined;
  readonly sqlstate?: string | undefined;
  readonly notices: string[];
  /** The error's message: shown when outcomes differ, never compared (wording may differ). */
  readonly message?: string | undefined;
}

export interface DriverSession {
  run(sql: string): Promise<Outcome>;
  end(): Promise<void>;
}

export type DriverMode = 'pg-simple' | 'pg-named' | 'postgres.js';

export const DRIVER_MODES: readonly DriverMode[] = ['pg-simple', 'pg-named', 'postgres.js'];

/** Opens a session on `url` that runs every statement the way `mode` says. */
export async function openDriver(mode: DriverMode, url: string): Promise<DriverSession> {
  return mode === 'postgres.js' ? openPostgresJs(url) : openPg(url, mode === 'pg-named');
}

/**
 * Runs `statements` through the router at `routerUrl` (each must succeed) and on the plain
 * Postgres `plain`: the same schema and rows on both sides of a differential test.
 */
export async function setUpBoth(
  routerUrl: string,
  plain: { query(sql: string): Promise<unknown> },
  statements: readonly string[],
): Promise<void> {
  const setup = await openDriver('pg-simple', routerUrl);
  try {
    for (const sql of statements) {
      const o = await setup.run(sql);
      if (o.sqlstate !== undefined) throw new Error(`${sql}: ${o.sqlstate} ${o.message ?? ''}`);
    }
  } finally {
    await setup.end();
  }
  for (const sql of statements) await plain.query(sql);
}

/** The statement name pg-named gives `sql` (a test can then look for it elsewhere). */
export const preparedNameOf = (sql: string): string =>
  `p_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;

async function openPg(url: string, named: boolean): Promise<DriverSession> {
  const client = new pg.Client({ connectionString: url });
  let notices: string[] = [];
  client.on('notice', (n) => notices.push((n as unknown as { code?: string }).code ?? '?'));
  client.on('error', () => undefined);
  await client.connect();
  return {
    async run(sql) {
      notices = [];
      try {
        // A name and values make node-postgres use the extended protocol with a named
        // statement: Parse the first time, then Bind/Describe/Execute/Sync only.
        const r = named
          ? await client.query({ name: preparedNameOf(sql), text: sql, values: [] })
          : await client.query(sql);
        const last = Array.isArray(r) ? (r.at(-1) as pg.QueryResult) : r;
        return { sql, tag: last.command ?? undefined, rows: last.rows, notices };
      } catch (e) {
        return { sql, ...errorOf(e), notices };
      }
    },
    end: () => client.end(),
  };
}

// `simple` is read by postgres.js's unsafe() but missing from its type.
const NAMED = { prepare: true, simple: false } as postgres.UnsafeQueryOptions;

async function openPostgresJs(url: string): Promise<DriverSession> {
  let notices: string[] = [];
  // One connection, so BEGIN and its statements share it; named prepared statements.
  const sql = postgres(url, {
    max: 1,
    prepare: true,
    fetch_types: false,
    idle_timeout: 0,
    onnotice: (n) => notices.push(String(n['code'] ?? '?')),
  });
  return {
    async run(text) {
      notices = [];
      try {
        // No arguments would make postgres.js send a simple Query: ask for a named statement.
        const r = await sql.unsafe(text, [], NAMED);
        return {
          sql: text,
          tag: r.command ?? undefined,
          rows: [...r].map((row) => ({ ...row })),
          notices,
        };
      } catch (e) {
        return { sql: text, ...errorOf(e), notices };
      }
    },
    end: () => sql.end({ timeout: 5 }),
  };
}

function errorOf(e: unknown): { sqlstate: string; message: string } {
  const err = e as { code?: string; message?: string };
  return { sqlstate: err.code ?? 'no code', message: err.message ?? String(e) };
}
