// Routing of LOCK TABLE: a lock is taken where the table's rows are. A global table lives on the
// home node only; a reference table has a copy on every node and a sharded table a part on every
// node, so LOCK of those runs on every node, in the client's transaction (outside one, Postgres
// refuses LOCK with 25P01, and so does execute/fanout.ts). Pure.
import type { Analysis } from '@tessera/sql';
import type { Snapshot } from '@tessera/keyspace';
import { home, refuse, type Route } from './route-types.js';
import { classify, qualified } from './tables.js';

export function routeLock(a: Analysis, catalog: Snapshot): Route {
  const t = classify(a.tables, catalog);
  const spread = t.sharded.length + t.reference.length;
  if (spread === 0) return home(catalog, false);
  if (t.global.length > 0) {
    const other = t.sharded[0] ?? t.reference[0]!;
    return refuse(
      `LOCK of global table ${qualified(t.global[0]!.view)} (on the home node only) together with ${qualified(other.view)} (on every node) is not supported; lock them in two LOCK statements`,
    );
  }
  return { kind: 'all', nodes: catalog.nodes, after: new Map(), why: 'lock' };
}
