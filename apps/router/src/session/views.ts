// Reads through views over sharded tables (routing/names.ts ViewFact): before a statement is
// admitted, every such view it reads in a FROM list becomes the view's query (libs/sql
// substituteViews), so it is routed and planned as the read it is: the view exists on every node,
// but home's copy of a sharded table is empty. The session's names (its search_path, what its
// login learned of home's views) say which name means which view. The view's own SELECT right is
// checked from those facts; the rewritten statement reads the tables with the reader's rights.
import { substituteViews, type Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { RouterError, unsupported } from '../errors.js';
import { namesOf, type ViewFact } from '../routing/names.js';
import { qualified, shardedViewOf } from '../routing/tables.js';

/** Rewritten texts kept per named snapshot (one per epoch, search_path and view facts). */
const MAX_KEPT = 500;
const kept = new WeakMap<Snapshot, Map<string, string>>();

/** `a`'s text with the views over sharded tables it reads as their queries; `a.sql` when none. */
export function viewsExpanded(named: Snapshot, a: Analysis): string {
  if (namesOf(named).home.views.size === 0) return a.sql;
  // DDL names views as objects (CREATE VIEW w AS ... FROM v keeps reading v).
  if (a.kind === 'ddl') return a.sql;
  if (!a.tables.some((t) => shardedViewOf(named, t.schema, t.name) !== undefined)) return a.sql;
  let memo = kept.get(named);
  if (memo === undefined) kept.set(named, (memo = new Map()));
  const hit = memo.get(a.sql);
  if (hit !== undefined) return hit;
  const out = substituteViews(a.sql, (schema, name) => {
    const view = shardedViewOf(named, schema, name);
    return view === undefined ? undefined : readable(view);
  });
  if (memo.size >= MAX_KEPT) memo.delete(memo.keys().next().value!);
  memo.set(a.sql, out);
  return out;
}

/** The view's query, if the session may read it this way; else the error Postgres would give, or 0A000. */
function readable(view: ViewFact): string {
  const name = qualified({ kind: 'global', schema: view.schema, name: view.name });
  if (view.select === 'none')
    throw new RouterError('42501', `permission denied for view ${view.name}`);
  if (view.select === 'columns')
    throw unsupported(
      `reading view ${name} with a right to some of its columns only is not supported across nodes (its query reads the tables with the reader's rights); grant SELECT on the view`,
    );
  if (view.rowSecurity)
    throw unsupported(
      `view ${name} reads a table with row-level security, whose policies apply as the view's owner; reading it across nodes is not supported`,
    );
  return view.query;
}
