// What a session's unqualified table names resolve by (routing/names.ts): its search_path now
// (settings.ts), and what its login taught: the role's and database's default search_path and
// the home node's relations whose names the catalog also has (global tables that shadow them).
import type { Snapshot } from '@tessera/keyspace';
import type { Analysis } from '@tessera/sql';
import type { Backend } from '../pool/backend.js';
import { queryText } from '../pool/query-text.js';
import {
  NO_HOME_FACTS,
  homeRelations,
  nameContext,
  parseSearchPath,
  type HomeRelations,
  type NameContext,
  type ViewFact,
} from '../routing/names.js';
import type { Session } from './session.js';
import { ANNOUNCE_SQL, announceParams } from './ddl-watch.js';

interface LoginNames {
  /** The search_path a backend's RESET gives this role in this database (its reset_val). */
  readonly defaultPath: readonly string[];
  readonly home: HomeRelations;
  /** The router's DDL generation these facts were read at (or after). */
  readonly generation: number;
  /**
   * Read inside the session's transaction, on its own home backend (its uncommitted DDL
   * included): good for that transaction only.
   */
  readonly part: object | undefined;
  /** The catalog's declared tables these facts were read for (tablesKey). */
  readonly tables: string;
}

const tableKeys = new WeakMap<Snapshot, string>();
/** One string object per distinct key, so that every statement compares them by identity. */
const internedKeys = new Map<string, string>();

/**
 * The catalog's declared tables and their kinds: when they change (a table declared, or made
 * sharded), which of home's views read them changes too, and the facts are read again.
 */
function tablesKey(catalog: Snapshot): string {
  let key = tableKeys.get(catalog);
  if (key === undefined) {
    const made = JSON.stringify(catalog.tables.map((t) => [t.schema, t.name, t.kind]));
    key = internedKeys.get(made);
    if (key === undefined) {
      if (internedKeys.size >= 64) internedKeys.clear();
      internedKeys.set(made, (key = made));
    }
    tableKeys.set(catalog, key);
  }
  return key;
}

/** Kept in the session's `nameFacts`. */
interface NameFacts {
  login: LoginNames | undefined;
  made: Made | undefined;
}

function factsOf(s: Session): NameFacts {
  return ((s.nameFacts as NameFacts | undefined) ??= { login: undefined, made: undefined });
}
/** A session's last context and what it was made from (compared by identity first). */
interface Made {
  readonly path: readonly string[];
  readonly user: string;
  readonly home: HomeRelations;
  readonly ctx: NameContext;
}

/**
 * Per router (its services object): how many times DDL may have changed names, counting the
 * texts with DDL its sessions finished and the notifications other routers sent after theirs
 * (ddl-watch.ts). A session whose facts are older reads them again before its next statement,
 * so a table or schema created through any router is resolved as Postgres would resolve it
 * from then on (DDL made on home directly is not seen: docs/architecture.md).
 */
const generations = new WeakMap<object, { n: number }>();
/** Sessions running a text with DDL now: the generation moves when that text has finished. */
const runningDdl = new WeakSet<Session>();

const generationOf = (services: object): { n: number } => {
  let g = generations.get(services);
  if (g === undefined) generations.set(services, (g = { n: 0 }));
  return g;
};

/** DDL may have changed names on home (a notification): every session's facts are stale. */
export function namesChanged(services: object): void {
  generationOf(services).n++;
}

/**
 * The default search_path (pg_settings.reset_val: postgresql.conf, then ALTER DATABASE/ROLE ...
 * SET), home's schemas, every relation of home named like a table of the catalog or a view below,
 * and home's views that read tables of the catalog (`$2`: their `[schema, name]` pairs), through
 * other views too, and nothing only home has: their queries (pg_get_viewdef with only pg_catalog
 * on the search_path, so every name is qualified and means the same under any path; the setting is
 * local to the statement's transaction, and `s.p` in the expression makes it come first), whether
 * they read a sharded table (`$3`), row-level security, the role's SELECT right. One round trip.
 */
const LOGIN_SQL = `with recursive s as materialized (
    select pg_catalog.set_config('search_path', 'pg_catalog', true) as p),
  catalog_tables as (
    select x->>0 as nspname, x->>1 as relname, (x->>2)::bool as sharded
      from pg_catalog.json_array_elements($2::pg_catalog.json) x),
  deps(view, rel) as (
    select r.ev_class, d.refobjid from pg_catalog.pg_rewrite r
      join pg_catalog.pg_depend d on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
       and d.objid = r.oid and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
       and d.refobjid <> r.ev_class
      join pg_catalog.pg_class v on v.oid = r.ev_class and v.relkind = 'v'
      join pg_catalog.pg_namespace n on n.oid = v.relnamespace
     where n.nspname not in ('pg_catalog', 'information_schema')
    union
    select deps.view, d.refobjid from deps
      join pg_catalog.pg_rewrite r on r.ev_class = deps.rel
      join pg_catalog.pg_depend d on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
       and d.objid = r.oid and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
       and d.refobjid <> r.ev_class),
  views as (
    select deps.view, pg_catalog.bool_or(t.sharded) as sharded,
           pg_catalog.bool_or(t.relname is null and c.relkind <> 'v') as other,
           pg_catalog.bool_or(c.relrowsecurity) as rls
      from deps join pg_catalog.pg_class c on c.oid = deps.rel
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      left join catalog_tables t on t.nspname = n.nspname and t.relname = c.relname
     group by deps.view having pg_catalog.bool_or(t.relname is not null)),
  names as (
    select pg_catalog.unnest($1::text[]) as relname
    union select c.relname from views v join pg_catalog.pg_class c on c.oid = v.view)
select (select reset_val from pg_catalog.pg_settings where name = 'search_path'),
  (select coalesce(pg_catalog.json_agg(nspname), '[]') from pg_catalog.pg_namespace),
  (select coalesce(pg_catalog.json_agg(pg_catalog.json_build_array(n.nspname, c.relname)), '[]')
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.relname in (select relname from names) and c.relkind in ('r', 'p', 'v', 'm', 'f')),
  (select coalesce(pg_catalog.json_agg(pg_catalog.json_build_array(n.nspname, c.relname,
            case when s.p is not null then pg_catalog.pg_get_viewdef(c.oid) end, v.sharded, v.rls,
            pg_catalog.has_table_privilege(c.oid, 'SELECT'),
            pg_catalog.has_any_column_privilege(c.oid, 'SELECT'))), '[]')
     from views v join pg_catalog.pg_class c on c.oid = v.view
     join pg_catalog.pg_namespace n on n.oid = c.relnamespace, s
    where not v.other)`;

/** Learns the session's login facts on `backend` (home, logged in as the client's role). */
export async function learnLoginNames(
  s: Session,
  backend: Backend,
  catalog: Snapshot,
  timeoutMs: number,
  part?: object,
): Promise<void> {
  const generation = generationOf(s.services).n;
  const names = [...new Set(catalog.tables.map((t) => t.name))];
  const tables = JSON.stringify(
    catalog.tables
      .filter((t) => t.kind !== 'global')
      .map((t) => [t.schema, t.name, t.kind === 'sharded']),
  );
  const rows = await queryText(backend, LOGIN_SQL, [arrayLiteral(names), tables], timeoutMs);
  const row = rows[0];
  if (row === undefined) throw new Error('the login name lookup returned no row');
  const defaultPath = parseSearchPath(row[0] ?? '') ?? DEFAULT;
  const schemas = JSON.parse(row[1] ?? '[]') as string[];
  const found = (JSON.parse(row[2] ?? '[]') as [string, string][]).map(([schema, name]) => ({
    schema,
    name,
  }));
  // The role's default path is the one of the client's login, as in Postgres: an ALTER ROLE
  // ... SET made since applies to later logins only.
  const facts = factsOf(s);
  const path = facts.login?.defaultPath ?? defaultPath;
  const home = homeRelations(schemas, names, found, viewFacts(row[3]));
  facts.login = { defaultPath: path, home, generation, part, tables: tablesKey(catalog) };
}

type ViewRow = [string, string, string | null, boolean, boolean | null, boolean, boolean];

function viewFacts(json: string | null | undefined): ViewFact[] {
  return (JSON.parse(json ?? '[]') as ViewRow[]).map(
    ([schema, name, query, sharded, rls, whole, columns]) => ({
      schema,
      name,
      // pg_get_viewdef ends the query with a semicolon.
      query: (query ?? '').trim().replace(/;$/, ''),
      sharded,
      rowSecurity: rls === true,
      select: whole ? 'view' : columns ? 'columns' : 'none',
    }),
  );
}

/** `analyses` are about to run: if one is DDL that can add or remove a name, note it. */
export function noteDdl(s: Session, analyses: readonly Analysis[]): void {
  for (const a of analyses)
    if (a.kind === 'ddl' && !(a.command === 'create_table' && a.createTable?.temporary)) {
      runningDdl.add(s);
      break;
    }
  // Its answer (its ReadyForQuery outside a transaction) waits until the DDL is announced; a
  // text inside a transaction that does not end it is answered at once (DDL in it is announced
  // after the transaction's end).
  if (!runningDdl.has(s) && !unannounced.has(s)) return;
  if (!s.inTransaction() || analyses.some(endsTransaction)) s.out.cork();
}

const endsTransaction = (a: Analysis): boolean =>
  a.kind === 'transaction' &&
  (a.action === 'commit' || a.action === 'rollback' || a.action === 'prepare_transaction');

/** Sessions whose DDL other routers were not told of yet (it is told once its transaction ends). */
const unannounced = new WeakSet<Session>();

/**
 * A Sync is about to end a batch after an earlier one, ended by a Flush, ran DDL: its
 * ReadyForQuery waits for the announcement as well.
 */
export function corkIfUnannounced(s: Session): void {
  if (unannounced.has(s) && !s.inTransaction()) s.out.cork();
}

/**
 * The text the session ran has finished: DDL in it makes every session's facts stale, on this
 * router now and on the others once the DDL is committed (or rolled back: a harmless extra look).
 * Not `synced` (a batch ended by a Flush): its implicit transaction is still open, and the Sync
 * that ends it announces.
 */
export function ddlFinished(s: Session, synced = true): Promise<void> | undefined {
  if (runningDdl.delete(s)) {
    generationOf(s.services).n++;
    unannounced.add(s);
  }
  if (!synced || !unannounced.has(s) || s.inTransaction()) {
    if (s.out.isCorked) s.out.uncork();
    return undefined;
  }
  unannounced.delete(s);
  // Committed now: this router's sessions look again too (they may have looked before).
  generationOf(s.services).n++;
  return announceDdl(s).finally(() => s.out.uncork());
}

let announcements = 0;

/**
 * NOTIFY on home, in the session's database, for the other routers' DDL watches (ddl-watch.ts),
 * then wait until every watch listening there when it was sent acknowledged it (at most a few
 * seconds: a router that cannot acknowledge, stopped or cut off, delays the answer, never
 * fails it). Not inside the client's transaction: a transaction across nodes is prepared, and
 * Postgres cannot PREPARE one that has sent NOTIFY.
 */
function announceDdl(s: Session): Promise<void> {
  const catalog = s.services.catalog();
  if (catalog === undefined) return Promise.resolve();
  // The client's answer waits for this: a busy home pool delays it at most a few seconds.
  const timeoutMs = Math.min(s.services.config.acquireTimeoutMs, 5000);
  const pool = s.services.pools.pool(catalog, catalog.home, s.database, s.user);
  const token = `${process.pid}:${s.pid}:${++announcements}`;
  const watch = s.services.ddlWatch;
  const echo = watch?.echo(s.database, token, timeoutMs);
  const failed = (e: unknown, what: string): void => {
    echo?.end();
    s.services.log.warn({ err: e }, what);
  };
  return pool.acquire(timeoutMs, s.passThrough).then(
    (b) =>
      queryText(b, ANNOUNCE_SQL, announceParams(token, watch?.user ?? ''), timeoutMs).then(
        async (rows) => {
          pool.release(b);
          if (echo === undefined) return;
          const expected = Number(rows[0]?.[0] ?? 0);
          await echo.heard(expected);
          if (echo.count < expected)
            s.services.log.warn(
              { database: s.database, expected, acknowledged: echo.count, timeoutMs },
              'DDL announced, but not every router acknowledged it in time: sessions of the ' +
                'others may resolve names by the facts from before it until they hear it',
            );
        },
        (e: unknown) => {
          b.destroy('DDL notification failed');
          pool.release(b);
          failed(e, 'telling other routers of DDL failed');
        },
      ),
    (e: unknown) => failed(e, 'no home backend to tell other routers of DDL'),
  );
}

/**
 * Reads the session's login facts again when DDL may have changed names since they were read;
 * undefined when they are current. Between transactions on a pooled home backend; inside one on
 * the transaction's own home backend (so its own uncommitted DDL counts), and not at all when
 * the transaction holds none (the session may hold the pool's only backend). A failed read keeps
 * the old facts and is tried again before the next statement.
 */
export function refreshNames(s: Session): Promise<void> | undefined {
  const login = factsOf(s).login;
  if (login === undefined || s.cycle !== undefined) return undefined;
  const n = generationOf(s.services).n;
  const catalog = s.services.catalog();
  if (catalog === undefined) return undefined;
  const current = login.generation === n && login.tables === tablesKey(catalog);
  // Current and read outside any transaction: nothing to read, in a transaction or not (this
  // runs for every statement; whether the session is in a transaction walks its parts).
  if (current && login.part === undefined) return undefined;
  if (s.inTransaction()) {
    const part = homePart(s, catalog.home);
    if (current && login.part === part) return;
    return part === undefined ? undefined : refreshInTransaction(s, catalog, part);
  }
  const timeoutMs = s.services.config.acquireTimeoutMs;
  const pool = s.services.pools.pool(catalog, catalog.home, s.database, s.user);
  return pool.acquire(timeoutMs, s.passThrough).then(
    (b) =>
      learnLoginNames(s, b, catalog, timeoutMs).then(
        () => pool.release(b),
        (e: unknown) => {
          b.destroy('login name lookup failed');
          pool.release(b);
          s.services.log.warn({ err: e }, "reading the session's table names again failed");
        },
      ),
    (e: unknown) => {
      s.services.log.warn({ err: e }, "no home backend to read the session's table names again");
    },
  );
}

/** The transaction's part on home, when its backend is idle in a healthy transaction. */
function homePart(s: Session, home: string): object | undefined {
  const b = s.held.get(home)?.backend;
  if (b === undefined || b.dead || b.busy || b.status !== 'T') return undefined;
  for (const [node, part] of s.txn.parts()) if (node === home) return part;
  return undefined;
}

/**
 * The facts as the transaction sees them, read under a savepoint so that nothing the lookup
 * meets (a statement_timeout the client set, a cancel) can abort the client's transaction.
 */
async function refreshInTransaction(s: Session, catalog: Snapshot, part: object): Promise<void> {
  const b = s.held.get(catalog.home)?.backend;
  if (b === undefined) return;
  const timeoutMs = s.services.config.acquireTimeoutMs;
  try {
    await queryText(b, 'savepoint tessera_names', [], timeoutMs);
    try {
      await learnLoginNames(s, b, catalog, timeoutMs, part);
    } finally {
      await queryText(b, 'rollback to savepoint tessera_names', [], timeoutMs);
      await queryText(b, 'release savepoint tessera_names', [], timeoutMs);
    }
  } catch (e) {
    s.services.log.warn({ err: e }, "reading the session's table names in its transaction failed");
  }
}

/** The session's name context now (one object while nothing it depends on changes). */
export function sessionNames(s: Session): NameContext {
  const facts = factsOf(s);
  const login = facts.login;
  // Whether the session is in a transaction is asked only when it matters (a SET LOCAL path):
  // that walks the transaction's parts, and this runs several times per statement.
  const settings = s.settings;
  const inTransaction = settings.hasLocalPath && s.inTransaction();
  const path = settings.searchPath(inTransaction) ?? login?.defaultPath ?? DEFAULT;
  const home = login?.home ?? NO_HOME_FACTS;
  const hit = facts.made;
  // The same objects as last time (settings memoize the parsed path): nothing to build.
  if (hit !== undefined && hit.path === path && hit.user === s.user && hit.home === home)
    return hit.ctx;
  const made = nameContext(path, s.user, home);
  const ctx = hit !== undefined && hit.ctx.key === made.key ? hit.ctx : made;
  facts.made = { path, user: s.user, home, ctx };
  return ctx;
}

const DEFAULT = ['$user', 'public'];

function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}
