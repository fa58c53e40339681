// Resolving an unqualified table name as Postgres does: the session's search_path (pg_catalog
// first unless listed, `$user` as the session's role), against the tables that exist: the
// catalog's, and the global tables of the home node the router learned at login. A name whose
// owner the router cannot know exactly is refused, never guessed. Pure.
import { createHash } from 'node:crypto';
import type { Snapshot, TableView } from '@tessera/keyspace';
import { unsupported } from '../errors.js';

/**
 * A view of home that reads tables of the catalog (through other views too), and no table only
 * home has: it exists on every node, and reads through it are routed as its query.
 */
export interface ViewFact {
  readonly schema: string;
  readonly name: string;
  /** Its query, every name qualified (pg_get_viewdef with only pg_catalog on the search_path). */
  readonly query: string;
  /** It reads a sharded table (else only reference tables: it is one too). */
  readonly sharded: boolean;
  /** A table it reads has row-level security (whose policies apply as the view's owner). */
  readonly rowSecurity: boolean;
  /** The login role's right to SELECT it: on the whole view, on some columns only, or none. */
  readonly select: 'view' | 'columns' | 'none';
}

/** Relations of the home node (where every table the catalog does not name lives). */
export interface HomeRelations {
  /** The schemas of home (a schema it lacks holds no table); undefined: not known. */
  readonly schemas: ReadonlySet<string> | undefined;
  /** Names (unqualified) whose every schema on home was looked up. */
  readonly checked: ReadonlySet<string>;
  /** `schema.name` of the relations home holds, for the names in `checked`. */
  readonly existing: ReadonlySet<string>;
  /** Views over the catalog's tables, by `schema.name` (their names are in `checked`). */
  readonly views: ReadonlyMap<string, ViewFact>;
  /** Equal facts, equal keys (what cached resolutions are shared by). */
  readonly key: string;
}

/** What resolving an unqualified name depends on; equal keys resolve every name alike. */
export interface NameContext {
  /** Schemas in search order: pg_catalog first unless listed, `$user` replaced. */
  readonly path: readonly string[];
  readonly home: HomeRelations;
  readonly key: string;
}

export const NO_HOME_FACTS: HomeRelations = {
  schemas: undefined,
  checked: new Set(),
  existing: new Set(),
  views: new Map(),
  key: '',
};

export function homeRelations(
  schemas: Iterable<string>,
  checked: Iterable<string>,
  rows: Iterable<{ schema: string; name: string }>,
  views: readonly ViewFact[] = [],
): HomeRelations {
  const c = new Set(checked);
  for (const v of views) c.add(v.name);
  const existing = new Set<string>();
  for (const r of rows) if (c.has(r.name)) existing.add(`${r.schema}.${r.name}`);
  const sorted = (x: Iterable<string>): string => JSON.stringify([...x].sort());
  const schemaSet = new Set(schemas);
  const byName = new Map(views.map((v) => [`${v.schema}.${v.name}`, v]));
  // Views change what names mean (and how statements are rewritten): their facts are in the key.
  const viewKey =
    views.length === 0
      ? ''
      : `|${createHash('sha1')
          .update(JSON.stringify([...byName].sort()))
          .digest('hex')}`;
  return {
    schemas: schemaSet,
    checked: c,
    existing,
    views: byName,
    key: `${sorted(schemaSet)}|${sorted(c)}|${sorted(existing)}${viewKey}`,
  };
}

/**
 * Splits a search_path value written as a list (`"$user", public`, what SHOW and pg_settings
 * give and `-c search_path=` takes) into schema names, as Postgres's SplitIdentifierString does:
 * unquoted names folded to lower case, `""` inside quotes for a quote. Undefined if malformed.
 */
export function parseSearchPath(value: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  const n = value.length;
  const space = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);
  while (space(value[i])) i++;
  if (i === n) return out;
  for (;;) {
    let name = '';
    if (value[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) return undefined;
        if (value[i] === '"') {
          if (value[i + 1] === '"') {
            name += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        name += value[i++];
      }
      if (name === '') return undefined;
    } else {
      const start = i;
      while (i < n && value[i] !== ',' && !space(value[i])) i++;
      if (i === start) return undefined;
      name = value.slice(start, i).toLowerCase();
    }
    out.push(name);
    while (space(value[i])) i++;
    if (i === n) return out;
    if (value[i] !== ',') return undefined;
    i++;
    while (space(value[i])) i++;
  }
}

/** The context of a session whose search_path is `path` (elements as SET gives them). */
export function nameContext(
  path: readonly string[],
  user: string,
  home: HomeRelations,
): NameContext {
  const expanded: string[] = [];
  for (const p of path) {
    const schema = p === '$user' ? user : p;
    // A temporary schema holds only the session's temporary tables, on the node the session
    // created them on; pin tracks those, not name resolution.
    if (schema === 'pg_temp' || schema.startsWith('pg_temp_')) continue;
    if (!expanded.includes(schema)) expanded.push(schema);
  }
  if (!expanded.includes('pg_catalog')) expanded.unshift('pg_catalog');
  return { path: expanded, home, key: `${expanded.join('\0')}\u0001${home.key}` };
}

/** The default context: `public` only (what resolution meant before search_path was tracked). */
export const PUBLIC_ONLY: NameContext = nameContext(['public'], '', NO_HOME_FACTS);

/**
 * The schema a CREATE puts an unqualified name in: the first of the path that home has, as
 * Postgres does (all of them when home's schemas are not known).
 */
export function creationSchema(ctx: NameContext): string {
  const known = ctx.home.schemas;
  return ctx.path.find((s) => s !== 'pg_catalog' && (known?.has(s) ?? true)) ?? 'public';
}

/**
 * The table an unqualified `name` means under `ctx`: the first schema of the path holding it,
 * in the catalog or on home. Throws 0A000 when a schema before the catalog's table may hold a
 * table the router does not know of.
 */
export function resolveUnqualified(catalog: Snapshot, ctx: NameContext, name: string): TableView {
  const path = ctx.path;
  let hit = -1;
  let view: TableView | undefined;
  for (let i = 0; i < path.length && view === undefined; i++) {
    view = catalog.table(path[i]!, name);
    if (view !== undefined) hit = i;
  }
  if (view === undefined) {
    // Not a table of the catalog in any schema of the path: a global table (or none), on home,
    // where the node resolves it with the same search_path.
    const first = path.find((s) => s !== 'pg_catalog') ?? 'public';
    const onHome = path.find((s) => ctx.home.existing.has(`${s}.${name}`));
    return { kind: 'global', schema: onHome ?? first, name };
  }
  for (let j = 0; j < hit; j++) {
    const schema = path[j]!;
    // Every relation of pg_catalog is named pg_something.
    if (schema === 'pg_catalog' && !name.startsWith('pg_')) continue;
    if (ctx.home.schemas !== undefined && !ctx.home.schemas.has(schema)) continue;
    if (!ctx.home.checked.has(name)) throw ambiguous(name, schema, view);
    if (ctx.home.existing.has(`${schema}.${name}`)) return { kind: 'global', schema, name };
  }
  return view;
}

function ambiguous(name: string, schema: string, view: TableView): Error {
  return unsupported(
    `the router cannot tell whether the unqualified name "${name}" means a table in schema "${schema}" (earlier in search_path) or ${view.kind} table ${view.schema}.${view.name}; qualify the name (write ${view.schema}.${name} or ${schema}.${name})`,
  );
}

const NAMES = Symbol('tessera.names');

type NamedSnapshot = Snapshot & { readonly [NAMES]: NameContext };

/** Contexts kept per snapshot; the oldest is dropped first. */
const MAX_CONTEXTS = 256;
const named = new WeakMap<Snapshot, Map<string, NamedSnapshot>>();

/**
 * `snapshot` seen under `ctx`: the same catalog whose unqualified names resolve by `ctx`. One
 * object per (snapshot, context key), so what is cached per snapshot (classify) is keyed by the
 * resolution it depended on.
 */
export function namedSnapshot(snapshot: Snapshot, ctx: NameContext): Snapshot {
  // Most statements of a router come under one epoch and one context: the last answer first.
  const hit = lastNamed;
  if (hit !== undefined && hit.base === snapshot && hit.key === ctx.key) return hit.named;
  const base = baseSnapshot(snapshot);
  let byKey = named.get(base);
  if (byKey === undefined) {
    byKey = new Map();
    named.set(base, byKey);
  }
  let s = byKey.get(ctx.key);
  if (s === undefined) {
    s = Object.freeze(Object.create(base, { [NAMES]: { value: ctx } })) as NamedSnapshot;
    if (byKey.size >= MAX_CONTEXTS) byKey.delete(byKey.keys().next().value!);
    byKey.set(ctx.key, s);
  }
  lastNamed = { base, key: ctx.key, named: s };
  return s;
}

let lastNamed: { base: Snapshot; key: string; named: Snapshot } | undefined;

/** The context `snapshot` resolves names by (PUBLIC_ONLY for a plain snapshot). */
export function namesOf(snapshot: Snapshot): NameContext {
  return (snapshot as Partial<NamedSnapshot>)[NAMES] ?? PUBLIC_ONLY;
}

function baseSnapshot(s: Snapshot): Snapshot {
  return NAMES in s ? (Object.getPrototypeOf(s) as Snapshot) : s;
}
