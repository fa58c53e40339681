// One walk over a whole statement tree: every relation it references (CTE names excluded, with
// Postgres's scoping), bind parameters, function calls, subqueries and CTEs. Shape-based, so node
// kinds this library never heard of are still searched for the tables they name.
import type { RangeVar, WithClause, Node } from 'libpg-query';
import type { TableRef } from './types.js';
import { stringList } from './ast.js';

/** Functions whose result differs per call or per node: replicated writes must not use them. */
const VOLATILE_FUNCTIONS = new Set([
  'random',
  'random_normal',
  'setseed',
  'nextval',
  'setval',
  'currval',
  'lastval',
  'clock_timestamp',
  'timeofday',
  'gen_random_uuid',
  'uuid_generate_v1',
  'uuid_generate_v1mc',
  'uuid_generate_v4',
  'uuidv4',
  'uuidv7',
  'txid_current',
  'pg_current_xact_id',
  'pg_sleep',
  'pg_advisory_lock',
  'pg_try_advisory_lock',
  'dblink',
  'dblink_exec',
  'lo_import',
  'lo_export',
  'pg_notify',
  'set_config',
  'inet_client_addr',
  'pg_backend_pid',
]);

interface CteScope {
  readonly names: ReadonlySet<string>;
  readonly parent: CteScope | undefined;
}

function isCteName(scope: CteScope | undefined, name: string): boolean {
  for (let s = scope; s !== undefined; s = s.parent) if (s.names.has(name)) return true;
  return false;
}

export interface Collected {
  readonly tables: TableRef[];
  /** RangeVar object -> index in `tables`. */
  readonly indexOf: Map<object, number>;
  paramCount: number;
  readonly functions: string[];
  hasSubqueries: boolean;
  hasCtes: boolean;
  hasDataModifyingCtes: boolean;
}

export interface CollectOptions {
  /** RangeVars that the statement writes/creates/alters. */
  readonly targets?: ReadonlySet<object>;
  /** RangeVars of the statement's own FROM / target scope. */
  readonly top?: ReadonlySet<object>;
  /** Subtrees not to walk (e.g. a composite type's name, which is not a table). */
  readonly skip?: ReadonlySet<object>;
}

export function collect(root: unknown, options: CollectOptions = {}): Collected {
  const out: Collected = {
    tables: [],
    indexOf: new Map(),
    paramCount: 0,
    functions: [],
    hasSubqueries: false,
    hasCtes: false,
    hasDataModifyingCtes: false,
  };
  const seenFunctions = new Set<string>();
  // The relation of any INSERT/UPDATE/DELETE/MERGE in the tree (e.g. in a CTE) is written.
  const writtenByDml = new Set<object>();

  const addRange = (rv: RangeVar, ctes: CteScope | undefined): void => {
    const name = rv.relname ?? '';
    if (rv.schemaname === undefined && rv.catalogname === undefined && isCteName(ctes, name))
      return;
    out.indexOf.set(rv, out.tables.length);
    out.tables.push({
      schema: rv.schemaname,
      name,
      alias: rv.alias?.aliasname,
      role: options.targets?.has(rv) === true || writtenByDml.has(rv) ? 'target' : 'read',
      scope: options.top?.has(rv) === true ? 'top' : 'nested',
      only: rv.inh !== true,
    });
  };

  const walkWith = (w: WithClause, outer: CteScope | undefined): CteScope => {
    out.hasCtes = true;
    const names: string[] = [];
    const bodies: (Node | undefined)[] = [];
    for (const c of w.ctes ?? []) {
      if (!('CommonTableExpr' in c)) continue;
      names.push(c.CommonTableExpr.ctename ?? '');
      bodies.push(c.CommonTableExpr.ctequery);
    }
    const all: CteScope = { names: new Set(names), parent: outer };
    bodies.forEach((body, i) => {
      if (body === undefined) return;
      if (
        'InsertStmt' in body ||
        'UpdateStmt' in body ||
        'DeleteStmt' in body ||
        'MergeStmt' in body
      ) {
        out.hasDataModifyingCtes = true;
      }
      // WITH RECURSIVE makes every name visible in every body; otherwise only earlier ones.
      const visible: CteScope =
        w.recursive === true ? all : { names: new Set(names.slice(0, i)), parent: outer };
      walk(body, visible);
    });
    return all;
  };

  const walk = (value: unknown, ctes: CteScope | undefined): void => {
    if (value === null || typeof value !== 'object') return;
    if (options.skip?.has(value) === true) return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, ctes);
      return;
    }
    const o = value as Record<string, unknown>;
    if (
      typeof o['relname'] === 'string' &&
      ('inh' in o || 'relpersistence' in o || 'location' in o)
    ) {
      addRange(o as RangeVar, ctes);
      return;
    }
    let scope = ctes;
    const w = o['withClause'];
    if (w !== undefined && w !== null && typeof w === 'object')
      scope = walkWith(w as WithClause, ctes);
    for (const key in o) {
      if (key === 'withClause') continue;
      const v = o[key];
      switch (key) {
        case 'ParamRef': {
          const n = (v as { number?: number }).number ?? 0;
          if (n > out.paramCount) out.paramCount = n;
          continue;
        }
        case 'FuncCall': {
          const name = stringList((v as { funcname?: Node[] }).funcname).join('.');
          if (!seenFunctions.has(name)) {
            seenFunctions.add(name);
            out.functions.push(name);
          }
          break;
        }
        case 'InsertStmt':
        case 'UpdateStmt':
        case 'DeleteStmt':
        case 'MergeStmt': {
          const rel = (v as { relation?: object }).relation;
          if (rel !== undefined) writtenByDml.add(rel);
          break;
        }
        case 'SubLink':
        case 'RangeSubselect':
          out.hasSubqueries = true;
          break;
        case 'alias':
        case 'typeName':
          continue;
      }
      walk(v, scope);
    }
  };

  walk(root, undefined);
  return out;
}

export function hasVolatile(functions: readonly string[]): boolean {
  for (const f of functions) {
    const base = f.startsWith('pg_catalog.') ? f.slice('pg_catalog.'.length) : f;
    if (VOLATILE_FUNCTIONS.has(base)) return true;
  }
  return false;
}
