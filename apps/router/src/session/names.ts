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
} from '../routing/names.js';
import type { Session } from './session.js';

interface LoginNames {
  /** The search_path a backend's RESET gives this role in this database (its reset_val). */
  readonly defaultPath: readonly string[];
  readonly home: HomeRelations;
  /** The router's DDL generation these facts were read at (or after). */
  readonly generation: number;
}

const logins = new WeakMap<Session, LoginNames>();
/** A session's last context and what it was made from (compared by identity first). */
interface Made {
  readonly path: readonly string[];
  readonly user: string;
  readonly home: HomeRelations;
  readonly ctx: NameContext;
}
const contexts = new WeakMap<Session, Made>();

/**
 * Per router (its services object): how many texts with DDL it has finished running. A session
 * whose facts are older reads them again before its next statement outside a transaction, so a
 * table or schema created through the router (by this client or another) is resolved as
 * Postgres would resolve it from then on.
 */
const generations = new WeakMap<object, { n: number }>();
/** Sessions running a text with DDL now: the generation moves when that text has finished. */
const runningDdl = new WeakSet<Session>();

const generationOf = (s: Session): { n: number } => {
  let g = generations.get(s.services);
  if (g === undefined) generations.set(s.services, (g = { n: 0 }));
  return g;
};

/**
 * The default search_path (pg_settings.reset_val: postgresql.conf, then ALTER DATABASE/ROLE ...
 * SET) and every relation of home named like a table of the catalog, in one round trip.
 */
const LOGIN_SQL = `select (select reset_val from pg_settings where name = 'search_path'),
  (select coalesce(json_agg(nspname), '[]') from pg_namespace),
  (select coalesce(json_agg(json_build_array(n.nspname, c.relname)), '[]')
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relname = any($1::text[]) and c.relkind in ('r', 'p', 'v', 'm', 'f'))`;

/** Learns the session's login facts on `backend` (home, logged in as the client's role). */
export async function learnLoginNames(
  s: Session,
  backend: Backend,
  catalog: Snapshot,
  timeoutMs: number,
): Promise<void> {
  const generation = generationOf(s).n;
  const names = [...new Set(catalog.tables.map((t) => t.name))];
  const rows = await queryText(backend, LOGIN_SQL, [arrayLiteral(names)], timeoutMs);
  const row = rows[0];
  if (row === undefined) throw new Error('the login name lookup returned no row');
  const defaultPath = parseSearchPath(row[0] ?? '') ?? DEFAULT;
  const schemas = JSON.parse(row[1] ?? '[]') as string[];
  const found = (JSON.parse(row[2] ?? '[]') as [string, string][]).map(([schema, name]) => ({
    schema,
    name,
  }));
  logins.set(s, { defaultPath, home: homeRelations(schemas, names, found), generation });
}

/** `analyses` are about to run: if one is DDL that can add or remove a name, note it. */
export function noteDdl(s: Session, analyses: readonly Analysis[]): void {
  for (const a of analyses)
    if (a.kind === 'ddl' && !(a.command === 'create_table' && a.createTable?.temporary)) {
      runningDdl.add(s);
      return;
    }
}

/** The text the session ran has finished: DDL in it makes every session's facts stale. */
export function ddlFinished(s: Session): void {
  if (!runningDdl.delete(s)) return;
  generationOf(s).n++;
}

/**
 * Reads the session's login facts again when DDL ran through the router since they were read;
 * undefined when they are current. Only between transactions, on a pooled home backend (inside
 * one the session may hold the pool's only backend). A failed read keeps the old facts and is
 * tried again before the next statement.
 */
export function refreshNames(s: Session): Promise<void> | undefined {
  const login = logins.get(s);
  if (login === undefined || login.generation === generationOf(s).n) return undefined;
  if (s.inTransaction() || s.cycle !== undefined) return undefined;
  const catalog = s.services.catalog();
  if (catalog === undefined) return undefined;
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

/** The session's name context now (one object while nothing it depends on changes). */
export function sessionNames(s: Session): NameContext {
  const login = logins.get(s);
  const path = s.settings.searchPath(s.inTransaction()) ?? login?.defaultPath ?? DEFAULT;
  const home = login?.home ?? NO_HOME_FACTS;
  const hit = contexts.get(s);
  // The same objects as last time (settings memoize the parsed path): nothing to build.
  if (hit !== undefined && hit.path === path && hit.user === s.user && hit.home === home)
    return hit.ctx;
  const made = nameContext(path, s.user, home);
  const ctx = hit !== undefined && hit.ctx.key === made.key ? hit.ctx : made;
  contexts.set(s, { path, user: s.user, home, ctx });
  return ctx;
}

const DEFAULT = ['$user', 'public'];

function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((t) => `"${t.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}
