// A client's statement as the router routes it: views over sharded tables read as their queries
// (views.ts), Tessera's fences left out of catalog reads and the size functions of sharded tables
// answered for the whole cluster (catalog-reads.ts). In the simple protocol at the Query; in the
// extended one at each Bind and Describe of a prepared statement (views and fences: under the
// session's names then), the sizes measured before its batch runs (sequences/prefill.ts).
import type { Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { namedSnapshot } from '../routing/names.js';
import { StatementRecord } from '../statement/prepared.js';
import { callsSizes, fencesHidden, sizesMeasured } from './catalog-reads.js';
import { sessionNames } from './names.js';
import type { Session } from './session.js';
import { viewsExpanded } from './views.js';

export interface Rewritten {
  readonly sql: string;
  readonly analyses: readonly Analysis[];
}

/** The session's snapshot under its names now, or undefined before the first catalog. */
function named(s: Session): Snapshot | undefined {
  const catalog = s.services.catalog();
  return catalog === undefined ? undefined : namedSnapshot(catalog, sessionNames(s));
}

/** Views and fences: what is rewritten without asking any node. */
function rewrittenNow(catalog: Snapshot, a: Analysis): string {
  return fencesHidden(catalog, viewsExpanded(catalog, a), a);
}

/** A simple Query's text rewritten (several statements: one text again); undefined if unchanged. */
export function rewriteQuery(
  s: Session,
  sql: string,
  analyses: readonly Analysis[],
): Rewritten | undefined | Promise<Rewritten | undefined> {
  const catalog = named(s);
  if (catalog === undefined || analyses.length === 0) return undefined;
  const texts = analyses.map((a) => {
    const text = rewrittenNow(catalog, a);
    return callsSizes(catalog, a) ? sizesMeasured(s, catalog, text) : text;
  });
  const done = (all: readonly string[]): Rewritten | undefined => {
    if (all.every((t, i) => t === analyses[i]!.sql)) return undefined;
    const text = analyses.length === 1 ? all[0]! : all.join(';\n');
    const again = s.services.cache.get(text);
    if (again.length !== analyses.length)
      throw new Error(`a rewritten text did not analyse as ${analyses.length} statements`);
    return { sql: text, analyses: again };
  };
  if (texts.some((t) => typeof t !== 'string')) return Promise.all(texts).then(done);
  return done(texts as string[]);
}

/**
 * The copy of a prepared statement a Bind or Describe uses, its views and fences rewritten under
 * the session's names now (a SET search_path since the Parse counts, as Postgres analyses a
 * prepared statement again when the search_path changed); undefined: `rec` is used as it is.
 */
export function rewrittenRecord(s: Session, rec: StatementRecord): StatementRecord | undefined {
  const catalog = named(s);
  const a = rec.analysis;
  if (catalog === undefined || a === undefined) return undefined;
  // Per statement, for the named snapshot (epoch and names, one object per pair:
  // routing/names.ts) it was made under.
  const hit = rec.rewritten;
  if (hit !== undefined && hit.catalog === catalog) return hit.rec;
  const text = rewrittenNow(catalog, a);
  const made =
    text === a.sql
      ? undefined
      : new StatementRecord(rec.name, text, rec.paramTypes, s.services.cache.get(text));
  rec.rewritten = { catalog, rec: made };
  return made;
}

/**
 * A prepared statement that calls a size function, rewritten with the sizes measured now (and
 * its views and fences), for its Bind; undefined when it calls none.
 */
export function measuredStatement(
  s: Session,
  a: Analysis,
): Promise<{ sql: string; analysis: Analysis }> | undefined {
  // Asked for every Bind: the cheap test first, on the snapshot as it is.
  const now = s.services.catalog();
  if (now === undefined || !callsSizes(now, a)) return undefined;
  const catalog = named(s)!;
  return sizesMeasured(s, catalog, rewrittenNow(catalog, a)).then((sql) => {
    const analyses = s.services.cache.get(sql);
    if (analyses.length !== 1)
      throw new Error(`a measured statement did not analyse as one: ${sql}`);
    return { sql, analysis: analyses[0]! };
  });
}
