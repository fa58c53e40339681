// Reads through views over sharded tables (routing/names.ts ViewFact): before a statement is
// admitted, every such view it reads in a FROM list becomes the view's query (libs/sql
// substituteViews), so it is routed and planned as the read it is: the view exists on every node,
// but home's copy of a sharded table is empty. The session's names (its search_path, what its
// login learned of home's views) say which name means which view. The view's own SELECT right is
// checked from those facts; the rewritten statement reads the tables with the reader's rights.
import { substituteViews, type Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { RouterError, unsupported } from '../errors.js';
import { namedSnapshot, namesOf, type ViewFact } from '../routing/names.js';
import { qualified, shardedViewOf } from '../routing/tables.js';
import { sessionNames } from './names.js';
import type { Session } from './session.js';
import { StatementRecord } from '../statement/prepared.js';

/** Rewritten texts kept per named snapshot (one per epoch, search_path and view facts). */
const MAX_KEPT = 500;
const kept = new WeakMap<Snapshot, Map<string, string>>();

/**
 * The text with the views it reads replaced by their queries, and its analyses; undefined when
 * it reads none. Several statements in one text come back as one text again.
 */
export function expandViews(
  s: Session,
  sql: string,
  analyses: readonly Analysis[],
): { sql: string; analyses: readonly Analysis[] } | undefined {
  const catalog = s.services.catalog();
  if (catalog === undefined || analyses.length === 0) return undefined;
  const named = namedSnapshot(catalog, sessionNames(s));
  if (namesOf(named).home.views.size === 0) return undefined;
  let changed = false;
  const texts = analyses.map((a) => {
    const text = expandOne(named, a);
    if (text !== a.sql) changed = true;
    return text;
  });
  if (!changed) return undefined;
  const text = analyses.length === 1 ? texts[0]! : texts.join(';\n');
  const again = s.services.cache.get(text);
  if (again.length !== analyses.length)
    throw new Error(
      `a text with its views expanded did not analyse as ${analyses.length} statements`,
    );
  return { sql: text, analyses: again };
}

/** Per prepared statement: its copy with views expanded, for the names it was made under. */
const records = new WeakMap<StatementRecord, { names: string; rec: StatementRecord | undefined }>();

/**
 * The copy of a prepared statement a Bind runs, its views read as their queries under the
 * session's names now (a SET search_path since the Parse counts, as in Postgres, which analyses a
 * prepared statement again when the search_path changed); undefined: `rec` runs as it is.
 */
export function viewedRecord(s: Session, rec: StatementRecord): StatementRecord | undefined {
  const catalog = s.services.catalog();
  if (catalog === undefined || rec.analyses.length !== 1) return undefined;
  const names = namesOf(namedSnapshot(catalog, sessionNames(s)));
  if (names.home.views.size === 0) return undefined;
  const hit = records.get(rec);
  if (hit !== undefined && hit.names === names.key) return hit.rec;
  const x = expandViews(s, rec.sql, rec.analyses);
  const made =
    x === undefined ? undefined : new StatementRecord(rec.name, x.sql, rec.paramTypes, x.analyses);
  records.set(rec, { names: names.key, rec: made });
  return made;
}

function expandOne(named: Snapshot, a: Analysis): string {
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
