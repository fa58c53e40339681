// route(analysis, catalog, params) -> Route: the routing rules of DESIGN.md section 3 as one
// pure function over plain data, unit-tested without sockets. The session executes the Route.
// This file dispatches on the statement kind; the rules of each kind live beside it: rows that
// exist (route-dml.ts), rows that arrive (route-insert.ts), objects and maintenance (route-ddl.ts).
import type { Analysis, TableRef } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import type { ParamSource } from './key-hash.js';
import { home, refuse, type Route } from './route-types.js';
import { routeDml } from './route-dml.js';
import { routeCopyFrom, routeInsert } from './route-insert.js';
import { routeDdl, routeMaintenance } from './route-ddl.js';
import { classify, qualified, shardedViewOf } from './tables.js';
import { namesOf } from './names.js';
import { routeLock } from './route-lock.js';
import { routeCopyTo } from './route-copy.js';

export function route(a: Analysis, catalog: Snapshot, params: ParamSource | undefined): Route {
  const view = a.kind === 'ddl' ? undefined : viewLeftIn(a, catalog);
  if (view !== undefined) return refuseView(view.ref, view.name);
  switch (a.kind) {
    case 'select':
      if (readsPreparedStatements(a.tables)) return refuse(PREPARED_STATEMENTS_REFUSAL);
      return routeDml(a, a.where, catalog, params, 'select');
    case 'update': {
      const t = classify(a.tables, catalog);
      const target = t.sharded.find((s) => s.index === a.targetIndex);
      if (target && a.setColumns.includes(target.view.keyColumn)) {
        return refuse(
          `an UPDATE that changes the key column "${target.view.keyColumn}" of sharded table ${qualified(target.view)} is not supported (the row would have to move between nodes)`,
        );
      }
      return routeDml(a, a.where, catalog, params, 'UPDATE');
    }
    case 'delete':
      return routeDml(a, a.where, catalog, params, 'DELETE');
    case 'insert':
      return routeInsert(a, catalog, params);
    case 'copy_from':
      return routeCopyFrom(a, catalog);
    case 'copy_to':
      return routeCopyTo(a, catalog, params, (q) => route(q, catalog, params));
    case 'ddl':
      return routeDdl(a, catalog, params);
    case 'explain': {
      const inner = route(a.inner, catalog, params);
      if (
        inner.kind === 'node' ||
        inner.kind === 'refuse' ||
        inner.kind === 'params' ||
        inner.kind === 'scatter'
      )
        return inner;
      return refuse('EXPLAIN of a statement that runs on several nodes is not supported yet');
    }
    case 'vacuum':
    case 'analyze':
      return routeMaintenance(a, catalog);
    case 'utility':
      if (a.query !== undefined) return route(a.query, catalog, params);
      if (a.command === 'lock') return routeLock(a, catalog);
      // FETCH, MOVE, CLOSE work on the node holding the cursor; DO, CALL and the rest on home.
      return home(
        catalog,
        a.command === 'fetch' ||
          a.command === 'move' ||
          a.command === 'close' ||
          a.command === 'checkpoint',
      );
    case 'show':
    case 'transaction':
    case 'set':
    case 'discard':
    case 'deallocate':
    case 'listen':
    case 'unlisten':
      return home(catalog, true);
    // Run by the router when they come on their own (statement/sql-prepared.ts); here only as
    // part of a multi-statement query or under EXPLAIN.
    case 'prepare':
    case 'execute':
      return refuse(
        `${a.kind.toUpperCase()} in a multi-statement query or under EXPLAIN is not supported by the router; send it on its own`,
      );
    case 'notify':
      return home(catalog, false);
    default:
      return assertNever(a);
  }
}

/**
 * A view over sharded tables the statement still names: session/views.ts reads every one in a
 * FROM list as its query, so this one is written to, or named where it cannot be rewritten.
 */
function viewLeftIn(a: Analysis, catalog: Snapshot): { ref: TableRef; name: string } | undefined {
  if (namesOf(catalog).home.views.size === 0) return undefined;
  for (const ref of a.tables) {
    const v = shardedViewOf(catalog, ref.schema, ref.name);
    if (v !== undefined) return { ref, name: `${v.schema}.${v.name}` };
  }
  return undefined;
}

function refuseView(ref: TableRef, name: string): Route {
  return refuse(
    ref.role === 'target'
      ? `a write to view ${name} over sharded tables is not supported (home's copy of its tables is empty); write to its tables`
      : `view ${name} over sharded tables is read where the router cannot put its query in its place (it does so in FROM lists); read it in a FROM list`,
  );
}

function assertNever(x: never): never {
  throw new TypeError(`unhandled analysis kind ${JSON.stringify(x)}`);
}

/**
 * pg_prepared_statements through the router would list the statements of the pooled backend the
 * read lands on (the router's names, other clients' statements it shares there), not the
 * client's own: refused rather than answered wrongly.
 */
const readsPreparedStatements = (tables: readonly TableRef[]): boolean =>
  tables.some(
    (t) =>
      t.name === 'pg_prepared_statements' && (t.schema === undefined || t.schema === 'pg_catalog'),
  );

const PREPARED_STATEMENTS_REFUSAL =
  "pg_prepared_statements is not supported through the router: it would list the statements of a pooled backend, not this session's";
